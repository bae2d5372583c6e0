"""The matrix: the CLI and the book's page collapse cells with the same function.

Cells come from the committed reference run's receipts (``data/reference``).
"""

from __future__ import annotations

import html
import re

import argparse
import dataclasses
import json
from pathlib import Path

import pytest

from probes import matrix
from probes.core import checker
from probes.core.checker import DocRef, Label, Property
from probes.matrix import COLUMNS, Cell, Cells, grid, load_all_verdicts, race_bound, render_text

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "data" / "reference"


@pytest.fixture(scope="module")
def cells() -> Cells:
    got = load_all_verdicts(REFERENCE)
    # campaigns the reference run has not measured yet are named, never silently dropped
    assert len(got) > 100 and all(": no results in " in m for m in got.missing)
    return got


def _cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture, cells: Cells) -> str:
    from probes.__main__ import cmd_matrix

    monkeypatch.setattr(matrix, "load_all_verdicts", lambda *a, **k: cells)
    assert cmd_matrix(argparse.Namespace()) == 0
    return capsys.readouterr().out


def _book(monkeypatch: pytest.MonkeyPatch, cells: Cells) -> str:
    """The book's matrix page exactly as probes.book generates it (probes.pages.matrix_page)."""
    from probes import pages

    return pages.matrix_page(cells)


def _cli_table(text: str, marked: bool = False) -> dict[tuple[str, str], str]:
    lines = text.splitlines()
    out = {}
    for line in lines[1:]:
        if "|" not in line:
            break
        name, first = line[: line.index("  ")].strip(), line[line.index("  "):]
        for prop, lab in zip(COLUMNS, first.split("|")):
            out[(name, prop.value)] = lab.strip() if marked else lab.strip().removesuffix("*")  # "*": rests on races
    return out


def _book_table(page: str) -> dict[tuple[str, str], str]:
    """(framework, property) -> the label text of the summary table (class rc-matrix)."""
    table = re.search(r'<table class="rc-table rc-matrix">(.*?)</table>', page, re.S).group(1)
    out = {}
    for row in re.findall(r"<tr>(.*?)</tr>", table.split("</thead>")[1], re.S):
        cells = [html.unescape(re.sub(r"<[^>]+>", "", c)).strip() for c in re.findall(r"<td>(.*?)</td>", row, re.S)]
        for prop, text in zip(COLUMNS, cells[1:]):
            out[(cells[0], prop.value)] = text
    return out


def test_cli_and_book_show_the_collapsed_label_of_every_cell(monkeypatch, capsys, cells) -> None:
    text = _cli(monkeypatch, capsys, cells)
    cli, cli_raw = _cli_table(text), _cli_table(text, marked=True)
    book = _book_table(_book(monkeypatch, cells))
    rows = grid(cells)
    assert set(cli) == set(book) == {(f, p.value) for f in rows for p in COLUMNS}
    for framework, props in rows.items():
        for p in COLUMNS:
            labels = [c.label for c in props.get(p, [])]
            want = checker.collapse(labels)
            assert cli[(framework, p.value)] == (want.value if want else ""), (framework, p)
            bound = race_bound(props.get(p, []))  # a ✓ or ? resting on races states its bound beside it
            assert book[(framework, p.value)] == " ".join(filter(None, (checker.cell_text(labels), bound))), (framework, p)
            assert cli_raw[(framework, p.value)].endswith("*") == bool(bound), (framework, p)
            assert _worst_of(book[(framework, p.value)]) == cli[(framework, p.value)], (framework, p)


def _worst_of(text: str) -> str:
    """The first label of a book cell's text (``?×4 · ✓×8 race < 25.9 %`` -> ``?``)."""
    return text.split(" race <")[0].split("×")[0]


def _best(labels) -> Label | None:
    """The mutation the issue names: the best label of a cell instead of the worst."""
    found = [Label(x) for x in labels]
    measured = [x for x in found if x is not Label.NA] or found
    return max(measured, key=checker.WORST_FIRST.index) if measured else None


def test_cli_and_book_call_the_one_collapse_function(monkeypatch, capsys, cells) -> None:
    """Replace checker.collapse by 'best label': both surfaces change with it (no private copy anywhere)."""
    monkeypatch.setattr(checker, "collapse", _best)
    cli = _cli_table(_cli(monkeypatch, capsys, cells))
    book = _book_table(_book(monkeypatch, cells))
    changed = 0
    for framework, props in grid(cells).items():
        for p in props:
            labels = [c.label for c in props[p]]
            assert cli[(framework, p.value)] == _best(labels).value
            assert _worst_of(book[(framework, p.value)]) == _best(labels).value
            changed += _best(labels) != checker.WORST_FIRST[min(checker.WORST_FIRST.index(x) for x in labels)]
    assert changed > 0  # the reference run has split cells, so the mutation is visible
    assert cli[("langgraph", "FD")] == "✓"


def test_reference_matrix_has_the_worst_label_not_the_best(cells) -> None:
    text = _cli_table(render_text(cells))
    assert text[("langgraph", "FD")] in ("U", "✗")  # the reference run's FD cells: ✓ on two paths, violated on two
    assert text[("tla-reference", "EO")] == "✓"


def test_split_cells_and_citations_on_the_page() -> None:
    doc = DocRef("https://example.invalid/p", "the step | is re-run", "deviation", "X-9", "x 2.0")
    cs = Cells([Cell("fw", "sqlite", Property.EO, "a", Label.PASS, "ok", "receipts/c/a.json"),
                Cell("fw", "sqlite", Property.EO, "b", Label.DOC, "re-ran", "receipts/c/b.json", doc),
                Cell("fw", "sqlite", Property.EO, "c", Label.NA, "nothing", "receipts/c/c.json")])
    from probes import pages

    page = pages.matrix_page(cs)
    assert _book_table(page)[("fw", "EO")] == "D×1 · ✓×1"
    assert html.escape("X-9: “the step | is re-run” (https://example.invalid/p; x 2.0)") in page
    assert matrix.citation(None) == ""
    assert matrix.citation(DocRef("p", "q", "claims")) == "“q” (p)"
    assert "D" in render_text(cs).splitlines()[1]


def test_missing_campaign_index_is_reported_not_dropped(tmp_path: Path) -> None:
    done = tmp_path / "tlc"
    for name in ("reference.json", "_campaign.json", "verdicts.json"):
        (done / name).parent.mkdir(parents=True, exist_ok=True)
        (done / name).write_bytes((REFERENCE / "tlc" / name).read_bytes())
    index = json.loads((done / "_campaign.json").read_text())
    index["receipts"] = {"reference": index["receipts"]["reference"]}
    (done / "_campaign.json").write_text(json.dumps(index))
    (tmp_path / "langgraph").mkdir()
    (tmp_path / "langgraph" / "crash.A.none.sqlite.json").write_text("{}")
    got = load_all_verdicts(tmp_path)
    assert {c.framework for c in got} == {"tla-reference"}
    assert any(m.startswith("langgraph: no campaign index") for m in got.missing)
    assert any(m.startswith("crewai: no results in") for m in got.missing)
    assert "not in the matrix: langgraph: no campaign index" in render_text(got)
    from probes import pages

    page = pages.matrix_page(got)
    assert "**Not in the matrix:**" in page and "langgraph: no campaign index" in page
    empty = Cells([], ["x: no results"])
    assert render_text(empty).endswith("not in the matrix: x: no results")
    assert "*No receipts yet.*" in pages.matrix_page(empty) and "x: no results" in pages.matrix_page(empty)


def test_worst_of_nothing_is_an_error() -> None:
    with pytest.raises(ValueError):
        matrix.worst([])
    assert matrix.worst([Label.NA, Label.PASS, Label.DOC]) is Label.DOC


def test_cli_text_exactly() -> None:
    cs = Cells([Cell("fw", "sqlite", Property.EO, "a", Label.PASS, "ok", "r"),
                Cell("fw", "sqlite", Property.EO, "b", Label.DOC, "x", "r"),
                Cell("longer-name", "-", Property.LV, "c", Label.NA, "n", "r")], ["z: gone"])
    cols = "    |     ".join(p.value for p in COLUMNS)
    assert render_text(cs).splitlines() == [
        "framework        " + cols + "   ",
        "fw                     |     D     |           |           |           |           |           |           |          ",
        "longer-name            |           |           |           |           |           |           |    n/a    |          ",
        "",
        "worst label per cell shown (? = a race undecided within its budget, never ✓); per-path detail: the book's "
        "matrix page or the receipts.",
        "not in the matrix: z: gone",
    ]


def _race_cell(label: Label, trials: int, violations: int, backend: str = "sqlite", path: str = "race:k2") -> Cell:
    from probes.core import race

    ev = {"race_decision": {Label.PASS: "holds", Label.UNDECIDED: "undecided"}.get(label, "violated"),
          "trials": trials, "violations": violations,
          "violation_rate_upper95": round(race.wilson_upper(violations, trials), 4)}
    return Cell("fw", backend, Property.CO, path, label, "s", "r", None, race.bound_text(ev),
                ev["violation_rate_upper95"])


def test_a_race_pass_shows_its_bound_and_an_undecided_race_is_never_a_pass() -> None:
    from probes import pages

    held = Cells([_race_cell(Label.PASS, 35, 0), _race_cell(Label.PASS, 60, 0, "postgres"),
                  Cell("fw", "sqlite", Property.EO, "a", Label.PASS, "ok", "r")])
    assert held[0].bound == "0 of 35 trials, rate < 9.9 %" and held[1].bound == "0 of 60 trials, rate < 6.0 %"
    assert matrix.summarise([c for c in held if c.property is Property.CO]) == "✓ race < 9.9 %"  # the largest
    assert matrix.summarise([c for c in held if c.property is Property.EO]) == "✓"
    text = render_text(held)
    assert text.splitlines()[1].split("|")[COLUMNS.index(Property.CO)].strip() == "✓*"
    assert "  fw CO race:k2 (postgres): ✓ 0 of 60 trials, rate < 6.0 %" in text
    page = pages.matrix_page(held)
    assert "✓ race &lt; 9.9 %" in page or "✓ race < 9.9 %" in page
    assert "(0 of 35 trials, rate &lt; 9.9 %; 0 of 60 trials, rate &lt; 6.0 %)" in page
    open_ = Cells([_race_cell(Label.PASS, 35, 0), _race_cell(Label.UNDECIDED, 3, 0, path="race:k4")])
    assert matrix.worst(c.label for c in open_) is Label.UNDECIDED
    assert matrix.summarise(list(open_)) == "?×1 · ✓×1 race < 56.1 %"
    assert render_text(open_).splitlines()[1].split("|")[COLUMNS.index(Property.CO)].strip() == "?*"
    broke = [_race_cell(Label.DOC, 3, 2), _race_cell(Label.PASS, 35, 0, path="race:k4")]
    assert broke[0].bound == "2 of 3 trials" and matrix.summarise(broke) == "D×1 · ✓×1"  # a violation needs no bound


def test_without_a_root_the_shown_runs_are_read(monkeypatch: pytest.MonkeyPatch) -> None:
    from probes import campaigns
    from probes.core import runs

    shown = {"tlc": type("Run", (), {"directory": REFERENCE / "tlc"})()}
    monkeypatch.setattr(campaigns, "available", lambda: ["dbos", "tlc"])
    monkeypatch.setattr(runs, "shown_run", lambda name: shown.get(name))
    got = load_all_verdicts()
    assert {c.framework for c in got} == {"tla-reference"} and len(got) > 5
    assert got.missing == ["dbos: no complete run on this machine and no reference run"]
    assert all(c.receipt.startswith("receipts/tlc/") for c in got)


def test_cells_are_records() -> None:
    import dataclasses

    c = Cell("fw", "-", Property.EO, "p", Label.PASS, "s", "r")
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.label = Label.FAIL  # type: ignore[misc]


def test_campaigns_beyond_the_matrix_are_neither_rows_nor_missing(tmp_path: Path) -> None:
    """The atlas and drift have their own chapters: a results root that has the atlas
    (sorted before the frameworks) still yields the frameworks after it, and neither the
    atlas nor an absent drift run is listed as missing."""
    assert {"atlas", "drift"} <= set(matrix.NOT_IN_MATRIX)
    for name in ("atlas", "tlc"):
        for f in ("reference.json", "_campaign.json", "verdicts.json"):
            (tmp_path / name).mkdir(exist_ok=True)
            (tmp_path / name / f).write_bytes((REFERENCE / "tlc" / f).read_bytes())
        index = json.loads((tmp_path / name / "_campaign.json").read_text())
        index["receipts"] = {"reference": index["receipts"]["reference"]}
        (tmp_path / name / "_campaign.json").write_text(json.dumps(index))
    got = load_all_verdicts(tmp_path)
    assert {c.framework for c in got} == {"tla-reference"}
    assert all(c.receipt.startswith("receipts/tlc/") for c in got)
    assert not [m for m in got.missing if m.startswith(("atlas", "drift"))]
    assert any(m.startswith("crewai: no results in") for m in got.missing)


def _cell(framework: str, prop: Property, path: str, label: Label, backend: str = "sqlite") -> Cell:
    return Cell(framework, backend, prop, path, label, "s", f"receipts/x/{path}.json")


def test_matrix_figure_cell_shows_the_worst_label_and_violating_paths() -> None:
    from probes.matrix_figure import cell_facts

    got = [_cell("f", Property.EO, "a", Label.PASS), _cell("f", Property.EO, "a", Label.DOC, "postgres"),
           _cell("f", Property.EO, "b", Label.PASS), _cell("f", Property.EO, "c", Label.UNDOC),
           _cell("f", Property.EO, "d", Label.NA)]
    # path a violates on one backend: it counts as violating; n/a paths are not measured paths
    assert cell_facts(got) == {"label": Label.UNDOC, "paths": 3, "violating": 2}
    assert cell_facts([_cell("f", Property.EO, "d", Label.NA)]) == {"label": Label.NA, "paths": 0, "violating": 0}


def test_matrix_page_figure_links_each_measured_cell_to_its_row(tmp_path: Path, cells: Cells) -> None:
    from probes import pages
    from probes.matrix_figure import anchor

    page = pages.matrix_page(cells, figures_dir=tmp_path)
    assert (tmp_path / "conformance-matrix.png").is_file() and (tmp_path / "conformance-matrix.json").is_file()
    svg = (tmp_path / "conformance-matrix.svg").read_text()
    measured = {(f, p) for f, props in grid(cells).items() for p in props}
    links = set(re.findall(r'xlink:href="#(m-[a-z0-9-]+)"', svg))
    assert links == {anchor(f, p) for f, p in measured}
    for target in links:
        assert f'id="{target}"' in page, target


def test_an_eo_pass_is_shown_beside_its_lv_failure() -> None:
    """A run that never completed: EO ✓ (nothing fired twice) and LV U on the same path, side by side."""
    from probes import pages

    def cell(prop: Property, path: str, label: Label) -> Cell:
        return Cell("fw", "file", prop, path, label, "s", "receipts/x/p.json")

    cells = Cells([cell(Property.EO, "crash:a", Label.PASS), cell(Property.LV, "crash:a", Label.UNDOC),
                   cell(Property.EO, "crash:b", Label.PASS), cell(Property.LV, "crash:b", Label.PASS),
                   cell(Property.EO, "crash:c", Label.UNDOC), cell(Property.LV, "crash:c", Label.DOC)])
    assert matrix.not_live(cells) == {("fw", "crash:a"): Label.UNDOC, ("fw", "crash:c"): Label.DOC}
    assert matrix.eo_beside_lv(cells) == {"fw": ["crash:a"]}  # crash:c's EO already fails: nothing hidden
    text = render_text(cells)
    assert "fw: EO ✓ beside an LV failure (nothing fired twice; the run did not complete) on 1 path(s): crash:a" in text
    page = pages.matrix_page(cells)
    chips = re.findall(r'<code>(crash:[abc])</code>( <span class="rc-beside">LV (.)</span>)?', page)
    assert ("crash:a", ' <span class="rc-beside">LV U</span>', "U") in chips
    assert all(not beside for path, beside, _ in chips if path != "crash:a")


def test_a_variant_cell_counts_for_the_protocol_it_ran_and_an_own_protocol_keeps_its_name() -> None:
    assert matrix.kit_protocol({"protocol": "crash", "point": "s2.effect"}) == "crash"
    assert matrix.kit_protocol({"protocol": "functional", "of": "answers"}) == "answers"  # LangGraph's functional API
    assert matrix.kit_protocol({"protocol": "parallel", "of": "partly"}) == "parallel"  # "of" is the cell, here
    assert matrix.kit_protocol({"protocol": "fork_ways"}) == "fork_ways"  # registered by LangGraph's package
    assert matrix.kit_protocol({"n": 3}) is None  # a study's receipt


def test_the_page_shows_each_protocol_on_each_framework_with_its_worst_label() -> None:
    def cell(framework: str, protocol: str | None, label: Label, path: str = "p", summary: str = "s") -> Cell:
        return Cell(framework, "sqlite", Property.EO, path, label, summary, f"receipts/c/{path}.json", protocol=protocol)

    cs = Cells([cell("fw", "crash", Label.PASS, "a"), cell("fw", "crash", Label.UNDOC, "b"),
                cell("other", "crash", Label.PASS), cell("fw", "parallel", Label.NA, summary="no parallel branches"),
                cell("fw · undetected forgery", "tamper", Label.UNDOC), cell("fw", "fork_ways", Label.UNDOC),
                cell("fw", None, Label.UNDOC), cell("fw", "race", Label.PASS, "r"),
                cell("langgraph+remit (saver only, no effect ledger)", "crash", Label.UNDOC)])
    rows = matrix.protocol_grid(cs)
    # the kit's order; no tampered-state or saver-only row, no own or study protocol
    assert list(rows) == ["crash", "race", "parallel"]
    assert {f: len(c) for f, c in rows["crash"].items()} == {"fw": 2, "other": 1}
    from probes import pages

    page = "\n".join(pages.protocol_table(cs))
    head, body = re.search(r'<table class="rc-table rc-protocols">(.*?)</table>', page, re.S).group(1).split("</thead>")
    text = lambda c: html.unescape(re.sub(r"<[^>]+>", "", c)).strip()  # noqa: E731
    frameworks = [text(h) for h in re.findall(r"<th>(.*?)</th>", head)][1:]
    table = {}
    for row in re.findall(r"<tr>(.*?)</tr>", body, re.S):
        cells = [text(c) for c in re.findall(r"<td>(.*?)</td>", row, re.S)]
        table.update({(cells[0], f): t for f, t in zip(frameworks, cells[1:])})
    assert table[("crash", "fw")] == "U" and table[("crash", "other")] == "✓"
    assert table[("parallel", "fw")] == "n/a" and table[("parallel", "other")] == "–"
    raced = Cells([dataclasses.replace(cell("fw", "race", Label.PASS), rate_bound=0.0734)])
    assert "✓ race &lt; 7.3 %" in "\n".join(pages.protocol_table(raced))  # a ✓ from trials states its bound
    assert 'title="no parallel branches"' in page
    assert "## By protocol" in pages.matrix_page(cs)
