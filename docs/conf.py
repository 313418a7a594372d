"""Sphinx configuration: the API reference from the docstrings (numpydoc),
built with warnings as errors by .ci/run."""
import matchflow

project = "matchflow"
release = version = matchflow.__version__
extensions = ["sphinx.ext.autodoc", "sphinx.ext.intersphinx", "numpydoc"]
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
autodoc_typehints = "none"
exclude_patterns = ["_build"]
html_theme = "alabaster"
nitpicky = False
