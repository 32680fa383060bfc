"""Application settings (QSettings) and folders, overridable for tests.

``RPS_CONFIG_DIR`` puts the settings in an INI file under that folder; ``RPS_CACHE_DIR`` sets the
cache folder (catalogue cache). Otherwise Qt's per-user locations are used.
"""

from __future__ import annotations

import os
from typing import Any

from PySide6.QtCore import QSettings, QStandardPaths

ORGANIZATION = "RelaxPipelineStudio"
APPLICATION = "Relax Pipeline Studio"
MAX_RECENT = 8


def app_settings() -> QSettings:
    """The settings store (INI file under ``RPS_CONFIG_DIR`` when that is set)."""
    folder = os.environ.get("RPS_CONFIG_DIR")
    if folder:
        os.makedirs(folder, exist_ok=True)
        return QSettings(os.path.join(folder, "studio.ini"), QSettings.Format.IniFormat)
    return QSettings(ORGANIZATION, "studio")


def cache_dir() -> str:
    """Per-user cache folder (created on demand by writers)."""
    folder = os.environ.get("RPS_CACHE_DIR")
    if folder:
        return folder
    base = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.GenericCacheLocation)
    return os.path.join(base or os.path.expanduser("~/.cache"), "relax-pipeline-studio")


def recent_files(settings: QSettings) -> list[str]:
    """Recent pipeline files, most recent first."""
    value: Any = settings.value("recent_files", [])
    if isinstance(value, str):
        value = [value] if value else []
    return [str(v) for v in (value or []) if v]


def add_recent_file(settings: QSettings, path: str) -> list[str]:
    """Put ``path`` first in the recent list (kept to ``MAX_RECENT``)."""
    path = os.path.abspath(path)
    files = [path] + [p for p in recent_files(settings) if os.path.abspath(p) != path]
    files = files[:MAX_RECENT]
    settings.setValue("recent_files", files)
    return files


def trusted_hashes(settings: QSettings) -> set[str]:
    """Content hashes of pipelines whose custom code the user agreed to run."""
    value: Any = settings.value("trusted_custom_code", [])
    if isinstance(value, str):
        value = [value] if value else []
    return {str(v) for v in (value or [])}


def add_trusted_hash(settings: QSettings, digest: str) -> None:
    """Remember that the user trusts custom code with this content hash."""
    hashes = trusted_hashes(settings)
    hashes.add(digest)
    settings.setValue("trusted_custom_code", sorted(hashes)[-200:])
