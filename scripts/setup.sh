#!/usr/bin/env bash
# Shared set-up for ./run-app and ./run-tests: a virtual environment in .venv with the package installed
# (editable) and its test extra. Re-running is cheap: pip only acts when pyproject.toml changed.
#
# Python must be 3.11 or newer (pyproject.toml's requires-python): that is checked first, with a clear
# message and exit status 2. A new .venv that fails to build is removed again, so a failure never leaves a
# half-made environment that breaks later runs; a .venv that an older Python made is replaced.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
need_major=3
need_minor=11

# the "major.minor" of the Python at $1, or nothing when it cannot run
python_version() {
  "$1" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null || true
}

# whether "major.minor" $1 is at least the version needed
new_enough() {
  local major="${1%%.*}" minor="${1#*.}"
  [[ "$major" =~ ^[0-9]+$ && "$minor" =~ ^[0-9]+$ ]] || return 1
  (( major > need_major || (major == need_major && minor >= need_minor) ))
}

if [ -x .venv/bin/python ] && ! new_enough "$(python_version .venv/bin/python)"; then
  echo "setup: .venv was made with an unusable or too old Python; building it again" >&2
  rm -rf .venv
fi

if [ ! -x .venv/bin/python ]; then
  if ! command -v python3 >/dev/null 2>&1; then
    echo "setup: python3 not found: install Python ${need_major}.${need_minor} or newer" >&2
    exit 2
  fi
  found="$(python_version python3)"
  if ! new_enough "$found"; then
    echo "setup: sandbox needs Python ${need_major}.${need_minor} or newer, but python3 is ${found:-unknown}" \
         "($(command -v python3)); install a newer Python and put it first on PATH" >&2
    exit 2
  fi
  echo "setting up .venv (first run)…" >&2
  # built in place (a venv's scripts name their own path), removed again unless it gets complete
  trap '[ -f .venv/.installed ] || rm -rf .venv' EXIT
  python3 -m venv .venv
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -e ".[test]"
  touch .venv/.installed
  exit 0
fi
stamp=.venv/.installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  .venv/bin/python -m pip install -q -e ".[test]"
  touch "$stamp"
fi
