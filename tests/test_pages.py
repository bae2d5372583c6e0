"""Generated pages and shared chapter cells: readable HTML from receipts (no browser needed)."""

from __future__ import annotations

import re

from probes.chapter import table, verdict_rows
from probes.core.checker import Label, Property, Verdict
from probes.core.receipt import Receipt
from probes.pages import matrix_page, tidy_chapter


def _receipt(probe: str, backend: str, label: Label, path: str = "crash:A") -> Receipt:
    v = Verdict("fw", backend, Property.EO, path, label, {}, f"observed on {backend}")
    return Receipt("camp", probe, {}, {}, {}, [v], {}, [])


def test_table_is_html_in_a_scroll_box_with_repetitions_collapsed() -> None:
    rows = [{"path": "p", "label": "U", "receipt": f"p.rep{i}"} for i in (1, 2, 3)] + \
           [{"path": "q", "label": "✓", "receipt": "q.rep1"}]
    html = table(rows, ["path", "label"], campaign="camp").fragment
    assert html.startswith('<div class="rc-table-wrap"><table')
    assert "|---" not in html
    assert html.count("<tr>") == 3  # header + two rows: three repetitions of p became one
    assert "×3" in html
    for i in (1, 2, 3):
        assert f'href="../receipts/camp/p.rep{i}.json"' in html


def test_long_text_is_cut_with_the_full_text_one_click_away() -> None:
    long = "x" * 500
    html = table([{"observed": long}], short=100).fragment
    assert "<details" in html and long in html and "…" in html


def test_merge_joins_backends_that_agree() -> None:
    rows = [{"point": "A", "backend": b, "EO": "U", "receipt": f"a.{b}"} for b in ("postgres", "sqlite")]
    html = table(rows, ["point", "backend", "EO"], merge="backend").fragment
    assert "postgres, sqlite" in html and html.count("<tr>") == 2


def test_verdict_rows_group_backends_and_repetitions() -> None:
    receipts = [_receipt(f"a.{b}.rep{i}", b, Label.UNDOC if b != "memory" else Label.NA)
                for b in ("memory", "sqlite", "postgres") for i in (1, 2)]
    rows = verdict_rows(receipts)
    assert len(rows) == 1 and len(rows[0]["receipt"]) == 6
    assert "postgres, sqlite" in rows[0]["verdict"].html and "U" in rows[0]["verdict"].html


def test_matrix_page_has_one_entry_per_path_and_a_link_per_receipt() -> None:
    from probes.matrix import Cell

    cells = [Cell("fw", b, Property.EO, "crash:A", Label.UNDOC, "s", f"receipts/camp/a.{b}.rep{i}.json")
             for b in ("sqlite", "postgres") for i in (1, 2, 3)]
    page = matrix_page(cells)
    assert "|---" not in page
    assert page.count("<code>crash:A</code>") == 1 and "×6" in page
    assert len(re.findall(r'href="\.\./receipts/camp/a\.\w+\.rep\d\.json"', page)) == 6
    assert "\n\n" not in page.split("# Conformance matrix", 1)[1].split("## Every path")[1].split("\n", 3)[3]


def test_tidy_chapter_hides_code_removes_parameter_cells_and_warnings() -> None:
    nb = {"metadata": {}, "cells": [
        {"cell_type": "markdown", "id": "t", "metadata": {}, "source": "# Title\n\nIntro text."},
        {"cell_type": "code", "metadata": {"tags": ["parameters"]}, "source": "reps = 3", "outputs": []},
        {"cell_type": "code", "metadata": {"tags": ["injected-parameters"]}, "source": "reps = 3", "outputs": []},
        {"cell_type": "code", "metadata": {}, "source": "x", "outputs": [
            {"output_type": "stream", "name": "stderr", "text": "/tmp/a.py:1: RuntimeDirWarning: XDG_RUNTIME_DIR is not set"},
            {"output_type": "stream", "name": "stdout", "text": "kept"}]},
    ]}
    out = tidy_chapter(nb)
    cells = out["cells"]
    assert cells[0]["source"] == "# Title\n" and cells[1]["source"] == "Intro text."
    assert "remove-cell" in cells[2]["metadata"]["tags"] and "remove-cell" in cells[3]["metadata"]["tags"]
    assert "hide-input" in cells[4]["metadata"]["tags"]
    assert [o["name"] for o in cells[4]["outputs"]] == ["stdout"]


def test_report_lists_changed_cells_with_both_labels_and_receipts(tmp_path) -> None:
    import json
    from pathlib import Path

    from probes.core.runs import RunInfo
    from probes.pages import compare_views

    def run(where: str, source: str, labels: dict[str, str]) -> RunInfo:
        d = tmp_path / where
        d.mkdir()
        probes = {}
        for probe, label in labels.items():
            probes[probe] = {"harness_errors": 0, "verdicts": [
                {"framework": "fw", "backend": "sqlite", "property": "EO", "path": "p", "label": label}]}
            (d / f"{probe}.json").write_text("{}")
        (d / "verdicts.json").write_text(json.dumps({"probes": probes}))
        return RunInfo("camp", source, d, f"default-{where}", "default", {}, "f", 0, {})

    ref = run("ref", "reference run", {"a": "✓", "b": "U"})
    same = run("same", "this machine", {"a": "✓", "b": "U"})
    text, n = compare_views(ref, same)
    assert n == 0 and "identical" in text and "2 verdict cells" in text
    other = run("other", "this machine", {"a": "U", "b": "U"})
    results = tmp_path / "results"
    text, n = compare_views(ref, other, results)
    assert n == 1
    assert "✓ <a href=\"../reference/camp/a.json\">receipt</a>" in text
    assert "U <a href=\"../runs/camp/default-other/a.json\">receipt</a>" in text
    assert (results / "reference" / "camp" / "a.json").exists() and Path(results / "runs" / "camp" / "default-other" / "a.json").exists()


def test_timing_page_sums_the_shown_runs_against_the_budget(tmp_path, monkeypatch) -> None:
    """The totals and the verdict against the budget come from the runs' times; a quick
    run among them is named, so its sum is not read as a default run's time."""
    import json
    import types

    from probes import pages, timing

    fam = timing.FamilyTime("crash", 10, 1500.0, 150.0, "crash.K1", 300.0, 0)
    times = [timing.CampaignTime("langgraph", "", 1500.0, 1600.0, (fam,)),
             timing.CampaignTime("tlc", "", 240.0, 260.0, (timing.FamilyTime("fault", 6, 240.0, 40.0, "f", 60.0, 0),)),
             timing.CampaignTime("maf", "", 100.0, None, ())]
    by_name = {t.campaign: t for t in times}
    monkeypatch.setattr(timing, "campaign_time", lambda directory, depth=None, source="": by_name[directory])
    profiles = {"langgraph": "default", "tlc": "quick", "maf": "default"}
    monkeypatch.setattr(pages, "shown_run", lambda name: types.SimpleNamespace(
        run_id=f"{profiles[name]}-x", profile=profiles[name], is_reference=False, directory=name,
        describe=lambda: name) if name in profiles else None)
    from probes import schedules

    monkeypatch.setattr(schedules, "newest_end_to_end", lambda: None)
    monkeypatch.setattr(schedules, "end_to_end_records", lambda: [])
    page = pages.timing_page(tmp_path)
    # no schedule record: the budget row says so; the sums are sums, one after another, with no budget
    assert ("<tr><td>the default run end to end</td><td>—</td><td>30.0 min</td><td>no record yet: "
            "<code>./reproduce.sh</code> writes one</td></tr>") in page
    assert "<tr><td>the default run's campaigns, one after another</td><td>31.0 min</td>" in page  # 1600 s + 260 s
    assert "<tr><td>everything (<code>--all</code>), one after another</td><td>32.7 min</td>" in page  # + maf's 100 s
    assert "sum of probe times" in page and "Runs with other parameters are part of these sums: tlc" in page
    # which command measures each campaign, and whether it is one of the paper's
    assert "<td>langgraph</td><td>26.7 min</td><td>default run (the paper's)</td>" in page
    assert "<td>maf</td><td>1.7 min</td><td><code>--all</code></td>" in page
    assert 'id="fig-where-the-time-goes"' in page and 'href="../figures/where-the-time-goes.svg"' in page
    sidecar = json.loads((tmp_path / "where-the-time-goes.json").read_text())
    assert sidecar["runs"] == {"langgraph": "default-x", "tlc": "quick-x", "maf": "default-x"}
    assert sidecar["regenerate"] == "./reproduce.sh --book-only" and sidecar["number"] == 1
    # a record of the default run measured whole: its elapsed time is what goes against the budget, drawn first
    record = {"started": "2026-12-05T01:00:00+00:00", "jobs": 2, "cores": 2, "commit": "0123456789abcdef",
              "clean": True,
              "elapsed_s": 1700.0, "file": "20261205T010000Z-jobs2.json",
              "campaigns": {"tlc": {"alone": False, "outcome": "measured", "start_s": 0.0, "end_s": 900.0},
                            "langgraph": {"alone": False, "outcome": "measured", "start_s": 0.0, "end_s": 800.0},
                            "consume_race": {"alone": True, "outcome": "measured", "start_s": 900.0,
                                             "end_s": 1700.0}}}
    monkeypatch.setattr(schedules, "newest_end_to_end", lambda: ("reference run", record))
    monkeypatch.setattr(schedules, "end_to_end_records", lambda: [("reference run", record)])
    page = pages.timing_page(tmp_path)
    # every record in a table: 15 min side by side, then consume_race's 800 s alone
    assert ("<td>reference run</td><td>2026-12-05 01:00</td><td><code>0123456789ab</code></td><td>2</td><td>2</td>"
            "<td>28.3 min</td><td>15.0 + 13.3 min</td>") in page
    assert ("<tr><td>the default run end to end (reference run, 2026-12-05 01:00, <code>--jobs 2</code> on 2 cores)"
            "</td><td>28.3 min</td><td>30.0 min</td><td>within</td></tr>") in page
    assert page.index('id="fig-default-run-timeline"') < page.index('id="fig-where-the-time-goes"')
    timeline = json.loads((tmp_path / "default-run-timeline.json").read_text())
    assert timeline["number"] == 1 and timeline["schedule"] == "reference run: _reproduce/20261205T010000Z-jobs2.json"
    assert json.loads((tmp_path / "where-the-time-goes.json").read_text())["number"] == 2


def test_a_framework_chapter_closes_with_its_histories_against_the_model(monkeypatch, tmp_path) -> None:
    import types

    from probes import campaigns, pages

    rows = [{"name": "fw/crash.A/crash:A", "campaign": "fw", "explained_by": ["reference"], "observations": 3},
            {"name": "fw/fork/fork", "campaign": "fw", "explained_by": ["ForkIgnore"], "observations": 4},
            {"name": "fw/race/r", "campaign": "fw", "explained_by": [], "observations": 3, "notes": ["racers"]},
            {"name": "fw/tamper/t", "campaign": "fw", "mapping_error": "names no step"},
            {"name": "other/x/x", "campaign": "other", "explained_by": ["reference"], "observations": 1}]
    traces = Receipt("traces", "traces", {}, {}, {"group": "traces", "traces": rows}, [], {}, [])
    traces.write(tmp_path)
    monkeypatch.setattr(pages, "shown_run", lambda name: types.SimpleNamespace(directory=tmp_path, run_id="default-t"))
    section = pages.trace_section("fw")
    assert "4 histories; ForkIgnore: 1; no setting: 1; not mapped: 1; reference: 1." in section
    assert "<code>crash.A/crash:A</code></td><td>—</td><td>reference</td>" in section and "other/x" not in section
    assert pages.trace_section("nobody") == ""


def test_a_reference_measured_by_other_code_says_so_in_its_banner() -> None:
    """A reference whose fingerprint is not the one this checkout gives its parameters is shown with
    both fingerprints; the banner of a matching one says nothing of the kind."""
    import dataclasses

    from probes import campaigns, pages
    from probes.core.runs import campaign_fingerprint, reference_run

    ref = reference_run("autogen")
    assert ref is not None
    current = campaign_fingerprint(campaigns.get("autogen"), ref.params)
    matching = dataclasses.replace(ref, fingerprint=current)
    assert pages.stale_reason(matching) == "" and "Measured by other code" not in pages.provenance_banner(matching)
    old = dataclasses.replace(ref, fingerprint="0123456789abcdef")
    assert pages.stale_reason(old) == (f"this reference's fingerprint is 0123456789abcdef, the current code's and "
                                       f"versions' is {current}; ./reproduce.sh --only autogen measures it again")
    assert "Measured by other code" in pages.provenance_banner(old)


def test_a_headline_row_shows_the_compared_fields_and_folds_the_rest() -> None:
    from probes.chapter import format_measured

    html = format_measured({"saturation": [1, 0.5], "backend": "sqlite", "jitter_ms": [0, 100]}, {"saturation": [1, 0.4]})
    compared, _, folded = html.partition('<details class="rc-fields">')
    assert "<code>saturation</code>" in compared and "backend" not in compared
    assert folded.startswith("<summary>2 more measured fields</summary>") and "<code>jitter_ms</code>" in folded
    # nothing to fold, or nothing compared by name: every field in one list, as before
    assert "<details" not in format_measured({"saturation": [1]}, {"saturation": [1]})
    assert "<details" not in format_measured({"n": 3}, {"m": 3}) and "<details" not in format_measured(3, 3)
