"""pydantic-ai durable execution (pydantic-ai-slim[dbos]) measured with the conformance kit, in its own side environment."""
