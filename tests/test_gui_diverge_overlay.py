"""The "where values diverge" colouring of the graph (issue 21): the view's overlay (exactly the nodes given
are coloured, "no counterpart" is grey and not an error colour, the first diverging node is marked, Esc and
another graph clear it, light and dark) and Run ▸ Where Values Diverge… wired to it on the fake engine with a
hand-made ``diverge`` reply (coloured, cleared by the box, Esc, another step and any edit)."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtGui import QColor, QImage, QPainter, QPalette  # noqa: E402

from pipeline_model import ir_graph as ig  # noqa: E402
from tests.conftest import qt_wait  # noqa: E402
from widgets.graph.errors import NodeError, first_colour  # noqa: E402
from widgets.graph_view import GraphView  # noqa: E402


def _hue_kind(colour: QColor) -> str:
    """'green', 'red', 'grey' or 'other' of a fill (hue and saturation)."""
    h, s = colour.hsvHue(), colour.hsvSaturation()
    if s < 40:
        return "grey"
    if 70 <= h <= 160:
        return "green"
    if h <= 12 or h >= 340:
        return "red"
    return "other"


@pytest.fixture
def view(qtbot):
    v = GraphView()
    qtbot.addWidget(v)
    v.resize(900, 700)
    v.show()
    qtbot.waitExposed(v)
    return v


def _show(qtbot, view, data, **kwargs):
    with qtbot.waitSignal(view.graph_shown, timeout=20000):
        view.set_graph(data, **kwargs)


def _render(view) -> QImage:
    img = QImage(view.viewport().size(), QImage.Format.Format_ARGB32)
    img.fill(0)
    painter = QPainter(img)
    view.render(painter)
    painter.end()
    return img


def _errors(ops: list[str]) -> dict[str, NodeError]:
    return {ops[0]: NodeError("ok", 1e-9, "tiny"), ops[1]: NodeError("ok", 2e-6, "near"),
            ops[2]: NodeError("no counterpart", None, "new value"), ops[3]: NodeError("diverges", 3e-5, "bad"),
            ops[4]: NodeError("diverges", 50.0, "worse")}


def test_overlay_colours_exactly_the_given_nodes_and_marks_the_first(qtbot, view):
    data = ig.synthetic_graph_json(120)
    ops = [n["id"] for n in data["nodes"] if n["kind"] == "binding"]
    _show(qtbot, view, data, highlight=frozenset(ops[6:8]), key=("k", "main"))
    before = {n: view.node_fill(n) for n in view.node_ids()}
    changed_fill = before[ops[6]]
    view.set_node_errors(_errors(ops), ops[3], 1e-5, title="Step 2")
    coloured = {n for n in view.node_ids() if view.node_error_mark(n) is not None}
    assert coloured == set(ops[:5])
    assert [_hue_kind(view.node_fill(n)) for n in ops[:5]] == ["green", "other", "grey", "other", "red"]
    # "no counterpart" is not on the error scale: far from every error colour, and the ok/diverges ones differ
    grey = view.node_fill(ops[2])
    for n in (ops[0], ops[1], ops[3], ops[4]):
        c = view.node_fill(n)
        assert abs(c.hsvSaturation() - grey.hsvSaturation()) > 40, (n, c.name(), grey.name())
    assert view.node_fill(ops[4]) != view.node_fill(ops[3])
    # nodes without a value keep their look; a changed one without a value loses the amber (an error colour)
    for n in view.node_ids():
        if n not in coloured and n not in ops[6:8]:
            assert view.node_fill(n) == before[n], n
    assert view.node_fill(ops[6]) != changed_fill and _hue_kind(view.node_fill(ops[6])) != "other"
    # the first diverging node: revealed and selected, ringed in the first colour, its tooltip says so
    assert view.first_error_node() == ops[3] and view.selected_node() == ops[3]
    assert "first diverging node" in view.tooltip_html(ops[3]) and "bad" in view.tooltip_html(ops[3])
    assert "first diverging" not in view.tooltip_html(ops[4])
    img = _render(view)
    box = view.mapFromScene(view.node_rect(ops[3])).boundingRect()
    ring = first_colour(view.palette().color(QPalette.ColorRole.Base))
    column = [QColor(img.pixel(box.center().x(), y)) for y in range(box.bottom(), box.bottom() + 8)]
    assert any(abs(c.red() - ring.red()) + abs(c.green() - ring.green()) + abs(c.blue() - ring.blue()) < 40
               for c in column), [c.name() for c in column]
    inside = QColor(img.pixel(box.left() + 4, box.center().y()))
    want = view.node_fill(ops[3])
    assert abs(inside.red() - want.red()) + abs(inside.green() - want.green()) + abs(inside.blue() - want.blue()) < 16
    legend = view.error_legend()
    assert legend.isVisible() and legend.texts()["title"] == "Step 2"
    assert legend.texts()["summary"].startswith("2 diverge") and "1 no counterpart" in legend.texts()["summary"]
    assert view.overview().marks()  # the diverging nodes on the minimap


def test_overlay_clears_on_escape_button_and_another_graph(qtbot, view):
    data = ig.synthetic_graph_json(120)
    ops = [n["id"] for n in data["nodes"] if n["kind"] == "binding"]
    _show(qtbot, view, data, key=("k", "main"))
    view.set_node_errors(_errors(ops), ops[3], 1e-5)
    view.setFocus()
    with qtbot.waitSignal(view.node_errors_cleared, timeout=2000):
        qtbot.keyClick(view, Qt.Key.Key_Escape)
    assert not view.node_errors() and view.node_error_mark(ops[3]) is None and not view.error_legend().isVisible()
    assert view.node_fill(ops[3]) == view.node_fill(ops[10])  # plain bindings again
    view.set_node_errors(_errors(ops), ops[3], 1e-5)
    with qtbot.waitSignal(view.node_errors_cleared, timeout=2000):
        view.error_legend().clear_button.click()
    assert not view.node_errors()
    # the same graph laid out again (an expansion) keeps the colours; another graph (key) drops them
    view.set_node_errors(_errors(ops), ops[3], 1e-5, reveal=False)
    with qtbot.waitSignal(view.graph_shown, timeout=20000):
        view.set_expanded(view.expanded_groups())
    assert view.node_error_mark(ops[3]) is not None
    other = ig.synthetic_graph_json(120, seed=3)
    with qtbot.waitSignal(view.node_errors_cleared, timeout=2000):
        _show(qtbot, view, other, key=("other", "main"))
    assert not view.node_errors() and not view.error_legend().isVisible()


def test_overlay_reads_in_light_and_dark(qtbot, view):
    data = ig.synthetic_graph_json(60)
    ops = [n["id"] for n in data["nodes"] if n["kind"] == "binding"]
    _show(qtbot, view, data, key=("k", "main"))
    view.set_node_errors(_errors(ops), ops[3], 1e-5)
    light = {n: view.node_fill(n) for n in ops[:5]}
    assert all(c.lightness() > 140 for c in light.values()), {n: c.name() for n, c in light.items()}
    pal = view.palette()
    pal.setColor(QPalette.ColorRole.Base, QColor("#1e1e1e"))
    pal.setColor(QPalette.ColorRole.Text, QColor("#eeeeee"))
    view.setPalette(pal)
    dark = {n: view.node_fill(n) for n in ops[:5]}
    assert all(c.lightness() < 120 for c in dark.values()), {n: c.name() for n, c in dark.items()}
    assert [_hue_kind(dark[n]) for n in (ops[0], ops[2], ops[4])] == ["green", "grey", "red"]


def _layers_graph(n: int) -> dict:
    """x -> n0 -> n1 ... with a weight per binding named like a model's layer (module group layers.<i>.proj)."""
    from pipeline_model.ir_graph import GRAPH_FORMAT, GRAPH_VERSION

    nodes = [{"id": "x", "kind": "param", "name": "x", "type_text": "R.Tensor((1, 10), \"float32\")"}]
    edges, prev = [], "x"
    for i in range(n):
        weight = f"layers.{i}.proj.weight"
        nodes += [{"id": weight, "kind": "param", "name": weight, "type_text": "R.Tensor((10, 10), \"float32\")"},
                  {"id": f"n{i}", "kind": "binding", "name": f"lv{i}", "op": "relax.matmul",
                   "type_text": "R.Tensor((1, 10), \"float32\")"}]
        edges += [{"source": prev, "target": f"n{i}", "index": 0}, {"source": weight, "target": f"n{i}", "index": 1}]
        prev = f"n{i}"
    return {"format": GRAPH_FORMAT, "version": GRAPH_VERSION, "nodes": nodes, "edges": edges}


def test_a_collapsed_group_shows_its_worst_member_and_the_first_is_revealed(qtbot, view):
    data = _layers_graph(6)
    _show(qtbot, view, data, key=("layers", "main"), expanded=frozenset())
    group = view.shown_node("n3")
    assert group is not None and group != "n3", view.node_ids()
    with qtbot.waitSignal(view.graph_shown, timeout=20000):  # the first node's group is expanded
        view.set_node_errors({"n3": NodeError("diverges", 0.5, "bad"), "n1": NodeError("ok", 1e-8, "fine")}, "n3", 1e-5)
    assert qt_wait(lambda: view.selected_node() == "n3", 5000)
    assert view.node_error_mark("n3").status == "diverges"
    view.set_node_errors({"n3": NodeError("diverges", 0.5, "bad"), "n1": NodeError("ok", 1e-8, "fine")}, None,
                         1e-5, reveal=False)
    with qtbot.waitSignal(view.graph_shown, timeout=20000):
        view.set_expanded({"m:layers"})  # each layer one box (collapsed whole, the layers are one box)
    mark = view.node_error_mark(view.shown_node("n3"))
    assert mark is not None and mark.status == "diverges" and "holds a diverging node" in view.tooltip_html(
        view.shown_node("n3"))
    assert view.node_error_mark(view.shown_node("n1")).status == "ok"


# ---- the app: Run ▸ Where Values Diverge… on the fake engine ------------------------------------------


def _reply(step: int) -> dict:
    """A ``diverge`` reply for the fake engine's graph (nodes n0, n1, ... one per step) as the engine answers,
    with rows the graph has no node for (a null id, a value inside a called function, unknown keys)."""
    return {"step": step, "pass_id": "relax.FuseTIR", "function": "main", "first_divergent": "lv1", "rtol": 1e-5,
            "atol": 1e-5, "first_inside": "fused_1/add",
            "nodes": [{"name": "lv0", "node_id": "n0", "callee": "fake_prim_0", "shape": [1, 10], "status": "ok",
                       "max_abs_over_ref": 1e-9, "via": "vm"},
                      {"name": "lv1", "node_id": "n1", "callee": "fake_prim_1", "shape": [1, 10], "status": "diverges",
                       "max_abs_over_ref": 0.25, "first": True, "key": "lv1"},
                      {"name": "add", "node_id": None, "parent": "lv1", "shape": [1, 10], "status": "diverges",
                       "max_abs_over_ref": 0.25, "first_inside": True},
                      {"name": "lv2", "node_id": "n2", "callee": "fake_prim_2", "shape": [1, 10],
                       "status": "no counterpart"},
                      {"name": "gone", "node_id": None, "shape": [3], "status": "no counterpart"}]}


@pytest.fixture
def diverging(fake_studio, monkeypatch):
    """The fake studio whose engine answers ``diverge`` with :func:`_reply`; a run of three steps."""
    win = fake_studio
    client = win.fake_client
    real = client.request

    def request(cmd, args=None, on_event=None):
        if cmd == "diverge":
            client.calls.append((cmd, args))
            return _reply(int(args["step_index"]) + 1)
        return real(cmd, args, on_event)

    monkeypatch.setattr(client, "request", request)
    win.files.new_pipeline(force=True)
    for pid in ("relax.LegalizeOps", "relax.FuseOps", "relax.FuseTIR"):
        win.editor.add_pass(pid)
    assert qt_wait(lambda: all(win.step_model.result(s.uid) is not None for s in win.ctrl.doc.steps), 10_000)
    return win


def _select(win, uid: str) -> None:
    win.pipeline_view.select_uids([uid])
    key = win.step_model.result(uid).snapshot_key
    gv = win.graph_view
    assert qt_wait(lambda: not gv.is_busy() and win.graphs.shown_graph() is not None
                   and win.graphs.shown_graph()[0] == key and gv._key is not None and gv._key[0] == key, 10_000)


def _diverge(win) -> dict:
    replies: list = []
    win.diverger.finished.connect(replies.append)
    win.diverger.failed.connect(replies.append)
    try:
        assert win.diverger.show_dialog()
        assert qt_wait(lambda: bool(replies), 10_000)
    finally:
        win.diverger.finished.disconnect(replies.append)
        win.diverger.failed.disconnect(replies.append)
    assert isinstance(replies[0], dict), replies[0]
    return replies[0]


def test_where_values_diverge_colours_the_step_graph(diverging, qtbot):
    win = diverging
    gv = win.graph_view
    uids = [s.uid for s in win.ctrl.doc.steps]
    _select(win, uids[2])
    plain = gv.node_fill("x")
    _diverge(win)
    dialog = win.diverger.dialog
    assert qt_wait(lambda: bool(gv.node_errors()), 5000)
    assert set(gv.node_errors()) == {"n0", "n1", "n2"}  # the null id and the inner value are table rows only
    assert dialog.table.rowCount() == 5 and "lv1 ▸ add" in [dialog.table.item(r, 0).text() for r in range(5)]
    assert gv.first_error_node() == "n1" and gv.selected_node() == "n1"
    assert [_hue_kind(gv.node_fill(n)) for n in ("n0", "n1", "n2")] == ["green", "red", "grey"]
    assert gv.node_error_mark("n2").status == "no counterpart" and gv.node_fill("x") == plain
    tip = gv.tooltip_html("n1")
    assert "0.25" in tip and "[1, 10]" in tip and "fused_1/add" in tip
    assert gv.error_legend().isVisible() and "Step 3" in gv.error_legend().texts()["title"]
    # the box: off clears, on shows again
    box = dialog.show_on_graph
    box.setChecked(False)
    assert not gv.node_errors() and not gv.error_legend().isVisible()
    box.setChecked(True)
    assert gv.first_error_node() == "n1"
    # Esc in the graph clears it and unticks the box
    gv.setFocus()
    qtbot.keyClick(gv, Qt.Key.Key_Escape)
    assert not gv.node_errors() and not box.isChecked()
    box.setChecked(True)
    assert gv.node_errors()
    # another step: cleared, never on that step's graph; back and ticked: shown again
    _select(win, uids[1])
    assert not gv.node_errors() and not box.isChecked()
    _select(win, uids[2])
    assert not gv.node_errors()
    box.setChecked(True)
    assert qt_wait(lambda: bool(gv.node_errors()), 5000)
    # any edit of the pipeline: cleared, and the answer is of the pipeline as it was
    win.editor.add_pass("relax.FoldConstant")
    assert not gv.node_errors() and not gv.error_legend().isVisible()
    assert not box.isEnabled() and "changed since" in dialog.status.text()
    assert qt_wait(lambda: all(win.step_model.result(s.uid) is not None for s in win.ctrl.doc.steps), 10_000)
    _select(win, uids[2])
    qt_wait(lambda: False, 300)
    assert not gv.node_errors()
    dialog.close()


def test_diverge_of_a_step_not_shown_colours_it_when_it_is(diverging):
    win = diverging
    gv = win.graph_view
    uids = [s.uid for s in win.ctrl.doc.steps]
    _select(win, uids[2])
    _diverge(win)
    assert qt_wait(lambda: bool(gv.node_errors()), 5000)
    # the answer arrives while another step is selected: that step's graph is left alone
    win.pipeline_view.select_uids([uids[2]])
    replies: list = []
    win.diverger.finished.connect(replies.append)
    assert win.diverger.show_dialog()
    _select(win, uids[0])
    assert qt_wait(lambda: bool(replies), 10_000)
    qt_wait(lambda: False, 200)
    assert not gv.node_errors()
    _select(win, uids[2])  # the box is still ticked: the step's graph is coloured when it is shown
    assert qt_wait(lambda: gv.first_error_node() == "n1", 5000)
    win.diverger.finished.disconnect(replies.append)
    win.diverger.dialog.close()


@pytest.mark.e2e
def test_real_diverge_colours_the_rewritten_binding_first(studio, tmp_path):
    """On the real engine: the wrong step's graph is coloured, the rewritten ``add`` (now a subtract) ringed as
    the first diverging node, what comes before it ok."""
    from tests.debug_fixtures import injected_pipeline

    win = studio
    gv = win.graph_view
    path, wrong = injected_pipeline(str(tmp_path), 9, 72, "relax")
    win.ctrl.undo_stack.setClean()
    assert win.files.open_pipeline(path, remember=False)
    assert qt_wait(lambda: all(win.step_model.result(s.uid) is not None for s in win.ctrl.doc.steps)
                   and not win.act_stop.isEnabled(), 240_000)
    uid = win.ctrl.doc.steps[wrong - 1].uid
    win.pipeline_view.select_uids([uid])
    key = win.step_model.result(uid).snapshot_key
    assert qt_wait(lambda: not gv.is_busy() and win.graphs.shown_graph() is not None
                   and win.graphs.shown_graph()[0] == key, 60_000)
    replies: list = []
    win.diverger.finished.connect(replies.append)
    win.diverger.failed.connect(replies.append)
    assert win.diverger.show_dialog()
    assert qt_wait(lambda: bool(replies), 240_000)
    assert isinstance(replies[0], dict), replies[0]
    assert qt_wait(lambda: gv.first_error_node() is not None and not gv.is_busy(), 30_000)
    first = gv.first_error_node()
    node = next(n for n in gv.graph_json()["nodes"] if n["id"] == first)
    assert node["name"] == "add" and node.get("op") == "relax.subtract", node
    assert gv.node_error_mark(first).status == "diverges" and gv.selected_node() == first
    rows = {r["node_id"]: r["status"] for r in replies[0]["nodes"] if r.get("node_id")}
    assert {n: e.status for n, e in gv.node_errors().items()} == rows
    win.diverger.dialog.close()
