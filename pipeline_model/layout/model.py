"""What a layout is made of: its result (:class:`GraphLayout`, :class:`Frame`), the spacing constants,
and the node texts that size the boxes (shared with the view, which paints the same texts)."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from typing import Any, Hashable, Mapping

NODE_HEIGHT = 40.0
CHAR_WIDTH = 7.0
MIN_NODE_WIDTH = 64.0
NODE_PADDING = 20.0
LAYER_GAP = 36.0
NODE_GAP = 24.0
DUMMY_WIDTH = 8.0
DUMMY_GAP = 8.0
MARGIN = 30.0
FRAME_PAD = 14.0
FRAME_LABEL = 18.0


class LayoutCancelled(Exception):
    """Raised by :func:`compute_layout` when its ``should_stop`` callback says the result is no longer wanted."""


@dataclass
class Frame:
    """Bounding box of one dataflow group or expanded hierarchy group (``x0 < x1``, ``y0 < y1``), with its
    label; ``kind`` is ``block`` (node attribute ``group``) or ``nested`` (node attribute ``frames``),
    ``depth`` the nesting level of a nested frame (0 = outermost)."""

    group: Any
    label: str
    x0: float
    y0: float
    x1: float
    y1: float
    kind: str = "block"
    depth: int = 0


@dataclass
class GraphLayout:
    """Result of :func:`compute_layout`; coordinates grow right (x) and down (y)."""

    positions: dict[Hashable, tuple[float, float]] = field(default_factory=dict)  # node centre
    sizes: dict[Hashable, tuple[float, float]] = field(default_factory=dict)  # (width, height)
    layers: dict[Hashable, int] = field(default_factory=dict)
    edges: dict[tuple[Hashable, Hashable], list[tuple[float, float]]] = field(default_factory=dict)
    frames: list[Frame] = field(default_factory=list)
    layer_rows: list[list[Hashable]] = field(default_factory=list)  # real nodes per layer, left to right
    width: float = 0.0
    height: float = 0.0
    crossings_before: int = 0
    crossings_after: int = 0
    dummy_count: int = 0
    reversed_edges: int = 0


def short_op(op: str | None) -> str:
    """``relax.nn.relu`` -> ``nn.relu`` (what node boxes show)."""
    if not op:
        return ""
    return op[6:] if op.startswith("relax.") else op


def shape_text(attrs: Mapping[str, Any], words: Mapping[str, str] | None = None) -> str:
    """``(n, 784)·float32`` for a node's ``shape``/``dtype`` (or a short form of ``type_text``; ``words``: the
    (translated) :data:`GROUP_WORDS` for "tuple" and "tensor")."""
    shape = attrs.get("shape")
    dtype = attrs.get("dtype")
    if shape is not None:
        text = "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"
        return f"{text}\u00b7{dtype}" if dtype else text
    type_text = str(attrs.get("type_text") or "")
    if type_text.startswith(("T.Tuple", "R.Tuple")):
        return (words or GROUP_WORDS).get("tuple", "tuple")
    if type_text.startswith("R.Tensor"):
        tensor = (words or GROUP_WORDS).get("tensor", "tensor")
        return f"{tensor}\u00b7{dtype}" if dtype else tensor
    if len(type_text) > 28:
        return type_text[:27] + "\u2026"
    return type_text


#: Height of one detail line of a collapsed group's box (its inputs and outputs), when the view gives none.
DETAIL_LINE = 14.0
#: A collapsed group's box lists at most this many inputs and outputs (then "+ N more").
MAX_PORT_LINES = 4
DETAIL_CHARS = 44


#: The words of a node box (``{0}``: a count): a collapsed group's, the output and constant nodes' titles, a
#: value's type without a shape; the view passes them translated.
GROUP_WORDS: Mapping[str, str] = {
    "op": "{0} op", "ops": "{0} ops", "weight": "{0} weight", "weights": "{0} weights",
    "in": "in ", "out": "out", "more": "+ {0} more", "nodes": "+ {0} nodes", "output": "output", "const": "const",
    "tensor": "tensor", "tuple": "tuple",
}


def text_width(text: str) -> int:
    """Width of ``text`` in average character widths (a wide East Asian character counts two)."""
    return len(text) + sum(1 for ch in text if ord(ch) >= 0x1100 and unicodedata.east_asian_width(ch) in "WF")


def _port_line(prefix: str, name: str, shape: str, limit: int = DETAIL_CHARS) -> str:
    """``in  name (shape)`` in at most ``limit`` characters: a long name is elided in its middle (both its
    ends tell which value it is), never the shape; a shape alone too long keeps its whole dimensions."""
    line = f"{prefix} {name} {shape}".rstrip() if name else f"{prefix} {shape}"
    if len(line) <= limit:
        return line
    room = limit - len(prefix) - len(shape) - 2
    if name and room >= 7:
        head = room // 2
        name = name[:head] + "\u2026" + name[len(name) - (room - 1 - head):]
        return f"{prefix} {name} {shape}"
    if name:
        return f"{prefix} {shape}"  # no room for a readable name: the shape says more
    return line


def _port_lines(prefix: str, ports: Any, more: str, words: Mapping[str, str]) -> list[str]:
    ports = list(ports or [])
    shown = ports if len(ports) <= MAX_PORT_LINES else ports[: MAX_PORT_LINES - 1]
    lines = []
    for p in shown:
        shape = str(p.get("shape") or "").split("\u00b7", 1)[0]
        if shape in ("tensor", "tuple"):  # a value without a shape (shape_text's words, from the graph's reply)
            shape = words.get(shape, shape)
        lines.append(_port_line(prefix, str(p.get("name") or ""), shape))
    if len(ports) > len(shown):
        lines.append(f"{prefix} " + more.format(len(ports) - len(shown)))
    return lines


def node_details(attrs: Mapping[str, Any], words: Mapping[str, str] = GROUP_WORDS) -> list[str]:
    """The lines below a collapsed group's title: its inputs (``in  name (shape)``) and outputs
    (``out (shape)``), at most ``MAX_PORT_LINES`` each; no lines for other nodes. ``words``: the
    (translated) :data:`GROUP_WORDS`."""
    if attrs.get("kind") != "group":
        return []
    outs = [dict(p, name="") for p in attrs.get("outputs") or []]
    more = words.get("more", GROUP_WORDS["more"])
    return (_port_lines(words.get("in", "in "), attrs.get("inputs"), more, words)
            + _port_lines(words.get("out", "out"), outs, more, words))


def node_box_height(attrs: Mapping[str, Any], base: float = NODE_HEIGHT, line: float = DETAIL_LINE) -> float:
    """Box height for a node: ``base``, plus a line per detail line of a collapsed group."""
    return base + line * len(node_details(attrs))


def node_text(attrs: Mapping[str, Any], words: Mapping[str, str] = GROUP_WORDS) -> tuple[str, str]:
    """(title, subtitle) of a node box: op or callee name, and ``shape·dtype`` (a collapsed group: its
    name, and its op and weight counts in ``words``).

    Shared by the layout (for widths) and the view (for painting) so both agree.
    """
    kind = attrs.get("kind")
    if kind == "group":
        title = str(attrs.get("label") or attrs.get("name") or "group")
        if "ops" in attrs:  # what is inside: ops and weights (its inputs and outputs: node_details)
            ops, weights = int(attrs.get("ops") or 0), int(attrs.get("weights") or 0)
            sub = words.get("ops" if ops != 1 else "op", GROUP_WORDS["ops"]).format(ops)
            if weights:
                sub += " \u00b7 " + words.get("weights" if weights != 1 else "weight",
                                               GROUP_WORDS["weights"]).format(weights)
            return title, sub
        size = attrs.get("size")
        shape = shape_text(attrs, words)
        sub = words.get("nodes", GROUP_WORDS["nodes"]).format(size) if size else "+"
        return title, (f"{sub} \u00b7 {shape}" if shape else sub)
    if kind == "param":
        title = str(attrs.get("name") or "param")
    elif kind == "output":
        title = words.get("output", "output")
    elif kind == "constant":
        title = words.get("const", "const")
    else:
        callee = attrs.get("callee")
        op = attrs.get("op")
        if callee:
            prefix = short_op(op) if op and op != "call" else ""
            title = f"{prefix}: {callee}" if prefix else str(callee)
        else:
            title = short_op(op) or str(attrs.get("label") or attrs.get("name") or "?")
    return title, shape_text(attrs, words)


def node_width(attrs: Mapping[str, Any], char_width: float = CHAR_WIDTH) -> float:
    """Box width for a node, from the length of its two text lines."""
    title, sub = node_text(attrs)
    longest = max([text_width(title), text_width(sub)] + [text_width(line) for line in node_details(attrs)])
    return max(MIN_NODE_WIDTH, char_width * longest + NODE_PADDING)
