"""The machine-checked contract: TLA+ models of the resume plane, checked by TLC.

``configs``  -- every TLC configuration as data (rendered to ``.cfg`` text);
``runner``   -- finds Java and ``tla2tools.jar``, runs TLC in isolated directories,
                parses its ``-tool`` message stream into a ``TlcResult``;
``campaign`` -- the ``tlc`` campaign: one probe per configuration group.
"""
