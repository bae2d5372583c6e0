"""Strands Agents (strands-agents) measured with the conformance kit, in its own side environment."""
