"""Receipts without the measuring machine's paths (probes.core.portable), on real tracebacks and a real run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import traceback
from pathlib import Path

import pytest

from probes import PROJECT_ROOT
from probes.core.portable import absolute_paths, anchors, portable, portable_text, receipts_with_absolute_paths, tail

REFERENCE = PROJECT_ROOT / "data" / "reference"


def _traceback_through_the_stdlib() -> str:
    try:
        json.loads("{not json")
    except json.JSONDecodeError:
        return traceback.format_exc()
    raise AssertionError("json.loads accepted garbage")


def _traceback_through_site_packages() -> str:
    from packaging.version import InvalidVersion, Version  # installed in the project's venv

    try:
        Version("not a version")
    except InvalidVersion:
        return traceback.format_exc()
    raise AssertionError("packaging accepted garbage")


def _traceback_from_the_run_directory(run: Path) -> str:
    """A real child's traceback through a file of the run's scratch directory (and the stdlib)."""
    script = run / "probe.rep1" / "boom.py"
    script.parent.mkdir(parents=True)
    script.write_text("import json\n\ndef go():\n    json.loads('{')\n\ngo()\n")
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0
    return proc.stderr


def test_a_traceback_through_the_stdlib_names_the_interpreter_and_the_project_relatively() -> None:
    tb = _traceback_through_the_stdlib()
    assert absolute_paths(tb), tb  # the raw traceback names this machine's directories
    out = portable_text(tb)
    assert f'File "tests/{Path(__file__).name}", line' in out
    assert 'File "<python>/lib/python3.' in out and "/json/decoder.py" in out
    assert absolute_paths(out) == [], out


def test_a_traceback_through_site_packages_names_the_venv() -> None:
    out = portable_text(_traceback_through_site_packages())
    assert 'File "<venv>/lib/python3.' in out and "/site-packages/packaging/version.py" in out
    assert absolute_paths(out) == [], out


def test_a_childs_traceback_names_the_run_directory(tmp_path: Path) -> None:
    run = tmp_path / "rc-test-abcd1234"
    tb = _traceback_from_the_run_directory(run)
    out = portable_text(tb, run)
    assert 'File "<run>/probe.rep1/boom.py", line 6' in out and 'File "<python>/lib/python3.' in out
    assert absolute_paths(out) == [], out
    # without the run directory it is still no absolute path: the temporary directory's name
    assert absolute_paths(portable_text(tb)) == []


def test_the_run_directory_comes_from_the_environment_in_children(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("RC_RUN_DIR", str(tmp_path))
    assert portable_text(f"open {tmp_path}/x.json") == "open <run>/x.json"


def test_a_symlinked_prefix_is_named_in_both_forms(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    text = f"{tmp_path / 'link'}/a.py and {real}/b.py"
    assert portable_text(text, tmp_path / "link") == "<run>/a.py and <run>/b.py"


def test_only_whole_path_prefixes_are_rewritten_and_twice_is_once(tmp_path: Path) -> None:
    root = str(PROJECT_ROOT)
    text = (f"https://example.com{root}/x {root}fs/y {root} {root}/probes/a.py "
            f"{sys.base_prefix}/lib/z.py {Path.home()}/notes")
    out = portable_text(text)
    url, sibling, *rest = out.split()
    assert url == f"https://example.com{root}/x" and rest[:3] == [".", "probes/a.py", "<python>/lib/z.py"]
    # a sibling whose name only starts like the root's is no path under the root (a clone under /tmp
    # may still shorten it to <tmp>/...: the root's own name stays)
    assert sibling.endswith(f"{Path(root).name}fs/y"), sibling
    assert portable_text(out) == out
    assert [prefix for prefix, _ in anchors()] == sorted((p for p, _ in anchors()), key=len, reverse=True)


def test_portable_walks_a_receipt() -> None:
    tb = _traceback_through_site_packages()
    data = {"observations": {"children": {"run/x": {"result": {"traceback": tb}}}}, "n": 3, "ok": True,
            "list": [tb, None]}
    out = portable(data)
    assert out["n"] == 3 and out["ok"] is True and out["list"][1] is None
    assert absolute_paths(out) == [] and absolute_paths(data)


def test_tail_keeps_whole_lines() -> None:
    assert tail("a\nbb\nccc", 2) == "bb\nccc"
    assert tail("x" * 50, 3, width=10) == "x" * 10
    assert tail("anything", 0) == ""


def test_the_scan_finds_what_a_machine_leaves() -> None:
    assert absolute_paths({"k": "see /home/alice/x"}) and absolute_paths(["/tmp/rc-x/y"])
    assert absolute_paths("on3.11/site-packages/agent_framework/_types.py")  # a cut-off venv path
    assert absolute_paths(f"{PROJECT_ROOT}")
    assert absolute_paths({"ok": "<venv>/lib/python3.11/site-packages/a.py <envs>/e-1/lib/site-packages/b",
                           "url": "https://docs.dbos.dev/python/tutorials"}) == []


@pytest.fixture(scope="module")
def fresh_receipts(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """A small real kit run (MAF, the stray answer: the framework refuses with a traceback)."""
    pytest.importorskip("agent_framework")
    from probes import campaigns
    from probes.core.campaign import run_campaign

    campaign = campaigns.get("maf")
    run = run_campaign(campaign, campaign.resolve({"protocols": ["stray"]}, quick=True),
                       tmp_path_factory.mktemp("portable"))
    assert run.receipts
    return sorted(run.directory.glob("*.json"))


def test_freshly_written_receipts_hold_no_absolute_path(fresh_receipts: list[Path]) -> None:
    texts = [p.read_text() for p in fresh_receipts]
    assert receipts_with_absolute_paths(fresh_receipts[0].parent) == {}
    for p, text in zip(fresh_receipts, texts):
        assert absolute_paths(json.loads(text)) == [], p.name
    joined = "\n".join(texts)
    # the relativisation was exercised: the refusal's traceback went through the venv and the project
    assert "<venv>/lib/python3." in joined and 'File \\"probes/' in joined


def reference_report() -> dict[str, list[str]]:
    """Receipts of the committed reference that still name a measuring machine's paths."""
    return receipts_with_absolute_paths(REFERENCE) if REFERENCE.exists() else {}


_LEFT = reference_report()


def test_no_reference_receipt_holds_an_absolute_path() -> None:
    assert _LEFT == {}, "\n".join(f"{name}: {lines[0][:200]}" for name, lines in sorted(_LEFT.items())[:10])


def test_a_child_process_names_the_root_and_the_venv_alike(tmp_path: Path) -> None:
    """Children relativise where they cut their tails: the same names there."""
    code = ("import json, sys; from probes.core.portable import portable_text; "
            "print(json.dumps(portable_text(sys.argv[1])))")
    text = f"{PROJECT_ROOT}/probes/x.py {sys.prefix}/lib/y.py"
    out = subprocess.run([sys.executable, "-c", code, text], capture_output=True, text=True, timeout=60,
                         cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(PROJECT_ROOT)})
    assert json.loads(out.stdout) == "probes/x.py <venv>/lib/y.py", out.stderr
