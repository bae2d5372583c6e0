"""Tables and headline values built from LangGraph receipts (no framework imports)."""
from __future__ import annotations
from typing import Any
def headlines(receipts: list[Any]) -> dict[str, Any]:
    return {}
