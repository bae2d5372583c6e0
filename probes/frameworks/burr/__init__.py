"""Apache Burr (apache-burr) measured with the conformance kit, in its own side environment."""

# The framework this package adapts, as top-level import names: only this package imports it
# (probes.layers; a study or another framework's package that must, says so in its ALSO_IMPORTS).
ADAPTS = ("burr",)
