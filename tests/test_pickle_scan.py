"""pipeline_model.scriptlib.pickles: pickles inside model archives are read as opcodes, never unpickled; a plain
``torch.export.save`` archive is data, a crafted one (pickled weights, pickled sample inputs) is code."""

from __future__ import annotations

import io
import json
import os
import pickle
import zipfile

import pytest

from pipeline_model.scriptlib import pickles as pickle_scan


class _Evil:
    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def evil_pickle(marker: str, protocol: int = 2) -> bytes:
    return pickle.dumps(_Evil(marker), protocol=protocol)


def test_opcode_scan_finds_globals_of_every_protocol(tmp_path):
    for protocol in range(0, 6):
        bad = pickle_scan.unsafe_globals(evil_pickle(str(tmp_path / "m"), protocol))
        assert bad and bad[0] in ("posix.system", "os.system"), (protocol, bad)
    assert pickle_scan.unsafe_globals(pickle.dumps({"a": [1, 2.0, "x"], "b": (1,)})) == []
    assert pickle_scan.unsafe_globals(b"\x80\x05garbage")[0].startswith("<unreadable pickle")
    assert not (tmp_path / "m").exists()


def rewrite(src: str, dst: str, replace) -> None:
    """Copy the zip ``src`` to ``dst`` with ``replace(name, data) -> data`` applied to each entry."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for info in zin.infolist():
            zout.writestr(info.filename, replace(info.filename, zin.read(info.filename)))


@pytest.fixture(scope="module")
def pt2(tmp_path_factory):
    torch = pytest.importorskip("torch")

    class Lin(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.l = torch.nn.Linear(2, 2)

        def forward(self, x):
            return self.l(x)

    path = str(tmp_path_factory.mktemp("pt2") / "lin.pt2")
    torch.export.save(torch.export.export(Lin(), (torch.randn(1, 2),)), path)
    return path


def evil_archives(pt2: str, folder, marker: str) -> dict[str, str]:
    """The two attacks of issue 20: pickled weights (``use_pickle: true``), pickled sample inputs."""
    out = {}
    weights = str(folder / "weights.pt2")

    def pickled_weight(name: str, data: bytes) -> bytes:
        if name.endswith("model_weights_config.json"):
            config = json.loads(data)
            for entry in config["config"].values():
                entry["use_pickle"] = True
            return json.dumps(config).encode()
        if name.endswith("data/weights/weight_0"):
            return evil_pickle(marker)
        return data

    rewrite(pt2, weights, pickled_weight)
    out["weights"] = weights
    inputs = str(folder / "inputs.pt2")
    rewrite(pt2, inputs, lambda name, data: evil_pickle(marker) if "sample_inputs" in name else data)
    out["inputs"] = inputs
    nested = str(folder / "nested.pt2")

    def nested_pickle(name: str, data: bytes) -> bytes:
        if "sample_inputs" not in name:
            return data
        buf = io.BytesIO()
        with zipfile.ZipFile(io.BytesIO(data)) as zin, zipfile.ZipFile(buf, "w") as zout:
            for info in zin.infolist():
                body = zin.read(info.filename)
                zout.writestr(info.filename, evil_pickle(marker) if info.filename.endswith("data.pkl") else body)
        return buf.getvalue()

    rewrite(pt2, nested, nested_pickle)
    out["nested"] = nested
    return out


def test_plain_archive_is_data_and_crafted_ones_are_code(pt2, tmp_path):
    assert pickle_scan.scan_archive(pt2) == []
    marker = str(tmp_path / "ran")
    for kind, path in evil_archives(pt2, tmp_path, marker).items():
        found = pickle_scan.scan_archive(path)
        assert found, kind
        assert "system" in found[0].reason, (kind, found)
    with open(pt2, "rb") as fh:
        assert pickle_scan.scan_archive("x.pt2", data=fh.read()) == []
    assert pickle_scan.scan_archive(str(tmp_path / "missing.pt2"))[0].reason.startswith("not a readable archive")
    assert not os.path.exists(marker)
