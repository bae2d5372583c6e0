"""Framework-independent harness core: oracles, nemesis, checker, receipts, backends."""
