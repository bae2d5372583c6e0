"""The chapter of a framework measured with the kit: one template, tables and figures from receipts.

``notebook(name)`` is a kit framework's notebook, from the one template below (a parameters
cell with the campaign's defaults, one call into the package, then the shared cells); it is
generated when the chapter is executed (``probes.execute.notebook_path``), never committed
or hand-edited, so a new parameter or cell is one change for every framework. Everything
the cells show is computed from the receipts of the run, so a plotting error never costs a
measurement.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any, Callable

from probes.core.checker import Property
from probes.kit.protocols import NESTED_PREFIX


LABEL_ORDER = ("✓", "D", "✗", "U", "n/a")
LABEL_COLOURS = {"✓": "#cfe8cf", "D": "#f3e3a6", "U": "#f2b8a8", "✗": "#e88a8a", "n/a": "#e6e6e6", "": "#ffffff"}


def _family(path: str) -> str:
    """``crash:kill@s1.effect/latest`` -> ``crash:kill@s1.effect``; ``tamper:drop:x`` -> ``tamper:drop``."""
    head = path.split("/")[0]
    parts = head.split(":")
    return ":".join(parts[:2]) if parts[0] == "tamper" else head.split("#")[0]


def verdict_rows(run: Any) -> list[dict[str, Any]]:
    return [{"probe": r.probe, "property": v.property.value, "path": v.path, "label": v.label.value,
             "summary": v.summary, "cited": v.doc.page if v.doc else ""}
            for r in run.receipts for v in r.verdicts]


def _observed_rows(run: Any, key: str, columns: Callable[[dict[str, Any]], dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per receipt that observed ``key`` (a protocol's ``observations[key]``): the columns
    ``columns`` makes of it, the backend, and the verdicts' labels."""
    return [{**columns(r.observations[key]), "backend": r.args.get("backend", ""),
             **{v.property.value: v.label.value for v in r.verdicts}}
            for r in run.receipts if key in r.observations]


def stall_rows(run: Any) -> list[dict[str, Any]]:
    """The stall protocol's cells: what the takeover, the superseded worker on waking and the last
    recovery returned (``observations["stall"]``), beside the verdicts."""
    return _observed_rows(run, "stall", lambda seen: {
        "stopped at": seen["point"], "recovery": seen["mode"], "takeover": seen["takeover"],
        "superseded worker": seen["superseded"],
        "last recovery": f"{seen['after']}, outcome {seen.get('after_outcome')!r}, "
                         f"effects {seen.get('after_effects') or 'none'}"})


def visibility_rows(run: Any) -> list[dict[str, Any]]:
    """Every ordering anomaly the VO checker named (``probes.core.visibility``): one row per anomaly,
    with the path, the backend and the history events (sequence numbers in the receipt's history)."""
    return [{"path": v.path, "backend": v.backend, "anomaly": a["anomaly"],
             "events": " ".join(f"#{seq}" for seq in a["events"]), "what happened": a["explanation"]}
            for r in run.receipts for v in r.verdicts if v.property is Property.VO
            for a in v.evidence.get("anomalies", [])]


def change_rows(run: Any) -> list[dict[str, Any]]:
    """The change protocol's cells: what the process running the changed code did with the paused run
    (``observations["change"]``: refused loudly, continued, or how it ended), beside the verdicts."""
    return _observed_rows(run, "change", lambda seen: {
        "code change": seen["kind"], "outcome": seen["outcome"], "effects": seen["effects"],
        # the message's first line only: some refusals carry a whole traceback in their message
        "message": ((seen.get("message") or "").splitlines() or [""])[0][:160]})


def pause_twice_rows(run: Any) -> list[dict[str, Any]]:
    """The pause-twice protocol's cells: the run's status after each answer and the effects fired
    (``observations["pause_twice"]``), beside the verdicts."""
    return _observed_rows(run, "pause_twice", lambda seen: {
        "after the first answer": seen["after_first"], "after the second": seen["after_second"],
        "effects": seen["effects"]})


def delete_rows(run: Any) -> list[dict[str, Any]]:
    """The delete protocol's cells: what the frozen holder did once it went on and what a recovery then
    found of the deleted run (``observations["delete"]``), beside the verdicts."""
    return _observed_rows(run, "delete", lambda seen: {
        "frozen at": seen["point"], "the holder then": seen["holder"], "a recovery found": seen["recovery found"]})


def parallel_rows(run: Any) -> list[dict[str, Any]]:
    """The parallel protocol's cells: what each process of the run ended with, in order, and the effects
    fired (``observations["parallel"]``), beside the verdicts."""
    return _observed_rows(run, "parallel", lambda seen: {
        "cell": seen["cell"] + (f" at {seen['point']}" if seen.get("point") else ""), "recovery": seen["mode"],
        "what happened": "; ".join(seen["steps"]), "effects": seen["effects"]})


def nested_rows(run: Any) -> list[dict[str, Any]]:
    """The nested protocol's paths (``nested:<path>``): each backend's label per property, n/a with the
    adapter's reason where it builds no nested workflow."""
    labels: dict[tuple[str, str], dict[str, str]] = defaultdict(dict)
    for r in run.receipts:
        for v in r.verdicts:
            if v.path.startswith(NESTED_PREFIX):
                labels[(v.path, v.backend)][v.property.value] = v.label.value
    return [{"path": path, "backend": backend, **found} for (path, backend), found in sorted(labels.items())]


def partition_rows(run: Any) -> list[dict[str, Any]]:
    """The partition protocol's cells: what racer B did while A was cut off from the store, and what A
    did once its link came back (``observations["partition"]``), beside the verdicts."""
    return _observed_rows(run, "partition", lambda seen: {
        "A cut at": seen["point"], "racer B": seen["b"],
        "B while A was cut off": seen["b_during_cut"], "racer A after": seen["a"]})


def rd_rows(run: Any) -> list[dict[str, Any]]:
    """The rd protocol's cells: how many copies of the crashed store were recovered, whether their
    digests matched the original's (``observations["rd"]``), and what each copy decided (the RD
    verdict's evidence), beside the verdict."""
    rows = []
    for r in run.receipts:
        if "rd" not in r.observations:
            continue
        for v in r.verdicts:
            decisions = v.evidence.get("decisions") or {}
            rows.append({"path": v.path, "backend": r.args.get("backend", ""),
                         "copies identical": r.observations["rd"].get("identical"),
                         **{copy: f"effects {d['effects'] or 'none'}; {' -> '.join(d['ended']) or 'no end'}"
                            for copy, d in decisions.items()},
                         "RD": v.label.value})
    return rows


def handler_rows(run: Any) -> list[dict[str, Any]]:
    """The handler protocol's cells (the answered step fails after its effect, the framework's error handler
    runs a step of its own): where the run was killed, how it ended and the effects it fired
    (``observations["handler"]``), beside the verdicts."""
    return _observed_rows(run, "handler", lambda seen: {
        "cell": seen["at"], "recovery": seen["mode"] if seen["at"] != "clean" else "",
        "the run": seen["ended"], "effects": seen["effects"]})


def callback_rows(run: Any) -> list[dict[str, Any]]:
    """The callback protocol's cells (an approval callback fires ``e_cb`` before the pause): how often it
    fired for the one approval, beside the verdicts (``observations["callback"]``)."""
    return _observed_rows(run, "callback", lambda seen: {
        "cell": seen["at"], "recovery": seen["mode"] if seen["at"] == "cb.effect" else "",
        "e_cb fired": seen["effects"].get("e_cb", 0), "the run": seen["ended"], "effects": seen["effects"]})


def cells(run: Any) -> dict[tuple[str, str], str]:
    """(path family, property) -> the labels found there, worst first ("✓", or e.g. "U 2/3")."""
    found: dict[tuple[str, str], Counter] = defaultdict(Counter)
    for row in verdict_rows(run):
        found[(_family(row["path"]), row["property"])][row["label"]] += 1
    out = {}
    for key, counts in found.items():
        total = sum(counts.values())
        worst = [lab for lab in ("✗", "U", "D") if counts[lab]]
        if worst:
            out[key] = " ".join(f"{lab} {counts[lab]}/{total}" for lab in worst)
        else:
            out[key] = "✓" if counts["✓"] else "n/a"
    return out


def summary(run: Any) -> str:
    """Markdown: probes, harness errors, the versions that ran, the probe time."""
    errors = [(r.probe, e) for r in run.receipts for e in r.harness_errors]
    versions: dict[str, str] = {}
    for r in run.receipts:
        versions.update(r.observations.get("framework_versions") or {})
    seconds = sum(float(r.manifest.get("probe_seconds") or 0) for r in run.receipts)
    lines = [f"**{len(run.receipts)} probes, {len(errors)} harness error(s), {seconds:.0f} s of probe time.**",
             "", "Versions that ran (reported by the probe processes): "
             + (", ".join(f"`{k} {v}`" for k, v in sorted(versions.items())) or "none reported")]
    lines += [f"* harness error in `{p}`: {e[:300]}" for p, e in errors]
    return "\n".join(lines)


def matrix_frame(run: Any):
    import pandas as pd

    grid = cells(run)
    families = sorted({f for f, _ in grid})
    props = [p for p in ("EO", "PC", "CO", "FD", "CV", "RD", "LV") if any(q == p for _, q in grid)]
    return pd.DataFrame([{"path": f, **{p: grid.get((f, p), "") for p in props}} for f in families])


def matrix_figure(run: Any, name: str):
    """A label grid (path family x property), colour by the worst label in the cell."""
    import matplotlib.pyplot as plt

    frame = matrix_frame(run)
    props = [c for c in frame.columns if c != "path"]
    fig, ax = plt.subplots(figsize=(1.4 * max(1, len(props)) + 3, 0.32 * max(1, len(frame)) + 1))
    for i, row in frame.iterrows():
        for j, p in enumerate(props):
            text = row[p]
            key = text.split(" ")[0] if text else ""
            ax.add_patch(plt.Rectangle((j, i), 1, 1, color=LABEL_COLOURS.get(key, "#ffffff")))
            ax.text(j + 0.5, i + 0.5, text, ha="center", va="center", fontsize=7)
    ax.set_xlim(0, len(props))
    ax.set_ylim(len(frame), 0)
    ax.set_xticks([j + 0.5 for j in range(len(props))], props)
    ax.set_yticks([i + 0.5 for i in range(len(frame))], list(frame["path"]), fontsize=7)
    ax.tick_params(length=0)
    ax.set_title(f"{name}: verdicts by protocol path (worst label and its share of the probes)", fontsize=9)
    fig.tight_layout()
    return fig


def citations_markdown(run: Any) -> str:
    """Every statement a label of this run rests on, with its source and the version it was read for."""
    seen: dict[tuple[str, str, str, str], set[str]] = {}
    for r in run.receipts:
        for v in r.verdicts:
            if v.doc:
                key = (v.doc.page, v.doc.quote, v.doc.source, v.doc.version)
                seen.setdefault(key, set()).add(f"{v.property.value} ({v.doc.stance})")
    if not seen:
        return "No verdict of this run rests on a documentation sentence: every violation is U."
    return "\n".join(f"* {', '.join(sorted(props))}: “{quote}” — {page} [{source or 'no source'}; "
                     f"{version or 'no version'}]" for (page, quote, source, version), props in sorted(seen.items()))


# --- the one notebook template -------------------------------------------------------

def _cell(kind: str, source: str, tags: list[str] | None = None) -> dict[str, Any]:
    cell: dict[str, Any] = {"cell_type": kind, "metadata": {"tags": tags} if tags else {}, "source": source}
    if kind == "code":
        cell.update(execution_count=None, outputs=[])
    return cell


def notebook(name: str) -> dict[str, Any]:
    import importlib

    from probes import campaigns
    from probes.kit.suite import KIT_ADAPTERS

    campaign = campaigns.get(name)
    params = "\n".join(f"{p.name} = {p.default!r}" for p in campaign.params)
    adapter_doc = (importlib.import_module(KIT_ADAPTERS[name].partition(":")[0]).__doc__ or "").strip()
    intro = (f"# {campaign.title}\n\n{campaign.description}\n\n{adapter_doc}\n\n"
             "The protocols are the conformance kit's (`probes/kit/protocols.py`), the same for every "
             "framework; this framework's adapter only translates them. See *Add your framework* for the "
             "interface and for how each label is decided.")
    return {"nbformat": 4, "nbformat_minor": 5,
            "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
                         "language_info": {"name": "python"}},
            "cells": _numbered([
                _cell("markdown", intro),
                _cell("code", params, ["parameters"]),
                _cell("code", f'from probes.notebook import run_notebook\nrun = run_notebook("{name}", globals())'),
                _cell("code", "%matplotlib inline\nfrom IPython.display import Markdown, display\n"
                              "from probes.figures import save_figure\nfrom probes.kit import chapter\n"
                              "display(Markdown(chapter.summary(run)))"),
                *_paper_cells(name),
                _cell("markdown", "## Verdicts by protocol path\n\nEach cell: the worst label measured on that "
                                  "path and for how many of its probes (✓ when every probe conforms)."),
                _cell("code", "chapter.matrix_frame(run).style.hide(axis='index')"),
                _cell("code", f"fig = chapter.matrix_figure(run, {name!r})\n"
                              f"save_figure(fig, {name + '-verdicts'!r}, 'Verdicts of {name} by protocol path "
                              f"(from the receipts of this run).', dict(run.params))"),
                _cell("markdown", "## Documentation the labels rest on"),
                _cell("code", "display(Markdown(chapter.citations_markdown(run)))"),
                _cell("markdown", "## Every verdict"),
                _cell("code", "import pandas as pd\npd.set_option('display.max_colwidth', 160)\n"
                              "pd.DataFrame(chapter.verdict_rows(run)).style.hide(axis='index')"),
                _cell("markdown", "## Effect visibility order (VO)\n\nEvery history a protocol decided on is "
                                  "read for ordering anomalies, in the manner of Elle: an effect seen before the "
                                  "durable record that caused it (effect-before-cause, effect-ahead-of-record), a "
                                  "write or effect by an owner another process had taken the run from "
                                  "(superseded-write), a read of the superseded branch after a fork (stale-read). "
                                  "No documentation statement speaks to the order, so a violation is U. Race paths "
                                  "get no VO verdict: they are decided over trials, not one history."),
                _cell("code", "rows = chapter.visibility_rows(run)\n"
                              "display(pd.DataFrame(rows).style.hide(axis='index') if rows else "
                              "Markdown('No ordering anomaly in any history of this run.'))"),
                _cell("markdown", "## A paused worker (stall)\n\nThe worker answering the run is frozen by SIGSTOP "
                                  "inside the answered step; another process takes the run over and finishes it; "
                                  "then the frozen worker goes on, and a last recovery looks at what is durable. "
                                  "Its late writes must not land; an effect already inside the step's body fires "
                                  "when it wakes, whatever the framework does (EO, CO)."),
                _cell("code", "rows = chapter.stall_rows(run)\n"
                              "display(pd.DataFrame(rows).style.hide(axis='index') if rows else "
                              "Markdown('The stall protocol was not run here.'))"),
                _cell("markdown", "## The run deleted under a worker that holds it (delete)\n\nThe run is deleted "
                                  "through the framework's own API while the worker answering it is frozen (SIGSTOP) "
                                  "inside the answered step; the worker then goes on, and a recovery looks for the "
                                  "run. The worker may finish its step, but its late writes must not bring the "
                                  "deleted run back (VO's write-after-delete), nor fire anything twice (EO, CO). n/a "
                                  "where the adapter declares no delete."),
                _cell("code", "rows = chapter.delete_rows(run)\n"
                              "display(pd.DataFrame(rows).style.hide(axis='index') if rows else "
                              "Markdown('The delete protocol was not run here.'))"),
                _cell("markdown", "## Code changed between the pause and the answer (change)\n\nThe run pauses "
                                  "under the original workflow; the answer comes from a process running changed "
                                  "code (a deploy while the run waits). A correct continuation or a loud refusal "
                                  "conforms; a silent skip (the answered step never runs) or a repeated effect does "
                                  "not (EO; LV where the framework did not refuse). No documentation statement about "
                                  "resuming the same code labels these paths: a violation is U unless the adapter "
                                  "cites a statement for code changes."),
                _cell("code", "rows = chapter.change_rows(run)\n"
                              "display(pd.DataFrame(rows).style.hide(axis='index') if rows else "
                              "Markdown('The change protocol was not run here.'))"),
                _cell("markdown", "## A step that asks twice (pause_twice)\n\nThe pausing step asks two questions, "
                                  "answered one at a time: e2 fires after the first answer, e2b after the second. A "
                                  "framework that runs the step again from its top on the second answer fires e2 "
                                  "twice although it was answered once (EO, CO); the run must complete (LV). n/a "
                                  "where the adapter does not build such a step."),
                _cell("code", "rows = chapter.pause_twice_rows(run)\n"
                              "display(pd.DataFrame(rows).style.hide(axis='index') if rows else "
                              "Markdown('The pause-twice protocol was not run here.'))"),
                _cell("markdown", "## Two parallel branches that each pause, then a join (parallel)\n\nAfter s1 "
                                  "two branches run in parallel, each pausing for an answer of its own (b1, b2); a "
                                  "join step runs once both are answered. Partly: b1 alone is answered, then a fresh "
                                  "process recovers: b2 must still be asking (not lost, not answered by itself), and "
                                  "its answer runs the join. Crash: both answered, the process running the join "
                                  "killed at its begin or at its effect, then recovered. Every effect at most once, "
                                  "each exactly once on completion (EO); each branch's effect once per answer to that "
                                  "branch (CO); the run completes with both answers joined (LV). n/a where the "
                                  "adapter builds no such workflow (the reason says why)."),
                _cell("code", "rows = chapter.parallel_rows(run)\n"
                              "display(pd.DataFrame(rows).style.hide(axis='index') if rows else "
                              "Markdown('The parallel protocol was not run here.'))"),
                _cell("markdown", "## The pause inside a nested workflow (nested)\n\nThe pausing step runs inside "
                                  "a nested workflow of the framework's own (a subgraph, a child workflow, a "
                                  "sub-agent); the baseline, crash, park-kill, stray and fork cells run on it with "
                                  "the same steps, effects and checkers as on the two-step workflow. A framework "
                                  "that resumes the nested pause from the outer record alone shows it here. n/a "
                                  "where the adapter builds no nested workflow (the reason says why)."),
                _cell("code", "rows = chapter.nested_rows(run)\n"
                              "display(pd.DataFrame(rows).style.hide(axis='index') if rows else "
                              "Markdown('The nested protocol was not run here.'))"),
                _cell("markdown", "## A partition in the middle of a consume (partition)\n\nTwo racers in "
                                  "network namespaces of their own answer the run's current pause on PostgreSQL; "
                                  "racer A's link to the store is cut inside the answered step, racer B answers "
                                  "meanwhile, then A's link comes back (once B has ended). A partitioned owner "
                                  "looks dead but is alive: B must not consume the answer A consumed (CO), nothing "
                                  "may fire twice (EO), and the run must complete (LV). n/a on a backend with no "
                                  "link to cut, and on a machine that cannot make network namespaces (the reason "
                                  "says which)."),
                _cell("code", "rows = chapter.partition_rows(run)\n"
                              "display(pd.DataFrame(rows).style.hide(axis='index') if rows else "
                              "Markdown('The partition protocol was not run here.'))"),
                _cell("markdown", "## The same crashed store recovered twice (rd)\n\nThe run is SIGKILLed at a "
                                  "step point; byte-identical copies of its durable state are made (digests checked "
                                  "equal before any is recovered) and each is recovered in processes of its own, the "
                                  "pause answered if the recovery reaches one. RD holds iff every copy decided the "
                                  "same: the same effects fired, the same steps begun, the same ending. n/a where the "
                                  "adapter's state cannot be copied (the reason says why)."),
                _cell("code", "rows = chapter.rd_rows(run)\n"
                              "display(pd.DataFrame(rows).style.hide(axis='index') if rows else "
                              "Markdown('The rd protocol was not run here.'))"),
                *_handler_callback_cells(),
                *_exhaustive_cells(name),
            ])}


def _paper_cells(name: str) -> list[dict[str, Any]]:
    """A paper campaign's section: its published values beside this run's (``probes.paper`` reads them
    from the receipts; ``probes.headline`` compares), then any section of its own the paper module
    names (``probes.paper.sections``: a study's table and figure). None for a campaign the paper
    publishes nothing of."""
    from probes.headline import load_published
    from probes.paper import sections

    if not any(entry["campaign"] == name for entry in load_published()):
        return []
    return [
        _cell("markdown", "## Measured next to the paper\n\nPublished values come from `data/published.json` "
                          "(each names its source line), measured values from this run's receipts, read by "
                          f"`probes/paper/{name}.py`; the status is computed as on the headline page."),
        _cell("code", "from probes.chapter import published\npublished(run)"),
        *(_cell(kind, source) for kind, source in sections(name)),
    ]


def _handler_callback_cells() -> list[dict[str, Any]]:
    """The sections of the handler and callback protocols (issue 27 item 1)."""
    return [
        _cell("markdown", "## A step with an error handler (handler)\n\nThe answered step fails after its effect "
                          "e2, and the framework's own error-handling construct (an error edge, a fallback route, a "
                          "try/except around a step in a durable workflow) runs a handler step with an effect of its "
                          "own, e_handler; the run is SIGKILLed at the handler's begin or effect and recovered. The "
                          "handler's effect must fire once, and the failed step's e2 no second time on recovery (EO, "
                          "CO); the run must complete with the handler's result (LV). n/a where the framework has no "
                          "such construct (the reason says why)."),
        _cell("code", "rows = chapter.handler_rows(run)\n"
                      "display(pd.DataFrame(rows).style.hide(axis='index') if rows else "
                      "Markdown('The handler protocol was not run here.'))"),
        _cell("markdown", "## An approval callback with an effect (callback)\n\nThe framework asks for the approval "
                          "through a callback or hook of its own (a tool's needs-approval function, a before-tool "
                          "callback, an interrupt hook, a LangGraph node that writes before it calls interrupt()), "
                          "which fires e_cb before the pause; the pause is answered with no fault, after the process "
                          "parked at it was killed, or after a kill just past the callback's effect. One approval "
                          "should fire e_cb once (EO): a framework that calls the callback again on resume fires it "
                          "twice, D where its documentation says so."),
        _cell("code", "rows = chapter.callback_rows(run)\n"
                      "display(pd.DataFrame(rows).style.hide(axis='index') if rows else "
                      "Markdown('The callback protocol was not run here.'))"),
    ]


def _exhaustive_cells(name: str) -> list[dict[str, Any]]:
    """The section of the exhaustive protocol (``probes.kit.exhaustive``, drawn by ``exhaustive_chapter``)."""
    return [
        _cell("markdown", "## Exhaustive crash points\n\nEvery step boundary and every write of the framework's "
                          "own save that a traced clean run reached, numbered over the run (`save.write#3`: its "
                          "third write), each crashed at (SIGKILL; an exception where one can be raised) and "
                          "recovered by each recovery mode; the verdicts are the crash protocol's (EO, PC, LV). "
                          "With more points than `exhaustive_cap`, that many are measured, spread evenly over "
                          "the run; a blank cell is a point left out."),
        _cell("code", "from probes.kit import exhaustive_chapter\n"
                      "display(Markdown(exhaustive_chapter.summary(run)))"),
        _cell("code", "exhaustive_chapter.frame(run).style.hide(axis='index')"),
        _cell("code", f"fig = exhaustive_chapter.figure(run, {name!r})\n"
                      f"if fig is not None:\n"
                      f"    save_figure(fig, {name + '-crash-points'!r}, 'The verdict of {name} at every crash point "
                      f"of the traced baseline, per crash kind, recovery mode and property (from the receipts of "
                      f"this run).', dict(run.params))"),
    ]


def _numbered(cells: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """nbformat 4.5 wants an id on every cell: stable ones, so a regenerated notebook is unchanged."""
    return [{"id": f"cell-{i:02d}", **cell} for i, cell in enumerate(cells)]
