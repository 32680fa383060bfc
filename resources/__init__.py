"""Relax Pipeline Studio's bundled files (models, pipelines, custom passes, patterns, styles,
translations): a package so that they ship as package data and are found through the package
(``pipeline_model.resources.resource_path``), in a checkout and in an installed copy alike."""
