"""What pydantic-ai's and DBOS's documentation says, keyed "PROPERTY path-pattern"."""

CITATIONS: dict = {}
