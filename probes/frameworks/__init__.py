"""One package per framework: its adapter (the kit's interface, translated), citations, side
environment pins and the protocols only it has; its ``campaign.py`` is found by ``probes.campaigns``.
Only a framework's own package imports the framework (``ADAPTS`` in its ``__init__``)."""
