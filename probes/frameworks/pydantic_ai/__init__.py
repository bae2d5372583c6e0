"""pydantic-ai durable execution (pydantic-ai-slim[dbos]) measured with the conformance kit, in its own side environment."""

# The framework this package adapts, as top-level import names: only this package imports it
# (probes.layers; a study or another framework's package that must, says so in its ALSO_IMPORTS).
ADAPTS = ('pydantic_ai',)
# Frameworks other packages adapt that this one imports too, each with why.
ALSO_IMPORTS = {'dbos': "pydantic-ai's durable agents run on DBOS"}
