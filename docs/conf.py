"""Sphinx configuration: the API reference from the docstrings (numpydoc),
built with warnings as errors by .ci/run."""
import matchflow

project = "matchflow"
release = version = matchflow.__version__
extensions = ["sphinx.ext.autodoc", "numpydoc"]
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
# The docstrings' Parameters sections give every type; hints in the
# signatures would say them twice.
autodoc_typehints = "none"
exclude_patterns = ["_build"]
html_theme = "alabaster"
