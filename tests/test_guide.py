"""The book's "Add your framework" guide is true to the code: its example runs, its names resolve.

A maintainer writes an adapter from ``book/add-a-framework.md`` alone, so the page must not
drift from the kit silently. The example adapter and its campaign are fenced blocks of the
page (``# file: NAME`` on their first line), taken from the Markdown here and run: the kit
measures the adapter through the command the page shows, and the cells the page describes
are asserted. Every ``probes`` module, attribute and path the page names in backticks must
exist, the interface sketch must match ``probes.kit.adapter.Adapter`` member by member, and
the example's citations must be verbatim in the installed release they name.
"""

from __future__ import annotations

import ast
import importlib
import importlib.metadata
import inspect
import json
import os
import re
import shlex
import subprocess
import sys
import types
from pathlib import Path
from typing import Any, Iterator

import pytest

from tests.conftest import ROOT

GUIDE = ROOT / "book" / "add-a-framework.md"
TEXT = GUIDE.read_text()
FENCE = re.compile(r"^```(\w+)\n(.*?)^```$", re.M | re.S)
COMMAND = "python -m probes run my_maf --adapter my_maf_adapter:GuideAdapter"


def blocks(lang: str) -> list[str]:
    return [body for kind, body in FENCE.findall(TEXT) if kind == lang]


def files() -> dict[str, str]:
    """The page's example files: the fenced Python blocks that open with ``# file: NAME``."""
    out = {}
    for body in blocks("python"):
        first, _, _ = body.partition("\n")
        if first.startswith("# file: "):
            out[first.removeprefix("# file: ").strip()] = body
    return out


def test_the_page_has_its_example_files_and_no_include() -> None:
    """The example is the page's own text: a reader of the Markdown (e.g. on GitHub) sees it."""
    assert set(files()) == {"my_maf_adapter.py", "probes/frameworks/my_maf/__init__.py", "probes/frameworks/my_maf/campaign.py"}
    assert "literalinclude" not in TEXT and "{include}" not in TEXT
    assert any(COMMAND in b for b in blocks("bash")), "the page no longer shows the command this test runs"


# --- the example adapter, run by the kit -----------------------------------------------------

@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The example adapter written to a directory of its own and run from there with the page's
    command, on a small protocol subset: what a maintainer who copied it would get."""
    work = tmp_path_factory.mktemp("guide")
    (work / "my_maf_adapter.py").write_text(files()["my_maf_adapter.py"])
    line = next(ln for b in blocks("bash") for ln in b.splitlines() if ln.startswith(COMMAND))
    args = shlex.split(line)[1:]  # after "python"
    args = args[: args.index("--out")] if "--out" in args else args
    subset = ('protocols=["baseline","crash","fork","stray","tamper"]', 'crash_points=["s2.effect"]',
              'crash_hows=["kill"]', "tamper_limit=3")
    cmd = [sys.executable, *args, "--out", str(work / "out")] + [x for p in subset for x in ("-p", p)]
    proc = subprocess.run(cmd, cwd=work, capture_output=True, text=True, timeout=900,
                          env={**os.environ, "RC_NO_PROGRESS": "1", "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    out = work / "out" / "my_maf"
    view = json.loads((out / "verdicts.json").read_text())
    verdicts = {(v["framework"], v["property"], v["path"]): v
                for probe in view["probes"].values() for v in probe["verdicts"]}
    receipts = {p.stem: json.loads(p.read_text()) for p in out.glob("*.rep1.json")}
    return {"verdicts": verdicts, "receipts": receipts}


FW = "agent-framework"
FORGERY = "agent-framework · undetected forgery"


def test_the_example_baseline_is_exactly_once_and_live(measured: dict[str, Any]) -> None:
    v = measured["verdicts"]
    for answer in ("yes", "no"):
        assert v[(FW, "EO", f"baseline:{answer}")]["label"] == "✓"
        assert v[(FW, "LV", f"baseline:{answer}")]["label"] == "✓"


def test_after_the_kill_at_s2_effect_the_framework_redelivers_and_e2_fires_twice_uncited(
        measured: dict[str, Any]) -> None:
    """The page's account of the crash cell: recovery completes on its own (the kit answers nothing
    after ``recover``), ``e2`` fires twice, and with no citation the violation is U."""
    path = "crash:kill@s2.effect/latest-checkpoint"
    eo = measured["verdicts"][(FW, "EO", path)]
    assert eo["label"] == "U" and eo["evidence"]["citation"] == "no citation declared"
    assert eo["evidence"]["effect_counts"] == {"e1": 1, "e2": 2}
    children = measured["receipts"]["crash.kill.s2.effect.latest-checkpoint.file.rep1"]["observations"]["children"]
    assert children["run/recover"]["result"]["status"] == "completed"
    assert "run/recover-answer" not in children  # recover completed: the kit did not answer again
    assert measured["verdicts"][(FW, "PC", path)]["label"] == "✓"


def test_the_example_fork_serves_the_new_answer_and_names_its_side(measured: dict[str, Any]) -> None:
    from probes.core.checker import RepeatSide

    fd = measured["verdicts"][(FW, "FD", "fork:same-pause")]
    assert fd["label"] == "✓" and fd["evidence"]["observed"] == "s2 served 'no'"
    assert fd["evidence"]["side"] == RepeatSide.FORK.value and RepeatSide.FORK.value in fd["summary"]


def test_the_stray_answer_with_no_current_pause_is_inert(measured: dict[str, Any]) -> None:
    v = measured["verdicts"]
    assert v[(FW, "CO", "stray-after-completion")]["label"] == "✓"
    assert v[(FW, "EO", "stray-after-completion")]["label"] == "✓"


def test_the_declared_state_model_splits_invalid_edits_from_forgeries(measured: dict[str, Any]) -> None:
    """``state_required``: a required field dropped is a CV question (refused: ✓); a field with a
    default dropped is valid, so it goes to the undetected-forgery row, never CV's."""
    v = measured["verdicts"]
    refused = v[(FW, "CV", "tamper:drop:graph_signature_hash")]
    assert refused["label"] == "✓" and refused["evidence"]["invalid_edit"] is True
    assert refused["evidence"]["error"] == "WorkflowCheckpointException"
    assert "WorkflowCheckpoint: no default for ['graph_signature_hash', 'workflow_name']" in refused["summary"]
    forged = v[(FORGERY, "CV", "tamper:drop:checkpoint_id")]
    assert forged["evidence"]["invalid_edit"] is False
    assert (FW, "CV", "tamper:drop:checkpoint_id") not in v


# --- the example campaign, and the example's citations --------------------------------------

@pytest.fixture
def example_package() -> Iterator[types.ModuleType]:
    """The page's adapter as ``probes.frameworks.my_maf.adapter``, where the page says it goes (in
    memory only)."""
    package = types.ModuleType("probes.frameworks.my_maf")
    package.__path__ = []
    module = types.ModuleType("probes.frameworks.my_maf.adapter")
    exec(compile(files()["my_maf_adapter.py"], "my_maf_adapter.py", "exec"), module.__dict__)
    sys.modules.update({"probes.frameworks.my_maf": package, "probes.frameworks.my_maf.adapter": module})
    try:
        yield module
    finally:
        from probes.kit.suite import KIT_ADAPTERS

        for name in ("probes.frameworks.my_maf", "probes.frameworks.my_maf.adapter"):
            sys.modules.pop(name, None)
        KIT_ADAPTERS.pop("my_maf", None)


def test_the_example_campaign_builds_from_the_adapter(example_package: types.ModuleType) -> None:
    from probes.core.errors import UsageError

    namespace: dict[str, Any] = {}
    exec(compile(files()["probes/frameworks/my_maf/campaign.py"], "campaign.py", "exec"), namespace)
    campaign = namespace["CAMPAIGN"]
    assert campaign.name == "my_maf"
    assert campaign.packages == ("agent-framework-core",)  # the adapter's declared packages
    quick = campaign.resolve(quick=True)
    names = [spec.id for spec in campaign.plan(quick)]
    assert "crash.kill.s2.effect.latest-checkpoint.file.rep1" in names and "fork.file.rep1" in names
    with pytest.raises(UsageError, match="not allowed"):  # an undeclared recovery mode: usage, exit 2
        campaign.resolve({"recovery_modes": ["other"]}, quick=True)


def test_the_example_package_declares_the_framework_it_adapts(tmp_path: Path) -> None:
    """The page's ``__init__.py`` is all the layers need: its package alone then imports MAF."""
    from probes import layers

    frameworks, studies = tmp_path / "frameworks", tmp_path / "studies"
    (frameworks / "my_maf").mkdir(parents=True)
    studies.mkdir()
    (frameworks / "my_maf" / "__init__.py").write_text(files()["probes/frameworks/my_maf/__init__.py"])
    owners = layers.declarations(frameworks, studies)
    assert owners == {"agent_framework": ("probes.frameworks.my_maf",)}
    use = list(layers.imports_in("probes.frameworks.my_maf.adapter", "from agent_framework import Executor\n"))
    assert layers.framework_imports(use, owners) == []
    assert layers.framework_imports(list(layers.imports_in("probes.kit.protocols", "import agent_framework\n")), owners)


def test_the_example_citations_are_verbatim_in_the_release_they_name(example_package: types.ModuleType) -> None:
    adapter = example_package.GuideAdapter
    assert adapter.citations
    for key, ref in adapter.citations.items():
        distribution, version = ref.version.split()
        assert importlib.metadata.version(distribution) == version, key
        module, _, qualname = ref.source.partition(":")
        obj: Any = importlib.import_module(module)
        for part in qualname.split("."):
            obj = getattr(obj, part)
        assert " ".join(ref.quote.split()) in " ".join((inspect.getdoc(obj) or "").split()), key
        assert ref.stance in ("claims", "deviation")


# --- the page's names -----------------------------------------------------------------------

def _signature(member: Any) -> list[str]:
    return [p for p in inspect.signature(member).parameters if p not in ("self", "cls")]


def test_the_interface_sketch_matches_the_adapter_class() -> None:
    """Every attribute and method the sketch shows is the base class's, with the same parameters."""
    from probes.kit.adapter import Adapter

    sketch = next(b for b in blocks("python") if "class MyAdapter(Adapter):" in b)
    cls = next(n for n in ast.parse(sketch).body if isinstance(n, ast.ClassDef))
    shown = 0
    for node in cls.body:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                assert hasattr(Adapter, target.id), target.id
                shown += 1
        elif isinstance(node, ast.FunctionDef):
            member = getattr(Adapter, node.name, None)
            assert callable(member), node.name
            params = [a.arg for a in node.args.args if a.arg not in ("self", "cls")]
            assert params == _signature(member), (node.name, params)
            shown += 1
    public = {n for n in vars(Adapter) if not n.startswith("_")}
    assert shown == len(cls.body) and public <= {getattr(t, "id", None) for n in cls.body
                                                 for t in getattr(n, "targets", [])} | {
        n.name for n in cls.body if isinstance(n, ast.FunctionDef)}, "a member of Adapter the sketch leaves out"


# Short forms the page uses in prose, and what they stand for.
SHORT = {"runtime": "probes.kit.runtime", "Capability": "probes.kit.adapter:Capability",
         "self": "probes.kit.adapter:Adapter"}
NOT_KIT = {"f", "make_saver", "doc", "docstring"}  # f(v) of the contract; the saver factory; probes.citations


def _prose(text: str) -> str:
    return FENCE.sub("", text)


def _resolve(dotted: str) -> Any:
    """``probes.a.b.C.d`` -> the longest importable module, then attributes."""
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:i]))
        except ModuleNotFoundError:
            continue
        for attr in parts[i:]:
            obj = getattr(obj, attr)
        return obj
    raise ModuleNotFoundError(dotted)


def _instance_attributes() -> set[str]:
    from probes.kit.adapter import Adapter

    return set(re.findall(r"self\.(\w+) =", inspect.getsource(Adapter.__init__)))


def check_names(text: str) -> tuple[list[str], list[str]]:
    """(names checked, problems) for the page ``text``: every backticked ``probes`` module or
    attribute imports; every ``probes/``, ``tests/``, ``book/`` path exists (placeholders and the
    example's own destination aside); ``runtime.X``, ``Capability.X``, ``self.X`` are members;
    a call ``name(args)`` names a method of ``Adapter`` (or a function of ``probes.kit.adapter``)
    with its parameters."""
    from probes.kit import adapter as adapter_module
    from probes.kit.adapter import Adapter

    spans = [" ".join(s.split()) for s in re.findall(r"`([^`]+)`", _prose(text))]  # a span may wrap a line
    example_dirs = {str(Path(name).parent) for name in files() if "/" in name}
    checked: list[str] = []
    problems: list[str] = []
    for span in spans:
        for dotted in re.findall(r"\bprobes(?:\.\w+)+", span):
            try:
                _resolve(dotted)
                checked.append(dotted)
            except (ImportError, AttributeError) as exc:
                problems.append(f"{span!r}: {dotted} does not resolve ({exc})")
        for path in re.findall(r"\b((?:probes|tests|book)/[\w./-]*)", span):
            if "<" in span or any(path.startswith(d + "/") for d in example_dirs):
                continue  # a placeholder, or where the page tells you to put the example
            (checked if (ROOT / path).exists() else problems).append(path)
        if (m := re.fullmatch(r"(\w+)\.(\w+)(?:\(.*\))?", span)) and m.group(1) in SHORT:
            head, attr = m.groups()
            module, _, cls = SHORT[head].partition(":")
            owner = _resolve(module + (f".{cls}" if cls else ""))
            ok = hasattr(owner, attr) or (head == "self" and attr in _instance_attributes())
            (checked if ok else problems).append(span)
        if (m := re.fullmatch(r"([a-z_]+)\(([^()]*)\)", span)) and m.group(1) not in NOT_KIT:
            name, args = m.groups()
            member = getattr(Adapter, name, None) or getattr(adapter_module, name, None)
            if not callable(member):
                problems.append(f"{span!r}: neither Adapter nor probes.kit.adapter has {name}")
                continue
            given = [a.strip() for a in args.split(",") if a.strip()]
            if all(re.fullmatch(r"[a-z_]+", a) for a in given):  # named like the parameters
                ok = given == _signature(member)
            else:
                ok = len(given) == len(_signature(member))
            (checked if ok else problems).append(span)
    return checked, problems


def test_every_probes_name_in_backticks_resolves() -> None:
    checked, problems = check_names(TEXT)
    assert problems == []
    # the drift check must check something: the names the page is about
    for must in ("probes.kit.runtime", "probes.core.checker.RepeatSide", "probes.kit.adapter.required_fields",
                 "runtime.before_pause()", "self.nothing_durable(why)", "recover(mode, answer)",
                 "Capability.CLIENT", "probes/frameworks/langgraph/saver.py"):
        assert must in checked, must


@pytest.mark.parametrize("drift", ["`probes.kit.runtime.pause_here()`", "`probes/kit/no_such.py`",
                                   "`runtime.before_the_pause()`", "`recover(mode)`", "`recover(answer, mode)`",
                                   "`self.nothing_to_resume(why)`", "`Capability.RETRIES`", "`restore(mode)`",
                                   "`probes.no_such_module`"])
def test_the_name_check_fails_on_a_drifted_page(drift: str) -> None:
    """A renamed function, a wrong signature or a missing file in the page is found."""
    _, problems = check_names(f"Call {drift} when paused.")
    assert len(problems) == 1 and drift.strip("`").split("(")[0] in problems[0]
