"""State-space reduction for the reference semantics: a VIEW and value symmetry.

``VIEW StateView`` (tla/ResumePlane.tla) forgets the order of the later resumes and the
resume writes: a bisimulation on the reference's reachable states, so sound for its
safety invariants (the argument is at ``StateView``). Value symmetry: every action and
invariant treats resume values only through equality and f, so permuting the values
maps behaviours to behaviours and keeps each invariant's truth -- sound for the safety
invariants, not for liveness (TLC may miss liveness violations under symmetry). TLC's
SYMMETRY permutes model values only, so the symmetric runs use a copy of the module with
``Values`` a set of model values and ``Out(v) == <<"f", v>>`` (``with_symmetric_copy``):
the same state graph up to renaming the values.
"""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path
from typing import Iterable

from probes.tla import configs
from probes.tla.configs import TLA_DIR, TlcConfig

REDUCTIONS: tuple[str, ...] = ("full", "view", "symmetry", "view+symmetry")


def with_symmetric_copy(directory: Path, tla_dir: Path = TLA_DIR) -> Path:
    """Copy the modules to ``directory`` and add ResumePlaneSym(Run).tla; returns ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    for path in Path(tla_dir).glob("*.tla"):
        shutil.copy2(path, directory / path.name)
    text = (Path(tla_dir) / "ResumePlane.tla").read_text()
    edits = [("MODULE ResumePlane ", "MODULE ResumePlaneSym "),
             ("    NV,          \\* number of distinct resume values; V = 1..NV",
              "    NV,          \\* number of distinct resume values\n    VSet,        \\* the values (model values)"),
             ("Values == 1..NV", "Values == VSet"),
             ("Out(v) == v + NV", 'Out(v) == <<"f", v>>'),
             ("None   == 0 ", 'None   == "none" '),
             ("out : Nat, branch : BOOLEAN]", "out : {Out(x) : x \\in Values}, branch : BOOLEAN]")]
    for old, new in edits:
        if old not in text:
            raise RuntimeError(f"ResumePlane.tla changed: cannot apply {old!r} for the symmetric copy "
                               f"(update probes/tla/reduction.py)")
        text = text.replace(old, new)
    (directory / "ResumePlaneSym.tla").write_text(text)
    (directory / "ResumePlaneSymRun.tla").write_text(
        "---- MODULE ResumePlaneSymRun ----\nEXTENDS ResumePlaneSym, TLC\nPerms == Permutations(VSet)\n====\n")
    return directory


def reduced(bounds: Iterable[int], prefix: str = "red", kinds: Iterable[str] = REDUCTIONS,
            invariants: tuple[str, ...] | None = None) -> list[TlcConfig]:
    """The reference configuration at ``bounds`` under each reduction (run them in a
    directory prepared by ``with_symmetric_copy``)."""
    bounds = list(bounds)
    base = configs.reference(bounds)
    nv = bounds[2]
    sym_consts = base.constants + (("VSet", "{" + ", ".join(f"v{i}" for i in range(1, nv + 1)) + "}"),)
    tag = "x".join(map(str, bounds))
    out = []
    for kind in kinds:
        cfg = replace(base, name=f"{prefix}.{tag}.{kind}", title=f"reference at {bounds}, reduction: {kind}",
                      tags={"group": "reduction", "reduction": kind, "bounds": bounds},
                      invariants=invariants or base.invariants)
        if "symmetry" in kind:
            cfg = replace(cfg, module="ResumePlaneSymRun", constants=sym_consts, symmetry="Perms")
        if "view" in kind:
            cfg = replace(cfg, view="StateView")
        out.append(cfg)
    return out
