"""Entry point of a fresh interpreter: ``python -m probes.core.child module:function``.

Arguments come from the JSON file named by ``RC_ARGS_PATH``; the return value is
written atomically to ``RC_RESULT_PATH``. An exception escapes with a traceback on
stderr and a non-zero exit, which the parent reports as a harness error.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from pathlib import Path

from probes.core.atomic import atomic_write_json


def resolve(target: str):
    module_name, _, func_name = target.partition(":")
    if not func_name:
        raise SystemExit(f"target must be 'module:function', got {target!r}")
    return getattr(importlib.import_module(module_name), func_name)


def main(argv: list[str]) -> int:
    func = resolve(argv[1])
    args = json.loads(Path(os.environ["RC_ARGS_PATH"]).read_text())
    result = func(**args)
    atomic_write_json(Path(os.environ["RC_RESULT_PATH"]), result)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
