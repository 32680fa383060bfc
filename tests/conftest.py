"""Shared pytest fixtures.

``engine``: one :class:`pipeline_model.engine.client.EngineClient` (a real engine process) shared by the
whole test session — starting an engine imports TVM (seconds), so tests that only need *an* engine use
this one. Tests that crash or kill the engine on purpose create their own client.
"""

from __future__ import annotations

import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

#: Folder of the bundled example pipelines.
PIPELINES_DIR = os.path.join(ROOT, "resources", "pipelines")


@pytest.fixture(scope="session")
def engine():
    """A session-wide EngineClient (step watchdog 300 s); closed at the end of the session."""
    from pipeline_model.engine.client import EngineClient

    client = EngineClient(step_timeout_s=300.0)
    yield client
    client.close()


@pytest.fixture(scope="session")
def repo_root() -> str:
    """Absolute path of the repository root."""
    return ROOT


@pytest.fixture(scope="session")
def bundled_pipelines() -> list[str]:
    """Paths of the bundled example pipeline files (``resources/pipelines/*.json``)."""
    return sorted(os.path.join(PIPELINES_DIR, n) for n in os.listdir(PIPELINES_DIR) if n.endswith(".json"))
