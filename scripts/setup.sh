#!/usr/bin/env bash
# Shared set-up for ./run-app and ./run-tests: a virtual environment in .venv with the package installed
# (editable) and its test extra. Re-running is cheap: pip only acts when pyproject.toml changed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
if [ ! -x .venv/bin/python ]; then
  echo "setting up .venv (first run)…" >&2
  python3 -m venv .venv
  .venv/bin/python -m pip install -q --upgrade pip
fi
stamp=.venv/.installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  .venv/bin/python -m pip install -q -e ".[test]"
  touch "$stamp"
fi
