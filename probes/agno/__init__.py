"""Agno (agno) measured with the conformance kit, in its own side environment."""
