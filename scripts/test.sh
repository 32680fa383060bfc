#!/usr/bin/env bash
# Install the pinned test environment, lint, type-check and run the whole test suite headless (what CI runs).
# Each step fails the command: ruff (pyproject.toml [tool.ruff]), mypy on pipeline_model ([tool.mypy]), pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh dev
echo "== ruff check"
.venv/bin/python -m ruff check .
echo "== mypy pipeline_model"
.venv/bin/python -m mypy pipeline_model
echo "== pytest"
export QT_QPA_PLATFORM=offscreen
# Two worker processes, each test file in one of them (module fixtures stay per file); RPS_TEST_WORKERS=0 runs in
# this process (e.g. for pdb). The suite's end still fails when any process it started is alive (tests/process_guard.py).
# Tests marked heavy (docs/DEBUGGING.md's real-bug corpus at full size) run only with RPS_HEAVY=1.
heavy=(-m "not heavy")
[ "${RPS_HEAVY:-0}" = 1 ] && heavy=()
exec .venv/bin/python -m pytest -q -p no:cacheprovider -n "${RPS_TEST_WORKERS:-2}" --dist loadfile "${heavy[@]}" "$@"
