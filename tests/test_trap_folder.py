"""The folder you run from is not code (issue 20): modules named like libraries planted in the current folder
(``numpy.py``, ``tvm.py``, ``json.py`` …) are never imported by the app's child processes — each plant writes
a marker file when imported, and no marker may appear."""

from __future__ import annotations

import os

import pytest

from pipeline_model import child_process

#: Library names an app child imports early (each one planted as a module that leaves a marker when imported).
PLANTED = ("numpy", "tvm", "json", "pickle", "struct", "select", "difflib", "psutil", "tvm_ffi", "site_customize",
           "sitecustomize", "usercustomize", "pipeline_model", "encodings")


#: What a user's own ``PYTHONPATH=.`` makes Python itself import at start-up, before any code of the app runs
#: (nothing the app can change): not planted where the app's own process starts with such a PYTHONPATH.
STARTUP = ("encodings", "sitecustomize", "usercustomize", "site_customize")


def plant(folder, names=PLANTED) -> str:
    """Plant the trap modules ``names`` in ``folder``; returns the marker folder."""
    markers = os.path.join(str(folder), "markers")
    os.makedirs(markers, exist_ok=True)
    for name in names:
        path = os.path.join(str(folder), f"{name}.py")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(f"open({os.path.join(markers, name)!r}, 'w').write('imported')\n")
    return markers


def test_child_env_and_command(monkeypatch):
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(["", ".", "rel/dir", "/abs/one", "/abs/one"]))
    env = child_process.child_env()
    assert env["PYTHONSAFEPATH"] == "1"
    assert env["PYTHONPATH"].split(os.pathsep) == [child_process.APP_ROOT, "/abs/one"]
    assert child_process.python_command("x.y", "--a")[1:] == ["-P", "-m", "x.y", "--a"]


def test_diff_process_ignores_modules_in_the_current_folder(tmp_path, monkeypatch):
    from pipeline_model.diff_process import DiffProcess

    markers = plant(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([".", ""]))
    proc = DiffProcess()
    try:
        result = proc.structure("a\nb\n" * 50, "a\nc\n" * 50)
        assert result is not None
    finally:
        proc.close()
    assert os.listdir(markers) == [], "the diff process imported a planted module"


@pytest.mark.parametrize("where", ["cwd"])
def test_plants_do_import_without_the_rule(tmp_path, monkeypatch, where):
    """The trap is real: a plain ``python -m`` child imports the planted module (so the tests above can fail)."""
    import subprocess
    import sys

    markers = plant(tmp_path)
    subprocess.run([sys.executable, "-m", "json.tool", "--help"], cwd=tmp_path, capture_output=True, timeout=60)
    assert "json" in os.listdir(markers)


def _cli(args, cwd, env=None, timeout=300):
    import subprocess
    import sys

    from tests.conftest import ROOT

    return subprocess.run([sys.executable, os.path.join(ROOT, "main.py"), *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)


@pytest.mark.e2e
def test_every_cli_command_from_a_trap_folder(tmp_path, monkeypatch):
    """``run``, ``run --build``, ``compare``, ``export``, ``passes``, ``env`` from a folder of planted modules,
    with ``.`` on PYTHONPATH too: every command works and nothing planted is imported (engine included)."""
    from tests.conftest import ROOT

    markers = plant(tmp_path, [n for n in PLANTED if n not in STARTUP])
    quick = os.path.join(ROOT, "resources", "pipelines", "fusion_walkthrough.json")
    build = os.path.join(ROOT, "resources", "pipelines", "cpu_build.json")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([".", ""]))
    for args in (["run", quick], ["run", build, "--build"], ["compare", quick, build],
                 ["export", quick, "-o", str(tmp_path / "out.py")], ["passes"], ["env"]):
        proc = _cli(args, tmp_path, env)
        assert proc.returncode == 0, (args, proc.stdout[-2000:], proc.stderr[-2000:])
        assert os.listdir(markers) == [], (args, os.listdir(markers))


@pytest.mark.e2e
def test_the_gui_from_a_trap_folder(tmp_path):
    """The window started from a folder of planted modules runs a pipeline (engine and all) importing none."""
    import subprocess
    import sys
    import time

    from tests.conftest import ROOT

    markers = plant(tmp_path)
    pid_file = tmp_path / "engine.pid"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", HOME=str(tmp_path / "home"),
               XDG_CONFIG_HOME=str(tmp_path / "config"), XDG_STATE_HOME=str(tmp_path / "state"),
               XDG_CACHE_HOME=str(tmp_path / "cache"), RPS_TEST_HOOK=f"run,engine_pid={pid_file}")
    proc = subprocess.Popen([sys.executable, os.path.join(ROOT, "main.py"),
                             os.path.join(ROOT, "resources", "pipelines", "fusion_walkthrough.json")],
                            cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not (pid_file.exists() and pid_file.read_text().strip()):
            time.sleep(0.2)
        assert pid_file.exists(), "the engine never answered"
        time.sleep(2.0)  # the run goes on meanwhile
    finally:
        proc.terminate()
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(30)
    assert os.listdir(markers) == [], os.listdir(markers)


def test_trusted_path_drops_what_python_put_first_and_relative_entries(tmp_path):
    from pipeline_model.scriptlib.sys_path import trusted_path

    here, other, cwd = str(tmp_path / "here"), str(tmp_path / "lib"), str(tmp_path / "cwd")
    for folder in (here, other, cwd):
        os.makedirs(folder)
    script = os.path.join(here, "s.py")
    assert trusted_path([here, "", ".", other], script, cwd) == [other]  # python here/s.py
    assert trusted_path([cwd, other], script, cwd) == [other]  # python -m s, run from cwd
    # An absolute folder the user put on PYTHONPATH stays, even where it is the script's own folder.
    assert trusted_path([here, here, other], script, cwd) == [here, other]
    assert trusted_path([other, here], script, cwd) == [other, here]
    link = str(tmp_path / "link")
    os.symlink(here, link)
    assert trusted_path([link, other], script, cwd) == [other]  # the same folder through a link
    assert trusted_path([], script, cwd) == []


@pytest.mark.parametrize("how", ["script", "module"])
def test_exported_script_ignores_modules_planted_next_to_it(tmp_path, how):
    """An exported script run from (and lying in) a folder of planted ``numpy.py``/``argparse.py``/``tvm.py``
    runs its pipeline and imports none of them; a plain script in the same folder does import them (the
    trap is real, so this test can fail)."""
    import subprocess
    import sys

    from tests.conftest import ROOT

    names = ("numpy", "argparse", "tvm", "difflib", "textwrap")
    markers = plant(tmp_path, names)
    proc = _cli(["export", os.path.join(ROOT, "resources", "pipelines", "fusion_walkthrough.json"),
                 "-o", str(tmp_path / "exported.py")], ROOT)
    assert proc.returncode == 0, proc.stderr
    command = ["exported.py"] if how == "script" else ["-m", "exported"]
    run = subprocess.run([sys.executable, *command, "--quiet"], cwd=tmp_path, capture_output=True, text=True,
                         timeout=300, stdin=subprocess.DEVNULL)
    assert run.returncode == 0, run.stderr[-2000:]
    assert os.listdir(markers) == [], os.listdir(markers)
    (tmp_path / "plain.py").write_text("import argparse\nimport numpy\n", encoding="utf-8")
    subprocess.run([sys.executable, "plain.py"], cwd=tmp_path, capture_output=True, timeout=120)
    assert sorted(os.listdir(markers)) == ["argparse", "numpy"]
