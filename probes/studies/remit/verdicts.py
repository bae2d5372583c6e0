"""The REMIT row: per property, one label from the langgraph+remit verdicts.

Kept apart from the campaign so the row's logic is small and mutation-tested on its
own (``mutation/remit_row.toml``).
"""

from __future__ import annotations

from probes.core.checker import Label, collapse
from probes.core.receipt import Receipt

FRAMEWORK = "langgraph+remit"
SAVER_ONLY = "langgraph+remit (saver only, no effect ledger)"
# The paper's build, remit-contract 0.1.2, through the same protocols.
CONTRACT = "langgraph+remit-contract"
CONTRACT_SAVER_ONLY = "langgraph+remit-contract (saver only, no effect ledger)"


def saver_only(framework: str) -> str:
    """The crash-path subject of a REMIT build: the wrapper alone, without an effect ledger."""
    return f"{framework} (saver only, no effect ledger)"


def _labels(receipts: list[Receipt], framework: str) -> dict[str, list[tuple[Label, str, str]]]:
    """Per row property (see ``row``), each measured label with the path and the backend that gave it."""
    suffix = {framework: "", saver_only(framework): " crash (saver only)"}
    by: dict[str, list[tuple[Label, str, str]]] = {}
    for r in receipts:
        for v in r.verdicts:
            if v.framework in suffix:
                by.setdefault(v.property.value + suffix[v.framework], []).append((v.label, v.path, v.backend))
    return by


def row(receipts: list[Receipt], framework: str = FRAMEWORK) -> dict[str, str]:
    """The REMIT row from verdicts: per property, the collapsed label (``checker.collapse``).

    EO counts the interrupt/park paths and the crash path *through the ledger*; PC the
    interrupt/park paths (the published row's scope). The reused crash probes measure
    what the saver alone does on the crash path and are reported separately as
    ``EO crash (saver only)`` / ``PC crash (saver only)``: a checkpointer cannot stop a
    task's code from running again, nor a re-submitted input from starting a new run.
    A property with only n/a paths is left out (nothing was measured).
    """
    out = {p: collapse(label for label, _, _ in found) for p, found in sorted(_labels(receipts, framework).items())}
    return {p: ("✗" if lab.violates else lab.value) for p, lab in out.items() if lab not in (None, Label.NA)}


def where_not_conformant(receipts: list[Receipt], framework: str = FRAMEWORK,
                         properties: tuple[str, ...] = ("FD", "CV", "CO", "EO", "PC", "RD"), limit: int = 4) -> str:
    """Where each of ``properties`` that is not ✓ in the row gets its label: the label and the paths
    that carry it (with their backends; at most ``limit``, then how many more), e.g.
    ``FD U: fork:update-state (sqlite)``; empty when every one is ✓."""
    parts = []
    for prop, found in sorted(_labels(receipts, framework).items()):
        worst = collapse(label for label, _, _ in found)
        if prop not in properties or worst is None or worst in (Label.PASS, Label.NA):
            continue
        backends: dict[str, set[str]] = {}
        for label, path, backend in found:
            if label is worst:
                backends.setdefault(path, set()).add(backend)
        paths = [f"{path} ({', '.join(sorted(b))})" for path, b in sorted(backends.items())]
        more = f" and {len(paths) - limit} more" if len(paths) > limit else ""
        parts.append(f"{prop} {worst.value}: {', '.join(paths[:limit])}{more}")
    return "; ".join(parts)
