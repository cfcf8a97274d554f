"""Tests of suitereport/tables.py: the numbers each table shows and how names taken from reports are
kept as text in Markdown, CSV and LaTeX. Each test pins a behaviour that a mutation of tables.py
changed without any other test noticing."""

import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[1]
RESULTS = Path(__file__).resolve().parent / "data" / "results"
sys.path.insert(0, str(SCRIPTS))

from suitereport import analysis, load, tables  # noqa: E402
from suitereport.load import Machine, Run  # noqa: E402
from suitereport.tables import Column, Table  # noqa: E402

MACHINE = Machine(set_name="", host="h", cpu_model="AMD EPYC", logical_cores=2)


def run(backend="serial", variant="naive", images=50, ms=100.0, **kw):
    kw.setdefault("machine", MACHINE)
    return Run(backend, variant, images, ms, **kw)


def group(*runs, hosts=("h",)):
    return analysis.Group(machine=MACHINE, runs=list(runs), hosts=list(hosts))


# ---- cells


@pytest.mark.parametrize("value, kind, shown", [
    ("", "text", "–"), (None, "ms", "–"), (float("nan"), "pct", "–"), (float("inf"), "speedup", "–"),
    (0.1234, "pct", "12.3 %"), (0.8, "acc", "80.00 %"), ("x", "text", "x"),
])
def test_a_cell_shows_its_value_or_a_dash(value, kind, shown):
    """No cell shows nan, inf or nothing; a share is a percentage."""
    assert tables._pretty(value, kind) == shown


@pytest.mark.parametrize("value, raw", [(None, ""), (-1.5, "-1.5"), (3, "3"), (0.25, "0.25"),
                                        ("=HYPERLINK(1)", "'=HYPERLINK(1)"), ("-cmd", "'-cmd"),
                                        ("+1", "'+1"), ("@x", "'@x"), ("\t=x", "'\t=x"), ("\r=x", "'\r=x"),
                                        ("a=b", "a=b")])
def test_csv_keeps_numbers_as_numbers_and_names_as_text(value, raw):
    """A name a spreadsheet would run as a formula gets an apostrophe; a negative number stays a number."""
    assert tables._raw(value) == raw


def test_the_validation_cell_says_what_happened():
    """Not validated, passed with its max difference, or FAILED with its top-1 mismatches."""
    assert tables._validation_cell(run()) == "not validated"
    assert tables._validation_cell(run(validation={"passed": True, "max_abs_prob_diff": 5.07e-07})) == \
        "passed (5.1e-07)"
    assert tables._validation_cell(run(validation={"passed": False, "max_abs_prob_diff": 0.02,
                                                   "top1_mismatches": 3})) == "FAILED (2.0e-02, 3 top-1)"
    assert tables._validation_cell(run(validation={"passed": False})) == "FAILED (no max diff, ? top-1)"


def test_the_device_cell_names_mpi_ranks_only_for_several():
    """One process: the device alone; several ranks: how many and the mode."""
    assert tables._device_cell(run(device="CPU, 2 threads")) == "CPU, 2 threads"
    assert tables._device_cell(run(device="CPU", mpi={"ranks": 1, "mode": "weak"})) == "CPU"
    assert tables._device_cell(run(device="CPU", mpi={"ranks": 4, "mode": "weak"})) == "CPU (4 MPI ranks, weak)"


# ---- tables


def test_reports_of_two_hosts_in_one_group_get_a_warning():
    """Two host names for one machine: the note says the speedups may mix machines."""
    notes = tables.runs_table(group(run(), hosts=("a", "b"))).notes
    assert any("several hosts (a, b)" in n for n in notes)
    assert not any("several hosts" in n for n in tables.runs_table(group(run())).notes)


def test_matrix_refuses_two_runs_for_one_cell():
    """Two batch sizes of one configuration: an error, not one of them hidden."""
    g = group(run(batch=1, source="a.json"), run(batch=8, source="b.json"))
    with pytest.raises(load.ReportError, match="two runs with 50 images and 1 thread"):
        tables.matrix_table(g)


def test_matrix_columns_by_image_count_then_threads_and_only_useful_speedups():
    """Columns in image-count order; a speedup column is kept where any row has a value."""
    g = group(run(images=200, threads=1), run(images=50, threads=2), run(images=50, threads=1),
              run("onednn", "fp32", images=50, threads=1, ms=50.0), run("openmp", "omp", images=200, ms=10.0))
    t = tables.matrix_table(g, versus=("onednn",))
    names = [c.name for c in t.columns]
    assert names == ["backend:variant", "50 img, 1 thr: ms", "50 img, 1 thr: vs oneDNN", "50 img, 2 thr: ms",
                     "200 img, 1 thr: ms"]
    assert t.rows[0][:3] == ["serial:naive", 100.0, 0.5]
    assert t.rows[0][3:] == [100.0, 100.0]
    assert t.rows[2] == ["openmp:omp", None, None, None, 10.0]  # no run at 50 images: no speedup either


def test_layers_of_an_unknown_kind_get_a_column():
    """A layer that is no conv/relu/pool/fc/softmax is summed as "other", not dropped."""
    t = tables.layers_table(group(run(layers_ms={"conv1": 3.0, "bn1": 1.0})))
    assert [c.name for c in t.columns][3:9] == ["conv ms", "relu ms", "pool ms", "fc ms", "softmax ms", "other ms"]
    assert t.rows[0][8:] == [1.0, 4.0, 100.0, 0.75]


def test_end_to_end_over_floor_without_a_positive_time_is_none():
    """forward and pinned copy of 0: no ratio (and no ZeroDivisionError)."""
    assert tables.end_to_end_over_floor({"forward": 0.0, "end_to_end": 1.0, "h2d_pinned": 0.0}) is None


def test_a_run_with_only_an_overlapped_pass_has_a_phases_row():
    """end_to_end alone (no h2d/d2h keys) is a run that copies: it gets a phases row."""
    t = tables.phases_table(group(run(phases_ms={"forward": 2.0, "end_to_end": 3.0})))
    assert t is not None and t.rows[0][0] == "serial:naive"


def test_every_machine_gets_the_same_peer_columns():
    """One set of columns for all: CSV needs one header for the runs of every machine."""
    groups = analysis.group_runs(load.all_runs(load.load_reports([RESULTS])))
    runs_tables = [t for t in tables.build_tables(groups, ("runs",))]
    assert len(runs_tables) >= 2
    assert len({tuple(c.name for c in t.columns) for t in runs_tables}) == 1
    assert any("speedup vs cuDNN" in c.name for c in runs_tables[0].columns)


# ---- Markdown: names from reports are text


@pytest.mark.parametrize("name, cell", [
    ("<img src=x onerror=alert(1)>", "&lt;img src=x onerror=alert(1)&gt;"),
    ("a|b", "a\\|b"),
    ("two\nlines", "two lines"),
    ("![x](http://e/x.png)", "!\\[x\\](http://e/x.png)"),
    ("[link](http://e)", "\\[link\\](http://e)"),
    ("_em_ and *strong* `code` ~x~ \\", "\\_em\\_ and \\*strong\\* \\`code\\` \\~x\\~ \\\\"),
    ("winograd_mma", "winograd_mma"),
])
def test_a_markdown_cell_shows_the_name_as_text(name, cell):
    """HTML, a pipe, a newline, link and image brackets, emphasis: escaped; a_b inside a word stays."""
    assert tables.md_cell(name) == cell


def test_md_plain_undoes_the_markdown_escapes_only():
    """For an HTML page: the backslashes go, the HTML escapes stay."""
    name = "a|b [x] _y_ *z* <b>"
    assert tables.md_plain(tables.md_cell(name)) == "a|b [x] _y_ *z* &lt;b&gt;"


def _hostile_table():
    return Table(title="T <b>|", columns=[Column("name <i>"), Column("ms", "ms")],
                 rows=[["x|<script>", 1.5]], notes=["note [a](b)"])


def test_markdown_escapes_title_header_cells_and_notes():
    """Every text of a table is md_cell'd: no raw HTML, no split cell, no link."""
    out = tables.to_markdown(_hostile_table())
    assert out.splitlines()[0] == "### T &lt;b&gt;\\|"
    assert "| name &lt;i&gt; | ms |" in out
    assert "|---|---:|" in out  # text left, numbers right
    assert "| x\\|&lt;script&gt; | 1.500 |" in out
    assert "- note \\[a\\](b)" in out
    assert "<" not in out


def test_csv_machine_names_are_text_too():
    """The machine column gets the same formula guard as the cells."""
    t = Table(title="t", columns=[Column("a")], rows=[["x"]], machine="=cmd")
    assert tables.to_csv([t]).splitlines()[1] == "'=cmd,x"


def test_csv_of_tables_with_other_columns_is_split_by_a_blank_line():
    """A new header starts a new block after a blank line; the same header is not repeated."""
    a = Table(title="a", columns=[Column("x")], rows=[[1]], machine="m")
    b = Table(title="b", columns=[Column("y")], rows=[[2]], machine="m")
    assert tables.to_csv([a, a, b]) == "machine,x\nm,1\nm,1\n\nmachine,y\nm,2\n"


# ---- LaTeX


def test_latex_escapes_every_text_of_a_table():
    """Caption, cells and notes: no raw <, |, _, and no blank line inside the tabular."""
    t = Table(title="T_1 <x>", columns=[Column("name"), Column("ms", "ms")],
              rows=[["[a]_b\n\nc<d>|", 1.5], ["*x", 2.0]], notes=["n_1 <y>"])
    out = tables.to_latex(t)
    assert r"\caption{T\_1 \textless{}x\textgreater{}}" in out
    assert r"\begin{tabular}{lr}" in out
    assert r"{}[a]\_b  c\textless{}d\textgreater{}\textbar{} & 1.500 \\" in out
    assert r"{}*x & 2.000 \\" in out
    assert r"\par\smallskip{\footnotesize n\_1 \textless{}y\textgreater{}}" in out
