"""The examples in the public docstrings run and print what they say."""
from __future__ import annotations

import doctest
import inspect

import pytest

import matchflow
from matchflow import (_batched, _device, _flow, _lsap, _matching, _preprocess,
                       _sparse_assignment, _weighted_transversal, dask_batches, distributed, io)

MODULES = [matchflow, _matching, _lsap, _flow, _preprocess, _sparse_assignment,
           _weighted_transversal, _batched, _device, distributed, io]
# Modules whose functions' examples need a cluster or a job (marked +SKIP):
# their examples are shown, not run.
SHOWN_ONLY = [dask_batches]


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0, f"{module.__name__} has no examples"
    assert result.failed == 0


def _public_functions():
    for module in MODULES + SHOWN_ONLY:
        names = (getattr(module, "__all__", None)
                 or [n for n in dir(module) if not n.startswith("_")])
        for name in names:
            obj = getattr(module, name)
            if not inspect.isfunction(obj):
                continue
            if module is matchflow or obj.__module__ == module.__name__:
                if module is not matchflow and module.__name__.split(".")[-1].startswith("_"):
                    if name not in matchflow.__all__:
                        continue  # a private module's helpers
                yield f"{module.__name__}.{name}", obj


@pytest.mark.parametrize("name,function", list(_public_functions()), ids=lambda x: x
                         if isinstance(x, str) else "")
def test_every_public_function_has_an_example(name, function):
    assert ">>>" in (inspect.getdoc(function) or ""), f"{name} has no example"


def test_the_docs_pages_examples():
    from pathlib import Path
    docs = Path(__file__).resolve().parents[1] / "docs"  # beside tests/, in the repo and sdist
    attempted = 0
    for page in sorted(docs.glob("*.rst")):
        result = doctest.testfile(str(page), module_relative=False,
                                  optionflags=doctest.NORMALIZE_WHITESPACE)
        assert result.failed == 0, page.name
        attempted += result.attempted
    assert attempted > 0
