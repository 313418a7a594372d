"""The differential fuzz (tests/fuzz.py) over a fixed range of seeds per
family: more than 10,000 cases per run in all (1200 per family, nine
families).  A failure names its seeds; each replays alone with `python tests/fuzz.py FAMILY SEED`.

MATCHFLOW_FUZZ_CASES sets the cases per family (default below) and
MATCHFLOW_FUZZ_START the first seed, to explore beyond the fixed range.
"""
from __future__ import annotations

import os

import pytest

import fuzz

CASES = int(os.environ.get("MATCHFLOW_FUZZ_CASES", "1200"))
START = int(os.environ.get("MATCHFLOW_FUZZ_START", "0"))


@pytest.mark.parametrize("family", list(fuzz.FAMILIES))
def test_differential(family):
    failures = fuzz.run(family, range(START, START + CASES))
    if failures:
        seeds = ", ".join(str(seed) for seed, _ in failures[:20])
        first_seed, first_trace = failures[0]
        pytest.fail(f"{len(failures)} of {CASES} cases failed (seeds {seeds}); replay one with "
                    f"`python tests/fuzz.py {family} {first_seed}`.  First failure:\n"
                    f"{first_trace}", pytrace=False)
