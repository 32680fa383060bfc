"""Test hooks for end-to-end tests that drive ``main.py`` in a subprocess (``RPS_TEST_HOOK``).

``RPS_TEST_HOOK`` is a comma-separated list of:

- ``edit``: add a ``relax.FoldConstant`` step through the undo stack (an unsaved edit), then write
  the recovery copy at once;
- ``report=FILE``: write ``{"steps": [pass ids], "path", "modified", "pid"}`` of the open document
  to FILE (JSON), then close the window (no questions);
- ``run``: run the pipeline (the consent store decides what may run); ``engine_pid=FILE`` writes
  the engine's pid to FILE once the engine answered.

Nothing here is reachable from the app's menus; it only acts when the variable is set.
"""

from __future__ import annotations

import json
import os
from typing import Any


def run_hook(window: Any, spec: str) -> None:
    """Apply the hooks of ``spec`` to ``window`` (see the module docstring)."""
    from app.undo_commands import AddStepCommand
    from pipeline_model.document import Step

    for part in [p.strip() for p in spec.split(",") if p.strip()]:
        name, _, value = part.partition("=")
        if name == "edit":
            ctrl = window.ctrl
            ctrl.undo_stack.push(AddStepCommand(ctrl, len(ctrl.doc.steps), Step("relax.FoldConstant")))
            window.autosave.save_now()
        elif name == "report":
            doc = window.ctrl.doc
            data = {"steps": [s.pass_id for s in doc.steps], "path": doc.path, "modified": window.ctrl.modified,
                    "pid": os.getpid()}
            with open(value, "w", encoding="utf-8") as handle:
                json.dump(data, handle)
            window.exit_on_signal()
        elif name == "run":
            window.session.run_pipeline()
        elif name == "engine_pid":
            window.worker.ping_ready.connect(lambda info, path=value: _write(path, str(info.get("pid", ""))))


def _write(path: str, text: str) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(tmp, path)
