"""DBOS 2.27.0 under the conformance kit: the paper's engine baseline, every kit protocol.

The paper's campaign (``probes/dbos``) measures crashes around ``DBOS.recv`` and a
client-side concurrent send; here the kit's protocols run against a workflow paused in
``DBOS.recv`` on an SQLite system database, with k ``DBOSClient`` processes answering at once
while one executor runs the workflow, the same pause answered up to 8 times, tampered
recorded step outputs (DBOS's public JSON serializer, so they are JSON documents) and
kills inside ``SystemDatabase.record_operation_result``. Its verdicts join the ``dbos``
row of the matrix.
"""

from probes.kit.suite import kit_campaign

CAMPAIGN = kit_campaign(
    "dbos_kit", "DBOS 2.27.0: a workflow paused in DBOS.recv under the conformance kit",
    "probes.dbos_kit.adapter:DBOSAdapter", packages=("dbos",),
    description="DBOS.recv pause on SQLite; JSON serializer; kills inside record_operation_result; all kit protocols.")
