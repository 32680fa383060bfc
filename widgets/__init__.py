"""Reusable Qt views (graph, palette, pipeline list, diff, property editor); never imports ``app``."""
