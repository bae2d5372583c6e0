"""REMIT campaigns: conformance + verification of the reference implementation (``remit``)
and its costs (``remit_bench`` timed, ``remit_cost`` counted). The implementation itself is the top-level package
``remit_ref``; this package only measures it."""

# Frameworks this study imports (top-level import names; "*" is every one), each with why (probes.layers).
ALSO_IMPORTS = {'langgraph': "REMIT wraps LangGraph's checkpointers; its LangGraph arm runs the kit's protocols"}
