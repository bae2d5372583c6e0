"""What the OpenAI Agents SDK's documentation says (filled in from the docs)."""

CITATIONS: dict[str, dict[str, str]] = {}
