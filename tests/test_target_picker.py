"""The target picker (issue 18): CPU (host with -mcpu), CUDA per architecture, ROCm, Vulkan, Metal, OpenCL,
each saying whether this TVM build compiles for it and this machine runs it."""

from __future__ import annotations

import pytest

from pipeline_model import targets


def test_presets_cover_every_family_and_cuda_architecture():
    presets = targets.target_presets({"kind": "llvm", "mcpu": "znver4", "num-cores": 8})
    assert presets[0].target == {"kind": "llvm", "mcpu": "znver4", "num-cores": 8} and "-mcpu=znver4, 8 cores" in presets[0].label
    assert {p.group for p in presets} == {"cpu", "cuda", "rocm", "vulkan", "metal", "opencl"}
    assert [p.target["arch"] for p in presets if p.group == "cuda"] == list(targets.CUDA_ARCHS)
    assert targets.CUDA_ARCHS[0] == "sm_50" and targets.CUDA_ARCHS[-1] == "sm_90"
    assert [p.target for p in targets.target_presets(None)[:2]] == [{"kind": "llvm", "mcpu": "native", "opt-level": 2},
                                                                    {"kind": "llvm"}]
    native = targets.TargetSupport(target={"kind": "llvm", "mcpu": "native"}, group="cpu", label="",
                                   compile=True, run=True)
    from widgets.target_picker import preset_label

    assert preset_label(native) == "CPU: the machine that builds (llvm -mcpu=native)"
    native_o2 = targets.TargetSupport(target={"kind": "llvm", "mcpu": "native", "opt-level": 2}, group="cpu", label="",
                                      compile=True, run=True)
    assert preset_label(native_o2) == "CPU: the machine that builds (llvm -mcpu=native -O2)"


def test_engine_says_what_compiles_and_runs(engine):
    import tvm

    from pipeline_model.engine.build.devices import toolchain_problem

    devices, support = targets.target_support(engine)
    assert devices[0].kind == "cpu"
    host = support[0]
    assert host.group == "cpu" and host.target == devices[0].target and host.compile and host.run
    by_kind = {}
    for s in support:
        by_kind.setdefault(s.target["kind"], s)
    for kind in ("cuda", "rocm", "vulkan", "metal", "opencl"):
        s = by_kind[kind]
        has_codegen = tvm.get_global_func(f"target.build.{kind}", True) is not None
        assert s.compile == (has_codegen and not toolchain_problem(kind)), (kind, s)
        assert s.compile or kind in s.compile_note.lower()
        device = targets.TARGET_DEVICE[kind]
        assert s.run == bool(getattr(tvm, device)(0).exist) or (kind == "cuda" and "GPU is" in s.run_note)
        assert s.run or s.run_note


def test_rocm_compiles_only_with_rocm_on_the_machine(monkeypatch, tmp_path):
    """Issue 33: the picker marked ROCm "compiles" from the code generator alone, and the build then failed
    "Cannot find ROCm path". The probe asks TVM's own look-up of ROCm's device libraries (and ld.lld)."""
    pytest.importorskip("tvm")
    from pipeline_model.engine.build import devices

    monkeypatch.setenv("ROCM_PATH", str(tmp_path))  # a ROCm folder without the device libraries
    devices.toolchain_problem.cache_clear()
    try:
        support = devices.target_support({"kind": "rocm", "mcpu": "gfx908"})
        assert not support["compile"] and "ROCm" in support["compile_note"], support
        assert devices.toolchain_problem("llvm") == ""
    finally:
        devices.toolchain_problem.cache_clear()


def test_run_panel_lists_presets_with_their_support(qtbot):
    from PySide6.QtCore import Qt

    from tests.zh_texts import rich_plain
    from widgets.run_panel import RunPanel

    panel = RunPanel()
    qtbot.addWidget(panel)
    host = {"kind": "llvm", "mcpu": "znver4", "num-cores": 8}
    devices = [{"kind": "cpu", "index": 0, "name": "znver4, 8 cores", "target": host}]
    presets = [{**p.to_json(), "compile": p.group != "vulkan", "run": p.group == "cpu",
                "compile_note": "" if p.group != "vulkan" else "this TVM build has no vulkan code generator",
                "run_note": "" if p.group == "cpu" else f"no {p.group} device on this machine"}
               for p in targets.target_presets(host)]
    panel.set_devices(devices, {"kind": "cuda", "arch": "sm_80"}, presets)
    combo = panel.target_combo
    texts = [combo.itemText(i) for i in range(combo.count())]
    assert combo.currentData() == {"kind": "cuda", "arch": "sm_80"}
    assert combo.currentText() == "CUDA sm_80 — compiles ✓ · runs here ✗"
    assert "no cuda device" in rich_plain(combo.itemData(combo.currentIndex(), Qt.ItemDataRole.ToolTipRole))
    vulkan = combo.findData({"kind": "vulkan"})
    assert combo.itemText(vulkan) == "Vulkan — compiles ✗ · runs here ✗"
    assert "no vulkan code generator" in rich_plain(combo.itemData(vulkan, Qt.ItemDataRole.ToolTipRole))
    assert "Devices on this machine" not in texts  # the CPU device is the host preset, shown once
    assert combo.findData(host) == texts.index("CPU: this machine (llvm -mcpu=znver4, 8 cores) — compiles ✓ · runs here ✓")
    for header in ("CPU", "CUDA", "ROCm", "Metal", "OpenCL"):
        row = texts.index(header)
        assert combo.itemData(row) is None and not combo.model().item(row).isEnabled()
    assert not any(t.startswith("Custom:") for t in texts)  # every target is listed: no custom entry
    chosen = []
    panel.target_chosen.connect(chosen.append)
    rocm = combo.findData({"kind": "rocm", "mcpu": "gfx90a"})
    combo.setCurrentIndex(rocm)
    combo.activated.emit(rocm)
    assert chosen == [{"kind": "rocm", "mcpu": "gfx90a"}]
    panel.show_target({"kind": "llvm", "mattr": ["+avx2"]})
    assert combo.currentText().startswith("Custom:")
