"""Conformance probes for the Resume Contract.

The layout follows the layers of ``probes.layers`` (each imports only downward):

* ``probes/core``       -- the contract (properties, histories, checkers), the harness (processes,
  nemesis, oracles, backends) and the runner (campaigns, receipts, fingerprints);
* ``probes/kit``        -- the adapter interface and the protocols, written once;
* ``probes/frameworks`` -- one package per framework: it only translates between the framework's
  API and the kit's vocabulary, and is the only package that imports the framework;
* ``probes/studies``    -- the studies that are not conformance cells (consume race, REMIT, live,
  atlas, drift, cross-version resume);
* ``probes/tla``        -- model checking and trace validation against the TLA+ model;
* ``probes/paper``      -- the paper's published values as functions over receipts;
* the top-level modules -- the book (chapters, pages) and the command line.
"""

from __future__ import annotations

import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DATA_DIR = PROJECT_ROOT / "data"
# Results live in data/reference/ (committed reference run) and runs/ (this machine's
# runs): see probes/core/runs.py, where RC_REFERENCE_DIR and RC_RUNS_DIR override them.
NOTEBOOKS_DIR = Path(os.environ.get("RC_NOTEBOOKS_DIR", PROJECT_ROOT / "notebooks"))
BOOK_DIR = PROJECT_ROOT / "book"
