"""Issue 32: every output follows the same rules, and reproducer folders from others are read safely.

* Save never writes through a symlink (also a dangling one), into a FIFO or a device; ``.bak`` only of the user's
  real file, never through a link at ``<name>.bak``.
* Output folders (``run --reproducer``, ``reduce -o``, ``run --export-lib``): an existing file at one of the names
  is never replaced without ``--force``, a link/FIFO/device there never even with it, and every check runs before
  the first byte is written.
* ``reduce DIR`` reads the folder safely before trust is asked: a FIFO, a link to ``/dev/zero``, ``[1,2]``, ``{}``
  or 100,000-deep JSON give one line and exit 2.
* Exit codes and messages as the README says (bisect/diverge without ``--trust``, ``--inputs`` FIFO, ``--emit-ir``
  naming a file, ``reduce`` numbers).

CLI commands run in this process (``main.cli_main``), none of them reaching an engine."""

from __future__ import annotations

import json
import os
import stat

import pytest

from pipeline_model import safe_write
from pipeline_model.debugging import reproducer
from pipeline_model.document import PipelineDocument, Step
from pipeline_model.fileformat import save_pipeline
from tests.output_checks import DECOY
from tests.output_checks import cli as _cli
from tests.output_checks import one_line as _one_line
from tests.output_checks import snapshot as _snapshot


def _doc() -> PipelineDocument:
    return PipelineDocument(model="builtin:mlp", name="p", target={"kind": "llvm"}, steps=[Step("relax.LegalizeOps")])


# ---- Save --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("planted", ["link", "dangling", "fifo", "device"])
def test_save_refuses_links_fifos_and_devices(tmp_path, planted):
    decoy = tmp_path / "decoy.txt"
    decoy.write_bytes(DECOY)
    target = tmp_path / "p.json"
    if planted == "link":
        target.symlink_to(decoy)
    elif planted == "dangling":
        target.symlink_to(tmp_path / "created.txt")
    elif planted == "fifo":
        os.mkfifo(target)
    else:
        target = "/dev/null"
    before = _snapshot(tmp_path)
    with pytest.raises(safe_write.OutputPathError) as info:
        save_pipeline(_doc(), target)
    assert str(target) in str(info.value) and "\n" not in str(info.value)
    assert _snapshot(tmp_path) == before  # decoy byte-identical, no decoy.txt.bak, no created.txt, no temp file
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_save_keeps_a_backup_only_of_the_real_file(tmp_path):
    decoy = tmp_path / "decoy.txt"
    decoy.write_bytes(DECOY)
    target = tmp_path / "p.json"
    save_pipeline(_doc(), target)
    first = target.read_bytes()
    save_pipeline(_doc(), target)
    assert (tmp_path / "p.json.bak").read_bytes() == first  # the ordinary backup
    os.unlink(tmp_path / "p.json.bak")
    (tmp_path / "p.json.bak").symlink_to(decoy)  # a link planted at the backup's name is never written through
    save_pipeline(_doc(), target)
    assert decoy.read_bytes() == DECOY and os.path.islink(tmp_path / "p.json.bak")


# ---- output folders ----------------------------------------------------------------------------------------
def _spec() -> reproducer.ReproSpec:
    return reproducer.ReproSpec(kind="exception", expected=reproducer.expected_for("exception", "ValueError: x"),
                                target={"kind": "llvm"}, pass_context={}, module_text="# module\n", step_index=0,
                                pass_id="custom.python", bindings=3)


def test_write_folder_checks_every_name_before_the_first_byte(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    os.mkfifo(out / "README.md")
    with pytest.raises(safe_write.OutputPathError, match="README.md"):
        reproducer.write_folder(str(out), reproducer.spec_files(_spec()), overwrite=True)
    assert sorted(os.listdir(out)) == ["README.md"]  # repro.py was not written before the refusal
    os.unlink(out / "README.md")
    (out / "repro.py").write_bytes(DECOY)
    with pytest.raises(safe_write.OutputPathError, match="already exists"):
        reproducer.write_folder(str(out), reproducer.spec_files(_spec()))
    assert sorted(os.listdir(out)) == ["repro.py"] and (out / "repro.py").read_bytes() == DECOY
    reproducer.write_folder(str(out), reproducer.spec_files(_spec()), overwrite=True)  # the user asked
    assert reproducer.read_spec(str(out)).bindings == 3


def test_write_bytes_without_replace_never_replaces(tmp_path):
    path = tmp_path / "a.txt"
    path.write_bytes(DECOY)
    with pytest.raises(safe_write.OutputPathError):
        safe_write.write_bytes(path, b"new", replace=False)
    assert path.read_bytes() == DECOY and os.listdir(tmp_path) == ["a.txt"]


def _user_folder(tmp_path, name: str, planted: str = "file"):
    """``out/`` holding the user's file ``name`` (``planted``: ``file``; ``link`` to the user's ``decoy.txt``;
    ``fifo``)."""
    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    if planted == "file":
        (out / name).write_bytes(DECOY)
    elif planted == "link":
        (tmp_path / "decoy.txt").write_bytes(DECOY)
        (out / name).symlink_to(tmp_path / "decoy.txt")
    else:
        os.mkfifo(out / name)
    return out


_PLANTED = {"file": "--force", "link": "symbolic link", "fifo": "FIFO"}


@pytest.mark.parametrize("name, planted", [("README.md", "file"), ("repro.py", "file"), ("repro.json", "file"),
                                           ("repro.py", "link"), ("README.md", "fifo")])
def test_run_reproducer_refuses_a_users_file_before_the_run(tmp_path, capsys, name, planted):
    out = _user_folder(tmp_path, name, planted)
    before = _snapshot(tmp_path)
    for force in ((), ("--force",)) if planted != "file" else ((),):  # a link or FIFO: not even with --force
        code, err = _cli(capsys, "run", "builtin:cpu_build", "--reproducer", out, *force)
        _one_line(code, err, "--reproducer", name, _PLANTED[planted])
        assert _snapshot(tmp_path) == before


@pytest.mark.parametrize("name, planted", [("deploy.py", "file"), ("model.json", "file"), ("model.so", "link"),
                                           ("weights.npz", "fifo")])
def test_export_lib_refuses_a_users_file_before_the_run(tmp_path, capsys, name, planted):
    out = _user_folder(tmp_path, name, planted)
    before = _snapshot(tmp_path)
    for force in ((), ("--force",)) if planted != "file" else ((),):
        code, err = _cli(capsys, "run", "builtin:cpu_build", "--export-lib", out, *force)
        _one_line(code, err, "--export-lib", name, _PLANTED[planted])
        assert _snapshot(tmp_path) == before


@pytest.fixture
def repro_dir(tmp_path):
    folder = tmp_path / "repro"
    reproducer.write_folder(str(folder), reproducer.spec_files(_spec()))
    return folder


def test_reduce_output_refused_before_trust(tmp_path, capsys, repro_dir):
    out = _user_folder(tmp_path, "README.md")
    link = tmp_path / "link"
    link.symlink_to(out)
    before = _snapshot(tmp_path)
    for argv, words in [
        (("-o", out), ("-o", "README.md", "--force")),
        (("-o", out, "--force", "--trust", "--max-checks", "-5"), ("--max-checks",)),
        (("-o", out, "--timeout", "nan"), ("--timeout",)),
        (("-o", link), ("-o", "symbolic link")),
        (("-o", repro_dir, "--force"), ("-o", "its own")),
    ]:
        code, err = _cli(capsys, "reduce", repro_dir, *argv)
        _one_line(code, err, *words)
        assert "--reproducer" not in err
    assert _snapshot(tmp_path) == before


def _hostile(tmp_path, kind: str):
    folder = tmp_path / kind
    folder.mkdir()
    good = json.dumps(_spec().to_json())
    (folder / "repro.py").write_text(reproducer.render_repro(_spec()))
    if kind == "fifo":
        os.mkfifo(folder / "repro.json")
    elif kind == "zero":
        (folder / "repro.json").write_text(good)
        os.unlink(folder / "repro.py")
        (folder / "repro.py").symlink_to("/dev/zero")
    elif kind == "deep":
        (folder / "repro.json").write_text("[" * 100_000 + "]" * 100_000)
    else:
        (folder / "repro.json").write_text({"list": "[1,2]", "empty": "{}", "types": good.replace(
            '"step_index": 0', '"step_index": "0"')}[kind])
    return folder


@pytest.mark.parametrize("kind", ["fifo", "zero", "list", "empty", "deep", "types"])
def test_reduce_reads_hostile_folders_safely(tmp_path, capsys, kind):
    folder = _hostile(tmp_path, kind)
    code, err = _cli(capsys, "reduce", folder, "-o", tmp_path / "out", "--trust")
    _one_line(code, err, str(folder / ("repro.py" if kind == "zero" else "repro.json")))
    assert not os.path.exists(tmp_path / "out")


# ---- exit codes and messages -------------------------------------------------------------------------------
def test_bisect_and_diverge_without_trust_exit_2(tmp_path, capsys):
    path = tmp_path / "custom.json"
    save_pipeline(PipelineDocument(model="builtin:mlp", name="c", target={"kind": "llvm"},
                                   steps=[Step("custom.python", {"source": "def transform(mod):\n    return mod\n"})]),
                  path)
    for argv in (("bisect", path), ("diverge", path, "--step", "1")):
        code, err = _cli(capsys, *argv)
        _one_line(code, err, "--trust", "step 1")


def test_input_and_emit_ir_messages_say_what_the_path_is(tmp_path, capsys):
    os.mkfifo(tmp_path / "a.fifo")
    pipeline = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "resources", "pipelines",
                            "cpu_build.json")
    code, err = _cli(capsys, "bisect", pipeline, "--inputs", tmp_path / "a.fifo")
    _one_line(code, err, "FIFO")
    code, err = _cli(capsys, "run", "builtin:cpu_build", "--build", "--inputs", tmp_path / "a.fifo")  # before the run
    _one_line(code, err, "FIFO")
    (tmp_path / "f.txt").write_text("x")
    code, err = _cli(capsys, "run", "builtin:cpu_build", "--emit-ir", tmp_path / "f.txt")
    _one_line(code, err, "is a regular file")


def test_a_tolerance_left_to_the_engine_saves_a_reproducer_with_the_default():
    request = reproducer.save_request({}, 0, "exception", "/tmp/x", rtol=None, atol=None)  # was a TypeError
    assert request["check"] == {"rtol": 1e-4, "atol": 1e-4} and request["overwrite"] is False
