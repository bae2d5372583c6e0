"""The studies that are not conformance cells: the consume race, REMIT and its costs, live model
traffic, the regression atlas, version drift and cross-version resume. Each runs on the same
runner; a study that imports a framework says which and why (``ALSO_IMPORTS`` in its ``__init__``)."""
