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
exec .venv/bin/python -m pytest -q -p no:cacheprovider "$@"
