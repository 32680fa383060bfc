"""The screenshot tour: developer tools that drive the real main window under an X server (Xvfb) and save the
PNGs of ``docs/screenshots/``. Run from the repository root as modules, e.g. ``.venv/bin/python -m
scripts.screenshots.tour docs/screenshots`` (each module's docstring names its shots and options). They may
import ``app``, ``widgets`` and ``pipeline_model``; nothing in those imports them."""
