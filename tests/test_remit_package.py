"""The REMIT distribution (``remit/``) installs on its own and its README's quick start runs.

The wheel and the sdist are built from ``remit/pyproject.toml`` (``python -m build``:
the sdist first, the wheel from the sdist, so both are proved to build); the wheel must
hold exactly the ``remit_ref`` modules, ``py.typed`` and its metadata. It is installed
with its ``sqlite`` extra into a fresh virtual environment (no system site packages,
nothing of this repository), and the quick start -- the README's own code block, so the
README cannot drift from what is tested -- runs there from outside the checkout; what
it prints must be the output the README shows.

Needs PyPI (``network``): the build backend and LangGraph are installed from it (pip's
cache is used).
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from tests.conftest import ROOT

DIST = ROOT / "remit"
README = DIST / "README.md"

pytestmark = [pytest.mark.network, pytest.mark.slow]


def _version() -> str:
    """``remit_ref.__version__``, read from the source (the build reads the same line)."""
    tree = ast.parse((ROOT / "remit_ref" / "__init__.py").read_text())
    [value] = [node.value.value for node in tree.body if isinstance(node, ast.Assign)
               and [t.id for t in node.targets if isinstance(t, ast.Name)] == ["__version__"]]
    return value


def readme_block(heading: str, language: str) -> str:
    """The first ```language block after ``## heading`` in the README."""
    text = README.read_text()
    section = text.split(f"## {heading}\n", 1)[1]
    match = re.search(rf"```{language}\n(.*?)```", section, re.S)
    assert match, f"no {language} block under '## {heading}' in {README}"
    return match.group(1)


def _modules() -> list[str]:
    return sorted(f"remit_ref/{p.name}" for p in (ROOT / "remit_ref").glob("*.py")) + ["remit_ref/py.typed"]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    out = tmp_path_factory.mktemp("dist")
    proc = subprocess.run([sys.executable, "-m", "build", "--outdir", str(out), str(DIST)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    [wheel] = out.glob("*.whl")
    [sdist] = out.glob("*.tar.gz")
    return wheel, sdist


def test_the_wheel_holds_remit_ref_its_marker_and_metadata_only(built: tuple[Path, Path]) -> None:
    wheel, sdist = built
    version = _version()
    assert wheel.name == f"remit_ref-{version}-py3-none-any.whl"
    info = f"remit_ref-{version}.dist-info"
    with zipfile.ZipFile(wheel) as zf:
        names = sorted(zf.namelist())
        metadata = zf.read(f"{info}/METADATA").decode()
    assert names == sorted([*_modules(), f"{info}/METADATA", f"{info}/WHEEL", f"{info}/RECORD",
                            f"{info}/licenses/LICENSE"])
    assert f"\nVersion: {version}\n" in metadata
    required = {re.split(r"[<>=!\[; ]", line.split(": ", 1)[1])[0]: line
                for line in metadata.splitlines() if line.startswith("Requires-Dist: ")}
    base = {name for name, line in required.items() if "extra ==" not in line}
    assert base == {"langgraph", "langgraph-checkpoint", "pydantic"}, required
    assert "extra == 'sqlite'" in required["langgraph-checkpoint-sqlite"]
    assert "extra == 'postgres'" in required["langgraph-checkpoint-postgres"]
    assert "extra == 'postgres'" in required["psycopg"]
    with tarfile.open(sdist) as tf:
        members = {m.name.split("/", 1)[1]: m for m in tf.getmembers() if "/" in m.name}
    assert {name for name, m in members.items() if name.startswith("remit_ref/")} == set(_modules())
    assert all(m.isfile() for m in members.values())  # the link to ../remit_ref became files
    assert {"pyproject.toml", "README.md", "CHANGELOG.md", "LICENSE", "PKG-INFO"} <= set(members)
    assert (DIST / "LICENSE").read_bytes() == (ROOT / "LICENSE").read_bytes()


def test_the_lower_bounds_are_the_pinned_releases() -> None:
    """The distribution's minimum LangGraph releases are the ones the project's own tests run on."""
    import tomllib

    from probes.studies.remit.releases import pinned

    meta = tomllib.loads((DIST / "pyproject.toml").read_text())["project"]
    specs = [*meta["dependencies"], *(s for extra in meta["optional-dependencies"].values() for s in extra)]
    lower = {m.group(1): m.group(2) for s in specs if (m := re.match(r"([a-z-]+)>=([\d.]+)", s))}
    assert {name: lower[name] for name in pinned()} == pinned()


def test_pip_install_of_the_wheel_runs_the_readme_quick_start_on_sqlite(built: tuple[Path, Path],
                                                                        tmp_path: Path) -> None:
    wheel, _sdist = built
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    pip = subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                          f"{wheel}[sqlite]"], capture_output=True, text=True, timeout=900)
    assert pip.returncode == 0, pip.stderr[-3000:]
    listed = json.loads(subprocess.run([str(python), "-m", "pip", "list", "--format=json"], capture_output=True,
                                       text=True, check=True).stdout)
    names = {d["name"].lower() for d in listed}
    assert {"remit-ref", "langgraph", "langgraph-checkpoint-sqlite"} <= names
    assert not names & {"resume-contract", "langgraph-checkpoint-postgres", "psycopg", "pytest"}, names
    user = tmp_path / "user"
    user.mkdir()
    (user / "quickstart.py").write_text(readme_block("Quick start", "python"))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    run = subprocess.run([str(python), "-I", "quickstart.py"], cwd=user, env=env, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout == readme_block("Quick start", "text")
    where = subprocess.run([str(python), "-I", "-c", "import remit_ref; print(remit_ref.__file__)"], cwd=user,
                           env=env, capture_output=True, text=True, check=True).stdout.strip()
    assert Path(where).is_relative_to(venv), where
