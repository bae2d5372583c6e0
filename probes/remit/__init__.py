"""REMIT campaigns: conformance + verification of the reference implementation (``remit``)
and its benchmarks (``remit_bench``). The implementation itself is the top-level package
``remit_ref``; this package only measures it."""
