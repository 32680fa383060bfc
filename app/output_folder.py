"""Before the app writes files into a folder the user chose (Save Reproducer, Reduce Reproducer, Export Library):
every name it will write is checked first (issue 32, ``docs/RELIABILITY.md`` section 2). A link, a FIFO or a
device at one of the names is refused with a message box naming it; an existing file of the user's is replaced
only when the user says so in a prompt (the CLI's ``--force``). The check is
:func:`pipeline_model.safe_write.check_new_files`, the same as the CLI's.
"""

from __future__ import annotations

from typing import Any, Iterable, Optional

from PySide6.QtWidgets import QMessageBox

from app.i18n import tr


def ask_overwrite(parent: Any, folder: str, names: Iterable[str]) -> Optional[bool]:
    """Whether the files ``names`` may be written into ``folder``: ``None`` when not (refused, with a message box,
    or the user declined to replace files), else the ``overwrite`` flag for the request (``True`` only when files
    of those names exist and the user chose to replace them)."""
    from pipeline_model.safe_write import OutputPathError, check_new_files, existing_files

    names = tuple(names)
    try:
        check_new_files(folder, names, tr("the output folder"), overwrite=True)  # links, FIFOs, devices: refused
    except OutputPathError as exc:
        QMessageBox.critical(parent, tr("Cannot write into this folder"), str(exc))
        return None
    existing = existing_files(folder, names)
    if not existing:
        return False
    buttons = QMessageBox.StandardButton
    answer = QMessageBox.question(
        parent, tr("Replace files?"),
        tr("{0} already holds {1}. Replace them? (The old files are not kept.)").format(folder, ", ".join(existing)),
        buttons.Yes | buttons.Cancel, buttons.Cancel)
    return True if answer == buttons.Yes else None
