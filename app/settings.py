"""Application settings (QSettings) and folders, overridable for tests.

``RPS_CONFIG_DIR`` puts the settings in an INI file under that folder; ``RPS_CACHE_DIR`` sets the
cache folder (catalogue cache). Otherwise Qt's per-user locations are used.
"""

from __future__ import annotations

import os
from typing import Any, Optional

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


def last_document(settings: QSettings) -> Optional[str]:
    """The pipeline file open when the app was last closed (``None``: none, or it is gone)."""
    value = settings.value("session/last_document", "")
    path = str(value) if isinstance(value, str) and value else ""
    return path if path and os.path.isfile(path) else None


def set_last_document(settings: QSettings, path: Optional[str]) -> None:
    """Remember the pipeline file open at close (``None``: an unsaved document)."""
    settings.setValue("session/last_document", os.path.abspath(path) if path else "")


#: Default watchdog limit of one engine step, in seconds.
DEFAULT_STEP_TIMEOUT_S = 600
#: Default share of RAM the engine may use.
DEFAULT_MEMORY_SHARE = 0.6


def default_memory_limit_mib() -> int:
    """The default engine memory limit: a safe share of this machine's RAM, in MiB (0: unknown = none)."""
    total = _physical_memory_bytes()
    return int(total * DEFAULT_MEMORY_SHARE / (1024 * 1024)) if total > 0 else 0


def _physical_memory_bytes() -> int:
    """This machine's RAM in bytes (0: unknown): ``os.sysconf`` where it answers (Linux, macOS), else psutil
    (Windows); psutil's import costs ~0.1 s, asked for while the main window is built."""
    try:
        pages, page_size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
        if pages > 0 and page_size > 0:
            return int(pages * page_size)
    except (AttributeError, OSError, ValueError):
        pass
    try:
        import psutil
    except ImportError:
        return 0
    return int(psutil.virtual_memory().total)


def _int_setting(settings: QSettings, key: str, default: int, low: int, high: int) -> int:
    try:
        value = int(str(settings.value(key, default)))
    except (TypeError, ValueError):
        return default
    return max(low, min(high, value))


def step_timeout_s(settings: QSettings) -> int:
    """Edit ▸ Preferences: the watchdog limit of one engine step (seconds)."""
    return _int_setting(settings, "engine/step_timeout_s", DEFAULT_STEP_TIMEOUT_S, 1, 7 * 24 * 3600)


def memory_limit_mib(settings: QSettings) -> int:
    """Edit ▸ Preferences: the engine's memory limit in MiB (0: none)."""
    return _int_setting(settings, "engine/memory_limit_mib", default_memory_limit_mib(), 0, 1 << 30)


def rpc_tracker(settings: QSettings) -> str:
    """Edit ▸ Preferences: the RPC tracker whose devices the target picker lists (``HOST:PORT``; "" for none)."""
    value = settings.value("rpc/tracker", "")
    return str(value).strip() if isinstance(value, str) else ""


def engine_options(settings: QSettings) -> dict[str, Any]:
    """``EngineClient`` keyword arguments from the settings (watchdog limit, memory limit)."""
    return {"step_timeout_s": float(step_timeout_s(settings)), "memory_limit": memory_limit_mib(settings) * 1024 * 1024}
