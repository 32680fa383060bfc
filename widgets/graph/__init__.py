"""The parts of the graph view (:class:`widgets.graph_view.GraphView`), one concern per module, after
orange-canvas-core's ``canvas/`` (scene, items, view):

* :mod:`.adapter` -- the graph JSON as the minimal graph the layout reads, node categories;
* :mod:`.tiles` -- the spatial index the diagram paints from (tiles of merged paths, level of detail);
* :mod:`.prepare` -- everything heavier than painting (view graph, layout, tiles, minimap image), run by
  :mod:`.worker` on a ``QThreadPool`` thread;
* :mod:`.palette` -- the colours, pens, brushes and fonts the items paint with (one object, read by all);
* :mod:`.items` -- the diagram item and its painters (frames, edges, node boxes and texts, group labels);
* :mod:`.scene` -- the scene: the diagram, the selection outline, the message;
* :mod:`.minimap` -- the overview in the view's corner (off by default: it would cover nodes);
* :mod:`.legend` -- the heat overlay's legend (its own colour scale beside the "changed" amber);
* :mod:`.anchor` -- keeping a clicked group in view across an expand/collapse.

The view widget itself stays ``widgets/graph_view.py`` (its user-visible texts are translated there).
"""
