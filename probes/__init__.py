"""Conformance probes for the Resume Contract.

The harness follows the classic split of fault-injection testers:

* ``probes.core.workload``  -- nothing framework-specific: a protocol is a function a
  framework adapter implements;
* ``probes.core.nemesis``   -- crash injection (exceptions, barrier-synchronised SIGKILL);
* ``probes.core.oracle``    -- effect counters (in-process counter + SQLite ledger);
* ``probes.core.checker``   -- observations -> verdicts (PC, EO, FD, CV, CO, RD, FI, LV);
* ``probes.core.receipt``   -- atomic JSON receipts with manifests and a stable verdict view.

Framework adapters live in sibling packages (``probes.langgraph_kit`` ...) and only
translate between a framework's API and the harness vocabulary.
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
