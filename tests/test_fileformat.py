"""Pipeline file format: round trip, migration, validation errors, placeholders, atomic save."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline_model import fileformat
from pipeline_model.document import PipelineDocument, Step
from pipeline_model.fileformat import (
    FORMAT_NAME,
    FORMAT_VERSION,
    MIGRATIONS,
    PipelineFileError,
    dumps_pipeline,
    format_json_path,
    json_path_positions,
    load_pipeline,
    loads_pipeline,
    save_pipeline,
)

DATA = Path(__file__).parent / "data" / "pipelines"


# ------------------------------------------------------------------ generated documents

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)  # the file format holds int64 (issue 9)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
json_values = st.recursive(
    json_scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)
uids = st.text(alphabet="0123456789abcdef", min_size=1, max_size=12)
pass_ids = st.text(min_size=1, max_size=30)
steps_st = st.lists(
    st.builds(
        Step,
        pass_id=pass_ids,
        params=st.dictionaries(st.text(max_size=12), json_values, max_size=5),
        enabled=st.booleans(),
        uid=uids,
        note=st.text(max_size=20),
    ),
    max_size=8,
    unique_by=lambda s: s.uid,
)
targets = st.fixed_dictionaries(
    {"kind": st.text(min_size=1, max_size=10)},
    optional={"arch": st.text(max_size=8), "num-cores": st.integers(1, 64), "libs": st.lists(st.text(max_size=5))},
)
documents = st.builds(
    PipelineDocument,
    model=st.text(min_size=1, max_size=40),
    target=targets,
    steps=steps_st,
    name=st.text(max_size=30),
    description=st.text(max_size=30),
    build=st.dictionaries(st.text(max_size=8), json_values, max_size=3),
)


def _doc_key(doc: PipelineDocument) -> dict:
    return {
        "model": doc.model,
        "target": doc.target,
        "name": doc.name,
        "description": doc.description,
        "build": doc.build,
        "steps": [(s.uid, s.pass_id, s.params, s.enabled, s.note, s.placeholder) for s in doc.steps],
    }


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(doc=documents)
def test_round_trip_generated_documents(doc: PipelineDocument, tmp_path: Path) -> None:
    path = tmp_path / "p.rpipeline.json"
    save_pipeline(doc, path)
    loaded = load_pipeline(path)
    assert _doc_key(loaded) == _doc_key(doc)
    assert loaded.path == str(path)
    # text round trip too, and the text is stable (save(load(x)) == x)
    text = dumps_pipeline(doc)
    assert _doc_key(loads_pipeline(text)) == _doc_key(doc)
    assert dumps_pipeline(loads_pipeline(text)) == text
    assert path.read_text(encoding="utf-8") == text


def test_saved_file_has_header_and_validates_against_schema(tmp_path: Path) -> None:
    import jsonschema

    doc = PipelineDocument(steps=[Step("relax.LegalizeOps"), Step("relax.FuseOps", {"fuse_opt_level": 2})])
    path = tmp_path / "x.json"
    save_pipeline(doc, path)
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["format"] == FORMAT_NAME == "relax-pipeline-studio.pipeline"
    assert data["version"] == FORMAT_VERSION == 3
    assert list(data)[:2] == ["format", "version"]
    jsonschema.Draft202012Validator(fileformat.load_schema()).validate(data)


def test_unicode_survives(tmp_path: Path) -> None:
    doc = PipelineDocument(name="Пайплайн ✓ 融合", steps=[Step("custom.python", {"source": "# ünïcødé 🚀\n"})])
    save_pipeline(doc, tmp_path / "u.json")
    raw = (tmp_path / "u.json").read_bytes()
    assert "融合".encode("utf-8") in raw  # written as UTF-8, not \\u escapes
    back = load_pipeline(tmp_path / "u.json")
    assert back.name == doc.name and back.steps[0].params == doc.steps[0].params


# ------------------------------------------------------------------ migration


def test_v0_fixture_migrates() -> None:
    path = DATA / "v0_legalize_fuse.json"
    raw = json.loads(path.read_text(encoding="utf-8"))
    assert raw["pipeline_version"] == 0 and "format" not in raw  # it really is an old file
    doc = load_pipeline(path)
    assert doc.name == "Legalize and fuse (written by an earlier build)"
    assert doc.model == "builtin:mlp"
    assert doc.target == {"kind": "llvm"}
    assert [s.pass_id for s in doc.steps] == [
        "relax.LegalizeOps",
        "relax.AnnotateTIROpPattern",
        "relax.FoldConstant",
        "relax.FuseOps",
        "relax.FuseTIR",
        "pipeline.zero",
    ]
    assert [s.enabled for s in doc.steps] == [True, True, False, True, True, False]
    assert doc.steps[0].params == {"enable_warning": False}
    assert doc.steps[3].params == {"fuse_opt_level": 2}
    assert len({s.uid for s in doc.steps}) == 6 and all(s.uid for s in doc.steps)
    # re-saved in the current format and loadable again
    text = dumps_pipeline(doc)
    assert json.loads(text)["version"] == FORMAT_VERSION
    assert _doc_key(loads_pipeline(text)) == _doc_key(doc)


def test_migration_chain_covers_every_old_version() -> None:
    assert sorted(MIGRATIONS) == list(range(FORMAT_VERSION))


def test_v1_fixture_loads() -> None:
    doc = load_pipeline(DATA / "v1_walkthrough.json")
    assert doc.target == {"kind": "llvm", "num-cores": 2}
    assert [s.uid for s in doc.steps] == ["a1b2c3d4e5f6", "0123456789ab", "ba9876543210", "ffeeddccbbaa"]
    assert doc.steps[1].note == "needed by FuseOps"
    assert doc.steps[3].enabled is False
    assert doc.build == {"check": True}


def test_v0_bad_target_names_place(tmp_path: Path) -> None:
    p = tmp_path / "old.json"
    p.write_text('{"pipeline_version": 0,\n "model": "builtin:mlp",\n "target": "tpu",\n "passes": []}\n')
    with pytest.raises(PipelineFileError) as info:
        load_pipeline(p)
    err = info.value
    assert err.source == str(p) and err.json_path == "target" and err.line == 3
    assert str(p) in str(err) and "tpu" in str(err)


def test_v0_bad_pass_names_place(tmp_path: Path) -> None:
    p = tmp_path / "old.json"
    p.write_text('{"pipeline_version": 0, "model": "m", "target": "llvm", "passes": [\n'
                 '  {"name": "FuseOps"},\n  {"name": "FuseTIR", "args": [1]}\n]}\n')
    with pytest.raises(PipelineFileError) as info:
        load_pipeline(p)
    assert info.value.json_path == "passes[1].args" and info.value.line == 3


# ------------------------------------------------------------------ bad files


def _valid() -> dict:
    return json.loads((DATA / "v1_walkthrough.json").read_text(encoding="utf-8"))


def _write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "bad.json"
    p.write_text(text, encoding="utf-8")
    return p


def _error(path: Path) -> PipelineFileError:
    with pytest.raises(PipelineFileError) as info:
        load_pipeline(path)
    return info.value


def test_not_json_names_file_line_and_column(tmp_path: Path) -> None:
    p = _write(tmp_path, '{\n  "format": "relax-pipeline-studio.pipeline",\n  "version": 1,,\n}')
    err = _error(p)
    assert err.line == 3 and err.column == 16  # the second comma
    assert str(err).startswith(f"{p}:3:16: not valid JSON")


def test_not_utf8(tmp_path: Path) -> None:
    p = tmp_path / "bin.json"
    p.write_bytes(b'{\n"name": "\xff"}')
    err = _error(p)
    assert "UTF-8" in str(err) and str(p) in str(err) and err.line == 2


def test_missing_file() -> None:
    with pytest.raises(PipelineFileError) as info:
        load_pipeline("/nonexistent/dir/p.json")
    assert "/nonexistent/dir/p.json" in str(info.value) and "cannot read" in str(info.value)


def test_wrong_format_name(tmp_path: Path) -> None:
    data = _valid()
    data["format"] = "netron.graph"
    err = _error(_write(tmp_path, json.dumps(data, indent=2)))
    assert err.json_path == "format" and err.line == 2
    assert "not a Relax Pipeline Studio pipeline file" in str(err) and "netron.graph" in str(err)


def test_no_header_at_all(tmp_path: Path) -> None:
    err = _error(_write(tmp_path, '{"nodes": []}'))
    assert "not a Relax Pipeline Studio pipeline file" in str(err) and str(tmp_path) in str(err)


def test_not_an_object(tmp_path: Path) -> None:
    err = _error(_write(tmp_path, "[1, 2]"))
    assert "JSON object" in str(err) and "array" in str(err)


def test_newer_version(tmp_path: Path) -> None:
    data = _valid()
    data["version"] = FORMAT_VERSION + 1
    data["steps"][0]["shiny_new_field"] = 1
    err = _error(_write(tmp_path, json.dumps(data, indent=2)))
    assert "written by a newer version" in str(err)
    assert f"version {FORMAT_VERSION + 1}" in str(err)
    assert err.json_path == "version" and err.line == 3 and str(tmp_path) in str(err)


@pytest.mark.parametrize(
    "mutate, path, needle",
    [
        (lambda d: d["steps"][2].__setitem__("params", [1, 2]), "steps[2].params", "not of type 'object'"),
        (lambda d: d["steps"][1].__setitem__("enabled", "yes"), "steps[1].enabled", "not of type 'boolean'"),
        (lambda d: d["steps"][3].pop("pass"), "steps[3]", "'pass' is missing"),
        (lambda d: d["steps"][0].__setitem__("pas", "x"), "steps[0].pas", "unknown key 'pas'"),
        (lambda d: d.__setitem__("target", {"arch": "sm_80"}), "target", "'kind' is missing"),
        (lambda d: d.__setitem__("target", "llvm"), "target", "not of type 'object'"),
        (lambda d: d.__setitem__("model", ""), "model", "should be non-empty"),
        (lambda d: d.__setitem__("stpes", []), "stpes", "unknown key"),
        (lambda d: d["steps"][1].__setitem__("uid", "a1b2c3d4e5f6"), "steps[1].uid", "duplicate step uid"),
        (lambda d: d.__setitem__("version", "1"), "version", "positive integer"),
    ],
)
def test_schema_violations_name_path_and_line(tmp_path: Path, mutate, path: str, needle: str) -> None:
    data = _valid()
    mutate(data)
    text = json.dumps(data, indent=2)
    p = _write(tmp_path, text)
    err = _error(p)
    assert err.json_path == path, str(err)
    assert needle in str(err), str(err)
    assert str(p) in str(err) and path in str(err)
    # the reported line is the line of that key in the text
    expected = fileformat.line_of_path(text, _parse_path(path))
    assert err.line == expected and err.line is not None and err.line > 1
    assert f"{p}:{err.line}: {path}: " in str(err)


def _parse_path(text: str) -> tuple:
    import re

    parts: list = []
    for name, index in re.findall(r"([A-Za-z_]\w*)|\[(\d+)\]", text):
        parts.append(name if name else int(index))
    return tuple(parts)


def test_line_of_path_points_at_the_key() -> None:
    text = '{\n "a": 1,\n "steps": [\n  {"uid": "x",\n   "params": {\n     "k": [1,\n 2]}}\n ]\n}'
    assert fileformat.line_of_path(text, ("steps", 0, "params")) == 5
    assert fileformat.line_of_path(text, ("steps", 0, "params", "k", 1)) == 7
    assert fileformat.line_of_path(text, ("steps", 0, "nothing")) == 4  # nearest ancestor
    assert json_path_positions("[]") == {(): 0}
    assert format_json_path(("steps", 2, "params", "a b")) == 'steps[2].params["a b"]'


# ------------------------------------------------------------------ placeholders


def test_unknown_pass_loads_as_placeholder_and_survives_resave(tmp_path: Path) -> None:
    data = _valid()
    data["steps"].insert(
        1,
        {"uid": "feedfacecafe", "pass": "relax.FutureMagicPass", "params": {"level": 3, "x": [1, "y"]},
         "enabled": True, "note": "from TVM 0.99"},
    )
    data["steps"].append({"uid": "deadbeef0000", "pass": "vendor.Thing", "params": {}, "enabled": False})
    src = _write(tmp_path, json.dumps(data, indent=2))
    known = {"relax.LegalizeOps", "relax.AnnotateTIROpPattern", "relax.FuseOps", "relax.FuseTIR"}
    doc = load_pipeline(src, known_pass_ids=known)
    ph = doc.steps[1]
    assert ph.placeholder == "unknown pass 'relax.FutureMagicPass'"
    assert not ph.runnable and ph.enabled  # shown disabled, original flag kept
    assert doc.steps[-1].placeholder == "unknown pass 'vendor.Thing'" and not doc.steps[-1].enabled
    assert all(s.placeholder is None for s in doc.steps if s.pass_id in known)
    out = tmp_path / "resaved.json"
    save_pipeline(doc, out)
    again = json.loads(out.read_text(encoding="utf-8"))
    assert again["steps"] == data["steps"]  # pass id, params, enabled, note, uid: all unchanged
    assert "placeholder" not in out.read_text(encoding="utf-8")
    # without a catalogue, nothing is a placeholder
    assert all(s.placeholder is None for s in load_pipeline(out).steps)


# ------------------------------------------------------------------ atomic save


class _Boom(RuntimeError):
    pass


def test_atomic_save_keeps_old_file_when_serializer_fails_midway(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "keep.json"
    old = PipelineDocument(name="old", steps=[Step("relax.LegalizeOps")])
    save_pipeline(old, path)
    before = path.read_bytes()
    os.chmod(path, 0o640)

    big = PipelineDocument(name="new", steps=[Step("relax.FuseOps", {"n": i}) for i in range(200)])
    real = fileformat._encoder
    written: list[int] = []

    class FailingEncoder:
        def iterencode(self, data):
            for i, chunk in enumerate(real().iterencode(data)):
                written.append(i)
                if i == 500:
                    raise _Boom("disk on fire")
                yield chunk

    monkeypatch.setattr(fileformat, "_encoder", lambda: FailingEncoder())
    with pytest.raises(_Boom):
        save_pipeline(big, path)
    assert len(written) > 100  # it really failed in the middle of writing
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["keep.json"]  # temp file cleaned up
    assert big.path is None

    monkeypatch.setattr(fileformat, "_encoder", real)
    save_pipeline(big, path)
    assert load_pipeline(path).name == "new"
    assert os.stat(path).st_mode & 0o777 == 0o640  # permissions of the replaced file kept
    # No temp file left; the previous version is kept as the backup (issue 9).
    assert sorted(os.listdir(tmp_path)) == ["keep.json", "keep.json.bak"]
    assert (tmp_path / "keep.json.bak").read_bytes() == before


def test_atomic_save_uses_replace_after_fsync(tmp_path: Path, monkeypatch) -> None:
    calls: list[str] = []
    real_fsync, real_replace = os.fsync, os.replace
    monkeypatch.setattr(fileformat.os, "fsync", lambda fd: (calls.append("fsync"), real_fsync(fd))[1])
    monkeypatch.setattr(fileformat.os, "replace", lambda a, b: (calls.append("replace"), real_replace(a, b))[1])
    save_pipeline(PipelineDocument(), tmp_path / "a.json")
    assert calls[:2] == ["fsync", "replace"]


def test_non_json_param_refused_without_touching_file(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    save_pipeline(PipelineDocument(name="ok"), path)
    before = path.read_bytes()
    with pytest.raises(ValueError):
        save_pipeline(PipelineDocument(steps=[Step("relax.X", {"v": float("nan")})]), path)
    with pytest.raises(ValueError):
        dumps_pipeline(PipelineDocument(steps=[Step("relax.X", {"v": {1, 2}})]))
    assert path.read_bytes() == before and os.listdir(tmp_path) == ["p.json"]
