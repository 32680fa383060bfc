#!/usr/bin/env bash
# Install the pinned runtime environment and start Relax Pipeline Studio.
# With a screen: the desktop app (extra arguments are passed on, e.g. a pipeline file).
# Without one (no DISPLAY/WAYLAND_DISPLAY): the headless equivalent, running the bundled CPU pipeline
# on the tutorial MLP, building it and checking it numerically against the unoptimized model.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh app
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
  exec .venv/bin/python main.py "$@"
fi
echo "No screen found: running the headless equivalent (main.py run resources/pipelines/cpu_build.json --build --bench)."
exec .venv/bin/python main.py run resources/pipelines/cpu_build.json --build --bench "$@"
