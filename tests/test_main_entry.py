"""``main.py``'s first word: a command runs headless, an existing file opens the app, anything else is an
error (exit 2, the list of commands) that never starts the GUI."""

from __future__ import annotations

import os
import subprocess
import sys

import main

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_unknown_command_exits_2_with_the_commands_without_a_window(tmp_path):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path / "c"),
               XDG_STATE_HOME=str(tmp_path / "s"), XDG_CACHE_HOME=str(tmp_path / "k"))
    # Without the rule the offscreen window would open and never return: the timeout turns that into a failure.
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "main.py"), "nosuchcommand", "x.json"], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert "'nosuchcommand' is not a command" in proc.stderr
    for command in main.COMMANDS:
        assert command in proc.stderr


def test_first_word_rules_in_process(tmp_path, monkeypatch, capsys):
    import app.application

    opened: list[list[str]] = []
    monkeypatch.setattr(app.application, "run_app", lambda argv: opened.append(list(argv)) or 0)
    assert main.main(["nosuchcommand", "x.json"]) == 2
    assert opened == [] and "nosuchcommand" in capsys.readouterr().err
    pipeline = tmp_path / "p.json"
    pipeline.write_text("{}", encoding="utf-8")
    assert main.main([str(pipeline)]) == 0 and opened == [[str(pipeline)]]  # an existing file: the app opens it
    assert main.main(["--dark"]) == 0 and opened[-1] == ["--dark"]  # options go to the app
    assert main.main([]) == 0 and opened[-1] == []


def test_bundled_pipeline_by_name(monkeypatch, capsys):
    import app.application
    from pipeline_model.resources import bundled_pipelines, pipeline_argument, resource_path

    assert "cpu_build" in bundled_pipelines()
    path = str(resource_path("pipelines", "cpu_build.json"))
    assert pipeline_argument("builtin:cpu_build") == path and pipeline_argument("x.json") == "x.json"
    opened: list[list[str]] = []
    monkeypatch.setattr(app.application, "run_app", lambda argv: opened.append(list(argv)) or 0)
    assert main.main(["builtin:cpu_build"]) == 0 and opened == [[path]]
    assert main.main(["builtin:no_such_pipeline"]) == 2 and len(opened) == 1
    assert "builtin:cpu_build" in capsys.readouterr().err  # the bundled ones are listed
    try:
        main.cli_main(["export", "builtin:no_such_pipeline"])
    except SystemExit as exc:
        assert exc.code == 2
    else:  # pragma: no cover - the assertion explains
        raise AssertionError("an unknown bundled pipeline must be a usage error")
    assert "no bundled pipeline 'builtin:no_such_pipeline'" in capsys.readouterr().err
