"""The examples in the public docstrings run and print what they say."""
from __future__ import annotations

import doctest

import pytest

import matchflow
from matchflow import (_flow, _lsap, _matching, _preprocess, _sparse_assignment,
                       _weighted_transversal, io)

MODULES = [matchflow, _matching, _lsap, _flow, _preprocess, _sparse_assignment,
           _weighted_transversal, io]


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0, f"{module.__name__} has no examples"
    assert result.failed == 0
