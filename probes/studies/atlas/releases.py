"""Each swept distribution's release list: a committed snapshot, renewed on request.

The sweep (``sweep.py``) bisects over these lists, so they are an input of the atlas
like LangGraph's ``VERSIONS``: committed in ``releases.json`` (with the date it was
read), never fetched during a run -- a run on the same snapshot plans the same
releases. ``python -m probes.studies.atlas.releases --refresh [--missing]`` reads every framework's
list (or only those the snapshot lacks) again with ``pip index versions <dist>`` (the ordinary client) and rewrites the file;
pre-releases are left out (a cell runs what ``pip install dist==X`` gives a user), except
for a framework marked ``pre`` (``frameworks.py``): one that shipped only betas and release
candidates while the reported bugs lived (``1.0.0b251028`` before ``1.0.0rc1`` before ``1.0.0``).
"""

from __future__ import annotations

import datetime
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

SNAPSHOT = Path(__file__).with_name("releases.json")
_FINAL = re.compile(r"\d+(\.\d+)+(\.post\d+)?")
_PRE = re.compile(r"(\d+(?:\.\d+)+)(?:(a|b|rc)(\d+))?(?:\.post(\d+))?")
_PHASE = {"a": 0, "b": 1, "rc": 2, None: 3}  # alpha < beta < candidate < the final release


def key(release: str) -> tuple[Any, ...]:
    """Version order (``1.2.10`` after ``1.2.9``; ``.postN`` after its base; ``1.0.0b2`` before
    ``1.0.0rc1`` before ``1.0.0``)."""
    m = _PRE.fullmatch(release)
    if m is None:
        raise ValueError(f"{release!r} is not a release number")
    base, phase, n, post = m.groups()
    return (tuple(int(x) for x in base.split(".")), _PHASE[phase], int(n or 0), int(post or -1))


def snapshot() -> dict[str, Any]:
    return json.loads(SNAPSHOT.read_text()) if SNAPSHOT.exists() else {"read_per_dist": {}, "releases": {}}


def releases(dist: str) -> list[str]:
    """``dist``'s final releases, oldest first, from the snapshot (KeyError if it has none)."""
    try:
        found = snapshot()["releases"][dist]
    except KeyError:
        raise KeyError(f"releases.json has no release list for {dist}: run python -m probes.studies.atlas.releases "
                       f"--refresh") from None
    return sorted(found, key=key)


def read_index(dist: str, pre: bool = False) -> list[str]:
    """The final releases (and with ``pre`` the pre-releases) ``pip index versions`` lists for ``dist`` today."""
    proc = subprocess.run([sys.executable, "-m", "pip", "index", "versions", dist, "--disable-pip-version-check",
                           *(["--pre"] if pre else [])], capture_output=True, text=True, timeout=180)
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("Available versions:")), None)
    if proc.returncode != 0 or line is None:
        raise RuntimeError(f"pip index versions {dist} failed: {proc.stderr.strip()[-300:]}")
    keep = _PRE if pre else _FINAL
    return sorted((v.strip() for v in line.split(":", 1)[1].split(",") if keep.fullmatch(v.strip())), key=key)


def refresh(only_missing: bool = False) -> dict[str, Any]:
    """Read every framework's list again (``only_missing``: only the dists the snapshot lacks)."""
    from probes.studies.atlas.frameworks import FRAMEWORKS

    old = snapshot()
    lists = dict(old["releases"]) if only_missing else {}
    for f in FRAMEWORKS.values():
        if f.dist not in lists:
            lists[f.dist] = read_index(f.dist, f.pre)
    read = dict(old.get("read_per_dist") or {}) if only_missing else {}
    for dist in lists:
        if dist not in read or dist not in old["releases"] or not only_missing:
            read[dist] = datetime.date.today().isoformat()
    data = {"how": "pip index versions <dist>", "read_per_dist": read, "releases": lists}
    lines = ",\n".join(f"  {json.dumps(d)}: {json.dumps(v)}" for d, v in sorted(lists.items()))
    SNAPSHOT.write_text(f'{{"how": {json.dumps(data["how"])},\n "read_per_dist": '
                        f'{json.dumps(read, sort_keys=True)},\n "releases": {{\n{lines}\n }}}}\n')
    return data


if __name__ == "__main__":
    if sys.argv[1:] not in (["--refresh"], ["--refresh", "--missing"]):
        print("usage: python -m probes.studies.atlas.releases --refresh [--missing]", file=sys.stderr)
        sys.exit(2)
    out = refresh(only_missing="--missing" in sys.argv)
    print(json.dumps({d: len(v) for d, v in out["releases"].items()}))
