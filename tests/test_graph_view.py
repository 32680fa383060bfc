"""GUI tests of widgets.graph_view.GraphView (pytest-qt, offscreen)."""

from __future__ import annotations

import sys

import pytest
from PySide6.QtCore import QPoint, QPointF, QRectF, Qt

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


def _show(qtbot, view, data, highlight=frozenset(), **kwargs):
    with qtbot.waitSignal(view.graph_shown, timeout=20000):
        view.set_graph(data, highlight, **kwargs)


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


@pytest.mark.e2e
def test_real_mlp_graph_and_palette(qtbot, view, engine):
    """The graph of the real legalized tutorial MLP, as the session engine extracts it for the GUI."""
    from pipeline_model.document import PipelineDocument, Step

    result = engine.run(PipelineDocument(model="builtin:mlp", steps=[Step("relax.LegalizeOps")]))
    assert result.ok, result.error
    data = engine.graph(result.steps[0].snapshot_key)["graph"]
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
    from widgets.graph.tiles import visible

    data = ig.synthetic_graph_json(3000, legalized=True)
    _show(qtbot, view, data)
    p = view._prepared  # noqa: SLF001 - checks the spatial index itself
    total = sum(len(b.tiles) for b in p.bands)
    from PySide6.QtCore import QRectF

    lay = view.graph_layout()
    for k, (w, h) in enumerate([(1280, 800), (2560, 1600), (640, 400), (3000, 3000)]):
        top = lay.height * (k + 1) / 6
        rect = QRectF(lay.width / 3 - w / 2, top, w, h)
        tiles = visible(p.bands, p.band_starts, p.band_margin, rect)
        in_tiles = {i for t in tiles for i in t.nodes}
        want = {i for i, (x0, y0, rw, rh) in enumerate(p.rects) if rect.intersects(QRectF(x0, y0, rw, rh))}
        assert want and want <= in_tiles
        assert len(tiles) <= total // 10
        coarse = visible(p.coarse, p.coarse_starts, p.band_margin, rect)
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


@pytest.fixture(scope="module")
def decoder_json():
    """The decoder's graph with 8 layers (collapsed: one box ``layers ×8``; ``expanded=LAYERS``: a box per layer)."""
    pytest.importorskip("tvm")
    from pipeline_model.engine.graph_extract_tvm import extract_graph
    from tests.test_graph_hierarchy import decoder_mod

    return ig.graph_to_json(extract_graph(decoder_mod(8), "forward"))


#: The expansion that shows the decoder's layers, each collapsed.
LAYERS = frozenset({"m:layers"})


def test_large_graph_starts_collapsed_and_click_expands(qtbot, view, decoder_json):
    import copy

    data = copy.deepcopy(decoder_json)
    _show(qtbot, view, data, key=("k", "forward"))
    ids = view.node_ids()
    assert "m:layers" in ids and len(ids) < 10  # the layers are one box: x -> layers x8 -> norm -> output
    assert view.expanded_groups() == frozenset()
    view.reset_zoom()
    for gid in ("m:layers", "m:layers.3"):  # a click opens the layers, another one layer
        rect = view.node_rect(gid)
        view.centerOn(rect.center())
        with qtbot.waitSignal(view.graph_shown, timeout=20000):
            qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=view.mapFromScene(rect.center()))
        assert gid in view.expanded_groups()
    assert "m:layers.0" in view.node_ids() and len(view.node_ids()) < 40  # one node per other layer
    assert view.expanded_groups() == frozenset({"m:layers", "m:layers.3"})
    assert "m:layers.3.self_attn" in view.node_ids() and "m:layers.3" not in view.node_ids()
    frame = next(f for f in view.graph_layout().frames if f.group == "m:layers.3")
    assert frame.kind == "nested" and frame.label == "layers.3"
    # click on the frame's title collapses it again
    view.centerOn(frame.x0 + 40, frame.y0 + 20)
    with qtbot.waitSignal(view.graph_shown, timeout=20000):
        qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=view.mapFromScene(frame.x0 + 6, frame.y0 + 6))
    assert view.expanded_groups() == frozenset({"m:layers"})
    with qtbot.waitSignal(view.graph_shown, timeout=20000):
        view.expand_all()
    assert not any(n.startswith("m:") for n in view.node_ids())
    assert any(view.view_json()["nodes"][i].get("stub") for i in range(len(view.node_ids())))


def test_layout_cache_hit_is_synchronous(qtbot, view, decoder_json):
    _show(qtbot, view, decoder_json, key=("k1", "forward"), expanded=LAYERS)
    assert not view.last_from_cache and view.cache_size() == 1
    _show(qtbot, view, ig.synthetic_graph_json(200), key=("k2", "forward"))
    shown = []
    view.graph_shown.connect(lambda: shown.append(True))
    view.set_graph(decoder_json, key=("k1", "forward"))  # its last expansion, from the cache
    assert shown and view.last_from_cache and not view.is_busy()  # no layout thread involved
    assert "m:layers.0" in view.node_ids()
    # expansion is remembered per key and cached too
    with qtbot.waitSignal(view.graph_shown, timeout=20000):
        view.set_expanded(LAYERS | {"m:layers.1"})
    view.set_graph(ig.synthetic_graph_json(200), key=("k2", "forward"))
    view.set_graph(decoder_json, key=("k1", "forward"))
    assert view.last_from_cache and view.expanded_groups() == LAYERS | {"m:layers.1"}


def test_newer_request_cancels_older_ones(qtbot, view, decoder_json):
    big = ig.synthetic_graph_json(3000)
    for k in range(3):
        view.set_graph(big, key=("big", k), expanded=())
    _show(qtbot, view, decoder_json, key=("dec", "f"), expanded=LAYERS)
    assert "m:layers.0" in view.node_ids()
    # at most the one task already running finished (and was dropped); the queued ones never ran
    assert view.cancelled_count <= 1
    assert view.cache_size() <= 2


def test_change_detection_against_before_runs_in_the_task(qtbot, view, decoder_json):
    import copy

    after = copy.deepcopy(decoder_json)
    soft = next(n for n in after["nodes"] if n["id"] == "softmax3")
    soft["op"] = "relax.nn.log_softmax"
    _show(qtbot, view, after, key=("a", "f"), before=decoder_json, expanded=LAYERS)
    assert view.highlighted() == frozenset({"m:layers.3"})  # the collapsed group holding the change
    assert view.node_fill("m:layers.3") != view.node_fill("m:layers.2")


def test_before_graph_arriving_during_the_layout_recolours_it_without_a_second_layout(qtbot, view, decoder_json):
    """The step's graph is shown before its input's graph arrives; when that arrives while the layout is
    still running, the finished layout is kept and recoloured (no layout cancelled and redone)."""
    import copy

    after = copy.deepcopy(decoder_json)
    soft = next(n for n in after["nodes"] if n["id"] == "softmax3")
    soft["op"] = "relax.nn.log_softmax"
    shown: list[frozenset] = []
    view.graph_shown.connect(lambda: shown.append(view.highlighted()))
    view.set_graph(after, key=("a", "f"), expanded=LAYERS)
    assert view.is_busy()
    view.set_graph(after, key=("a", "f"), before=decoder_json, expanded=LAYERS)  # the "before" graph just arrived
    qtbot.waitUntil(lambda: len(shown) >= 2 and not view.is_busy(), timeout=20000)
    assert view.cancelled_count == 0  # the first layout was not thrown away
    assert shown[0] == frozenset() and shown[-1] == frozenset({"m:layers.3"})
    assert view.cache_size() == 1
    # a different graph while busy is not merged: the newer request wins as before
    view.set_graph(after, key=("a", "f"), expanded={"m:layers.0"})
    view.set_graph(decoder_json, key=("b", "f"), before=after)
    qtbot.waitUntil(lambda: not view.is_busy() and view._key == ("b", "f"), timeout=20000)  # noqa: SLF001


def test_a_large_graph_is_shown_first_and_coloured_after(qtbot, view, decoder_json, monkeypatch):
    import copy

    monkeypatch.setattr(view, "HIGHLIGHT_LATER_NODES", 10)
    after = copy.deepcopy(decoder_json)
    next(n for n in after["nodes"] if n["id"] == "softmax3")["op"] = "relax.nn.log_softmax"
    shown: list[frozenset] = []
    view.graph_shown.connect(lambda: shown.append(view.highlighted()))
    view.set_graph(after, key=("late", "f"), before=decoder_json, expanded=LAYERS)
    qtbot.waitUntil(lambda: len(shown) >= 2 and not view.is_busy(), timeout=20000)
    assert shown == [frozenset(), frozenset({"m:layers.3"})] and view.cancelled_count == 0
    # small graphs are coloured in the same pass, as before
    monkeypatch.setattr(view, "HIGHLIGHT_LATER_NODES", 10**9)
    shown.clear()
    view.set_graph(after, key=("now", "f"), before=decoder_json, expanded=LAYERS)
    qtbot.waitUntil(lambda: bool(shown) and not view.is_busy(), timeout=20000)
    assert shown == [frozenset({"m:layers.3"})]


def test_find_expands_groups_centres_and_selects(qtbot, view, decoder_json):
    _show(qtbot, view, decoder_json, key=("f", "f"))
    with qtbot.waitSignal(view.graph_shown, timeout=20000):
        matches = view.find("softmax")
    assert len(matches) == 8 and view.current_match() == "softmax"
    assert {"m:layers.0", "m:layers.0.self_attn"} <= view.expanded_groups()
    assert view.selected_node() == "softmax"
    centre = view.mapToScene(view.viewport().rect().center())
    assert view.node_rect("softmax").adjusted(-60, -60, 60, 60).contains(centre)
    with qtbot.waitSignal(view.graph_shown, timeout=20000):
        assert view.find_previous() == "softmax7"
    assert view.selected_node() == "softmax7" and "m:layers.7.self_attn" in view.expanded_groups()
    assert view.find("no-such-thing") == [] and view.current_match() is None


def test_overview_shows_viewport_and_group_labels_far_out(qtbot, view, decoder_json):
    from PySide6.QtGui import QImage, QPainter

    _show(qtbot, view, decoder_json, key=("o", "f"), expanded=LAYERS)
    ov = view.overview()
    assert not ov.isVisible()  # off by default: it would cover nodes
    view.set_overview_visible(True)
    assert ov.isVisible()
    view.reset_zoom()
    view.centerOn(view.node_rect("m:layers.0").center())
    r0 = ov.viewport_rect()
    assert not r0.isEmpty()
    qtbot.mouseClick(ov, Qt.MouseButton.LeftButton, pos=QPoint(ov.width() // 2, ov.height() - 12))
    assert ov.viewport_rect().center().y() > r0.center().y()
    view.set_overview_visible(False)
    assert not ov.isVisible()
    # far out (fit-to-view): group names are drawn in screen-size text, not nothing
    with qtbot.waitSignal(view.graph_shown, timeout=20000):
        view.expand_all()
    view.fit_to_view()
    assert not view.detail_shown()
    img = QImage(view.viewport().size(), QImage.Format.Format_ARGB32)
    img.fill(0)
    painter = QPainter(img)
    view.render(painter)
    painter.end()
    text = view.palette().text().color()
    dark = sum(1 for x in range(0, img.width(), 2) for y in range(0, img.height(), 2)
               if abs(img.pixelColor(x, y).lightness() - text.lightness()) < 40)
    assert dark > 30  # label glyphs


def test_overview_is_off_by_default_and_covers_no_node(qtbot, view, decoder_json):
    _show(qtbot, view, decoder_json, key=("off", "f"), expanded=())
    view.reset_zoom()
    assert not view.overview().isVisible()  # the graph does not fit, and still no minimap over it
    view.set_overview_visible(True)
    assert view.overview().isVisible()


@pytest.mark.parametrize("scale", [0.8, 0.15])
def test_expand_and_collapse_keep_the_clicked_group_in_view(qtbot, view, decoder_json, scale):
    _show(qtbot, view, decoder_json, key=("anchor", str(scale)), expanded=LAYERS)
    view.resetTransform()
    view.scale(scale, scale)
    gid = "m:layers.5"
    view.centerOn(view.group_rect(gid).center())
    before = view.mapFromScene(view.group_rect(gid).topLeft())
    with qtbot.waitSignal(view.graph_shown, timeout=20000):
        view.toggle_group(gid)
    assert gid in view.expanded_groups()
    seen = view.mapToScene(view.viewport().rect()).boundingRect()
    frame = view.group_rect(gid)
    assert frame is not None and frame.height() > 200  # the expanded layer's frame
    assert seen.contains(QRectF(frame.left(), frame.top(), frame.width(), min(frame.height(), seen.height() * 0.5)))
    if scale < 0.5:  # it fits: shown whole
        assert seen.contains(frame)
    if scale < 0.5:  # nothing had to scroll: the group's top edge stayed where it was clicked
        # (a scene smaller than the view is centred by Qt: it moves by half its growth, the layers frame included)
        assert abs(view.mapFromScene(frame.topLeft()).y() - before.y()) < 50
    before = view.mapFromScene(QPointF(frame.center().x(), frame.top()))
    with qtbot.waitSignal(view.graph_shown, timeout=20000):
        view.toggle_group(gid)
    box = view.group_rect(gid)
    assert view.mapToScene(view.viewport().rect()).boundingRect().contains(box)
    assert abs(view.mapFromScene(QPointF(box.center().x(), box.top())).y() - before.y()) < 60  # scroll limits


def test_heat_has_its_own_colour_scale_and_a_legend(qtbot, view):
    from PySide6.QtGui import QColor, QImage, QPainter

    from widgets.graph.palette import heat_colour

    data = ig.synthetic_graph_json(120)
    ops = [n["id"] for n in data["nodes"] if n["kind"] == "binding"]
    _show(qtbot, view, data, frozenset(ops[:4]))  # changed by the step
    changed = view.node_fill(ops[0])
    view.reset_zoom()
    view.centerOn(view.node_rect(ops[0]).center())
    assert not view.heat_legend().isVisible()
    view.set_heat({ops[0]: 0.5, ops[1]: 0.1})
    legend = view.heat_legend()
    assert legend.isVisible() and "50.0 %" in legend.texts()[1]
    # the scale stays clear of the change colour (hue and distance), from its pale end to its dark end
    for t in (0.0, 0.25, 0.5, 0.75, 1.0):
        c = heat_colour(t)
        dist = ((c.red() - changed.red()) ** 2 + (c.green() - changed.green()) ** 2
                + (c.blue() - changed.blue()) ** 2) ** 0.5
        assert dist > 90 and not 20 <= c.hsvHue() <= 60, (t, c.name())
    # painted: the changed node keeps its fill and carries the heat colour on its outline
    img = QImage(view.viewport().size(), QImage.Format.Format_ARGB32)
    img.fill(0)
    painter = QPainter(img)
    view.render(painter)
    painter.end()
    box = view.mapFromScene(view.node_rect(ops[0])).boundingRect()
    inside = QColor(img.pixel(box.center().x() - box.width() // 3, box.center().y()))
    assert abs(inside.red() - changed.red()) < 8 and abs(inside.blue() - changed.blue()) < 8
    hot = heat_colour(1.0)
    edge = [QColor(img.pixel(box.center().x(), y)) for y in range(box.top() - 4, box.top() + 3)]
    assert any(abs(c.red() - hot.red()) < 30 and abs(c.blue() - hot.blue()) < 30 for c in edge)
    # far out (the overview), the heat still shows: outlines in the scale's colours
    view.reset_zoom()
    view.zoom_by(0.25)
    view.centerOn(view.node_rect(ops[0]).center())
    assert not view.detail_shown()
    img.fill(0)
    painter = QPainter(img)
    view.render(painter)
    painter.end()
    box = view.mapFromScene(view.node_rect(ops[0])).boundingRect().adjusted(-2, -2, 2, 2)
    ring = [QColor(img.pixel(x, y)) for x in range(box.left(), box.right() + 1) for y in (box.top(), box.top() + 1,
            box.top() + 2, box.bottom() - 2, box.bottom() - 1, box.bottom())]
    assert any(abs(c.red() - hot.red()) < 30 and abs(c.green() - hot.green()) < 30 and abs(c.blue() - hot.blue()) < 30
               for c in ring)
    view.resize(260, 200)  # a view too small to spare the corner: no legend over the graph
    qtbot.wait(10)
    assert not legend.isVisible()
    view.resize(900, 700)
    qtbot.wait(10)
    assert legend.isVisible()
    view.set_heat_visible(False)
    assert not legend.isVisible()


def test_fit_labels_every_collapsed_layer_inside_its_box_and_the_view(qtbot, view):
    pytest.importorskip("tvm")
    from pipeline_model.engine.graph_extract_tvm import extract_graph
    from tests.test_graph_hierarchy import decoder_mod
    from widgets.graph.palette import READABLE_PX

    data = ig.graph_to_json(extract_graph(decoder_mod(32), "forward"))
    for size in ((900, 700), (700, 420)):
        view.resize(*size)
        # collapsed (issue 33): the decoder at fit reads x -> layers x32 -> norm -> output whole, every name
        # legible (the boxes' own titles, or names written at screen size), not its top scrolled into view
        _show(qtbot, view, data, key=("fit0", size), expanded=())
        view.fit_to_view()
        visible = view.mapToScene(view.viewport().rect()).boundingRect().adjusted(-2, -2, 2, 2)
        assert all(visible.contains(view.node_rect(n)) for n in view.node_ids()), (view.current_scale(), size)
        assert [view.node_info(n)["label"] for n in view.node_ids() if n.startswith("m:")] == ["layers \u00d732", "norm"]
        if view.label_mode() == "text":
            assert view.title_px() >= READABLE_PX, (view.current_scale(), size)
        else:
            named = {t: px for _r, t, px in view.screen_labels()}
            assert {"x", "cos", "sin", "mask", "layers \u00d732", "norm", "output"} <= set(named), (named, size)
            assert min(named.values()) >= READABLE_PX, named
        # the layers opened, each collapsed: far out, every layer named at a legible size inside the view
        _show(qtbot, view, data, key=("fit", size), expanded=LAYERS)
        view.fit_to_view()
        assert view.label_mode() == "overview"
        labels = view.screen_labels()
        texts = {t for _r, t, _px in labels}
        assert {f"layers.{k}" for k in range(32)} <= texts, sorted(texts)  # every layer, not every second
        port = view.viewport().rect()
        world = view.viewportTransform()
        for rect, text, px in labels:
            assert px >= READABLE_PX, (text, px)
            assert port.contains(rect.toAlignedRect()), f"{text!r} clipped at fit: {rect}"
            if text.startswith("layers."):
                box = world.mapRect(view.group_rect("m:" + text))
                inside = box.contains(rect.center())
                assert not inside or rect.height() <= box.height() + 0.5, f"{text!r} larger than its box"
        rects = [r for r, _t, _f in labels]
        assert not any(a.intersects(b) for k, a in enumerate(rects) for b in rects[k + 1:])


def test_double_click_on_a_collapsed_layer_expands_it_once_and_keeps_it_in_view(qtbot, view, decoder_json):
    _show(qtbot, view, decoder_json, key=("dbl", "f"), expanded=LAYERS)
    view.fit_to_view()
    gid = "m:layers.5"
    pos = view.mapFromScene(view.group_rect(gid).center())
    left = Qt.MouseButton.LeftButton
    with qtbot.waitSignal(view.graph_shown, timeout=20000):  # what a double-click delivers
        qtbot.mousePress(view.viewport(), left, pos=pos)
        qtbot.mouseRelease(view.viewport(), left, pos=pos)
        qtbot.mouseDClick(view.viewport(), left, pos=pos)
        qtbot.mouseRelease(view.viewport(), left, pos=pos)
    qtbot.wait(50)
    assert gid in view.expanded_groups()
    seen = view.mapToScene(view.viewport().rect()).boundingRect()
    assert seen.contains(view.group_rect(gid))


def _tutorial_mlp_json():
    """The tutorial MLP after LegalizeOps (12 nodes in two expanded layers), as the engine extracts it."""
    pytest.importorskip("tvm")
    import runpy

    from tvm import relax

    from pipeline_model.engine.graph_extract_tvm import extract_graph
    from pipeline_model.resources import resource_path

    ns = runpy.run_path(resource_path("models", "mlp.py"))
    mod, _ = ns["model"].export_tvm(spec=ns["spec"])
    return ig.graph_to_json(extract_graph(relax.transform.LegalizeOps()(mod), "forward"))


@pytest.mark.parametrize("size", [(660, 255), (900, 700), (1500, 700)])
def test_the_tutorial_mlp_at_fit_shows_names_and_shapes_legibly(qtbot, view, size):
    """Issue 33: at the default window size the fitted MLP showed empty boxes (scale below the text
    threshold for 12 nodes). Fit now stops at the scale where titles and shapes are legible and scrolls."""
    from widgets.graph.palette import READABLE_PX

    data = _tutorial_mlp_json()
    view.resize(*size)
    _show(qtbot, view, data, key=("mlp", size))
    assert view.expanded_groups()  # small: shown expanded
    view.fit_to_view()
    assert view.label_mode() == "text" and view.title_px() >= READABLE_PX, view.current_scale()
    assert view.current_scale() >= view._palette.sub_scale  # noqa: SLF001 - the shapes are drawn too
    top = view.mapToScene(view.viewport().rect()).boundingRect()
    assert top.top() <= view.sceneRect().top() + 1  # the graph's top in view (scroll for the rest)


def test_zoomed_out_every_node_is_named_at_a_legible_size(qtbot, view):
    """Below the scale where a box's own text is legible the diagram writes each node's name in screen-size
    text (simplified boxes, Model Explorer's level of detail), never an empty box."""
    from widgets.graph.palette import READABLE_PX

    data = _tutorial_mlp_json()
    _show(qtbot, view, data, key=("mlp-lod", "f"))
    seen_modes = set()
    for scale in (0.5, 0.3):
        view.resetTransform()
        view.scale(scale, scale)
        view.centerOn(view.sceneRect().center())
        seen_modes.add(view.label_mode())
        assert view.label_mode() != "text"
        labels = view.screen_labels()
        named = {t for _r, t, px in labels if px >= READABLE_PX}
        titles = {view._prepared.titles[i] for i in range(len(view.node_ids()))}  # noqa: SLF001
        unnamed = {t for t in titles if not any(n == t or (n.endswith("\u2026") and t.startswith(n[:-1]))
                                                for n in named)}
        assert not unnamed, (scale, unnamed, named)
        assert all(px >= READABLE_PX for _r, _t, px in labels)
        view.grab()  # paints without error
    assert seen_modes == {"labels", "overview"}


def test_a_layout_task_never_recolours_the_layout_being_painted(qtbot, view, decoder_json):
    """A cached layout recoloured for another change set is the one the view may be painting: the task (a
    worker thread) leaves its box paths alone and the view recolours it on the GUI thread (the task used to
    empty them between the view making and painting them: 'NoneType' object is not subscriptable in paint)."""
    import copy

    from widgets.graph.worker import LayoutTask

    after = copy.deepcopy(decoder_json)
    next(n for n in after["nodes"] if n["id"] == "softmax3")["op"] = "relax.nn.log_softmax"
    _show(qtbot, view, after, key=("a", "f"), expanded=LAYERS)
    view.grab()  # painted: the visible detail tiles have their box paths
    shown = view._prepared  # noqa: SLF001
    painted = [t for band in shown.bands for t in band.tiles.values() if t.boxes is not None]
    assert painted
    pal = view._palette  # noqa: SLF001
    task = LayoutTask(view._generation, view._latest, after, frozenset(), decoder_json, LAYERS,  # noqa: SLF001
                      pal.char_width, pal.node_height, view._signals, shown, ("a", "f"))  # noqa: SLF001
    result = task._prepared()  # noqa: SLF001 - the worker thread's part, run here
    assert result is shown and all(t.boxes is not None for t in painted)  # not touched off the GUI thread
    assert view.highlighted() == frozenset()
    view._on_prepared(result)  # noqa: SLF001 - what the task's done signal calls on the GUI thread
    assert view.highlighted() == frozenset({"m:layers.3"})
    assert view.node_fill("m:layers.3") != view.node_fill("m:layers.2")
    view.grab()  # and it paints
