"""``main.py env``: the environment report (real engine), a flagged problem, the Help ▸ Environment dialog."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

from pipeline_model import env_report, runtime_threads
from pipeline_model.scriptlib import threads
from pipeline_model.cli import env_cmd
from pipeline_model.engine.client import EngineClient

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _env(argv: list[str], engine) -> int:
    parser = argparse.ArgumentParser()
    env_cmd.add_parser(parser.add_subparsers(dest="command"))
    return env_cmd.main(parser.parse_args(["env", *argv]), client=engine)


def test_env_json_real_engine(engine, capsys):
    code = _env(["--json"], engine)
    data = json.loads(capsys.readouterr().out)
    assert code == (0 if data["ok"] else 1)
    eng = data["engine"]
    import importlib.metadata as md

    assert md.version("apache-tvm").startswith(eng["tvm"]["version"])
    assert eng["tvm_ffi"]["version"] == md.version("apache-tvm-ffi")
    assert os.path.isdir(eng["tvm"]["path"]) and os.path.isdir(eng["tvm_ffi"]["path"])
    assert eng["libinfo"]["USE_LLVM"] == "ON" and "USE_CUDA" in eng["libinfo"]
    assert isinstance(eng["llvm_version"], int) and eng["llvm_version"] > 0
    assert eng["devices"][0]["kind"] == "cpu"
    assert "cublas" in eng["codegens"] and eng["codegens"]["cublas"] is False  # the pip wheel lacks it
    assert eng["pattern_tables"]["cublas"]["patterns"] > 0
    assert eng["pass_configs"]["relax.FuseOps.max_depth"] == "int"
    # Compiled code runs on every usable core (TVM alone would use half the logical cores on x86).
    explicit = runtime_threads.explicit_setting()
    expected = explicit.to_json() if explicit else {"count": threads.usable_cores(), "source": "usable cores"}
    assert eng["runtime_threads"] == expected
    # ... and its pool as the engine set it up (workers sleep when idle, not pinned) unless the user chose
    assert eng["runtime_pool"] == {name: os.environ.get(name) or value for name, value in threads.POOL_DEFAULTS}
    # ... and the app's own pool in place of TVM's (issue 35), unless the user keeps TVM's
    if os.environ.get("RPS_THREAD_POOL", "").lower() != "tvm":
        assert eng["thread_pool"]["pool"] == "app" and eng["thread_pool"]["counters"]["threads"] >= 1
    local = data["local"]
    assert local["cpu_count"] == os.cpu_count() and local["python"] == sys.version.split()[0]
    assert local["packages"]["apache-tvm"]["version"]
    # The codegen-less tables are flagged, with a fix.
    warnings = [p for p in data["problems"] if "pattern tables without their codegen" in p["message"]]
    assert len(warnings) == 1 and "cublas" in warnings[0]["message"] and warnings[0]["fix"]


def test_env_text_real_engine(engine, capsys):
    _env([], engine)
    text = capsys.readouterr().out
    for heading in ("== Problems ==", "== System ==", "== TVM (engine process) ==", "== Devices ==",
                    "== Codegens (relax.ext.*) ==", "== Pattern tables ==", "== Python packages =="):
        assert heading in text
    assert "USE_LLVM=ON" in text and "tvm-ffi     0.1.14" in text and "cpu:0" in text
    assert "CPU threads " in text and "for compiled code" in text
    if os.environ.get("RPS_THREAD_POOL", "").lower() == "tvm":
        assert "thread pool: idle workers " in text and "RPS_THREAD_POOL=tvm" in text
    else:  # the engine runs its parallel loops on the app's pool
        assert "thread pool: the app's (idle workers spin " in text


def test_the_pool_line_names_what_each_setting_does():
    """TVM's defaults (unset) are named as spinning and pinned; the app's settings as sleeping, not pinned."""
    assert env_report._pool_line({"TVM_THREAD_POOL_SPIN_COUNT": "", "TVM_BIND_THREADS": ""}) == (
        "thread pool: idle workers spin 300000 turns first (TVM_THREAD_POOL_SPIN_COUNT=unset); "
        "pinned to cores: yes (TVM_BIND_THREADS=unset)")
    assert env_report._pool_line({"TVM_THREAD_POOL_SPIN_COUNT": "0", "TVM_BIND_THREADS": "0"}) == (
        "thread pool: idle workers sleep (TVM_THREAD_POOL_SPIN_COUNT=0); pinned to cores: no (TVM_BIND_THREADS=0)")


def test_bad_ffi_version_flagged_with_fix():
    """The engine refuses to start with a tvm-ffi known to crash: the report says so, with the pin."""
    client = EngineClient(env={"RPS_ENGINE_FAKE_FFI_VERSION": "0.1.15.1"})
    report = env_report.collect(client)
    client.close()
    assert report.engine is None and report.has_errors
    error = report.problems[0]
    assert error.severity == "error" and "0.1.15.1" in error.message
    assert error.fix == "pip install 'apache-tvm-ffi==0.1.14.post1'"
    text = env_report.render_text(report)
    assert text.startswith("== Problems ==\n  [ERROR] the engine could not start")
    assert "fix: pip install 'apache-tvm-ffi==0.1.14.post1'" in text


def test_cli_exit_code_and_json_on_bad_ffi():
    env = dict(os.environ, RPS_ENGINE_FAKE_FFI_VERSION="0.1.15.3")
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "main.py"), "env", "--json"], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    data = json.loads(proc.stdout)
    assert data["ok"] is False and data["engine"] is None and "0.1.15.3" in data["engine_error"]
    assert data["problems"][0]["fix"].endswith("0.1.14.post1'")


def test_problems_from_local_facts_only():
    local = {"packages": {"apache-tvm": {"version": "0.27.0"}, "apache-tvm-ffi": {"version": "0.1.15.0"},
                          "psutil": {"version": None}, "xgboost": {"version": None}, "cloudpickle": {"version": "3"}}}
    problems = env_report.find_problems(local, None, "")
    assert [p.severity for p in problems] == ["error", "warning", "warning"]
    assert "0.1.15.0" in problems[0].message and problems[0].fix.endswith("0.1.14.post1'")
    assert problems[1].fix == "pip install psutil" and problems[2].fix == "pip install xgboost"
    round_trip = env_report.EnvReport.from_json(json.loads(json.dumps(env_report.make_report(local, None).to_json())))
    assert [p.message for p in round_trip.problems] == [p.message for p in problems]


def test_env_dialog_offscreen(qtbot):
    from PySide6.QtGui import QGuiApplication

    from widgets.env_dialog import EnvDialog
    from widgets.theme import status_css

    dialog = EnvDialog()
    qtbot.addWidget(dialog)
    assert not dialog.copy_button.isEnabled()
    local = {"python": "3.11", "packages": {"apache-tvm": {"version": "0.27.0"},
                                            "apache-tvm-ffi": {"version": "0.1.15.0"}, "psutil": {"version": "7"},
                                            "xgboost": {"version": "2"}, "cloudpickle": {"version": "3"}}}
    report = env_report.make_report(local, None, "")
    dialog.set_report(report)
    html = dialog.problems_label.text()
    assert status_css("error", dialog.palette()) in html and "0.1.14.post1" in html
    assert "0.1.15.0" in dialog.text.toPlainText() and dialog.text.isReadOnly()
    dialog.copy_button.click()
    assert QGuiApplication.clipboard().text() == env_report.render_text(report)
    ok = env_report.make_report(dict(local, packages=dict(local["packages"], **{"apache-tvm-ffi": {"version": "0.1.14.post1"}})), None)
    dialog.set_report(ok)
    assert "No problems found" in dialog.problems_label.text()
    with qtbot.waitSignal(dialog.refresh_requested, timeout=1000):
        dialog.refresh_button.click()


def test_env_report_shows_the_user_tuning_database(tmp_path, monkeypatch, qtbot):
    """Location and size (records, workloads, bytes) of the per-user tuning database, in the text, the JSON
    and the Help ▸ Environment dialog; "off" when turned off."""
    from widgets.env_dialog import EnvDialog

    db = tmp_path / "tuning-db"
    db.mkdir()
    (db / "database_workload.json").write_text('["w1"]\n')
    (db / "database_tuning_record.json").write_text('[0, "r1"]\n[0, "r2"]\n')
    monkeypatch.setenv("RPS_TUNING_DB_DIR", str(db))
    local = env_report.local_facts()
    stats = local["tuning_database"]
    assert stats["path"] == str(db) and stats["records"] == 2 and stats["workloads"] == 1
    assert stats["bytes"] == os.path.getsize(db / "database_workload.json") + os.path.getsize(db / "database_tuning_record.json")
    report = env_report.make_report(local, None, "")
    text = env_report.render_text(report)
    assert str(db) in text and "2 records of 1 workloads" in text
    assert env_report.render_json(report)["local"]["tuning_database"]["records"] == 2
    dialog = EnvDialog()
    qtbot.addWidget(dialog)
    dialog.set_report(report)
    assert "2 records of 1 workloads" in dialog.text.toPlainText()
    monkeypatch.setenv("RPS_TUNING_DB_DIR", "off")
    off = env_report.render_text(env_report.make_report(env_report.local_facts(), None, ""))
    assert "off (RPS_TUNING_DB_DIR=off)" in off
