"""REMIT campaigns: conformance + verification of the reference implementation (``remit``)
and its costs (``remit_bench`` timed, ``remit_cost`` counted). The implementation itself is the top-level package
``remit_ref``; this package only measures it."""
