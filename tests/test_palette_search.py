"""Palette search over pattern tables, bundled custom passes and pass docs (issue 18: "cublas" finds both
the cuBLAS pattern table and the tutorial's cuBLAS custom pass)."""

from __future__ import annotations

from pipeline_model.catalogue import Catalogue


def test_cublas_finds_the_pattern_table_and_the_custom_pass(engine, qtbot):
    from widgets.pass_palette import PassPalette, bundled_custom_passes

    assert ("cublas_dispatch.py", "The cuBLAS dispatch pass of TVM's \"Customize Optimization\" tutorial, "
            "as a custom step.") in bundled_custom_passes()
    palette = PassPalette()
    qtbot.addWidget(palette)
    palette.set_catalogue(Catalogue.from_json(engine.catalogue()))
    palette.search.setText("cublas")
    found = palette.visible_pass_ids()
    assert "relax.FuseOpsByPattern" in found  # its table_prefix choices hold the cublas table
    assert "custom.python" in found  # the bundled cublas_dispatch.py
    assert "relax.LegalizeOps" not in found
    assert "cublas_dispatch.py" in palette.doc_html("custom.python")
    palette.search.setText("cublas dispatch")
    assert palette.visible_pass_ids() == ["custom.python"]
