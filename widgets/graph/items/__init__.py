"""The graph's scene items: :class:`~widgets.graph.items.diagram.DiagramItem` (the whole diagram, one item
painting from the tile index) and the painters it calls, one per element -- frames (:mod:`.frames`), edges
and arrowheads (:mod:`.edges`), node boxes, texts and the heat overlay (:mod:`.nodes`; stubs are pill-shaped
node boxes), group labels far out (:mod:`.labels`). Every painter reads the
:class:`~widgets.graph.palette.GraphPalette` it is given, never the view."""
