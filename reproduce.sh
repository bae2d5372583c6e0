#!/usr/bin/env bash
# One command for everything: creates (or updates) the environment from the lock,
# then hands over to the Python driver (probes/reproduce.py), or runs the tests.
#   ./reproduce.sh            every campaign with the paper's parameters + the book
#   ./reproduce.sh --quick    small bounds;   ./reproduce.sh --help  all options
#   ./reproduce.sh test       the test suite
#   ./reproduce.sh mutate [TARGET ...]   mutation testing (mutation/<target>.toml, cosmic-ray)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

VENV=.venv
LOCK=env/requirements.lock
STAMP="$VENV/.requirements.lock.sha256"

die() { echo "error: $*" >&2; exit 2; }

ensure_env() {
  local py="${PYTHON:-python3}"
  command -v "$py" >/dev/null 2>&1 || die "python3 not found: install Python 3.11 (e.g. apt-get install python3 python3-venv)"
  if [ ! -x "$VENV/bin/python" ]; then
    echo "creating $VENV (first run: a few minutes)..." >&2
    "$py" -m venv "$VENV" || die "could not create $VENV: install python3-venv (apt-get install python3-venv)"
    "$VENV/bin/python" -m pip install --quiet --upgrade pip >/dev/null 2>&1 || true
  fi
  local want have=""
  want=$(sha256sum "$LOCK" | cut -d' ' -f1)
  [ -f "$STAMP" ] && have=$(cat "$STAMP")
  if [ "$want" != "$have" ]; then
    echo "installing $LOCK into $VENV..." >&2
    local started=$SECONDS
    if ! "$VENV/bin/python" -m pip install --disable-pip-version-check -r "$LOCK" > "$VENV/pip-install.log" 2>&1; then
      grep -v "^WARNING: Location 'file:" "$VENV/pip-install.log" | tail -15 >&2
      die "pip could not install $LOCK (log: $VENV/pip-install.log); check access to PyPI"
    fi
    echo "$want" > "$STAMP"
    echo "environment ready in $((SECONDS - started))s" >&2
  fi
  export PATH="$PWD/$VENV/bin:$PATH"
  export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
  export PYDEVD_DISABLE_FILE_VALIDATION=1
}

if [ "${1:-}" = "test" ]; then
  shift
  ensure_env
  exec "$VENV/bin/python" -m pytest "$@"
fi
if [ "${1:-}" = "mutate" ]; then
  shift
  ensure_env
  exec "$VENV/bin/python" -m probes.mutate "$@"
fi
ensure_env
exec "$VENV/bin/python" -m probes.reproduce "$@"
