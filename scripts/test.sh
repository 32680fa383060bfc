#!/usr/bin/env bash
# Install the pinned test environment and run the whole test suite headless (what CI runs).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh dev
export QT_QPA_PLATFORM=offscreen
exec .venv/bin/python -m pytest -q -p no:cacheprovider "$@"
