"""Output paths (issue 20): ``export -o`` and ``run --emit-ir`` refuse hostile targets with a one-line error and
exit 2, and leave the file system as it was (symlink targets untouched, devices untouched, no temporary file
left); :mod:`pipeline_model.safe_write` itself never writes through a link, a FIFO or a device."""

from __future__ import annotations

import os
import stat
import subprocess
import sys

import pytest

from pipeline_model import safe_write
from tests.conftest import ROOT
from tests.output_checks import snapshot as _snapshot

PIPELINE = os.path.join(ROOT, "resources", "pipelines", "cpu_build.json")


def _cli(*args, cwd=None, timeout=120):
    return subprocess.run([sys.executable, os.path.join(ROOT, "main.py"), *args], capture_output=True, text=True,
                          timeout=timeout, cwd=cwd or ROOT, stdin=subprocess.DEVNULL)


def _one_line_error(proc) -> None:
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.strip().startswith("error:"), proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def test_export_hostile_targets(tmp_path):
    precious = tmp_path / "precious.txt"
    precious.write_text("keep me")
    (tmp_path / "x.py.tmp").symlink_to(precious)          # the old fixed temp name, planted as a link
    (tmp_path / "y.py.tmp").write_text("the user's own file")  # a user's file of that name
    os.mkfifo(tmp_path / "z.py.tmp")                       # a FIFO there used to block forever
    os.mkfifo(tmp_path / "fifo.py")
    (tmp_path / "link.py").symlink_to(precious)
    (tmp_path / "adir").mkdir()
    before = _snapshot(tmp_path)
    refused = [str(tmp_path / "adir"), str(tmp_path / "adir") + os.sep, str(tmp_path / "missing" / "dir" / "x.py"),
               "/proc/self/mem", "/dev/null", str(tmp_path / "fifo.py"), str(tmp_path / "link.py"),
               str(tmp_path / "precious.txt" / "x.py")]
    for target in refused:
        proc = _cli("export", PIPELINE, "--no-engine", "-o", target)
        _one_line_error(proc)
        assert _snapshot(tmp_path) == before, target
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    for name in ("x.py", "y.py", "z.py"):  # a planted temp name is never opened: the export goes elsewhere
        proc = _cli("export", PIPELINE, "--no-engine", "-o", str(tmp_path / name), timeout=60)
        assert proc.returncode == 0, proc.stderr
        assert (tmp_path / name).read_text().startswith("#")
    assert precious.read_text() == "keep me"
    assert os.readlink(tmp_path / "x.py.tmp") == str(precious)
    assert (tmp_path / "y.py.tmp").read_text() == "the user's own file"
    assert stat.S_ISFIFO(os.lstat(tmp_path / "z.py.tmp").st_mode)
    assert not [n for n in os.listdir(tmp_path) if n.endswith(safe_write.TEMP_SUFFIX)]


def test_emit_ir_on_a_file_is_refused_before_the_run(tmp_path):
    existing = tmp_path / "ir.txt"
    existing.write_text("mine")
    proc = _cli("run", PIPELINE, "--emit-ir", str(existing))
    _one_line_error(proc)
    assert "pipeline" not in proc.stdout  # refused before the engine ran anything
    assert existing.read_text() == "mine"
    proc = _cli("run", PIPELINE, "--emit-ir", str(tmp_path / "no" / "such" / "dir"))
    _one_line_error(proc)
    assert not (tmp_path / "no").exists()


def test_export_lib_on_a_link_or_a_system_folder_is_refused_before_the_run(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    os.symlink(real, tmp_path / "linked")
    existing = tmp_path / "lib.txt"
    existing.write_text("mine")
    for target in (tmp_path / "linked", existing, "/proc/self", "/dev/rps-lib"):
        proc = _cli("run", PIPELINE, "--export-lib", str(target))
        _one_line_error(proc)
        assert "pipeline" not in proc.stdout, proc.stdout  # refused before the engine ran anything
    assert os.listdir(real) == [] and existing.read_text() == "mine" and not os.path.exists("/dev/rps-lib")


def test_safe_write_refuses_links_and_specials_inside_an_emit_folder(tmp_path):
    precious = tmp_path / "precious.txt"
    precious.write_text("keep me")
    out = tmp_path / "ir"
    out.mkdir()
    (out / "final.py").symlink_to(precious)
    with pytest.raises(safe_write.OutputPathError, match="symbolic link"):
        safe_write.write_text(out / "final.py", "x")
    assert precious.read_text() == "keep me"
    os.mkfifo(out / "00_input.py")
    with pytest.raises(safe_write.OutputPathError, match="FIFO"):
        safe_write.write_text(out / "00_input.py", "x")
    safe_write.write_text(out / "01_a.py", "one")
    safe_write.write_text(out / "01_a.py", "two")
    assert (out / "01_a.py").read_text() == "two"
    assert sorted(os.listdir(out)) == ["00_input.py", "01_a.py", "final.py"]


def test_safe_write_keeps_mode_and_cleans_up_on_failure(tmp_path, monkeypatch):
    target = tmp_path / "script.py"
    target.write_text("old")
    os.chmod(target, 0o750)
    safe_write.write_text(target, "new")
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o750 and target.read_text() == "new"

    def boom(*_a, **_k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", boom)
    with pytest.raises(safe_write.OutputPathError, match="No space left"):
        safe_write.write_text(target, "newer")
    assert target.read_text() == "new"
    assert os.listdir(tmp_path) == ["script.py"]
