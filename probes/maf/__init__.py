"""Microsoft Agent Framework (agent-framework-core) measured with the conformance kit."""
