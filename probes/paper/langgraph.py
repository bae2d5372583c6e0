"""LangGraph's published values, read from the kit's receipts of the ``langgraph`` campaign.

The paper publishes three (``data/published.json``):

* ``langgraph.fd_outcome`` (#6663): the interrupt answered ``True``, then answered again with
  ``False`` at the same checkpoint; its workload's ``f`` gives ``f(True) = 2`` and ``f(False) = 1``, so
  FD expects 1 and the paper observed 2, the first answer's outcome served again. The kit's workflow
  answers ``yes`` then ``no`` at the pause's checkpoint (``fork:same-pause``, decided by the kit's FD
  judgement, which records the outcome served and whose it is); the observed value is the paper's
  ``f`` of the answer that outcome served (``f(True)`` when the first answer's outcome came back).
* ``langgraph.row``: the paper's row, each key the worst label of the kit cells that measure it
  (any of ✗, D, U counts as ✗; the exact labels per path are under ``labels``), graph and functional
  API together as the paper's campaign had them.
* ``langgraph.crash_s1_runs``: how many times ``s1``'s effect fired when a crash was recovered by
  sending the original input again (the paper's "resubmit"; the kit's ``resend-input``), at the
  paper's kill points A (``s2.begin``) and C (``s1.effect``), on both APIs and every backend.
"""

from __future__ import annotations

from typing import Any, Callable

from probes.core.checker import Label, Verdict, collapse
from probes.core.receipt import Receipt

FRAMEWORK = "langgraph"
FUNCTIONAL = "functional:"
FORK = "fork:same-pause"
RESEND = "resend-input"
PAPER_POINTS = {"s2.begin": "A", "s1.effect": "C"}  # the paper's kill points, as the kit's crash points
PAPER_F = {"yes": True, "no": False}  # the kit's answers (first, second) as the paper's: f(True) = 2, f(False) = 1


def _api(path: str) -> str:
    """The path without the functional API's prefix (both APIs measure the same cells)."""
    return path[len(FUNCTIONAL):] if path.startswith(FUNCTIONAL) else path


def _is(prop: str, *prefixes: str) -> Callable[[Verdict], bool]:
    return lambda v: v.property.value == prop and _api(v.path).startswith(prefixes)


# The published row's keys, each over the kit cells that measure what the paper's campaign measured
# for it. CO cross-process (racing resumers) is the consume_race campaign's.
ROW_KEYS: dict[str, Callable[[Verdict], bool]] = {
    "PC": _is("PC", "park-kill"),
    "EO interrupt": _is("EO", "baseline:", "park-kill"),
    "EO crash": _is("EO", "crash:", "save-kill:"),
    "FD": _is("FD", "fork:"),
    "CV": _is("CV", "write:invalid-state"),
    "CO sequential": _is("CO", "stray-after-completion", "sequential:", "fan-out:"),
    "RD": _is("RD", "rd:"),
}
EXTRA_KEYS: dict[str, Callable[[Verdict], bool]] = {
    f"{prop} crash (recover={mode})": (lambda v, prop=prop, mode=mode: _is(prop, "crash:")(v)
                                        and v.path.endswith(f"/{mode}"))
    for prop in ("PC", "EO") for mode in ("none-input", RESEND)
}


def _verdicts(receipts: list[Receipt]) -> list[tuple[Receipt, Verdict]]:
    return [(r, v) for r in receipts for v in r.verdicts if v.framework == FRAMEWORK]


def _row_value(labels: list[Label]) -> str:
    worst = collapse(labels)
    if worst is None:
        return "not measured"
    return "✗" if worst.violates else worst.value


def _row(receipts: list[Receipt]) -> Any:
    from probes.headline import Measured

    pairs = _verdicts(receipts)
    value: dict[str, Any] = {}
    labels: dict[str, dict[str, str]] = {}
    used: set[str] = set()
    for key, pred in {**ROW_KEYS, **EXTRA_KEYS}.items():
        by_path: dict[str, list[Label]] = {}
        for r, v in pairs:
            if pred(v):
                by_path.setdefault(v.path, []).append(v.label)
                if key in ROW_KEYS:
                    used.add(r.probe)
        value[key] = _row_value([lab for labs in by_path.values() for lab in labs])
        # a path whose cells disagree (repetitions, backends) shows every label it got, e.g. "✓/D"
        labels[key] = {path: "/".join(sorted({lab.value for lab in labs})) for path, labs in sorted(by_path.items())}
    missing = [key for key in ROW_KEYS if value[key] == "not measured"]
    why = ("Each key is the worst label of the kit cells that measure it, over both APIs and every backend "
           "(any of ✗, D, U counts as ✗; the exact label of every path is under 'labels'). 'EO crash' is the "
           "worst over both recoveries: with the documented invoke(None) recovery only a crash inside a step "
           "after its effect fired repeats the effect, while sending the input again runs s1 again at every "
           "point -- see the per-recovery keys.")
    if missing:
        why += f" Not measured in these receipts: {', '.join(missing)}."
    return Measured({**value, "CO cross-process": "measured by the consume_race campaign", "labels": labels},
                    why=why, compare_keys=tuple(ROW_KEYS), receipts=tuple(sorted(used)))


def _served(v: Verdict) -> str | None:
    """Whose outcome the fork was served, from the FD judgement's evidence: the first answer's ("yes"), its
    own ("no"), or neither (None: refused, or another outcome)."""
    if v.evidence.get("served_first_outcome"):
        return "yes"
    return "no" if v.evidence.get("observed") == v.evidence.get("expected_f_v") else None


def _fd_outcome(receipts: list[Receipt]) -> Any:
    from probes.headline import Measured

    forks = [(r, v) for r, v in _verdicts(receipts) if v.path == FORK and v.property.value == "FD"]
    if not forks:
        return f"no {FORK} verdict in these receipts (run the kit's fork protocol)"
    served: dict[str, Any] = {}
    for r, v in forks:
        served.setdefault(v.backend, set()).add(_served(v))
    per_backend = {b: sorted(map(str, answers)) for b, answers in sorted(served.items())}
    answers = {a for got in served.values() for a in got}
    if len(answers) != 1 or next(iter(answers)) not in PAPER_F:
        return Measured({"observed": "differs by backend or repetition", "expected": 1, "per_backend": per_backend},
                        why="the fork served different answers' outcomes; see per_backend",
                        compare_keys=("observed", "expected"), receipts=tuple(sorted(r.probe for r, _ in forks)))
    answer = next(iter(answers))
    observed = 2 if PAPER_F[answer] else 1
    return Measured(
        {"observed": observed, "expected": 1, "served_answer": answer, "per_backend": per_backend},
        why=(f"The pause answered 'yes', then 'no' at the same checkpoint ({len(forks)} cells, every backend): the "
             f"second answer was served the outcome of {answer!r}. On the paper's workload the answers are True and "
             f"False with f(True) = 2 and f(False) = 1, so the observed value is f({PAPER_F[answer]}) = {observed}; "
             "FD expects f(False) = 1."),
        compare_keys=("observed", "expected"), receipts=tuple(sorted(r.probe for r, _ in forks)))


def _crash_s1_runs(receipts: list[Receipt]) -> Any:
    from probes.headline import Measured

    by_point: dict[str, dict[str, list[int]]] = {RESEND: {}, "none-input": {}}
    used = set()
    for r, v in _verdicts(receipts):
        path = _api(v.path)
        if v.property.value != "EO" or not path.startswith("crash:"):
            continue
        point, _, mode = path.removeprefix("crash:").partition("/")
        how, _, at = point.partition("@")
        if at not in PAPER_POINTS or mode not in by_point:
            continue
        api = "functional" if v.path.startswith(FUNCTIONAL) else "graph"
        key = f"{PAPER_POINTS[at]} ({how}@{at}, {api})/{v.backend}"
        by_point[mode].setdefault(key, []).append(v.evidence["effect_counts"].get("e1", 0))
        if mode == RESEND:
            used.add(r.probe)
    resend = sorted({n for counts in by_point[RESEND].values() for n in counts})
    if not resend:
        return "no crash cell recovered by resend-input at the paper's kill points A (s2.begin) or C (s1.effect)"
    flat = {mode: {k: counts[0] if len(set(counts)) == 1 else sorted(set(counts))
                   for k, counts in sorted(cells.items())} for mode, cells in by_point.items()}
    reps = sorted({len(counts) for counts in by_point[RESEND].values()})
    return Measured(
        {"s1_runs": resend[0] if len(resend) == 1 else resend,
         "recovery_mode": "resend-input (the original input sent again, the paper's resubmit)",
         "s1_runs_by_point_resend_input": flat[RESEND], "s1_runs_by_point_none_input": flat["none-input"]},
        why=(f"s1_runs is e1's count over the crash cells at the paper's kill points A (s2.begin) and C (s1.effect), "
             f"killed and raised, graph and functional API, recovered by sending the input again "
             f"({len(by_point[RESEND])} cells, {'/'.join(map(str, reps))} repetition(s) each); a list means they "
             "disagree. The paper's point B (inside the saver's put) is the kit's save-kill protocol, which recovers "
             "by invoke(None) only. With invoke(None) see s1_runs_by_point_none_input."),
        compare_keys=("s1_runs",), receipts=tuple(sorted(used)))


def headlines(receipts: list[Receipt]) -> dict[str, Any]:
    return {"langgraph.fd_outcome": _fd_outcome(receipts), "langgraph.row": _row(receipts),
            "langgraph.crash_s1_runs": _crash_s1_runs(receipts)}
