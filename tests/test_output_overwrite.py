"""Issue 32: ``export -o`` and ``run --emit-ir`` never replace a file of the user's unasked.

* ``export -o FILE`` (and the default path next to the pipeline): an existing file is refused with one line naming
  it and ``--force`` (exit 2, byte-identical); ``--force`` replaces it; a link, FIFO or device is refused even then.
* ``--emit-ir DIR``: the app lists what it writes in ``DIR/.rps-files.json`` (with SHA-256); a re-run replaces its
  own unchanged files, but a user's file at a name (or a file the user edited since) is refused before the run and
  before the first byte (``--force`` replaces); a link or FIFO at a name or at the list's name never.
* File > Export Python Script: the save dialog confirms replacing a file (Qt's question; not switched off), and a
  link or FIFO chosen there is refused.

CLI commands run in this process (``main.cli_main``), none reaching an engine."""

from __future__ import annotations

import json
import os

import pytest

from pipeline_model import safe_write
from pipeline_model.cli import run_cmd
from pipeline_model.engine.results import CHANGED, FAILED, RunResult, StepResult
from pipeline_model.fileformat import load_pipeline
from pipeline_model.resources import bundled_pipeline
from tests.output_checks import DECOY
from tests.output_checks import cli as _cli
from tests.output_checks import one_line as _one_line
from tests.output_checks import snapshot as _snapshot


# ---- export -o -------------------------------------------------------------------------------------------------
def test_export_refuses_an_existing_file_without_force(tmp_path, capsys):
    target = tmp_path / "mine.py"
    target.write_bytes(DECOY)
    before = _snapshot(tmp_path)
    code, err = _cli(capsys, "export", "builtin:cpu_build", "--no-engine", "-o", target)
    _one_line(code, err, str(target), "--force")
    assert _snapshot(tmp_path) == before
    code, _ = _cli(capsys, "export", "builtin:cpu_build", "--no-engine", "-o", target, "--force")
    assert code == 0 and target.read_bytes().startswith(b"#") and sorted(os.listdir(tmp_path)) == ["mine.py"]


@pytest.mark.parametrize("planted", ["link", "fifo"])
def test_export_refuses_links_and_fifos_even_with_force(tmp_path, capsys, planted):
    (tmp_path / "decoy.txt").write_bytes(DECOY)
    target = tmp_path / "out.py"
    target.symlink_to(tmp_path / "decoy.txt") if planted == "link" else os.mkfifo(target)
    before = _snapshot(tmp_path)
    for force in ((), ("--force",)):
        code, err = _cli(capsys, "export", "builtin:cpu_build", "--no-engine", "-o", target, *force)
        _one_line(code, err, str(target), "symbolic link" if planted == "link" else "FIFO")
        assert _snapshot(tmp_path) == before


def test_export_default_path_next_to_the_pipeline_is_not_replaced(tmp_path, capsys):
    pipeline = tmp_path / "p.json"
    pipeline.write_bytes(open(bundled_pipeline("cpu_build"), "rb").read())
    code, _ = _cli(capsys, "export", pipeline, "--no-engine")
    written = [n for n in os.listdir(tmp_path) if n.endswith(".py")]
    assert code == 0 and len(written) == 1
    (tmp_path / written[0]).write_bytes(DECOY)  # now the user's file
    code, err = _cli(capsys, "export", pipeline, "--no-engine")
    _one_line(code, err, written[0], "--force")
    assert (tmp_path / written[0]).read_bytes() == DECOY
    assert not [n for n in os.listdir(tmp_path) if n.endswith(safe_write.TEMP_SUFFIX)]


# ---- --emit-ir -----------------------------------------------------------------------------------------------
def _result(*scripts: str) -> RunResult:
    steps = [StepResult(index=i, uid=f"u{i}", pass_id=f"relax.P{i}", title="", state=CHANGED, script=text)
             for i, text in enumerate(scripts)]
    return RunResult(input_script="# input\n", steps=steps)


def test_emit_ir_replaces_only_its_own_unchanged_files(tmp_path):
    out = tmp_path / "ir"
    first = run_cmd.emit_ir(_result("# one\n", "# two\n"), str(out))
    assert sorted(os.listdir(out)) == [".rps-files.json", "00_input.py", "01_relax.P0.py", "02_relax.P1.py",
                                       "final.py"] and len(first) == 4
    listing = json.loads((out / ".rps-files.json").read_text())
    assert listing["format"] == safe_write.MANIFEST_FORMAT and listing["version"] == 1
    run_cmd.emit_ir(_result("# one again\n", "# two again\n"), str(out))  # a re-run replaces its own files
    assert (out / "final.py").read_text() == "# two again\n"
    (out / "01_relax.P0.py").write_bytes(DECOY)  # the user edits one: it is the user's now
    before = _snapshot(tmp_path)
    with pytest.raises(safe_write.OutputPathError, match=r"01_relax\.P0\.py.*--force"):
        run_cmd.emit_ir(_result("# three\n", "# four\n"), str(out))
    assert _snapshot(tmp_path) == before  # checked before the first byte: nothing changed, the list neither
    run_cmd.emit_ir(_result("# three\n", "# four\n"), str(out), overwrite=True)  # --force
    assert (out / "01_relax.P0.py").read_text() == "# three\n"


def test_emit_ir_refuses_a_users_file_in_an_existing_folder(tmp_path):
    out = tmp_path / "ir"
    out.mkdir()
    (out / "final.py").write_bytes(DECOY)
    (out / "notes.txt").write_bytes(DECOY)
    before = _snapshot(tmp_path)
    with pytest.raises(safe_write.OutputPathError, match="final.py"):
        run_cmd.emit_ir(_result("# one\n"), str(out))
    assert _snapshot(tmp_path) == before
    result = _result("# one\n")
    result.steps.append(StepResult(index=1, uid="u1", pass_id="relax.Bad", title="", state=FAILED))
    (out / "final.py").unlink()
    run_cmd.emit_ir(result, str(out))  # the user's other files stay as they were
    assert (out / "notes.txt").read_bytes() == DECOY and (out / "final.py").read_text() == "# one\n"


@pytest.mark.parametrize("name, planted", [(".rps-files.json", "user"), (".rps-files.json", "link"),
                                           ("00_input.py", "fifo")])
def test_emit_ir_file_list_is_not_forged_or_followed(tmp_path, name, planted):
    out = tmp_path / "ir"
    out.mkdir()
    (tmp_path / "decoy.txt").write_bytes(DECOY)
    if planted == "user":  # the user's file at the list's name is not the app's list: refused without --force
        (out / name).write_text(json.dumps({"files": {"final.py": "0" * 64}}))
    elif planted == "link":
        (out / name).symlink_to(tmp_path / "decoy.txt")
    else:
        os.mkfifo(out / name)
    before = _snapshot(tmp_path)
    for overwrite in (False, True) if planted != "user" else (False,):  # a link or FIFO: not even with --force
        with pytest.raises(safe_write.OutputPathError, match=r"\.rps-files\.json|00_input\.py"):
            run_cmd.emit_ir(_result("# one\n"), str(out), overwrite=overwrite)
        assert _snapshot(tmp_path) == before


def test_run_emit_ir_refuses_a_users_file_before_the_run(tmp_path, capsys):
    doc = load_pipeline(str(bundled_pipeline("cpu_build")))
    names = run_cmd.emit_ir_names(doc, None)
    assert names[0] == "00_input.py" and names[-1] == "final.py" and len(names) == len(doc.steps) + 2
    out = tmp_path / "ir"
    out.mkdir()
    (out / names[1]).write_bytes(DECOY)
    before = _snapshot(tmp_path)
    code, err = _cli(capsys, "run", "builtin:cpu_build", "--emit-ir", out)  # refused before the engine starts
    _one_line(code, err, "--emit-ir", names[1], "--force")
    assert _snapshot(tmp_path) == before
    code, err = _cli(capsys, "run", "builtin:cpu_build", "--emit-ir", out, "--until", "0")  # a bad option still wins
    assert code == 2 and "--until" in err


# ---- File > Export Python Script -------------------------------------------------------------------------------
def test_gui_export_dialog_confirms_replacing_and_refuses_links(fake_studio, tmp_path, monkeypatch):
    from PySide6.QtWidgets import QFileDialog, QMessageBox

    win = fake_studio
    (tmp_path / "decoy.txt").write_bytes(DECOY)
    link = tmp_path / "link.py"
    link.symlink_to(tmp_path / "decoy.txt")
    asked: list = []

    def dialog(*args, **kwargs):
        options = kwargs.get("options", args[4] if len(args) > 4 else QFileDialog.Option(0))
        asked.append(bool(options & QFileDialog.Option.DontConfirmOverwrite))
        return str(link), "Python (*.py)"

    errors: list = []
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(dialog))
    monkeypatch.setattr(QMessageBox, "critical", staticmethod(lambda *a, **k: errors.append(a[2])))
    win.files.export_script_dialog()
    assert asked == [False]  # Qt's own "replace?" question is on: the user confirmed replacing an existing file
    assert errors and "symbolic link" in errors[0] and (tmp_path / "decoy.txt").read_bytes() == DECOY
    assert os.path.islink(link)


@pytest.mark.parametrize("answer", ["Cancel", "Yes"])
def test_gui_save_as_asks_before_replacing_the_file_a_json_suffix_names(fake_studio, tmp_path, monkeypatch, answer):
    from PySide6.QtWidgets import QFileDialog, QMessageBox

    win = fake_studio
    win.files.new_pipeline(force=True)
    target = tmp_path / "mine.json"
    target.write_bytes(DECOY)
    asked: list = []

    def dialog(*args, **kwargs):
        options = kwargs.get("options", args[4] if len(args) > 4 else QFileDialog.Option(0))
        asked.append(bool(options & QFileDialog.Option.DontConfirmOverwrite))
        return str(tmp_path / "mine"), ""  # the dialog confirmed "mine" only; ".json" is added after it

    questions: list = []
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(dialog))
    monkeypatch.setattr(QMessageBox, "question", staticmethod(
        lambda *a, **k: questions.append(a[2]) or getattr(QMessageBox.StandardButton, answer)))
    assert win.files.save_as() is (answer == "Yes")
    assert asked == [False] and len(questions) == 1 and "mine.json" in questions[0]
    if answer == "Cancel":
        assert target.read_bytes() == DECOY and sorted(os.listdir(tmp_path)) == ["mine.json"]
    else:
        assert target.read_bytes() != DECOY and (tmp_path / "mine.json.bak").read_bytes() == DECOY
