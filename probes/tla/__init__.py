"""The machine-checked contract: TLA+ models of the resume plane, checked by TLC.

``configs``  -- every TLC configuration as data (rendered to ``.cfg`` text);
``runner``   -- finds Java and ``tla2tools.jar``, runs TLC in isolated directories,
                parses its ``-tool`` message stream into a ``TlcResult``;
``campaign`` -- the ``tlc`` campaign: one probe per configuration group;
``reduction`` -- VIEW and value-symmetry variants of the reference configuration;
``distributed`` -- TLC's own distributed mode (server + worker JVMs on 127.0.0.1);
``trace``    -- trace validation: a probe history checked as a constrained TLC run
                under the reference and each fault setting;
``known_histories`` -- histories of known behaviours the trace validator must explain.
"""
