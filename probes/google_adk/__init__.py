"""Google ADK (google-adk) measured with the conformance kit, in its own side environment."""
