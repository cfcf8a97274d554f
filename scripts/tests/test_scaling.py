"""scripts/report --scaling: reports of the suite under mpirun (runs[].mpi, meta.mpi), and reports from
before MPI beside them."""

import copy
import csv
import io
import json
import sys
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parents[1]
SERIAL = Path(__file__).resolve().parent / "data" / "serial.json"
sys.path.insert(0, str(SCRIPTS))

from tools_inprocess import run_tool  # noqa: E402


def mpi_report(path, ranks, rate, threads=1, mode="split", passed=True):
    """data/serial.json's first run as a run of `ranks` ranks with `rate` images/s of all ranks."""
    data = json.loads(SERIAL.read_text())
    run = copy.deepcopy(data["runs"][0])
    run["threads"] = threads
    run["validation"]["passed"] = passed
    run["mpi"] = {"ranks": ranks, "mode": mode, "images_per_rank": [run["images"] // ranks] * ranks,
                  "forward_median_ms_per_rank": [1.0] * ranks, "load_imbalance": 1.05,
                  "aggregate_images_per_s": rate, "validation_per_rank": []}
    data["runs"] = [run]
    data["meta"]["mpi"] = {"ranks": ranks, "mode": mode, "binding": []}
    path.write_text(json.dumps(data))
    return path


def rows(result):
    assert result.returncode == 0, result.stderr
    return list(csv.DictReader(io.StringIO(result.stdout)))


def test_ranks_against_one_rank(tmp_path):
    files = [mpi_report(tmp_path / f"r{n}.json", n, 1000.0 * n * (0.9 if n > 1 else 1)) for n in (1, 2, 4)]
    files.append(mpi_report(tmp_path / "threads.json", 1, 3000.0, threads=4))
    out = rows(run_tool("report", "--scaling", "--format", "csv", *files, SERIAL))  # an old report beside them
    got = [(r["ranks"], r["threads/rank"], round(float(r["speedup_vs_1_rank"]), 3), round(float(r["efficiency"]), 3))
           for r in out]
    assert got == [("1", "1", 1.0, 1.0), ("2", "1", 1.8, 0.9), ("4", "1", 3.6, 0.9), ("1", "4", 3.0, 0.75)], got
    assert {r["validation"] for r in out} == {"passed"}


def test_markdown_and_chart(tmp_path):
    files = [mpi_report(tmp_path / f"r{n}.json", n, 1000.0 * n) for n in (1, 2)]
    files.append(mpi_report(tmp_path / "bad.json", 4, 3000.0, passed=False))
    r = run_tool("report", "--scaling", "--out", tmp_path / "charts", *files)
    assert r.returncode == 0, r.stderr
    assert "### Scaling under MPI" in r.stdout and "| FAILED |" in r.stdout
    assert (tmp_path / "charts" / "scaling.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert r.stderr.strip() == f"wrote {tmp_path / 'charts' / 'scaling.png'}"  # stdout is the tables alone



def test_images_keep_the_runs_of_those_image_counts(tmp_path):
    files = [mpi_report(tmp_path / f"r{n}.json", n, 1000.0 * n) for n in (1, 2)]  # 50 images each
    assert len(rows(run_tool("report", "--scaling", "--format", "csv", "--images", "50", *files))) == 2
    r = run_tool("report", "--scaling", "--images", "7", *files)
    assert r.returncode == 2 and "nothing to scale" in r.stderr, r.stderr

def test_reports_without_mpi_runs_are_refused_in_one_line():
    r = run_tool("report", "--scaling", SERIAL)
    assert r.returncode != 0
    assert r.stderr.strip().count("\n") == 0 and "no run under mpirun" in r.stderr, r.stderr


def test_the_other_tables_read_mpi_reports(tmp_path):
    r = run_tool("report", mpi_report(tmp_path / "r2.json", 2, 2000.0))
    assert r.returncode == 0, r.stderr
    assert "serial:naive" in r.stdout


def test_a_malformed_mpi_block_is_named(tmp_path):
    path = mpi_report(tmp_path / "r.json", 2, 2000.0)
    data = json.loads(path.read_text())
    data["runs"][0]["mpi"]["ranks"] = "two"
    path.write_text(json.dumps(data))
    r = run_tool("report", "--scaling", path)
    assert r.returncode != 0 and "'mpi' needs a positive integer 'ranks'" in r.stderr, r.stderr


def test_a_run_of_ranks_is_its_own_row_beside_a_single_process(tmp_path):
    """Same variant, images and threads: the MPI run neither replaces the single process's (newest wins)
    nor passes for it."""
    r = run_tool("report", "--format", "csv", "--table", "runs", "--images", "50", SERIAL,
                 mpi_report(tmp_path / "r2.json", 2, 2000.0))
    got = [(row["backend:variant"], row["device"]) for row in rows(r)]
    assert len(got) == 2 and got[0][1] != got[1][1], got
    assert any("(2 MPI ranks, split)" in device for _, device in got), got


def test_runs_under_mpirun_are_no_verdict_entries_even_with_one_rank(tmp_path):
    # A rank under mpirun runs with the launcher's binding (no OMP_PROC_BIND default): a scaling point,
    # not a platform's full-resource entry beside the verdict's single processes.
    from suitereport import load, portability
    for ranks in (1, 2):
        (run,) = load.read_report(mpi_report(tmp_path / f"r{ranks}.json", ranks, 1000.0)).runs
        assert portability.why_not_entry(run) == "a run under an MPI launcher (scripts/report --scaling)"
    plain = tmp_path / "plain.json"
    plain.write_text(SERIAL.read_text())
    (run, *_) = load.read_report(plain).runs
    assert portability.why_not_entry(run) != "a run under an MPI launcher (scripts/report --scaling)"

def test_a_rank_count_run_twice_is_its_fastest_run(tmp_path):
    files = [mpi_report(tmp_path / "r1.json", 1, 1000.0), mpi_report(tmp_path / "r2a.json", 2, 1800.0),
             mpi_report(tmp_path / "r2b.json", 2, 1500.0)]
    out = rows(run_tool("report", "--scaling", "--format", "csv", *files))
    assert [(r["ranks"], float(r["images_per_s_all_ranks"])) for r in out] == [("1", 1000.0), ("2", 1800.0)]


def test_efficiency_is_against_the_cores_of_the_one_rank_run(tmp_path):
    # 2 threads a rank throughout: 2 ranks use twice the 1-rank run's cores, not four times
    files = [mpi_report(tmp_path / f"r{n}.json", n, rate, threads=2) for n, rate in ((1, 2000.0), (2, 3600.0))]
    out = rows(run_tool("report", "--scaling", "--format", "csv", *files))
    got = [(r["ranks"], round(float(r["speedup_vs_1_rank"]), 3), round(float(r["efficiency"]), 3)) for r in out]
    assert got == [("1", 1.0, 1.0), ("2", 1.8, 0.9)], got


def test_without_a_one_rank_run_there_is_no_speedup(tmp_path):
    # 2 and 4 ranks only: nothing to scale against, not the 2-rank run passed off as the baseline
    files = [mpi_report(tmp_path / f"r{n}.json", n, 1000.0 * n) for n in (2, 4)]
    out = rows(run_tool("report", "--scaling", "--format", "csv", *files))
    assert [(r["ranks"], r["speedup_vs_1_rank"], r["efficiency"]) for r in out] == [("2", "", ""), ("4", "", "")]
