"""An exported script imports nothing from the folder it lies in or is run from.

Python puts a script's own folder first on ``sys.path`` (and ``python -m`` the current folder), so a
``numpy.py`` or ``argparse.py`` planted next to an exported script would run when the script imports numpy or
argparse. Exported scripts call :func:`drop_script_folders` as their first statement, before any import that
Python has not already made at start-up (``os`` and ``sys`` are). The app itself starts its child processes
with ``python -P`` (:mod:`pipeline_model.child_process`) and ``main.py`` drops the current folder on its own
first line. Standard library only; its code needs nothing but ``import os`` and ``import sys`` above it.

:func:`trusted_path` keeps the absolute entries the user chose (``PYTHONPATH=/abs/dir``), in their order, and
leaves out relative entries (``""``, ``"."``) and the first entry where it is the folder Python put there itself:
the folder of the script (``python script.py``) or the current folder (``python -m``), compared after resolving
links. The functions' docstrings are one line each: every exported script carries them above its pipeline.
"""

from __future__ import annotations

import os
import sys


def trusted_path(entries: "list[str]", script_file: str, cwd: str) -> "list[str]":
    """``entries`` without relative entries and without the folder Python put first (the script's or ``cwd``)."""
    implicit = {os.path.realpath(os.path.dirname(os.path.abspath(script_file))), os.path.realpath(cwd)}
    kept = [p for p in entries if p and os.path.isabs(p)]
    if entries and entries[0] and os.path.isabs(entries[0]) and os.path.realpath(entries[0]) in implicit:
        kept = kept[1:]
    return kept


def drop_script_folders(script_file: str) -> None:
    """Remove the script's folder, the current folder and relative entries from ``sys.path`` (in place)."""
    try:
        cwd = os.getcwd()
    except OSError:  # the current folder was deleted: nothing can be imported from it
        cwd = os.path.dirname(os.path.abspath(script_file))
    sys.path[:] = trusted_path(sys.path, script_file, cwd)
