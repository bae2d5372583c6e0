"""Error types shared by the harness.

A ``HarnessError`` means the measurement itself is broken (the two oracles disagree,
a racer hung, a kill point was never reached). It is reported as such and never turned
into a verdict. A ``UsageError`` is bad input from a person: it carries a one-line
message that says what to do, and the CLI exits with status 2.
"""

from __future__ import annotations


class HarnessError(RuntimeError):
    """The measurement could not be taken; never a verdict."""


class UsageError(ValueError):
    """Bad input from the user (unknown parameter, missing tool...): one line, exit 2."""


class ReceiptError(ValueError):
    """A receipt on disk is malformed or was written for other parameters."""
