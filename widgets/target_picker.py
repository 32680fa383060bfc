"""``TargetPicker``: the target chooser of the Build & Run panel (TVM-free Qt widget).

A combo box listing the devices the engine detected (each with its suggested target; those whose target is a
preset are shown as that preset), then the presets of
:func:`pipeline_model.targets.target_presets` grouped under headers — CPU (this machine with ``-mcpu``,
generic ``llvm``), CUDA per architecture, ROCm, Vulkan, Metal, OpenCL — each saying whether this TVM build
can compile for it and this machine can run it (the engine's ``devices`` reply with ``presets``,
:class:`pipeline_model.targets.TargetSupport`), the reasons in the tooltip. A target that is neither a
device nor a preset is shown as a "Custom" entry. Every entry's item data is its target dict — except the
devices of an RPC tracker (Edit ▸ Preferences, the engine's ``rpc_devices`` reply), listed last: their item data
is ``None`` and :data:`REMOTE_ROLE` holds where they run (``{"tracker", "key"}``), listed after this machine's
devices; the module is built here for the pipeline's target and runs there.
"""

from __future__ import annotations

import html
from typing import Any, Optional

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, Qt
from PySide6.QtGui import QStandardItemModel
from PySide6.QtWidgets import QComboBox, QWidget

from pipeline_model.document import target_label
from pipeline_model.targets import GPU_FAMILY_NAMES, TargetSupport
from widgets.engine_texts import code, shown_html, shown_plain

#: Item-data role marking the custom entry (its text is translated).
CUSTOM_ROLE = Qt.ItemDataRole.UserRole + 1
#: Item-data role of a preset's :class:`TargetSupport` (as JSON).
SUPPORT_ROLE = Qt.ItemDataRole.UserRole + 2
#: Item-data role of an RPC device entry: ``{"tracker": "HOST:PORT", "key": ...}``.
REMOTE_ROLE = Qt.ItemDataRole.UserRole + 3


def support_text(support: TargetSupport) -> str:
    """"compiles ✓ · runs ✗" for a preset (translated)."""
    compiles = QCoreApplication.translate("TargetPicker", "compiles ✓") if support.compile else QCoreApplication.translate("TargetPicker", "compiles ✗")
    runs = QCoreApplication.translate("TargetPicker", "runs here ✓") if support.run else QCoreApplication.translate("TargetPicker", "runs here ✗")
    return f"{compiles} · {runs}"


#: The engine's reasons a target cannot be compiled or run here (``pipeline_model.engine.build.devices``): what TVM
#: said stays as it is, in a code font.
NOTE_FORMS = (
    (r"ROCm's device libraries are not on this machine \((.*)\): install ROCm or set ROCM_PATH",
     QT_TRANSLATE_NOOP("TargetPicker", "ROCm's device libraries are not on this machine ({0}): install ROCm or set "
                                       "ROCM_PATH")),
    (r"ld\.lld \(the linker ROCm builds need\) is not on this machine",
     QT_TRANSLATE_NOOP("TargetPicker", "ld.lld (the linker ROCm builds need) is not on this machine")),
    (r"this TVM build has no (\S+) code generator \((\S+)\)",
     QT_TRANSLATE_NOOP("TargetPicker", "this TVM build has no {0} code generator ({1})")),
    (r"no (\S+) device on this machine", QT_TRANSLATE_NOOP("TargetPicker", "no {0} device on this machine")),
    (r"this TVM runtime cannot reach a (\S+) device",
     QT_TRANSLATE_NOOP("TargetPicker", "this TVM runtime cannot reach a {0} device")),
    (r"this machine's GPU is (\S+)", QT_TRANSLATE_NOOP("TargetPicker", "this machine's GPU is {0}")),
)


#: The engine's name of the CPU device (``pipeline_model.engine.build.devices``).
DEVICE_NAME_FORMS = ((r"(\S+), (\d+) cores", QT_TRANSLATE_NOOP("TargetPicker", "{0}, {1} cores")),)


def target_line(target: dict[str, Any]) -> str:
    """"target: <code>llvm -mcpu=…</code>" (translated, rich text)."""
    return html.escape(QCoreApplication.translate("TargetPicker", "target: {0}")).format(code(target_label(target)))


def support_tip(support: TargetSupport) -> str:
    """Tooltip (rich text): the target and the reasons it cannot be compiled or run here."""
    lines = [target_line(support.target)]
    lines.append(html.escape(QCoreApplication.translate("TargetPicker", "This TVM build compiles for it.")) if support.compile
                 else html.escape(QCoreApplication.translate("TargetPicker", "Cannot compile: {reason}")).format(
                     reason=shown_html(support.compile_note, NOTE_FORMS, "TargetPicker")))
    lines.append(html.escape(QCoreApplication.translate("TargetPicker", "A device on this machine runs it.")) if support.run
                 else html.escape(QCoreApplication.translate("TargetPicker", "Cannot run here: {reason} (build it here, run it elsewhere)")).format(
                     reason=shown_html(support.run_note, NOTE_FORMS, "TargetPicker")))
    return "<p>" + "<br>".join(lines) + "</p>"


def preset_label(support: TargetSupport) -> str:
    """The preset's name (translated for the CPU entries; GPU entries are names and architectures)."""
    target = support.target
    if support.group == "cpu" and target == {"kind": "llvm"}:
        return QCoreApplication.translate("TargetPicker", "CPU: generic llvm")
    if support.group == "cpu" and target.get("mcpu") == "native" and target.get("opt-level") is not None:
        return QCoreApplication.translate("TargetPicker", "CPU: the machine that builds (llvm -mcpu=native -O{level})"
                                          ).format(level=target["opt-level"])
    if support.group == "cpu" and target.get("mcpu") == "native":
        return QCoreApplication.translate("TargetPicker", "CPU: the machine that builds (llvm -mcpu=native)")
    if support.group == "cpu":
        cores = target.get("num-cores")
        return QCoreApplication.translate("TargetPicker", "CPU: this machine (llvm -mcpu={mcpu}, {cores} cores)").format(
            mcpu=target.get("mcpu") or "generic", cores=cores if cores else "?")
    return support.label


def _group_title(group: str) -> str:
    if group == "cpu":
        return QCoreApplication.translate("TargetPicker", "CPU")
    return GPU_FAMILY_NAMES.get(group, group)


class TargetPicker(QComboBox):
    """Devices, then the presets grouped with what this machine can do with each."""

    def __init__(self, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.setObjectName("targetPicker")
        self.supports: list[TargetSupport] = []

    def _add_header(self, text: str, bold: bool = True) -> None:
        self.addItem(text)
        model = self.model()
        if isinstance(model, QStandardItemModel):
            item = model.item(self.count() - 1)
            item.setEnabled(False)
            font = item.font()
            font.setBold(bold)
            item.setFont(font)

    def set_choices(self, devices: list[dict[str, Any]], presets: list[dict[str, Any]],
                    rpc: Optional[dict[str, Any]] = None) -> None:
        """Fill the list: the detected ``devices`` (engine ``devices`` reply), then the ``presets`` with their
        support (engine reply with ``presets``), grouped; without presets, generic ``llvm`` after the devices.
        The devices of the RPC tracker ``rpc`` (engine ``rpc_devices`` reply), when one is set, follow this
        machine's."""
        self.clear()
        self.supports = [TargetSupport.from_json(p) for p in presets]
        listed = [s.target for s in self.supports]
        devices = [d for d in devices if dict(d.get("target") or {}) not in listed]  # a preset says more
        seen: list[dict[str, Any]] = []
        if devices:
            self._add_header(QCoreApplication.translate("TargetPicker", "Devices on this machine"))
        for dev in devices:
            target = dict(dev.get("target") or {})
            name = shown_plain(str(dev.get("name", "")), DEVICE_NAME_FORMS, "TargetPicker")
            label = f"{str(dev.get('kind', '')).upper()} {dev.get('index', 0)}: {name} — {target_label(target)}"
            self.addItem(label, target)
            self.setItemData(self.count() - 1, _details_tip(dev), Qt.ItemDataRole.ToolTipRole)
            seen.append(target)
        if rpc:  # a farm's boards are devices too: right after this machine's
            self._add_rpc_devices(rpc)
        group = None
        for support in self.supports:
            if support.group != group:
                group = support.group
                self._add_header(_group_title(group))
            self.addItem(f"{preset_label(support)} — {support_text(support)}", dict(support.target))
            self.setItemData(self.count() - 1, support_tip(support), Qt.ItemDataRole.ToolTipRole)
            self.setItemData(self.count() - 1, support.to_json(), SUPPORT_ROLE)
            seen.append(support.target)
        if {"kind": "llvm"} not in seen:
            self.addItem(QCoreApplication.translate("TargetPicker", "CPU: generic llvm"), {"kind": "llvm"})
        self.view().setMinimumWidth(self.view().sizeHintForColumn(0) + 24)  # the list shows each entry whole

    def _add_rpc_devices(self, rpc: dict[str, Any]) -> None:
        tracker = str(rpc.get("tracker") or "")
        self._add_header(QCoreApplication.translate("TargetPicker", "RPC devices at {tracker}").format(tracker=tracker))
        if rpc.get("error"):
            self._add_header(QCoreApplication.translate("TargetPicker", "The tracker did not answer: {error}").format(
                error=rpc["error"]), bold=False)
            return
        if not rpc.get("devices"):
            self._add_header(QCoreApplication.translate("TargetPicker", "No device is registered with the tracker"),
                             bold=False)
        for dev in rpc.get("devices") or []:
            self.addItem(QCoreApplication.translate("TargetPicker", "RPC {key} — {free}/{total} free (built here, run there)").format(
                key=dev.get("key"), free=dev.get("free", 0), total=dev.get("total", 0)))
            self.setItemData(self.count() - 1, {"tracker": tracker, "key": str(dev.get("key"))}, REMOTE_ROLE)
            self.setItemData(self.count() - 1, "\n".join(dev.get("servers") or []), Qt.ItemDataRole.ToolTipRole)

    def remote_at(self, index: int) -> Optional[dict[str, Any]]:
        """Where entry ``index`` runs when it is an RPC device (``{"tracker", "key"}``), else ``None``."""
        remote = self.itemData(index, REMOTE_ROLE)
        return dict(remote) if isinstance(remote, dict) else None

    def show_remote(self, remote: dict[str, Any]) -> bool:
        """Select the RPC device ``remote``; False when the list does not have it."""
        for i in range(self.count()):
            if self.remote_at(i) == remote:
                self.setCurrentIndex(i)
                return True
        return False

    def show_target(self, target: dict[str, Any]) -> None:
        """Select ``target`` (added as a custom entry when it is not listed)."""
        for i in range(self.count()):
            if self.itemData(i) == target:
                self.setCurrentIndex(i)
                return
        for i in range(self.count()):
            if self.itemData(i, CUSTOM_ROLE):
                self.removeItem(i)
                break
        self.addItem(QCoreApplication.translate("TargetPicker", "Custom: {target}").format(target=target_label(target)),
                     dict(target))
        self.setItemData(self.count() - 1, True, CUSTOM_ROLE)
        self.setCurrentIndex(self.count() - 1)

    def support_of(self, target: dict[str, Any]) -> Optional[TargetSupport]:
        """What the engine said about ``target`` (``None`` when it is not a preset)."""
        for support in self.supports:
            if support.target == target:
                return support
        return None


def _details_tip(dev: dict[str, Any]) -> str:
    details = dev.get("details") or {}
    lines = [target_line(dev.get("target") or {})]
    lines += [f"{code(str(k))}: {code(str(v))}" for k, v in details.items()]
    return "<p>" + "<br>".join(lines) + "</p>"
