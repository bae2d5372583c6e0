"""What Google ADK's documentation says (filled in from the docs)."""

CITATIONS: dict[str, dict[str, str]] = {}
