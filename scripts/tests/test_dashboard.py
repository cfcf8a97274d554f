"""Tests of suitereport/dashboard.py without a browser (test_history.py opens the page in one): the data
the page embeds, how it is made safe inside <script>, and the numbers and commands it shows. Each test
pins a behaviour that a mutation of dashboard.py changed without any other test noticing."""

import json
import re
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(SCRIPTS))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from suitereport import dashboard, history  # noqa: E402
from test_history import store_line  # noqa: E402

A, B, C = "a" * 40, "b" * 40, "c" * 40


def page(entries, **kw):
    return dashboard.page_data(history.analyse(entries, **kw))


def test_integer_medians_are_shown_not_zero():
    """A store line's median_ms of 10 (an int, no samples) is 10 ms on the page, not 0."""
    entries = [store_line(A, "2026-11-01T00:00:00Z", ms=10, spread=()),
               store_line(B, "2026-11-02T00:00:00Z", ms=12, spread=())]
    data = page(entries)
    [row] = data["latest"][0]["rows"]
    assert (row["ms"], row["prev_ms"]) == (12.0, 10.0)
    assert [(p["ms"], p["lo"], p["hi"]) for p in data["charts"][0]["series"][0]["points"]] == \
        [(10.0, 10.0, 10.0), (12.0, 12.0, 12.0)]
    assert dashboard._r(True) == 0.0 and dashboard._r(float("nan")) == 0.0
