"""Tests of suitereport/charts.py: what each PNG chart of scripts/plot shows, read from its matplotlib figure
(save() is replaced by one that hands the figure back), and the file names it is written under. Each test pins
a behaviour that a mutation of charts.py changed without any other test noticing, or a defect it had."""

import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(SCRIPTS))

from suitereport import analysis, charts, palette  # noqa: E402
from suitereport.analysis import fmt_ms, fmt_speedup  # noqa: E402
from suitereport.charts import plt  # noqa: E402
from chart_figures import kept_figures  # noqa: E402
from suitereport.load import Machine, Run  # noqa: E402
from matplotlib.colors import to_hex  # noqa: E402
from matplotlib.ticker import FixedLocator, LogLocator, NullFormatter  # noqa: E402

MACHINE = Machine(set_name="", host="h", cpu_model="AMD EPYC", logical_cores=2)
GPU = "NVIDIA H200"  # a device string on_gpu recognises
BASE = analysis.BASELINE  # (backend, variant) of the speedups' baseline, from the manifests


def run(backend="serial", variant="naive", images=50, ms=100.0, **kw):
    kw.setdefault("machine", MACHINE)
    kw.setdefault("images_per_s", images * 1000 / ms)
    kw.setdefault("validation", {"passed": True})
    return Run(backend, variant, images, ms, **kw)


def group(*runs):
    return analysis.Group(machine=MACHINE, runs=list(runs), hosts=["h"])


@pytest.fixture
def drawn(monkeypatch):
    yield from kept_figures(monkeypatch, charts)


def tick_labels(axis):
    return [t.get_text() for t in axis.get_ticklabels()]


def legend_texts(ax):
    return [t.get_text() for t in ax.get_legend().get_texts()]


# ---- numbers and axes


@pytest.mark.parametrize("x, shown", [(999, "999"), (1000, "1k"), (1250, "1.25k"), (999000, "999k"), (1e6, "1M"),
                                      (2e6, "2M"), (1, "1"), (123.5, "123.5"), (0.125, "0.125")])
def test_plain_numbers_take_k_from_a_thousand_and_m_from_a_million(x, shown):
    """The unit changes at exactly 1000 and 1e6; three significant digits (1.25k, not 1.2k)."""
    assert charts.plain_number(x) == shown


def test_given_ticks_are_thinned_to_a_quarter_decade_from_the_last_kept():
    """Neighbours closer than 0.25 decades to the last kept tick are dropped (70 and 1660), not to the last
    seen one (90 is 0.26 decades from 50, 0.11 from 70); the ticks read as plain numbers, no minor labels."""
    fig, ax = plt.subplots()
    try:
        ax.set_xscale("log")  # as the charts do first: a log axis labels its minor ticks (2x10^1, ...)
        charts._log_axis(ax.xaxis, [90, 50, 70, 1000, 1660, 50])
        locator = ax.xaxis.get_major_locator()
        assert isinstance(locator, FixedLocator) and list(locator.locs) == [50, 90, 1000]
        assert ax.xaxis.get_major_formatter()(1200) == "1.2k"
        assert isinstance(ax.xaxis.get_minor_formatter(), NullFormatter)
    finally:
        plt.close(fig)


def test_without_ticks_a_log_axis_steps_1_2_5():
    fig, ax = plt.subplots()
    try:
        charts._log_axis(ax.yaxis)
        locator = ax.yaxis.get_major_locator()
        assert isinstance(locator, LogLocator)
        assert {2, 5, 20, 50} <= {round(t) for t in locator.tick_values(1, 100)}
    finally:
        plt.close(fig)


# ---- file names


def test_a_name_of_exactly_the_limit_is_kept_and_a_longer_one_cut_to_it():
    assert charts.short_name("a" * charts.MAX_SLUG) == "a" * charts.MAX_SLUG
    cut = charts.short_name("a" * (charts.MAX_SLUG + 1))
    assert cut.startswith("a" * 80) and len(cut.encode()) <= charts.MAX_SLUG
    # two long names that differ only at their end: two names (the hash is of the whole)
    assert charts.short_name("a" * 300 + "1") != charts.short_name("a" * 300 + "2")


def test_a_name_is_measured_and_cut_in_bytes_never_inside_a_character():
    """60 "é" are 60 characters but 120 bytes: cut, at a character boundary (no U+FFFD, still within the limit)."""
    cut = charts.short_name("é" * 60)
    assert cut != "é" * 60 and len(cut.encode()) <= charts.MAX_SLUG
    assert cut.startswith("é" * 40) and "\ufffd" not in cut


def machine_group(host, gpu="", cpu="AMD EPYC"):
    return analysis.Group(machine=Machine(set_name="", host=host, cpu_model=cpu, logical_cores=2, gpu_name=gpu))


def test_slugs_add_the_host_only_where_two_machines_share_a_slug():
    alone = [machine_group("h1"), machine_group("h2", cpu="Intel Xeon")]
    assert charts.slugs(alone) == ["cpu-amd-epyc-2c", "cpu-intel-xeon-2c"]
    # two GPUs whose names differ only in punctuation: one slug, told apart by their hosts
    twins = [machine_group("h1", gpu="NVIDIA X-1"), machine_group("h2", gpu="NVIDIA X 1")]
    assert charts.slugs(twins) == ["cpu-amd-epyc-2c-nvidia-x-1-h1", "cpu-amd-epyc-2c-nvidia-x-1-h2"]


def test_slugs_keep_path_separators_and_control_characters_out_of_file_names():
    twins = [machine_group("a/b\\c\nd", gpu="NVIDIA X-1"), machine_group("e\tf", gpu="NVIDIA X 1")]
    assert charts.slugs(twins) == ["cpu-amd-epyc-2c-nvidia-x-1-a-b-c-d", "cpu-amd-epyc-2c-nvidia-x-1-e-f"]


def test_slugs_of_one_host_with_two_gpus_named_alike_differ():
    """Slug and host alike (GPU names that differ in punctuation or case, one host): the second group's
    charts were written over the first's, and the README showed the second's under the first's heading."""
    twins = [machine_group("h", gpu="NVIDIA X-1"), machine_group("h", gpu="nvidia x 1")]
    names = charts.slugs(twins)
    assert names[0] == "cpu-amd-epyc-2c-nvidia-x-1-h" and names[1].startswith(names[0] + "-")
    assert charts.slugs(twins) == names  # the same groups, the same names
    # hosts that differ only in case: one file on a case-insensitive file system (macOS, Windows)
    names = charts.slugs([machine_group("Node", gpu="NVIDIA X-1"), machine_group("node", gpu="NVIDIA X 1")])
    assert names[0].lower() != names[1].lower()


def test_slugs_of_a_300_character_host_fit_a_file_name():
    twins = [machine_group("h" * 300, gpu="NVIDIA X-1"), machine_group("h" * 299 + "2", gpu="NVIDIA X 1")]
    names = charts.slugs(twins)
    assert all(len(n.encode()) <= charts.MAX_SLUG for n in names) and names[0] != names[1]


# ---- bar charts: time and speedup


def test_a_failed_validation_is_hatched_and_said_a_peer_that_does_not_validate_is_not(drawn):
    g = group(run(ms=100.0), run("openmp", "naive", ms=50.0, validation={"passed": False}),
              run("pytorch", "cpu", ms=20.0, validation={}))
    ax = charts.time_chart(g, 50, "t.png").axes[0]
    bars = ax.patches
    assert [b.get_hatch() for b in bars] == [None, "//", None]
    assert [to_hex(b.get_edgecolor(), keep_alpha=True) for b in bars] == ["#00000000", "#000000ff", "#00000000"]
    assert tick_labels(ax.yaxis) == ["serial:naive", "openmp:naive  [validation FAILED]", "pytorch:cpu"]
    # each bar in its backend:variant's colour, the first at the top
    assert [to_hex(b.get_facecolor()) for b in bars] == [palette.color(r.name) for r in g.runs]
    assert ax.yaxis_inverted()


def test_the_time_chart_is_a_log_axis_from_a_third_of_the_fastest_with_each_time_written(drawn):
    g = group(run(ms=100.0), run("openmp", "naive", ms=12.5), run(images=200, ms=400.0))
    ax = charts.time_chart(g, 50, "t.png").axes[0]
    assert ax.get_xscale() == "log" and ax.get_xlim()[0] == pytest.approx(12.5 / 3)
    assert [t.get_text() for t in ax.texts] == [f"{fmt_ms(100.0)} ms", f"{fmt_ms(12.5)} ms"]  # 50 images only
    assert "50 images" in ax.get_title()
    assert charts.time_chart(g, 1200, "t.png") is None  # no run with 1200 images


def test_bars_of_one_variant_are_told_apart_by_batch_and_mpi_ranks(drawn):
    """Runs of one variant at other batch sizes or under mpirun were bars of one label ("cuda:fused_fp16x3"
    four times): the batch is named where it tells them apart, the MPI ranks always."""
    g = group(run("cuda", "fused", ms=4.0, batch=50, device=GPU),
              run("cuda", "fused", ms=3.9, batch=16384, device=GPU),
              run("cuda", "fused", ms=3.8, batch=50, device=GPU, mpi={"ranks": 2, "mode": "split"}),
              run("cuda", "fused", ms=3.7, batch=50, device=GPU, mpi={"ranks": 1, "mode": "split"}),
              run("cuda", "naive", ms=9.0, batch=50, device=GPU))
    ax = charts.time_chart(g, 50, "t.png").axes[0]
    assert tick_labels(ax.yaxis) == ["cuda:fused (batch 50)", "cuda:fused (batch 16384)",
                                     "cuda:fused (2 MPI ranks, split)", "cuda:fused (1 MPI rank, split)",
                                     "cuda:naive"]


def test_thread_counts_label_cpu_bars_only_where_cpu_runs_differ_in_them(drawn):
    """A GPU run's launch width (Kokkos-CUDA's 270336) is no thread count: beside one CPU thread count,
    no bar names threads."""
    g = group(run(ms=100.0), run("kokkos", "naive", ms=5.0, threads=270336, device=GPU))
    assert tick_labels(charts.time_chart(g, 50, "t.png").axes[0].yaxis) == ["serial:naive", "kokkos:naive"]
    g.runs.append(run("openmp", "naive", ms=60.0, threads=2))
    assert tick_labels(charts.time_chart(g, 50, "t.png").axes[0].yaxis) == \
        ["serial:naive (1 thr)", "kokkos:naive", "openmp:naive (2 thr)"]


def test_speedups_are_the_baselines_time_over_each_runs_with_a_line_at_1x(drawn):
    g = group(run(*BASE, ms=100.0), run("openmp", "naive", ms=25.0), run("openmp", "tiled", ms=400.0))
    ax = charts.speedup_chart(g, 50, "s.png").axes[0]
    assert [b.get_width() for b in ax.patches] == [1.0, 4.0, 0.25]
    assert [t.get_text() for t in ax.texts] == [fmt_speedup(v) for v in (1.0, 4.0, 0.25)]
    assert [list(line.get_xdata()) for line in ax.lines] == [[1.0, 1.0]]  # the 1x line
    assert ax.xaxis.get_major_formatter()(2.0, 0) == "2×"
    assert ax.get_xlim()[0] == pytest.approx(0.25 / 2)


def test_no_speedup_chart_without_a_baseline_run_or_with_the_baseline_alone(drawn):
    assert charts.speedup_chart(group(run(*BASE)), 50, "s.png") is None
    assert charts.speedup_chart(group(run("openmp", "a"), run("openmp", "b")), 50, "s.png") is None
    failed = run(*BASE, validation={"passed": False})  # a baseline that failed its validation is none
    assert charts.speedup_chart(group(failed, run("openmp", "a")), 50, "s.png") is None


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # numpy's overflow inside matplotlib's log transform
def test_times_near_the_largest_float_are_drawn_not_a_traceback(tmp_path, monkeypatch):
    """The reports' times are any finite number of at least 1 ns: 1e308 ms made the time axis end at
    infinity (ValueError: Axis limits cannot be NaN or Inf), and 1e303 ms over 1e-6 ms an infinite speedup.
    Drawn to PNG files: the limits are checked when the figure is drawn too."""
    monkeypatch.setattr(palette, "_styles", {})
    g = group(run(*BASE, ms=1e303), run("openmp", "naive", ms=1e-6), run("openmp", "tiled", ms=1e308))
    assert charts.time_chart(g, 50, tmp_path / "t.png").read_bytes()[:4] == b"\x89PNG"
    assert charts.speedup_chart(g, 50, tmp_path / "s.png").read_bytes()[:4] == b"\x89PNG"


# ---- layers


def test_the_layer_chart_stacks_each_runs_shares_to_100_percent(drawn):
    g = group(run(layers_ms={"conv1": 3.0, "relu1": 1.0}), run("openmp", "naive", layers_ms={"conv1": 1.0}),
              run("pytorch", "cpu"), run(images=200, layers_ms={"conv1": 1.0}))
    ax = charts.layers_chart(g, 50, "l.png").axes[0]
    assert tick_labels(ax.yaxis) == ["serial:naive", "openmp:naive"]  # no layers, other image count: no bar
    conv, relu = ax.patches[:2], ax.patches[2:4]
    assert [b.get_width() for b in conv] == [75.0, 100.0] and [b.get_width() for b in relu] == [25.0, 0.0]
    assert [b.get_x() for b in relu] == [75.0, 100.0]  # stacked after conv
    assert [t.get_text() for t in ax.texts] == [f"{fmt_ms(4.0)} ms", f"{fmt_ms(1.0)} ms"]
    assert "other" not in legend_texts(ax) and ax.get_xlim() == (0, 100)


def test_a_layer_of_another_kind_gets_its_own_colour_and_zero_times_no_error(drawn):
    g = group(run(layers_ms={"conv1": 0.0, "bn1": 0.0}))  # all zero: no share, no ZeroDivisionError
    ax = charts.layers_chart(g, 50, "l.png").axes[0]
    assert legend_texts(ax)[-1] == "other" and all(b.get_width() == 0 for b in ax.patches)
    assert charts.layers_chart(group(run()), 50, "l.png") is None  # no run with layer times


def test_a_gpu_launch_width_makes_no_thread_count_in_the_layer_chart(drawn):
    """A Kokkos-CUDA run's 270336 "threads" beside a serial run labelled that "serial:naive (1 thr)" here but
    "serial:naive" in the time chart."""
    g = group(run(layers_ms={"conv1": 1.0}),
              run("kokkos", "naive", threads=270336, device=GPU, layers_ms={"conv1": 1.0}))
    assert tick_labels(charts.layers_chart(g, 50, "l.png").axes[0].yaxis) == ["serial:naive", "kokkos:naive"]


# ---- scaling lines


def line_data(ax):
    """{legend label: (xs, ys)} of the labelled lines."""
    return {line.get_label(): (list(line.get_xdata()), list(line.get_ydata())) for line in ax.lines
            if not line.get_label().startswith("_")}


def test_thread_scaling_draws_each_variants_fastest_run_per_thread_count(drawn):
    """One process on the CPU only: a 16-rank MPI run at "1 thread" (its images/s all ranks') set the line's
    start, and another batch size made a second point at one x."""
    g = group(run("openmp", "naive", threads=2, ms=50.0), run("openmp", "naive", threads=1, ms=100.0),
              run("openmp", "naive", threads=2, ms=40.0, batch=8),
              run("openmp", "naive", threads=1, ms=10.0, mpi={"ranks": 16, "mode": "split"}),
              run("openmp", "naive", threads=4, ms=5.0, images=200),  # another image count
              run("serial", "naive", threads=1, ms=100.0))  # one thread count: no line
    ax = charts.threads_scaling_chart(g, 50, "t.png").axes[0]
    lines = line_data(ax)
    assert lines["openmp:naive"] == ([1, 2], [500.0, 1250.0])
    assert set(lines) == {"openmp:naive", "linear scaling from the fewest threads"}
    # the ideal: from the fewest threads, linear in them
    ideal = next(line for line in ax.lines if line.get_linestyle() == ":" and len(line.get_xdata()))
    assert list(ideal.get_xdata()) == [1, 2] and list(ideal.get_ydata()) == [500.0, 1000.0]
    assert ax.xaxis.get_transform().base == 2 and ax.get_ylim()[0] == 0
    assert "50 images" in ax.get_title()


def test_no_thread_scaling_from_gpu_launch_widths(drawn):
    """A GPU run's 'threads' is its launch width: two of them are no thread scaling."""
    g = group(run("kokkos", "naive", threads=1024, device=GPU), run("kokkos", "naive", threads=270336, device=GPU))
    assert charts.threads_scaling_chart(g, 50, "t.png") is None


def test_image_scaling_draws_the_fastest_configuration_per_image_count(drawn):
    # the fastest first here, last in the thread scaling test: neither the first nor the last run is kept
    g = group(run(images=200, ms=400.0), run(images=50, ms=80.0, batch=8), run(images=50, ms=100.0),
              run("openmp", "naive", images=50, threads=2), run("openmp", "naive", images=200, threads=2),
              run("openmp", "tiled", images=50, threads=2),  # one image count: no line
              run("cuda", "naive", images=50, ms=2.0, threads=1024, device=GPU),
              run("cuda", "naive", images=200, ms=4.0, threads=270336, device=GPU))
    ax = charts.images_scaling_chart(g, "i.png").axes[0]
    lines = line_data(ax)
    assert set(lines) == {"serial:naive (1 thr)", "openmp:naive (2 thr)", "cuda:naive"}
    assert lines["serial:naive (1 thr)"] == ([50, 200], [625.0, 500.0])  # images/s of the 80 ms run at 50
    assert lines["cuda:naive"] == ([50, 200], [25000.0, 50000.0])  # one line whatever the launch widths
    assert list(ax.xaxis.get_major_locator().locs) == [50, 200]
    assert ax.get_xscale() == ax.get_yscale() == "log"
    assert charts.images_scaling_chart(group(run(), run("openmp", "naive")), "i.png") is None


def test_a_gpu_launch_width_makes_no_thread_count_in_the_image_scaling_legend(drawn):
    g = group(run(images=50), run(images=200), run("kokkos", "naive", images=50, threads=270336, device=GPU),
              run("kokkos", "naive", images=200, threads=270336, device=GPU))
    assert set(line_data(charts.images_scaling_chart(g, "i.png").axes[0])) == {"serial:naive", "kokkos:naive"}


def test_cpu_lines_of_several_threads_are_dashed_gpu_lines_never(drawn):
    g = group(run("openmp", "naive", images=50, threads=2), run("openmp", "naive", images=200, threads=2),
              run("cuda", "naive", images=50, threads=270336, device=GPU),
              run("cuda", "naive", images=200, threads=270336, device=GPU))
    lines = charts.images_scaling_chart(g, "i.png").axes[0].lines
    assert {line.get_label().split(" ")[0]: line.get_linestyle() for line in lines} == \
        {"openmp:naive": "--", "cuda:naive": "-"}


# ---- every chart of a group


def test_draw_group_draws_at_the_image_count_asked_and_lists_only_what_it_drew(drawn, tmp_path):
    g = group(run(images=50, ms=100.0), run(images=200, ms=400.0), run("openmp", "naive", images=200, ms=100.0))
    assert g.main_image_count() == 200
    made = charts.draw_group(g, tmp_path, "m", images=50)
    assert [(kind, path.name) for kind, path in made] == [("time", "m-time.png"), ("images", "m-images.png")]
    assert len(drawn[0].axes[0].patches) == 1  # the one run at 50 images
