"""Strands Agents 1.62.0: every kit protocol, in its own cached side environment.

strands-agents needs boto3, whose botocore pins python-dateutil < 3; the frozen lock has
python-dateutil 4.0.0, so pip's resolver refuses the pair (checked in a scratch venv with
``pip install --dry-run -r env/requirements.lock strands-agents==1.62.0``). It runs in
``strands-agents-py311-<hash>`` in the user cache (``probes.core.envs``); the pinned
requirement is part of this campaign's source hash.

Measured on this machine (2 cores, shared): the environment takes 127 MB, 24 MB of it
pip and setuptools; strands-agents and its 47 dependencies are about 103 MB (botocore
32 MB, cryptography 16 MB, strands 9 MB); created in 35 s from the local wheel mirror.
Importing ``Agent``, ``tool`` and ``FileSessionManager`` takes 2.4-3.0 s (``-X importtime``)
and 4-5.5 s of wall time under load, which is most of each probe operation's time.
Hermetic: a start and a resume with ``HOME`` an empty directory and an audit hook on
``open`` (write modes), ``os.mkdir``/``rename``/``replace``/``remove`` and ``socket.connect``
wrote nothing outside the probe's directory and opened no socket; ``HOME`` stayed empty (the
session files go to the ``storage_dir`` the adapter passes, never ``~/.strands``; the model
is scripted, so Bedrock is never called; ``tests/test_strands.py`` repeats this check). Telemetry: strands exports traces only when
``OTEL_EXPORTER_OTLP_ENDPOINT`` is set; the adapter removes it and sets
``OTEL_SDK_DISABLED=true`` before strands is imported.
"""

from probes.core.envs import SideEnv
from probes.kit.suite import kit_campaign

ENV = SideEnv("strands-agents", ("strands-agents==1.62.0",))

CAMPAIGN = kit_campaign(
    "strands", "Strands Agents 1.62.0: tool interrupts and file sessions under the conformance kit",
    "probes.frameworks.strands.adapter:StrandsAdapter", env=ENV,
    description="Scripted model, a tool that interrupts (tool_context.interrupt), FileSessionManager JSON "
                "files in the probe's directory; side environment of 127 MB; telemetry off; writes nothing "
                "outside its working directory.")
