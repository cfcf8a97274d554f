"""Tests of suitereport/history_charts.py: what the PNG charts of `scripts/history plot` (and the README's
overviews) show, read from their matplotlib figures (save() is replaced by one that hands the figure back),
on series built in the test. Each test pins a behaviour that a mutation of history_charts.py changed without
any other test noticing, or a defect it had."""

import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(SCRIPTS))

from suitereport import history, history_charts, palette  # noqa: E402
from chart_figures import kept_figures  # noqa: E402
from matplotlib.colors import to_hex  # noqa: E402

# commits in git order, oldest first
COMMITS = [f"{i:x}" * 40 for i in range(10, 16)]
A, B, C, D, E, F = COMMITS


def series(*points, backend="serial", variant="naive", threads=1, on_gpu=False, machine="M", images=50):
    """A series of points (commit, ms) or (commit, ms, {Point fields})."""
    s = history.Series(machine=machine, benchmark=f"{backend}:{variant}/images:{images}/threads:{threads}",
                       backend=backend, on_gpu=on_gpu, variant=variant, images=images, threads=threads)
    s.points = [history.Point(p[0], "", p[1], [], True, **(p[2] if len(p) > 2 else {})) for p in points]
    return s


@pytest.fixture
def drawn(monkeypatch):
    yield from kept_figures(monkeypatch, history_charts)


def chart(*series_list, order=COMMITS, key=("M", "serial", 50)):
    return history_charts.group_chart(key, list(series_list), order, "c.png").axes[0]


def legend_texts(ax):
    return [t.get_text() for t in ax.get_legend().get_texts()]


# ---- names and groups


@pytest.mark.parametrize("text, slug", [("AMD EPYC, 2 cores (test)", "AMD-EPYC-2-cores-test"),
                                        ("/a//b/", "a-b"), ("v1.2_x", "v1.2_x")])
def test_a_slug_keeps_letters_digits_dot_and_underscore_one_dash_for_the_rest(text, slug):
    assert history_charts.slug(text) == slug


def test_a_chart_per_platform_backend_and_image_count():
    s = [series((A, 1.0)), series((A, 1.0), images=200), series((A, 1.0), backend="openmp"),
         series((A, 1.0), variant="tiled"), series((A, 1.0), machine="N")]
    assert history_charts.groups(s) == {("M", "serial", 50): [s[0], s[3]], ("M", "serial", 200): [s[1]],
                                        ("M", "openmp", 50): [s[2]], ("N", "serial", 50): [s[4]]}


# ---- the commit axis


def test_commits_are_placed_in_git_order_only_those_with_a_point():
    pos, shown = history_charts._positions([series((D, 1.0), (B, 1.0)), series((F, 1.0))], COMMITS)
    assert shown == [B, D, F] and pos == {B: 0, D: 1, F: 2}


def test_a_commit_the_order_lacks_gets_its_own_place_after_the_others():
    """It was drawn at the first commit's place, and "?" labelled an empty place at the end."""
    pos, shown = history_charts._positions([series((B, 1.0), ("f00d" * 10, 2.0), (A, 1.0))], [A, B])
    assert shown == [A, B, "f00d" * 10] and pos["f00d" * 10] == 2


@pytest.mark.parametrize("n, labels", [(24, 24), (25, 13), (47, 24), (48, 24), (49, 17), (1000, 24)])
def test_at_most_24_commits_are_labelled_with_their_short_id(drawn, n, labels):
    """n // 24 as the step labelled all 47 of 47 commits."""
    order = [f"{i:040x}" for i in range(n)]
    ax = chart(series(*[(c, 1.0) for c in order]), order=order)
    texts = [t.get_text() for t in ax.get_xticklabels()]
    assert len(texts) == labels and texts[:2] == [order[0][:7], order[ax.get_xticks()[1]][:7]]
    assert ax.get_xlim() == (-0.5, n - 0.5) and f"({n} with results)" in ax.get_xlabel()


# ---- points, steps, lines


def test_each_point_sits_at_its_commits_place(drawn):
    """Places are shared by all lines of a chart: a line without a point at B leaves B's place empty."""
    ax = chart(series((A, 1.0), (C, 1.5)), series((B, 2.0), variant="tiled"))
    assert [list(line.get_xdata()) for line in ax.lines if line.get_label().startswith("serial:")] == [[0, 2], [1]]


def test_a_point_of_a_busy_machine_is_hollow_the_others_filled_in_the_backends_marker(drawn):
    ax = chart(series((A, 10.0), (B, 11.0, {"busy": True}), (C, 10.5)))
    colour = palette.color("serial:naive")
    marker = palette.style("serial:naive")["marker"]
    # (a marker of its own, not the step circles' "o")
    assert marker != "o" and {line.get_marker() for line in ax.lines if line.get_markersize() == 5} == {marker}
    # the points' markers (the line has none, a step's circle is of size 13)
    faces = sorted((x, to_hex(line.get_markerfacecolor())) for line in ax.lines if line.get_markersize() == 5
                   for x in line.get_xdata())
    assert faces == [(0, colour), (1, "#ffffff"), (2, colour)]


def test_a_step_is_circled_and_labelled_in_its_colour(drawn):
    ax = chart(series((A, 10.0), (B, 13.0, {"step": "slower", "change": 0.3}),
                      (C, 9.1, {"step": "faster", "change": -0.3}), (D, 9.1, {"step": "machine", "change": 0.0})))
    circles = [(list(line.get_xdata()), to_hex(line.get_color())) for line in ax.lines if line.get_markersize() == 13]
    assert circles == [([1], "#d62728"), ([2], "#2ca02c"), ([3], "#7f7f7f")]  # red slower, green faster, grey
    assert [(t.get_text(), to_hex(t.get_color())) for t in ax.texts] == \
        [("+30 %", "#d62728"), ("-30 %", "#2ca02c"), ("+0 %", "#7f7f7f")]


def test_a_chart_draws_a_few_artists_whatever_the_number_of_commits(drawn):
    """An artist per point: a chart of 2000 commits took ten seconds to draw, and `history plot` draws one per
    platform x backend x image count; now a line and its filled and hollow points per series."""
    order = [f"{i:040x}" for i in range(600)]
    pts = [(c, 10.0 + i % 3, {"busy": i % 7 == 0}) for i, c in enumerate(order)]
    ax = chart(series(*pts), series(*pts, variant="tiled"), order=order)
    assert len(ax.lines) == 2 * 3


def test_gpu_lines_are_solid_whatever_their_launch_width_cpu_lines_of_threads_dashed(drawn):
    ax = chart(series((A, 1.0), (B, 1.0), backend="cuda", threads=270336, on_gpu=True),
               series((A, 2.0), (B, 2.0), backend="cuda", variant="x", threads=2))
    styles = {line.get_label(): line.get_linestyle() for line in ax.lines if not line.get_label().startswith("_")}
    assert styles == {"cuda:naive": "-", "cuda:x, 2 thr": "--"}


def test_lines_are_named_and_ordered_by_variant_then_threads(drawn):
    ax = chart(series((A, 1.0), variant="tiled", threads=2), series((A, 1.0), variant="tiled"),
               series((A, 1.0), variant="naive", threads=2))
    assert legend_texts(ax) == ["serial:naive, 2 thr", "serial:tiled, 1 thr", "serial:tiled, 2 thr"]
    assert "serial at 50 images on M" in ax.get_title()


@pytest.mark.parametrize("ratio, scale", [(15, "linear"), (20, "linear"), (21, "log"), (30, "log")])
def test_the_time_axis_turns_log_beyond_a_20x_spread(drawn, ratio, scale):
    """Linear from 0 up to 20x between the fastest and the slowest point; beyond, log (a naive variant beside
    a fast one flattened the fast one)."""
    ax = chart(series((A, 1.0), (B, 1.0 * ratio)))
    assert ax.get_yscale() == scale
    assert (ax.get_ylim()[0] == 0) == (scale == "linear")
    if scale == "log":
        assert ax.yaxis.get_major_formatter()(2000) == "2k"


def test_a_peers_chart_says_it_is_drawn_never_a_verdict(drawn):
    assert "(a peer: drawn, never a verdict)" in chart(series((A, 1.0), backend="pytorch", variant="cpu"),
                                                       key=("M", "pytorch", 50)).get_title()
    assert "peer" not in chart(series((A, 1.0))).get_title()


# ---- the overview of a platform


def test_the_overview_draws_one_platforms_benchmarks_on_a_log_axis(drawn):
    s = [series((A, 1.0), (B, 2.0), variant="z"), series((A, 100.0), (C, 90.0)),
         series((D, 5.0), (E, 5.0), machine="N")]
    ax = history_charts.overview_chart("M", s, COMMITS, "o.png").axes[0]
    assert legend_texts(ax) == ["serial:naive/images:50/threads:1", "serial:z/images:50/threads:1"]  # by title
    assert ax.get_yscale() == "log" and ax.get_title() == "History of every benchmark, M"
    assert [t.get_text() for t in ax.get_xticklabels()] == [A[:7], B[:7], C[:7]]  # N's commits are not M's


def test_no_overview_of_one_commit_or_of_a_platform_without_series(drawn):
    assert history_charts.overview_chart("M", [series((A, 1.0)), series((B, 1.0), machine="N")], COMMITS,
                                         "o.png") is None
    assert history_charts.overview_chart("X", [series((A, 1.0), (B, 1.0))], COMMITS, "o.png") is None
    assert history_charts.overview_chart("M", [series((A, 1.0)), series((B, 1.0))], COMMITS, "o.png")
