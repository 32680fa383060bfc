"""GUI tests of widgets.graph_view.GraphView (pytest-qt, offscreen)."""

from __future__ import annotations

import sys

import pytest
from PySide6.QtCore import Qt

from pipeline_model import ir_graph as ig
from widgets.graph_view import GraphView, wait_shown


@pytest.fixture
def view(qtbot):
    v = GraphView()
    qtbot.addWidget(v)
    v.resize(900, 700)
    v.show()
    qtbot.waitExposed(v)
    return v


def _show(qtbot, view, data, highlight=frozenset()):
    with qtbot.waitSignal(view.graph_shown, timeout=20000):
        view.set_graph(data, highlight)


def test_set_graph_one_item_per_node_and_highlight(qtbot, view):
    data = ig.synthetic_graph_json(120)
    changed = {n["id"] for n in data["nodes"] if n["op"] == "relax.matmul"}
    _show(qtbot, view, data, changed)
    assert not view.is_busy()
    assert sorted(view.node_ids()) == sorted(n["id"] for n in data["nodes"])
    hl = next(iter(changed))
    plain = next(n["id"] for n in data["nodes"] if n["op"] == "relax.add")
    assert view.node_fill(hl) != view.node_fill(plain)
    assert view.highlighted() == frozenset(changed)
    # the item sits where the layout put it
    lay = view.graph_layout()
    assert view.node_rect(plain).center().x() == pytest.approx(lay.positions[plain][0])
    changed_colour = view.node_fill(hl)
    view.set_highlight({plain})
    assert view.node_fill(plain) == changed_colour
    assert view.node_fill(hl) != changed_colour


def test_click_emits_node_selected_with_attrs(qtbot, view):
    data = ig.synthetic_graph_json(120)
    _show(qtbot, view, data)
    view.reset_zoom()
    target = next(n for n in data["nodes"] if n["op"] == "relax.nn.softmax")
    view.centerOn(*view.graph_layout().positions[target["id"]])
    pos = view.mapFromScene(*view.graph_layout().positions[target["id"]])
    with qtbot.waitSignal(view.node_selected, timeout=3000) as blocker:
        qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    info = blocker.args[0]
    assert info["id"] == target["id"] and info["op"] == "relax.nn.softmax"
    assert info["shape"] == target["shape"] and info["attrs"] == {"axis": "-1"}
    assert len(info["inputs"]) == 1 and info["input_types"][0].startswith("R.Tensor")
    assert view.selected_node() == target["id"]
    with qtbot.waitSignal(view.node_activated, timeout=3000) as act:
        qtbot.mouseDClick(view.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    assert act.args[0]["id"] == target["id"]
    # a click on empty space selects nothing
    empty = view.mapFromScene(1.0, 1.0)
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=empty)
    assert view.selected_node() is None
    assert "softmax" in view.tooltip_html(target["id"]) and "axis" in view.tooltip_html(target["id"])


def test_fit_zoom_keys_and_lod(qtbot, view):
    data = ig.synthetic_graph_json(600)
    _show(qtbot, view, data)
    view.fit_to_view()
    rect = view.mapToScene(view.viewport().rect()).boundingRect()
    scene = view.sceneRect()
    assert rect.contains(scene.adjusted(2, 2, -2, -2))  # everything visible
    assert not view.detail_shown()  # a deep graph fitted is shown as the overview
    view.reset_zoom()
    assert view.detail_shown() and view.current_scale() == pytest.approx(1.0)
    qtbot.keyClick(view, Qt.Key.Key_Minus)
    assert view.current_scale() == pytest.approx(0.8)
    qtbot.keyClick(view, Qt.Key.Key_Plus)
    assert view.current_scale() == pytest.approx(1.0)
    qtbot.keyClick(view, Qt.Key.Key_0)
    assert view.current_scale() < 0.2
    view.grab()  # paints both layers without error


def test_stale_layout_never_replaces_newer_graph(qtbot, view):
    big = ig.synthetic_graph_json(1500)
    small = ig.synthetic_graph_json(60, legalized=True)
    view.set_graph(big)
    with qtbot.waitSignal(view.graph_shown, timeout=20000):
        view.set_graph(small)
    assert wait_shown(view)
    qtbot.wait(50)
    assert sorted(view.node_ids()) == sorted(n["id"] for n in small["nodes"])
    with qtbot.waitSignal(view.graph_shown, timeout=5000):
        view.set_graph(None)
    assert view.node_ids() == []


def test_real_mlp_graph_and_palette(qtbot, view):
    pytest.importorskip("tvm")
    from tvm import relax
    from tvm.relax.frontend import nn

    class MLP(nn.Module):
        def __init__(self):
            self.fc1 = nn.Linear(784, 256)
            self.relu = nn.ReLU()
            self.fc2 = nn.Linear(256, 10, bias=False)

        def forward(self, x):
            return self.fc2(self.relu(self.fc1(x)))

    mod, _ = MLP().export_tvm({"forward": {"x": nn.spec.Tensor((1, 784), "float32")}})
    mod = relax.transform.LegalizeOps()(mod)
    data = ig.graph_to_json(ig.extract_graph(mod))
    _show(qtbot, view, data)
    assert len(view.node_ids()) == len(data["nodes"])
    call = next(n["id"] for n in data["nodes"] if n.get("callee") == "matmul")
    assert view.node_info(call)["callee_kind"] == "prim_func"
    before = view.backgroundBrush().color()
    from PySide6.QtGui import QColor, QPalette

    pal = view.palette()
    pal.setColor(QPalette.ColorRole.Base, QColor("#1e1e1e"))
    pal.setColor(QPalette.ColorRole.Text, QColor("#eeeeee"))
    view.setPalette(pal)
    assert view.backgroundBrush().color() != before
    assert view.backgroundBrush().color().lightness() < 64
    assert sys.getrefcount(None) > 1000


def test_painted_pixels_show_boxes_in_their_colours(qtbot, view):
    """What is on screen, not only item state: the fill of a highlighted and of a plain box, and the
    background between layers (the diagram is painted by one item from tiles)."""
    data = ig.synthetic_graph_json(300)
    changed = {n["id"] for n in data["nodes"] if n["op"] == "relax.nn.softmax"}
    _show(qtbot, view, data, changed)
    view.reset_zoom()
    lay = view.graph_layout()
    for node_id in (next(iter(changed)), next(n["id"] for n in data["nodes"] if n["op"] == "relax.reshape")):
        rect = view.node_rect(node_id)
        view.centerOn(rect.center())
        img = view.viewport().grab().toImage()
        inside = view.mapFromScene(rect.left() + 6, rect.center().y())
        colour = img.pixelColor(inside)
        want = view.node_fill(node_id)
        assert abs(colour.red() - want.red()) + abs(colour.green() - want.green()) + abs(colour.blue() - want.blue()) < 12, (
            node_id, colour.name(), want.name())
        # just above the box (between two layers) is not the box colour
        above = view.mapFromScene(rect.left() + 6, rect.top() - 12)
        assert img.pixelColor(above) != colour
    assert lay is view.graph_layout()


def test_tiles_cover_every_visible_node_and_stay_few(qtbot, view):
    from widgets import graph_view as gvm

    data = ig.synthetic_graph_json(3000, legalized=True)
    _show(qtbot, view, data)
    p = view._prepared  # noqa: SLF001 - checks the spatial index itself
    total = sum(len(b.tiles) for b in p.bands)
    from PySide6.QtCore import QRectF

    lay = view.graph_layout()
    for k, (w, h) in enumerate([(1280, 800), (2560, 1600), (640, 400), (3000, 3000)]):
        top = lay.height * (k + 1) / 6
        rect = QRectF(lay.width / 3 - w / 2, top, w, h)
        tiles = gvm._visible(p.bands, p.band_starts, p.band_margin, rect)  # noqa: SLF001
        in_tiles = {i for t in tiles for i in t.nodes}
        want = {i for i, (x0, y0, rw, rh) in enumerate(p.rects) if rect.intersects(QRectF(x0, y0, rw, rh))}
        assert want and want <= in_tiles
        assert len(tiles) <= total // 10
        coarse = gvm._visible(p.coarse, p.coarse_starts, p.band_margin, rect)  # noqa: SLF001
        assert want <= {i for t in coarse for i in t.nodes}


def test_bad_graph_json_reports_a_clear_message(qtbot, view):
    data = ig.synthetic_graph_json(40)
    data["edges"].append({"source": "lv3", "target": "nowhere", "index": 0})
    with qtbot.waitSignal(view.layout_failed, timeout=5000) as failed:
        view.set_graph(data)
    assert "edges[" in failed.args[0] and "nowhere" in failed.args[0]
    assert not view.is_busy() and view.node_ids() == []
    with qtbot.waitSignal(view.graph_shown, timeout=5000):
        view.set_graph(ig.synthetic_graph_json(40))  # recovers on the next graph
    assert len(view.node_ids()) == len(ig.synthetic_graph_json(40)["nodes"])
