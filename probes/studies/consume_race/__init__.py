"""Cross-process consume-once campaign: racing resumes of one interrupt (see campaign.py)."""

# Frameworks this study imports (top-level import names; "*" is every one), each with why (probes.layers).
ALSO_IMPORTS = {'langgraph': "the race of concurrent resumes is measured on LangGraph's savers"}
