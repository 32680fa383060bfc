#!/usr/bin/env bash
# Create/refresh the project's virtual environment (.venv) with pinned requirements.
#   scripts/setup.sh          runtime requirements
#   scripts/setup.sh dev      runtime + test requirements (and the optional PyTorch importer)
# Idempotent: a stamp file skips pip when the requirement files did not change.
set -euo pipefail
cd "$(dirname "$0")/.."
mode="${1:-app}"
PY="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
  .venv/bin/python -m pip install -q --upgrade pip
fi
files=(requirements.txt)
[ "$mode" = dev ] && files+=(requirements-dev.txt)
[ "$mode" = dev ] && [ -f requirements-torch.txt ] && [ "${RPS_NO_TORCH:-0}" != 1 ] && files+=(requirements-torch.txt)
stamp=".venv/.rps-$mode-$(cat "${files[@]}" | sha256sum | cut -c1-16)"
if [ ! -f "$stamp" ]; then
  args=()
  for f in "${files[@]}"; do args+=(-r "$f"); done
  .venv/bin/python -m pip install -q "${args[@]}"
  touch "$stamp"
fi
# Qt's xcb platform plugin (a real window) needs a few X libraries that slim images lack.
if [ "$mode" = app ] && [ -n "${DISPLAY:-}" ] && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
  if ! ldconfig -p | grep -q libxcb-cursor.so.0 || ! ldconfig -p | grep -q libxcb-icccm.so.4; then
    apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
      libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-image0 libxcb-render-util0 libxcb-xkb1 \
      libxkbcommon-x11-0 libxcb-shape0 libxcb-randr0 libxcb-xinerama0 >/dev/null
  fi
fi
