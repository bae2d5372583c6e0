"""probes.mutate: the equivalent-by-rule spans and per-file sources of a package target."""

from __future__ import annotations

from pathlib import Path

import pytest

from probes import mutate
from probes.core.errors import UsageError


def test_a_package_target_reads_each_mutated_file_from_the_copy(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "a.py").write_text("from __future__ import annotations\n\ndef f(x: int | None) -> bool:\n"
                              "    return x is None\n")
    (pkg / "b.py").write_text("Y = 1\n")
    files = mutate.SourceFiles(tmp_path)
    assert files.line(Path("pkg/a.py"), 4) == "return x is None"
    assert files.line("pkg/b.py", 1) == "Y = 1"
    annotations, singletons = files.spans("pkg/a.py")
    assert mutate._inside((3, 13), (3, 14), annotations)        # the `|` of `int | None` in the signature
    assert mutate._inside((4, 13), (4, 15), singletons)         # the `is` between x and None
    assert files.spans("pkg/b.py") == ([], [])


def test_unknown_target_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "known.toml").write_text("")
    with pytest.raises(UsageError, match="unknown mutation target"):
        mutate.targets(["nope"], tmp_path)
