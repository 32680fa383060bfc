#!/usr/bin/env bash
# Regenerate the translation sources from app/, widgets/ and the core's shown texts (pipeline_model/passkinds:
# translate("StepReport", ...), see pipeline_model/i18n.py) and compile them.
#   scripts/update_translations.sh          lupdate (new texts are added as unfinished, vanished ones kept
#                                           as obsolete so a returning text keeps its translation), then lrelease
# Translate the new entries in resources/translations/*.ts (Qt Linguist: .venv/bin/pyside6-linguist), then
# run this again so the shipped .qm matches (tests/test_i18n.py checks both).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=.venv/bin
SOURCES=$(ls app/*.py widgets/*.py widgets/*/*.py widgets/*/*/*.py pipeline_model/passkinds/*.py pipeline_model/passkinds/*/*.py pipeline_model/env_report.py pipeline_model/models.py pipeline_model/debugging/reduce.py 2>/dev/null)
for ts in resources/translations/relax_pipeline_studio_*.ts; do
    "$BIN/pyside6-lupdate" -locations relative $SOURCES -ts "$ts"
    "$BIN/pyside6-lrelease" "$ts" -qm "${ts%.ts}.qm"
done
