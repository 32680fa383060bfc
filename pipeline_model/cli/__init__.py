"""Headless sub-commands of ``main.py`` (one module per sub-command)."""
