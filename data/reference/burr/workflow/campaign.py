"""Apache Burr 0.43.0: every kit protocol, in its own cached side environment.

apache-burr is not in the frozen lock, so rather than grow env/requirements.lock it runs in
``apache-burr-py311-<hash>`` in the user cache (``probes.core.envs``); the pinned requirement
is part of this campaign's source hash. It is the only requirement: apache-burr 0.43.0
declares no dependencies (the environment holds it, pip and setuptools, nothing else).

Measured on this machine (2 cores, shared): the environment is 32 MB (burr 6 MB, pip and
setuptools the rest); importing ``burr.core`` and ``burr.core.persistence`` takes 0.13 s
(``-X importtime``) and starts no thread, so every operation is forked from the kit's fork
server. The quick profile (36 probes) runs in 20-30 s. Hermetic: 0.43.0 has no telemetry
(``burr.telemetry`` is a no-op stub) and writes nothing but the SQLite file it is given;
``tests/test_burr.py`` audits a start and a resume for writes outside the probe's directory,
sockets and a touched ``HOME``.
"""

from probes.core.envs import SideEnv
from probes.kit.suite import kit_campaign

ENV = SideEnv("apache-burr", ("apache-burr==0.43.0",))

CAMPAIGN = kit_campaign(
    "burr", "Apache Burr 0.43.0: halt_before and SQLitePersister under the conformance kit",
    "probes.frameworks.burr.adapter:BurrAdapter", env=ENV,
    description="Two actions, halted before the one that takes the human's answer as its input; "
                "initialize_from(resume_at_next_action=True) over SQLitePersister; no telemetry; writes "
                "nothing outside its store.")
