"""Visible texts of a window that were left in English in the zh_CN user interface (test helper).

:func:`untranslated` walks the visible widgets of a top-level window — labels, buttons, tabs, dock
titles, group boxes, menus and the rows of item views — and reports each text that (a) is, with its access
key removed, the English source of a zh_CN translation that differs from it, or (b) has no Chinese
character and reads as English prose (three or more words, one of them lower-case). Code views
(TVMScript, custom-pass source, the diff) and technical values (pass ids, shapes, file paths) are not prose
and are not flagged."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Iterable

from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtWidgets import (
    QAbstractButton, QAbstractItemView, QDockWidget, QGroupBox, QLabel, QMenu, QPlainTextEdit, QTabBar,
    QTextBrowser, QWidget,
)

TS = Path(__file__).resolve().parent.parent / "resources" / "translations" / "relax_pipeline_studio_zh_CN.ts"
_CJK = re.compile(r"[\u4e00-\u9fff]")
_WORDS = re.compile(r"\b[A-Za-z][a-z]+(?:\s+[A-Za-z][a-z]*){2,}\b")
_LOWER = re.compile(r"\b[a-z]{3,}\b")
_TAGS = re.compile(r"<[^>]+>")
_CODE = re.compile(r"<code>.*?</code>|<pre>.*?</pre>", re.S)


def _plain(text: str) -> str:
    return text.replace("&&", "\x00").replace("&", "").replace("\x00", "&").strip()


def english_sources() -> set[str]:
    """English sources of the zh_CN translations whose translation differs from them (access keys removed)."""
    out = set()
    for message in ET.parse(TS).getroot().iter("message"):
        source, translation = message.findtext("source") or "", message.find("translation")
        if translation is None or translation.get("type") in ("vanished", "obsolete", "unfinished"):
            continue
        if _plain(translation.text or "") != _plain(source) and len(_plain(source)) > 1:
            out.add(_plain(source))
    return out


def is_untranslated(text: str, sources: set[str]) -> bool:
    """Whether ``text`` (a visible text of the zh_CN interface) was left in English."""
    plain = _plain(_TAGS.sub(" ", _CODE.sub(" ", text)))
    if not plain:
        return False
    if plain in sources:
        return True
    for line in plain.splitlines():
        if _CJK.search(line):
            continue
        if any(_LOWER.search(m.group(0)) for m in _WORDS.finditer(line)) and not _technical(line):
            return True
    return False


def _technical(line: str) -> bool:
    """A line of code, a path or a traceback: not prose."""
    s = line.strip()
    return (s.startswith(("#", "File \"", "Traceback", "/", "def ", "import ", "from ", "return ", "@", "R.", "T."))
            or "(" in s and ")" in s and "=" in s or s.count("/") >= 2)


def visible_texts(window: QWidget) -> Iterable[tuple[str, str]]:
    """``(where, text)`` of the texts shown by ``window`` and its visible children (no code views)."""
    for w in [window, *window.findChildren(QWidget)]:
        if not w.isVisible() or isinstance(w, QPlainTextEdit):
            continue
        name = f"{type(w).__name__}({w.objectName()})"
        if isinstance(w, QLabel):
            yield name, w.text()
        elif isinstance(w, QAbstractButton):
            yield name, w.text()
        elif isinstance(w, QTabBar):
            for i in range(w.count()):
                yield name, w.tabText(i)
        elif isinstance(w, (QDockWidget,)):
            yield name, w.windowTitle()
        elif isinstance(w, QGroupBox):
            yield name, w.title()
        elif isinstance(w, QTextBrowser):
            yield name, w.toHtml() if w.objectName() != "nodeDetails" else ""
        elif isinstance(w, QAbstractItemView) and w.model() is not None:
            yield from ((name, t) for t in _model_texts(w.model(), QModelIndex(), 200))
    if hasattr(window, "menuBar"):
        stack: list[QMenu] = [a.menu() for a in window.menuBar().actions() if a.menu() is not None]
        while stack:
            menu = stack.pop()
            yield "menu", menu.title()
            for act in menu.actions():
                if act.menu() is not None:
                    stack.append(act.menu())
                elif not act.isSeparator():
                    yield "menu", act.text()


def _model_texts(model, parent: QModelIndex, limit: int) -> Iterable[str]:
    for row in range(min(model.rowCount(parent), limit)):
        for col in range(_columns(model, parent)):
            index = model.index(row, col, parent)
            value = index.data(Qt.ItemDataRole.DisplayRole)
            if isinstance(value, str):
                yield value
            if col == 0 and _has_children(model, index):
                yield from _model_texts(model, index, limit)


def untranslated(window: QWidget, allowed: Iterable[str] = ()) -> list[tuple[str, str]]:
    """The visible texts of ``window`` left in English (see the module docstring); ``allowed``: texts that
    stay in English (TVM's own pass docstrings)."""
    sources = english_sources()
    keep = {a.strip() for a in allowed}
    return [(where, text) for where, text in visible_texts(window)
            if text and text.strip() not in keep and is_untranslated(text, sources)]


# ---- The strict rule (issue 33): no Latin word outside code, identifiers and numbers ----------------------------

#: Latin words the Chinese interface shows as they are, reviewed one by one: product and framework names, target
#: kinds and devices, units, dtype words, and IR names of the builtin models the end-to-end test loads. Anything not
#: here must be translated, be code (a monospace block, ``<code>``, a code view) or read as an identifier.
ALLOWED_WORDS = frozenset({
    # products, frameworks, formats
    "TVM", "Relax", "TIR", "ONNX", "PyTorch", "Python", "NumPy", "DLight", "MetaSchedule", "Netron", "Qt", "PySide",
    "IR", "JSON", "HTML", "RPC", "SHA", "API", "GEMM", "BLAS", "cuBLAS", "cublas", "cutlass", "cuDNN", "cudnn",
    "GELU", "SiLU", "ReLU", "NCHW", "NHWC", "OHWI", "OIHW", "MLP", "torch", "Apache", "VM", "ID",
    "QDQ", "VNNI", "AVX",  # ONNX's quantization format; x86 instruction-set names
    "qdot", "vpdpbusd",  # the app's int8 product op; the VNNI instruction it compiles to
    "exp", "erf", "tanh",  # the math functions a pass title names (app.ExpandSigmoid: GELU through erf and tanh)
    "Transformer", "Llama",  # model architectures
    "Winograd",  # the convolution algorithm's name (app.Winograd)
    # the term the Chinese interface keeps (as Chinese TVM texts do): "Pass 列表", "自定义 Python Pass"
    "Pass", "pass",
    # a language's name in its own language (View ▸ Language)
    "English",
    # targets, devices, tools
    "llvm", "cuda", "rocm", "ROCm", "vulkan", "metal", "opencl", "OpenCL", "CUDA", "CPU", "GPU", "cpu", "gpu",
    "LLVM", "Vulkan", "Metal", "nvcc", "clang", "gcc",
    # units
    "ms", "us", "ns", "s", "MB", "GB", "KB", "MiB", "GiB", "KiB", "B",
    # dtypes
    "float", "int", "uint", "bool", "bfloat",
    # IR names of builtin:mlp (its entry function, input and layers)
    "forward", "main", "x", "y", "relu",
    # the check's tolerance keys
    "rtol", "atol",
    # keyboard keys
    "Esc", "Ctrl", "Shift", "Alt", "Enter", "Tab", "Del", "Space",
})

#: Names of more than one word, reviewed: the app's and TVM's product names.
ALLOWED_NAMES = ("Relax Pipeline Studio", "Apache TVM", "tvm-ffi", "ONNX Runtime")

_CODE_FAMILIES = ("monospace", "mono", "courier", "consolas", "menlo", "monaco", "fixed")
_TOKEN = re.compile(r"[A-Za-z0-9_./\\:@#+~%=-]+")
_IDENT_CHARS = re.compile(r"[0-9_./\\:@#+~%=]")
_PSEUDO_FILE = re.compile(r"<[\w .-]+>")  # Python's pseudo file names: <custom step 3>, <module>
_ACCESS_KEY = re.compile(r"\(&?[A-Z0-9]\)|&(?=[A-Za-z0-9])")
_CAMEL = re.compile(r"[a-z][A-Z]|[A-Z]{2}[a-z]")


def is_code_format(char_format) -> bool:  # noqa: ANN001 - QTextCharFormat or QFont
    """Whether a text format (or font) is a code font: fixed pitch or a monospace family."""
    families = []
    if hasattr(char_format, "fontFamilies"):
        families = [str(f) for f in (char_format.fontFamilies() or [])]
        fixed = char_format.fontFixedPitch()
    else:
        families = [char_format.family()] + [str(f) for f in (char_format.families() or [])]
        fixed = char_format.fixedPitch()
    return bool(fixed) or any(any(c in f.lower() for c in _CODE_FAMILIES) for f in families)


def latin_words(text: str, identifiers: Iterable[str] = ()) -> list[str]:
    """The Latin words of ``text`` (prose with code already removed) that are not identifiers, numbers or
    :data:`ALLOWED_WORDS`. An identifier: a word with a digit or one of ``_ . / \\ : @ # + ~ % =`` in it (pass ids,
    file names, paths, dtypes, ``cpu:0``, ``k=v``), an option (``-mcpu``), a CamelCase word (``FuseOps``,
    ``PrimFunc``), a pseudo file name (``<custom step 3>``), or one of ``identifiers`` (whole names such as TVM's pass
    titles, matched as whole words). An access key (``(&N)``) is not a word."""
    plain = _PSEUDO_FILE.sub(" ", _ACCESS_KEY.sub(" ", text.replace("&&", " ")))
    for ident in sorted({i for i in (*identifiers, *ALLOWED_NAMES) if len(i) > 1}, key=len, reverse=True):
        if ident in plain:
            plain = re.sub(r"(?<![\w./\\:@#+~%=-])" + re.escape(ident) + r"(?![\w./\\:@#+~%=-])", " ", plain)
    out = []
    for match in _TOKEN.finditer(plain):
        token = match.group(0)
        if token.startswith("-") and re.match(r"-+[A-Za-z]", token) or re.fullmatch(r"\.[A-Za-z0-9]+", token):
            continue  # a command-line option or target flag; a file name extension (.npz)
        if plain[match.end():match.end() + 1] == "…":
            continue  # cut off where the text was elided: its whole text is read in full elsewhere (its tooltip)
        token = token.strip(".:/\\#+~%-")
        if _IDENT_CHARS.search(token):
            continue
        for word in token.split("-"):
            if re.search(r"[A-Za-z]", word) and not _CAMEL.search(word) and word not in ALLOWED_WORDS:
                out.append(word)
    return out


def document_prose(doc) -> str:  # noqa: ANN001 - QTextDocument
    """The text of a rich-text document outside code (fragments in a code font are left out)."""
    parts = []
    block = doc.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fragment = it.fragment()
            if fragment.isValid() and not is_code_format(fragment.charFormat()):
                parts.append(fragment.text())
            else:
                parts.append(" ")
            it += 1
        parts.append("\n")
        block = block.next()
    return "".join(parts)


def rich_prose(text: str) -> str:
    """A label's or tooltip's text outside code: rich text is read through a QTextDocument (code fonts,
    ``<code>``, ``<pre>`` left out, tags and entities gone); plain text as it is."""
    from PySide6.QtGui import QTextDocument

    if not text or not re.search(r"<[A-Za-z/][^>]*>|&[a-z]+;|&#", text):
        return text or ""
    doc = QTextDocument()
    doc.setHtml(text)
    return document_prose(doc)


def _widget_texts(w) -> Iterable[tuple[str, str]]:  # noqa: ANN001 - QWidget
    """``(where, prose)`` of one visible widget: its text, title, tooltip, items (code left out)."""
    from PySide6.QtWidgets import QComboBox, QLineEdit, QTextEdit

    name = f"{type(w).__name__}({w.objectName()})"
    if w.isWindow() or isinstance(w, QDockWidget):
        yield name + ".title", w.windowTitle()
    if w.toolTip():
        yield name + ".tooltip", rich_prose(w.toolTip())
    if isinstance(w, QPlainTextEdit):  # code views: TVMScript, the diff, the script editor, error texts
        if w.toPlainText() == "" and w.placeholderText():
            yield name + ".placeholder", w.placeholderText()
        return
    if isinstance(w, QLabel):
        if not is_code_format(w.font()):
            yield name, rich_prose(w.text())
    elif isinstance(w, QAbstractButton):
        yield name, w.text()
    elif isinstance(w, QLineEdit):
        yield name + ".placeholder", w.placeholderText()
    elif isinstance(w, QComboBox):
        for i in range(w.count()):
            yield name + ".item", w.itemText(i)
            tip = w.itemData(i, Qt.ItemDataRole.ToolTipRole)
            if isinstance(tip, str):
                yield name + ".item.tooltip", rich_prose(tip)
    elif isinstance(w, QTabBar):
        for i in range(w.count()):
            yield name, w.tabText(i)
            yield name + ".tooltip", rich_prose(w.tabToolTip(i))
    elif isinstance(w, QGroupBox):
        yield name, w.title()
    elif isinstance(w, QTextEdit):
        if not is_code_format(w.document().defaultFont()):
            yield name, document_prose(w.document())
        if w.document().isEmpty() and w.placeholderText():
            yield name + ".placeholder", w.placeholderText()
    elif isinstance(w, QAbstractItemView) and w.model() is not None:
        yield from ((name, t) for t in _item_texts(w.model(), QModelIndex(), 300))
        yield from ((name + ".header", t) for t in _header_texts(w.model()))


def _has_children(model, index: QModelIndex) -> bool:  # noqa: ANN001
    try:
        return model.hasChildren(index)
    except TypeError:  # private in PySide6 for a table widget's model: a flat table
        return False


def _columns(model, parent: QModelIndex) -> int:  # noqa: ANN001
    try:
        return model.columnCount(parent)
    except TypeError:  # a list model's columnCount is private in PySide6
        return 1


def _item_texts(model, parent: QModelIndex, limit: int) -> Iterable[str]:  # noqa: ANN001
    for row in range(min(model.rowCount(parent), limit)):
        for col in range(_columns(model, parent)):
            index = model.index(row, col, parent)
            for role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
                value = index.data(role)
                if isinstance(value, str):
                    yield rich_prose(value) if role == Qt.ItemDataRole.ToolTipRole else value
            if col == 0 and _has_children(model, index):
                yield from _item_texts(model, index, limit)


def _header_texts(model) -> Iterable[str]:  # noqa: ANN001
    for orientation, count in ((Qt.Orientation.Horizontal, _columns(model, QModelIndex())),
                               (Qt.Orientation.Vertical, min(model.rowCount(QModelIndex()), 50))):
        for section in range(count):
            for role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
                value = model.headerData(section, orientation, role)
                if isinstance(value, str) and not value.isdigit():
                    yield rich_prose(value)


def _menu_texts(menus: list[QMenu]) -> Iterable[tuple[str, str]]:
    stack, seen = list(menus), set()
    while stack:
        menu = stack.pop()
        if id(menu) in seen:
            continue
        seen.add(id(menu))
        menu.aboutToShow.emit()  # menus filled when opened (recent files, targets, builtin models)
        yield "menu", menu.title()
        for act in menu.actions():
            if act.menu() is not None:
                stack.append(act.menu())
            elif not act.isSeparator():
                yield f"menu({menu.title()})", act.text()
                if act.toolTip() and _plain(act.toolTip()) != _plain(act.text()):
                    yield f"menu({menu.title()}).tooltip", rich_prose(act.toolTip())
                if act.statusTip():
                    yield f"menu({menu.title()}).statustip", act.statusTip()


def shown_prose(window: QWidget) -> list[tuple[str, str]]:
    """``(where, text)`` of every text ``window`` shows outside code: window and dock titles, labels, buttons,
    tooltips, placeholders, combo items, tabs, group boxes, rich text (code fonts left out), item views' cells,
    tooltips and headers, menus with their submenus, and the status bar's message."""
    from PySide6.QtWidgets import QMainWindow

    out: list[tuple[str, str]] = []
    for w in [window, *window.findChildren(QWidget)]:
        if w.isVisible():
            out.extend(_widget_texts(w))
    if isinstance(window, QMainWindow):
        out.extend(_menu_texts([a.menu() for a in window.menuBar().actions() if a.menu() is not None]))
        out.append(("statusbar", window.statusBar().currentMessage()))
    return [(where, text) for where, text in out if text and text.strip()]


_IR_NAME = re.compile(r"\bdef (\w+)\(|^\s*(\w+)(?:: [^=\n]+)? = |[(,] ?(\w+): (?:R|T)\.", re.M)


def ir_names(window: QWidget) -> set[str]:
    """The names the IR on show defines (functions, bound values, parameters), read from ``window``'s code views:
    identifiers wherever the interface names them (the diff's function chooser, the graph)."""
    names: set[str] = set()
    for view in window.findChildren(QPlainTextEdit):
        for match in _IR_NAME.finditer(view.toPlainText()):
            names.update(g for g in match.groups() if g)
    return names


def latin_left(window: QWidget, identifiers: Iterable[str] = ()) -> list[tuple[str, str, list[str]]]:
    """``(where, text, words)`` of each text of ``window`` (:func:`shown_prose`) with Latin words that are not
    code, identifiers (``identifiers`` and :func:`ir_names`) or numbers (:func:`latin_words`)."""
    idents = list(identifiers) + sorted(ir_names(window))
    found = []
    for where, text in shown_prose(window):
        words = latin_words(text, idents)
        if words:
            found.append((where, text[:300], words))
    return found


def rich_plain(text: str) -> str:
    """All the words a rich text shows (code included), as plain text (tests of tooltips and labels)."""
    from PySide6.QtGui import QTextDocument

    doc = QTextDocument()
    doc.setHtml(text)
    return doc.toPlainText()


def catalogue_names(win) -> list[str]:  # noqa: ANN001 - a main window
    """TVM's pass names, titles, parameter names and choices of ``win``'s catalogue (identifiers)."""
    cat = getattr(getattr(getattr(win, "ctx", None), "catalogue", None), "catalogue", None)
    if cat is None:
        return []
    names: set[str] = set()
    for pass_id in cat.ids():
        spec = cat.get(pass_id)
        names |= {spec.id, spec.title} | {p.name for p in spec.params}
        names |= {str(c) for p in spec.params for c in (p.choices or [])}
    return sorted(names)
