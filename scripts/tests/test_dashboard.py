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


# ---- the embedded data


def test_the_embedded_json_cannot_close_its_script_and_reads_back_the_same():
    """No <, >, & or line separator in the page's JSON (as the module promises), and JSON.parse gets the
    data back."""
    data = {"b": "</script><!--x-->&\u2028\u2029", "a": 1}
    text = dashboard.embed_json(data)
    assert not {"<", ">", "&", "\u2028", "\u2029"} & set(text)
    assert json.loads(text) == data
    with pytest.raises(ValueError):
        dashboard.embed_json({"x": float("nan")})  # JSON.parse refuses NaN: the page would be blank


def test_numbers_are_rounded_to_six_places():
    assert dashboard._r(1.23456789) == 1.234568


def test_the_page_names_the_store_as_text_and_the_threshold_in_percent():
    """A store named <b>..</b> is shown as text; a threshold of 0.10 reads "10 %"."""
    entries = [store_line(A, "2026-11-01T00:00:00Z")]
    text = dashboard.render(history.analyse(entries, store_name="<b>s</b>.jsonl"))
    assert "<code>&lt;b&gt;s&lt;/b&gt;.jsonl</code>" in text and "<b>s</b>" not in text
    assert "A <b>step</b> is a change beyond 10 % that" in text


# ---- what a chart and the summary show


def test_latest_is_the_last_point_against_the_one_before():
    """The latest table compares the newest commit with the one before it, not the first."""
    entries = [store_line(c, f"2026-11-0{i + 1}T00:00:00Z", ms=ms) for i, (c, ms) in enumerate(((A, 10.0), (B, 12.0),
                                                                                                 (C, 13.0)))]
    [row] = page(entries)["latest"][0]["rows"]
    assert (row["commit"], row["prev"], row["ms"], row["prev_ms"]) == (C, B, 13.0, 12.0)
    assert row["change"] == pytest.approx(13.0 / 12.0 - 1, abs=1e-6)


def test_a_point_spans_its_fastest_to_its_slowest_pass_and_a_step_its_base():
    """lo/hi: the fastest and slowest pass; a step's base_ms: the median at its base commit."""
    entries = [store_line(A, "2026-11-01T00:00:00Z", ms=10.0, spread=(0.9, 1.0, 1.1, 0.95, 1.05)),
               store_line(B, "2026-11-02T00:00:00Z", ms=13.0)]
    data = page(entries)
    p = data["charts"][0]["series"][0]["points"][0]
    assert (p["lo"], p["hi"]) == (9.0, 11.0)
    [step] = data["steps"]
    assert (step["base"], step["base_ms"], step["ms"]) == (A, 10.0, 13.0)
    assert step["confidence"] is not None and 0.9 < step["confidence"] <= 1.0
    assert "2 point(s) measured on a busy machine" not in data["notes"] and " 0 point(s)" in data["notes"]


def test_a_step_of_medians_only_has_no_confidence():
    """Without passes there is no test: the page says "medians only", not 0 %."""
    entries = [store_line(A, "2026-11-01T00:00:00Z", ms=10.0, spread=()),
               store_line(B, "2026-11-02T00:00:00Z", ms=13.0, spread=())]
    [step] = page(entries)["steps"]
    assert step["confidence"] is None


def test_cpu_lines_of_several_threads_are_dashed_gpu_lines_never():
    entries = [store_line(A, "2026-11-01T00:00:00Z", threads=2),
               store_line(A, "2026-11-01T00:00:00Z", backend="cuda", variant="naive", threads=2, on_gpu=True,
                          gpu="NVIDIA H200")]
    dashed = {c["backend"]: c["series"][0]["dashed"] for c in page(entries)["charts"]}
    assert dashed == {"serial": True, "cuda": False}


def test_charts_backends_commits_and_lines_are_in_a_fixed_order():
    """Backends in the suite's order, commits in git (here date) order, lines by variant then threads."""
    entries = [store_line(B, "2026-11-01T00:00:00Z", backend=b, variant=v, threads=t)
               for b, v, t in (("serial", "z", 1), ("openmp", "x", 1), ("serial", "a", 10), ("serial", "a", 2))]
    entries.append(store_line(A, "2026-11-02T00:00:00Z", variant="z"))
    data = page(entries)
    assert data["backends"] == ["serial", "openmp"]
    assert [c["backend"] for c in data["charts"]] == ["serial", "openmp"]
    serial = data["charts"][0]
    assert serial["commits"] == [B, A]
    assert [s["name"] for s in serial["series"]] == ["serial:a, 2 thr", "serial:a, 10 thr", "serial:z, 1 thr"]


def test_a_failure_message_is_cut_to_300_characters():
    import dataclasses
    a = history.analyse([store_line(A, "2026-11-01T00:00:00Z")])
    a = dataclasses.replace(a, failures=[(B, "2026-11-02T00:00:00Z", "build", "e" * 1000)])
    assert page_of(a)["failures"] == [{"commit": B, "status": "build", "error": "e" * 300}]


def page_of(a):
    return dashboard.page_data(a)


# ---- the command that confirms a step


def _step(**series):
    from types import SimpleNamespace
    s = dict(on_gpu=False, peer=False, backend="serial", variant="naive", images=50, threads=1)
    s.update(series)
    return SimpleNamespace(evidence="unconfirmed", series=SimpleNamespace(**s),
                           point=SimpleNamespace(base=A, commit=B))


def test_the_confirm_command_quotes_names_from_the_store():
    """A reader pastes it into a shell: a variant named x;rm -rf ~ stays one quoted word."""
    cmd = dashboard._confirm_command(_step(variant="x;rm -rf ~"))
    assert cmd.startswith(f"scripts/history backfill {A[:10]} {B[:10]} --again --runs ")
    assert "--backends 'serial:x;rm -rf ~' --images 50 --threads 1" in cmd


def test_a_gpu_or_peer_step_gets_no_confirm_command():
    """A GPU step needs both builds on one GPU machine: no backfill line is offered."""
    assert dashboard._confirm_command(_step(on_gpu=True)) == ""
    assert dashboard._confirm_command(_step(peer=True)) == ""


def test_a_name_with_an_event_handler_is_text_in_the_summary(tmp_path):
    """The summary's cells are set as text: <img onerror=...> in a machine name is shown, never an element
    (innerHTML would run it; a <script> alone would not run, which is why the other test missed it)."""
    from test_history import dump_dom
    evil = "<img src=x onerror=\"document.title='pwned'\">"
    entries = [store_line(A, "2026-11-01T00:00:00Z", ms=10.0, cpu=evil, label=evil, subject=evil),
               store_line(B, "2026-11-02T00:00:00Z", ms=15.0, cpu=evil, label=evil, subject=evil)]
    out = tmp_path / "d.html"
    out.write_text(dashboard.render(history.analyse(entries)))
    dom = dump_dom(out.as_uri())
    assert 'data-ready="1"' in dom, dom[-3000:]
    assert "<img" not in dom and "pwned" not in re.search(r"<title>([^<]*)</title>", dom).group(1)
    [row] = re.findall(r'<tr class="step-row slower".*?</tr>', dom, re.S)
    shown = "&lt;img src=x onerror=\"document.title='pwned'\"&gt;"
    assert f"<td>{shown}, 2 cores ({shown})</td>" in row, row
