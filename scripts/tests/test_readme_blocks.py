"""The generated blocks of the top-level README.md (scripts/make-results-readme --readme,
suitereport/readme_blocks.py): the committed README must be what its committed reports give, text outside
the blocks is never touched, and a broken marker stops the tool before it writes anything."""

import json
import os
import re
import shutil
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[1]
REPO = SCRIPTS.parent
README = REPO / "README.md"
sys.path.insert(0, str(SCRIPTS))

from suitereport import readme_blocks  # noqa: E402
from tools_inprocess import run_tool as run  # noqa: E402

PROG = "make-results-readme"


def copy_readme(tmp_path, text=None):
    path = tmp_path / "README.md"
    path.write_bytes(README.read_bytes() if text is None else text.encode("utf-8"))
    return path


def block_text(text, name):
    start = text.index(readme_blocks.begin_marker(name))
    return text[start:text.index(readme_blocks.end_marker(name), start)]


def one_error_line(r):
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    lines = [line for line in r.stderr.strip().splitlines() if not line.startswith("note: ")]
    assert len(lines) == 1 and lines[0].startswith(f"{PROG}: error: "), r.stderr
    return lines[0]


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """The committed README with every block made again from the committed reports."""
    path = copy_readme(tmp_path_factory.mktemp("regen"))
    r = run(PROG, "--readme", path)
    assert r.returncode == 0, r.stderr
    return path.read_text(encoding="utf-8")


# ---- the committed README is current


def test_committed_readme_blocks_are_what_the_committed_reports_give(generated):
    committed = README.read_text(encoding="utf-8")
    if generated != committed:
        stale = [n for n in readme_blocks.BLOCKS if block_text(generated, n) != block_text(committed, n)]
        pytest.fail(f"README.md's generated block(s) {', '.join(stale) or '(outside text?)'} differ from "
                    "what the reports give: run scripts/make-results-readme --readme and commit README.md")
    r = run(PROG, "--readme", README, "--check")
    assert r.returncode == 0, r.stderr


def test_a_changed_figure_in_a_block_is_found_and_put_back(tmp_path, generated):
    """The staleness check can fail: one figure of the CPU table changed in a copy."""
    text = README.read_text(encoding="utf-8")
    cpu = block_text(text, "cpu-epyc-2core")
    row = re.search(r"^\| serial:winograd \| ([0-9.]+) \|", cpu, re.M)
    assert row, cpu
    changed = cpu.replace(row.group(0), row.group(0).replace(row.group(1), row.group(1) + "1"), 1)
    path = copy_readme(tmp_path, text.replace(cpu, changed))
    before = path.read_bytes()
    r = run(PROG, "--readme", path, "--check")
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert "block(s) cpu-epyc-2core differ" in r.stderr
    assert path.read_bytes() == before  # --check writes nothing
    r = run(PROG, "--readme", path)
    assert r.returncode == 0 and "updated" in r.stdout and "cpu-epyc-2core" in r.stdout, r.stdout + r.stderr
    assert path.read_text(encoding="utf-8") == generated


def test_regenerating_is_deterministic_and_idempotent(tmp_path, generated):
    path = copy_readme(tmp_path, generated)
    r = run(PROG, "--readme", path)
    assert r.returncode == 0 and r.stdout.startswith("unchanged"), r.stdout + r.stderr
    assert path.read_text(encoding="utf-8") == generated


def test_a_platform_table_leaves_out_the_peer_columns_without_runs(generated):
    """PyTorch runs on every thread only: the 1-thread columns keep their times, lose their empty ratios."""
    cpu = block_text(generated, "cpu-epyc-2core")
    header = next(line for line in cpu.splitlines() if line.startswith("| backend:variant"))
    assert "1200 img, 1 thr: ms" in header and "1200 img, 2 thr: vs PyTorch" in header, header
    assert "1 thr: vs PyTorch" not in header, header
    rows = [line for line in cpu.splitlines() if line.startswith("| ")]
    assert len({line.count("|") for line in rows}) == 1, rows  # every row as wide as the header


def test_the_verdict_block_is_what_report_portability_prints(generated):
    r = run("report", "--portability", *(REPO / "results" / p for p in readme_blocks.BLOCKS["verdict"].reports))
    assert r.returncode == 0, r.stderr
    assert block_text(generated, "verdict").endswith("\n" + r.stdout)


# ---- text outside the blocks


def test_text_outside_the_blocks_survives_and_block_contents_are_replaced(tmp_path, generated):
    text = generated.replace("## Layout\n", "## Layout\n\nA line of mine, 12.5 ms, | kept |\r\n", 1)
    text = text.replace(readme_blocks.end_marker("gpu-h200"),
                        "| stale | 1 |\n" + readme_blocks.end_marker("gpu-h200"), 1)
    text = text.replace(block_text(text, "verdict"), readme_blocks.begin_marker("verdict") + "\n", 1)  # emptied
    text += "last line without a newline"
    path = copy_readme(tmp_path, text)
    r = run(PROG, "--readme", path)
    assert r.returncode == 0, r.stderr
    assert "gpu-h200" in r.stdout and "verdict" in r.stdout
    out = path.read_bytes().decode("utf-8")  # read_text would turn the \r\n into \n
    assert out == generated.replace("## Layout\n", "## Layout\n\nA line of mine, 12.5 ms, | kept |\r\n", 1) \
        + "last line without a newline"


# ---- broken markers: one error line, exit 2, nothing written


def _broken(text, name):
    begin, end = readme_blocks.begin_marker, readme_blocks.end_marker
    last = max(readme_blocks.BLOCKS, key=lambda b: text.index(begin(b)))
    return {
        "end missing": (text.replace(end(last) + "\n", "", 1), f"block '{last}' has no end marker"),
        "begin missing": (text.replace(begin("gpu-h200") + "\n", "", 1), "without its begin marker"),
        "block missing": (text.replace(block_text(text, "verdict") + end("verdict") + "\n", "", 1),
                          "no marker of block(s) verdict"),
        "malformed begin": (text.replace(begin("cpu-epyc-2core"), "<!-- begin generated: cpu-epyc-2core -->", 1),
                            "malformed marker"),
        "indented end": (text.replace(end("xeon-16core-mpi"), "  " + end("xeon-16core-mpi"), 1), "malformed marker"),
        "unknown block": (text.replace(begin("gpu-h200"), begin("gpu-h900"), 1).replace(end("gpu-h200"),
                                                                                      end("gpu-h900"), 1),
                          "unknown block 'gpu-h900'"),
        "twice": (text + "\n" + block_text(text, "verdict") + end("verdict") + "\n",
                  "block 'verdict' is in the file twice"),
        "nested": (text.replace(end("gpu-h200") + "\n", "", 1), "begins inside block 'gpu-h200'"),
    }[name]


@pytest.mark.parametrize("case", ["end missing", "begin missing", "block missing", "malformed begin",
                                  "indented end", "unknown block", "twice", "nested"])
def test_a_broken_marker_is_one_error_and_nothing_is_written(tmp_path, case):
    text = README.read_text(encoding="utf-8")
    cpu = block_text(text, "cpu-epyc-2core")
    text = text.replace(cpu, cpu + "| a stale row |\n", 1)  # a block that would change
    broken, why = _broken(text, case)
    path = copy_readme(tmp_path, broken)
    before, stat_before = path.read_bytes(), os.stat(path)
    line = one_error_line(run(PROG, "--readme", path))
    assert why in line, line
    assert re.match(rf"{PROG}: error: \S*README\.md(:\d+)?: ", line), line
    assert path.read_bytes() == before and os.stat(path).st_mtime_ns == stat_before.st_mtime_ns
    assert sorted(p.name for p in tmp_path.iterdir()) == ["README.md"]  # no temporary file left


def test_a_block_whose_reports_are_gone_is_an_error(tmp_path):
    path = copy_readme(tmp_path)
    before = path.read_bytes()
    line = one_error_line(run(PROG, "--readme", path, "--results", tmp_path))
    assert "no such report or folder" in line, line
    assert path.read_bytes() == before


def test_readme_options_that_do_not_go_together(tmp_path):
    path = copy_readme(tmp_path)
    assert "--readme takes" in one_error_line(run(PROG, "--readme", path, "--output", tmp_path / "x.md"))
    assert "--check goes with --readme" in one_error_line(run(PROG, "--check"))
    assert "no such README" in one_error_line(run(PROG, "--readme", tmp_path / "missing.md"))
    assert "--readme takes" in one_error_line(run(PROG, "--readme", path, "--skip-bad"))
    for check in ((), ("--check",)):  # was ".: is a folder" with --check, the empty name as a Path
        assert "--readme: an empty file name" in one_error_line(run(PROG, "--readme", "", *check))


# ---- the mapping and the matrix table, on reports of a test's own


def _own_block(tmp_path, monkeypatch, *reports, versus=()):
    """A results folder with `reports` ({name: report}) and a README whose one block is made from them."""
    res = tmp_path / "res"
    res.mkdir()
    for name, rep in reports:
        (res / name).write_text(json.dumps(rep))
    monkeypatch.setattr(readme_blocks, "BLOCKS", {"own": readme_blocks.Block(("own-*.json",), "matrix", versus)})
    path = tmp_path / "README.md"
    path.write_text(f"top\n{readme_blocks.begin_marker('own')}\n{readme_blocks.end_marker('own')}\nbottom\n")
    return path, res


def _serial(batch=1, host="vm", cpu="AMD EPYC", median=None):
    rep = json.loads((SCRIPTS / "tests" / "data" / "serial.json").read_text())
    rep["meta"].update(host=host, cpu_model=cpu)
    for r in rep["runs"]:
        r["batch"] = batch
        if median is not None:
            r["forward_ms"]["median"] = median
    return rep


def test_a_block_is_made_from_the_reports_its_mapping_names(tmp_path, monkeypatch):
    path, res = _own_block(tmp_path, monkeypatch, ("own-a.json", _serial()), ("other.json", _serial(median=1.0)),
                           versus=("serial:naive",))
    r = run(PROG, "--readme", path, "--results", res)
    assert r.returncode == 0, r.stderr
    text = path.read_text()
    assert text.startswith("top\n") and text.endswith("bottom\n")
    assert "From `res/own-*.json` (1 report; " in text
    assert "| backend:variant | 50 img, 1 thr: ms | 50 img, 1 thr: vs serial:naive | 200 img, 1 thr: ms |" in text
    assert "| 1.000 |" not in text  # other.json is no source of this block


def test_two_runs_for_one_cell_or_two_machines_are_an_error(tmp_path, monkeypatch):
    path, res = _own_block(tmp_path, monkeypatch, ("own-a.json", _serial(batch=1)), ("own-b.json", _serial(batch=4)))
    before = path.read_bytes()
    line = one_error_line(run(PROG, "--readme", path, "--results", res))
    assert "block 'own': serial:naive: two runs with 50 images and 1 thread(s)" in line, line
    assert path.read_bytes() == before
    (res / "own-b.json").write_text(json.dumps(_serial(cpu="Intel Xeon")))
    line = one_error_line(run(PROG, "--readme", path, "--results", res))
    assert "block 'own': its reports come from 2 machines" in line, line
    assert path.read_bytes() == before


# ---- results/verdict/: the verdict block's reports, written by make-results-readme


def _verdict_files(folder):
    return sorted(p.name for p in folder.iterdir() if readme_blocks.VERDICT_FILE.match(p.name))


def test_committed_verdict_folder_is_what_its_reports_give(tmp_path):
    """results/verdict/ once showed four platforms and two-day-old GPU figures while the README's block had five:
    nothing made it again. make-results-readme does now, and this says when it was not rerun."""
    names = readme_blocks.verdict_outputs(REPO / "results", tmp_path)
    committed = REPO / "results" / readme_blocks.VERDICT_DIR
    assert sorted(names) == _verdict_files(committed), "run scripts/make-results-readme and commit results/verdict/"
    for name in names:
        if not name.endswith(".png"):  # the charts' bytes depend on matplotlib's version, their names on the data
            assert (tmp_path / name).read_text() == (committed / name).read_text(), \
                f"results/verdict/{name} is stale: run scripts/make-results-readme"
    md = (tmp_path / "verdict-50000.md").read_text()
    assert md.count("\n| P") == len(readme_blocks.BLOCKS["verdict"].reports)  # a platform a folder


def test_make_results_readme_writes_the_verdict_and_drops_counts_it_no_longer_has(tmp_path):
    res = tmp_path / "results"
    for folder in readme_blocks.BLOCKS["verdict"].reports:
        shutil.copytree(REPO / "results" / folder, res / folder)
    verdict = res / readme_blocks.VERDICT_DIR
    verdict.mkdir()
    (verdict / "verdict-7.md").write_text("an image count the reports no longer share\n")
    (verdict / "notes.txt").write_text("not this tool's\n")
    r = run(PROG, "--results", res)
    assert r.returncode == 0 and "file(s) of the verdict" in r.stdout, r.stdout + r.stderr
    assert not (verdict / "verdict-7.md").exists() and (verdict / "notes.txt").read_text() == "not this tool's\n"
    printed = run("report", "--portability", *(res / p for p in readme_blocks.BLOCKS["verdict"].reports))
    assert printed.returncode == 0 and (verdict / "verdict-50000.md").read_text() == printed.stdout
    assert {"verdict-1200.json", "portability.html", "portability-cascade-application-50000.png"} <= set(
        _verdict_files(verdict))


def test_a_results_folder_without_the_verdicts_reports_gets_no_verdict(tmp_path):
    res = tmp_path / "res"
    res.mkdir()
    (res / "serial.json").write_text(json.dumps(_serial()))
    r = run(PROG, "--results", res)
    assert r.returncode == 0 and "verdict" not in r.stdout, r.stdout + r.stderr
    assert not (res / readme_blocks.VERDICT_DIR).exists()


def test_a_suite_report_where_the_verdict_goes_is_refused_and_kept(tmp_path):
    res = tmp_path / "res"
    (res / readme_blocks.VERDICT_DIR).mkdir(parents=True)
    mine = res / readme_blocks.VERDICT_DIR / "verdict-50.json"
    mine.write_text(json.dumps(_serial()))
    before = mine.read_bytes()
    line = one_error_line(run(PROG, "--results", res))
    assert "verdict-50.json: a suite report where the verdict is written" in line, line
    assert mine.read_bytes() == before and not (res / "README.md").exists()


def test_a_verdict_folder_that_is_a_link_is_refused(tmp_path):
    res, elsewhere = tmp_path / "res", tmp_path / "elsewhere"
    res.mkdir()
    elsewhere.mkdir()
    (res / readme_blocks.VERDICT_DIR).symlink_to(elsewhere)
    line = one_error_line(run(PROG, "--results", res))
    assert "is not a folder (the verdict goes there)" in line, line
    assert not any(elsewhere.iterdir()) and not (res / "README.md").exists()


def test_marker_lines_ending_in_crlf_are_markers_and_keep_their_line_ends(tmp_path, monkeypatch):
    # A README saved with Windows line ends: its markers are still markers (not "malformed"), and what
    # is outside the blocks, the markers' own \r\n included, is kept byte for byte.
    path, res = _own_block(tmp_path, monkeypatch, ("own-a.json", _serial()))
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    r = run(PROG, "--readme", path, "--results", res)
    assert r.returncode == 0, r.stderr
    text = path.read_bytes().decode("utf-8")
    assert text.startswith(f"top\r\n{readme_blocks.begin_marker('own')}\r\nFrom `res/own-*.json` (1 report; ")
    assert text.endswith(f"\n{readme_blocks.end_marker('own')}\r\nbottom\r\n")


def test_a_blocks_first_line_says_unknown_commit_and_no_date_when_its_reports_lack_them(tmp_path, monkeypatch):
    bare = _serial()
    del bare["meta"]["git_commit"], bare["meta"]["date_utc"]
    path, res = _own_block(tmp_path, monkeypatch, ("own-a.json", bare))
    assert run(PROG, "--readme", path, "--results", res).returncode == 0
    assert "(1 report; code of commit(s) unknown; measured no date)." in path.read_text()
    dated = _serial(host="vm")  # beside a dated report, the undated one neither widens nor hides the span
    (res / "own-b.json").write_text(json.dumps(dict(dated, runs=[dict(r, images=7) for r in dated["runs"]])))
    assert run(PROG, "--readme", path, "--results", res).returncode == 0
    assert "(2 reports; code of commit(s) 5101f30, unknown; measured 2026-11-22)." in path.read_text()


def test_vendors_in_a_blocks_columns_are_only_the_vendor_libraries_with_runs(tmp_path, monkeypatch):
    # "vendors" stands for the vendor libraries of the block's reports: oneDNN ran, cuDNN did not.
    rep = _serial()
    rep["runs"] += [dict(r, backend="onednn", variant="fp32") for r in rep["runs"]]
    path, res = _own_block(tmp_path, monkeypatch, ("own-a.json", rep), versus=(readme_blocks.VENDORS,))
    r = run(PROG, "--readme", path, "--results", res)
    assert r.returncode == 0, r.stderr
    header = next(line for line in path.read_text().splitlines() if line.startswith("| backend:variant"))
    assert "vs oneDNN" in header and "cuDNN" not in header, header


def test_a_scaling_block_takes_the_runs_of_one_machine(tmp_path, monkeypatch):
    # Its tables are shown without their headings, so two machines' tables read as one machine's: refused,
    # as a matrix block refuses them.
    from test_scaling import mpi_report
    res = tmp_path / "res"
    res.mkdir()
    for n in (1, 2):
        mpi_report(res / f"own-epyc-{n}.json", n, 1000.0 * n)
    monkeypatch.setattr(readme_blocks, "BLOCKS", {"own": readme_blocks.Block(("own-*.json",), "scaling")})
    path = tmp_path / "README.md"
    path.write_text(f"{readme_blocks.begin_marker('own')}\n{readme_blocks.end_marker('own')}\n")
    assert run(PROG, "--readme", path, "--results", res).returncode == 0
    assert "| backend:variant | mode | images | ranks |" in path.read_text()
    xeon = json.loads((res / "own-epyc-2.json").read_text())
    xeon["meta"]["cpu_model"] = "Intel Xeon"
    (res / "own-xeon-2.json").write_text(json.dumps(xeon))
    before = path.read_bytes()
    line = one_error_line(run(PROG, "--readme", path, "--results", res))
    assert "block 'own': its reports come from 2 machines" in line, line
    assert path.read_bytes() == before



def test_readme_keeps_the_files_mode_and_refuses_a_link_even_when_nothing_changes(tmp_path, monkeypatch):
    path, res = _own_block(tmp_path, monkeypatch, ("own-a.json", _serial()))
    path.chmod(0o640)
    assert run(PROG, "--readme", path, "--results", res).returncode == 0
    assert path.stat().st_mode & 0o777 == 0o640
    # A README written through a link would replace the link: refused before any work, also when the
    # blocks are current and nothing would be written (--check only reads, and may read through it).
    link = tmp_path / "link.md"
    link.symlink_to(path)
    assert "symbolic link" in one_error_line(run(PROG, "--readme", link, "--results", res))
    assert run(PROG, "--readme", link, "--results", res, "--check").returncode == 0
