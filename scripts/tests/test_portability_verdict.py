"""The portability verdict on reports whose PP is known by hand: platforms by hardware (two folders of one
machine are one platform), like for like (full-resource runs only, host fallbacks on no platform), PP
strict and over the supported platforms, architectural efficiency against the unit's measured peak, and the
JSON the README documents."""

import copy
import json
import shutil
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(SCRIPTS))

from suitereport import identity, load, portability, portability_view  # noqa: E402
from tools_inprocess import run_tool  # noqa: E402

BASE = json.loads((Path(__file__).resolve().parent / "data" / "serial.json").read_text())

EPYC = {"cpu_model": "AMD EPYC 9R14", "logical_cores": 2}
XEON = {"cpu_model": "Intel(R) Xeon(R) Platinum 8480C", "logical_cores": 16}
H200 = dict(XEON, gpu={"gpu_name": "NVIDIA H200"})


def run_of(backend, variant, ms, threads=1, device="CPU", gpu=None, unit="fp32_fma", executed=7.84e6,
           passed=True, images=1000, parts=None):
    r = copy.deepcopy(BASE["runs"][0])
    r.update(backend=backend, variant=variant, threads=threads, device=device, images=images,
             distinct_images=images)
    r["forward_ms"] = {"min": ms, "median": ms, "max": ms, "samples": [ms]}
    r["images_per_s"] = images / (ms / 1000)
    r["gflop_per_s"] = r["images_per_s"] * 7.84e6 / 1e9
    r["arithmetic"] = {"unit": unit, "executed_flop_per_image": executed,
                       "executed_gflop_per_s": r["images_per_s"] * executed / 1e9}
    if parts:  # [(unit, executed FLOP per image)]: layers on several units
        r["arithmetic"]["parts"] = [{"unit": u, "executed_flop_per_image": f} for u, f in parts]
    r["validation"] = dict(r["validation"], passed=passed)
    r["device_info"] = {"gpu_name": gpu} if gpu else {}
    r.pop("layers_ms", None)
    return r


def write(path, machine, runs, commit="a" * 40):
    rep = copy.deepcopy(BASE)
    rep["meta"].update(machine, host="vm", git_commit=commit)
    rep["runs"] = runs
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(rep))
    return path


@pytest.fixture
def results(tmp_path):
    """EPYC (2 cores) in two folders, a 16-core Xeon, an H200. Times in ms at 1000 images."""
    res = tmp_path / "results"
    write(res / "epyc" / "main.json", EPYC, [
        run_of("openmp", "winograd", 10.0, threads=2, executed=2.0e6),
        run_of("openmp", "winograd", 18.0, threads=1),  # one core of two: no entry
        run_of("kokkos", "winograd", 12.5, threads=2, device="Kokkos::OpenMP", executed=2.0e6),
        run_of("serial", "opt", 30.0, threads=1),  # 1 thread by design: no entry on a 2-core CPU
        run_of("openacc", "flat", 900.0, device="host fallback (no offload device; acc_get_num_devices = 0)"),
    ])
    write(res / "epyc" / "new-models" / "torch.json", EPYC, [run_of("pytorch", "cpu", 50.0, threads=2)])
    write(res / "xeon" / "cpu.json", XEON, [
        run_of("openmp", "winograd", 2.0, threads=16, executed=2.0e6),
        run_of("kokkos", "winograd", 4.0, threads=16, device="Kokkos::OpenMP", executed=2.0e6),
        run_of("pytorch", "cpu", 8.0, threads=16),
        run_of("openmp", "winograd", 1.0, threads=16, passed=False),  # failed validation: no entry
    ])
    write(res / "h200" / "gpu.json", H200, [
        run_of("cuda", "fused_fp16x3", 0.1, threads=270336, device="NVIDIA H200", gpu="NVIDIA H200",
               unit="fp16_tensor", executed=3 * 7.84e6),
        run_of("kokkos", "winograd", 0.4, threads=270336, device="Kokkos::Cuda", gpu="NVIDIA H200", executed=2.0e6),
        run_of("openacc", "flat", 0.5, threads=1, device="NVIDIA GPU via nvptx offload", gpu="NVIDIA H200"),
        run_of("pytorch", "cuda", 1.0, threads=1, device="NVIDIA H200", gpu="NVIDIA H200"),
    ])
    (res / "h200" / "gpu_peak.json").write_text(json.dumps(
        {"gpu_name": "NVIDIA H200", "peaks_gflop_per_s": {"fp32_fma": 50000, "fp16_tensor": 400000}}))
    (res / "xeon" / "fma_peak.json").write_text(json.dumps({"benchmarks": [
        {"name": "BM_FmaPeak/AllThreads_median", "aggregate_name": "median", "GFLOP/s": 4000.0}]}))
    return res


def verdict(res, **kw):
    return portability.verdict(load.all_runs(load.load_reports([res])), **kw)


def test_platforms_are_hardware_and_entries_are_like_for_like(results):
    v = verdict(results)
    assert v.images == 1000
    assert [p.id for p in v.platforms] == ["cpu-amd-epyc-9r14-2c", "cpu-intel-xeon-platinum-8480c-16c",
                                          "gpu-nvidia-h200"]  # two EPYC folders, one platform
    epyc, xeon, h200 = v.ids()
    assert v.entry("serial", epyc) is None  # 1 thread of 2
    assert v.entry("openacc", epyc) is None and v.entry("openacc", h200).run.forward_ms == 0.5
    assert v.entry("openmp", xeon).run.forward_ms == 2.0  # the failed 1.0 ms run is no entry
    assert v.left_out == {"a CPU run on fewer threads than the platform's cores": 2,
                          "an offload model's host fallback (no device): on no platform": 1,
                          "not validated, or validation failed": 1}


def test_a_cpu_entry_runs_one_thread_per_logical_core(results):
    """Like for like: 4 threads on the 2-core EPYC (oversubscribed, and faster here) is no entry, as a
    1-thread run is not; the 2-thread run stays the entry."""
    write(results / "epyc" / "oversubscribed.json", EPYC, [run_of("openmp", "winograd", 5.0, threads=4)])
    v = verdict(results)
    assert v.entry("openmp", v.ids()[0]).run.threads == 2


def test_a_cpu_without_a_core_count_takes_its_runs_as_they_are(results):
    """A report that records no logical_cores (older suites) cannot tell a full-resource run: its platform
    has no core count, and its runs are entries rather than all left out."""
    write(results / "old" / "old.json", {"cpu_model": "Old CPU", "logical_cores": None},
          [run_of("openmp", "winograd", 20.0, threads=2), run_of("kokkos", "winograd", 25.0, threads=2)])
    v = verdict(results)
    assert "cpu-old-cpu" in v.ids() and v.efficiency("kokkos", "cpu-old-cpu") == pytest.approx(0.8)


def test_a_label_tells_two_machines_of_one_cpu_apart(results):
    write(results / "epyc-b" / "main.json", dict(EPYC, label="vm b"), [
        run_of("openmp", "winograd", 20.0, threads=2), run_of("kokkos", "winograd", 10.0, threads=2)])
    v = verdict(results)
    assert v.ids("cpu") == ["cpu-amd-epyc-9r14-2c", "cpu-amd-epyc-9r14-2c-vm-b",
                            "cpu-intel-xeon-platinum-8480c-16c"]
    assert v.efficiency("openmp", "cpu-amd-epyc-9r14-2c") == 1.0
    assert v.efficiency("openmp", "cpu-amd-epyc-9r14-2c-vm-b") == pytest.approx(0.5)

def test_a_gpu_run_is_on_the_gpu_its_own_device_info_names(results):
    """meta.gpu names one GPU of the host; a run whose device_info names another ran on that one."""
    h100 = "NVIDIA H100 80GB HBM3"
    write(results / "h200" / "second-gpu.json", H200, [
        run_of("cuda", "fused_fp16x3", 0.2, threads=270336, device=h100, gpu=h100),
        run_of("kokkos", "winograd", 0.5, threads=270336, device="Kokkos::Cuda", gpu=h100)])
    v = verdict(results)
    assert v.ids("gpu") == ["gpu-nvidia-h100-80gb-hbm3", "gpu-nvidia-h200"]
    assert v.efficiency("kokkos", "gpu-nvidia-h100-80gb-hbm3") == pytest.approx(0.4)


def test_a_cpus_name_is_without_its_trademark_marks():
    p = identity.cpu_platform("Intel(R) Core(TM) i9-13900K CPU", 32)
    assert (p.id, p.label) == ("cpu-intel-core-i9-13900k-cpu-32c", "Intel Core i9-13900K CPU, 32 cores")


def test_application_efficiency_and_pp_by_hand(results):
    v = verdict(results)
    epyc, xeon, h200 = v.ids()
    # EPYC: fastest openmp 10; kokkos 12.5 -> 0.8, pytorch 50 -> 0.2
    # Xeon: fastest openmp 2; kokkos 4 -> 0.5, pytorch 8 -> 0.25
    # H200: fastest cuda 0.1; kokkos 0.4 -> 0.25, openacc 0.5 -> 0.2, pytorch 1.0 -> 0.1
    assert v.efficiency("kokkos", epyc) == pytest.approx(0.8)
    assert v.pp("kokkos") == pytest.approx(3 / (1 / 0.8 + 1 / 0.5 + 1 / 0.25))
    assert v.pp("pytorch") == pytest.approx(3 / (1 / 0.2 + 1 / 0.25 + 1 / 0.1))
    assert v.pp("openmp") == 0.0 and v.pp_supported("openmp") == pytest.approx(1.0)
    assert len(v.supported("openmp")) == 2 and v.pp("openmp", v.ids("cpu")) == pytest.approx(1.0)
    assert v.pp("kokkos", v.ids("gpu")) == pytest.approx(0.25)
    assert v.models[0] == "kokkos"  # the most portable first
    assert [round(pp, 4) for _, _, pp in v.cascade("kokkos")] == [0.8, round(2 / (1 / 0.8 + 2), 4),
                                                                  round(v.pp("kokkos"), 4)]
    # a chosen platform set H: the two CPUs only
    cpus = verdict(results, platform_ids=["cpu-amd-epyc-9r14-2c", "cpu-intel-xeon-platinum-8480c-16c"])
    assert cpus.pp("openmp") == pytest.approx(1.0) and "cuda" not in cpus.models


def test_verdicts_need_two_platforms_and_two_models(results):
    # cuda alone at 7 images on two GPUs (a sweep of one model's thresholds): no verdict at 7 images
    h100 = dict(XEON, gpu={"gpu_name": "NVIDIA H100 80GB HBM3"})
    for name, machine in (("h200", H200), ("h100", h100)):
        write(results / name / "sweep.json", machine, [
            run_of("cuda", "winograd", 0.04, threads=1, device=machine["gpu"]["gpu_name"],
                   gpu=machine["gpu"]["gpu_name"], images=7)])
    # two models at 9 images on the Xeon alone: one platform tells nothing of portability, no verdict either
    write(results / "xeon" / "small.json", XEON, [
        run_of("openmp", "winograd", 0.02, threads=16, images=9),
        run_of("kokkos", "winograd", 0.03, threads=16, device="Kokkos::OpenMP", images=9)])
    runs = load.all_runs(load.load_reports([results]))
    assert portability.verdict(runs, 7).platforms  # the verdict itself can be asked for
    assert len(portability.verdict(runs, 9).models) == 2
    assert [v.images for v in portability.verdicts(runs)] == [1000]


def test_architectural_efficiency_against_the_units_peak(results):
    v = verdict(results)
    epyc, xeon, h200 = v.ids()
    # Xeon openmp: 1000 images / 2 ms x 2.0 MFLOP executed = 1000 GFLOP/s of a 4000 peak
    assert v.efficiency("openmp", xeon, "architectural") == pytest.approx(0.25)
    # fp16x3 on the tensor cores: 1000 / 0.1 ms x 3 x 7.84 MFLOP = 235.2 TFLOP/s of 400
    assert v.efficiency("cuda", h200, "architectural") == pytest.approx(235.2 / 400)
    assert v.efficiency("kokkos", h200, "architectural") == pytest.approx(5000 / 50000)
    assert v.efficiency("openmp", epyc, "architectural") is None  # no peak measured for that CPU
    assert all((e.architectural or 0) <= 1 for e in v.entries.values())


def test_the_cpu_peak_is_the_all_threads_median_of_the_repetitions(tmp_path):
    # Google Benchmark with --benchmark_repetitions: each repetition, then the aggregates; a one-thread
    # median after the all-threads one
    reps = [{"name": "BM_FmaPeak/AllThreads", "run_type": "iteration", "GFLOP/s": g} for g in (3900.0, 4200.0, 3000.0)]
    aggs = [{"name": f"BM_FmaPeak/{which}_{agg}", "run_type": "aggregate", "aggregate_name": agg, "GFLOP/s": g}
            for which, agg, g in (("AllThreads", "median", 3900.0), ("AllThreads", "cv", 0.05),
                                  ("OneThread", "median", 60.0))]
    path = tmp_path / "fma_peak.json"
    path.write_text(json.dumps({"benchmarks": reps + aggs}))
    assert portability.fma_peak(path) == (3900.0, "all threads, median of repetitions, cv 5 %")
    path.write_text(json.dumps({"benchmarks": reps[:1]}))
    assert portability.fma_peak(path) == (3900.0, "all threads, one repetition")


def test_a_cpu_peak_beside_reports_of_two_cpus_is_neither_ones(results):
    """fma_peak.json names no CPU: beside reports of two CPUs it cannot say whose peak it is."""
    write(results / "xeon" / "epyc.json", EPYC, [run_of("kokkos", "winograd", 12.5, threads=2, executed=2.0e6)])
    v = verdict(results)
    assert [p.peaks for p in v.platforms[:2]] == [{}, {}]
    assert v.efficiency("kokkos", v.ids()[0], "architectural") is None


def test_the_peak_file_of_the_newest_reports_folder_wins(results):
    # an older folder of the same GPU, its peak measured lower: the newest reports' folder's peak is the one
    write(results / "h200-2025" / "gpu.json", dict(H200, date_utc="2025-01-01T00:00:00Z"), [
        run_of("cuda", "fused_fp16x3", 0.2, threads=270336, device="NVIDIA H200", gpu="NVIDIA H200",
               unit="fp16_tensor", executed=3 * 7.84e6)])
    (results / "h200-2025" / "gpu_peak.json").write_text(json.dumps(
        {"gpu_name": "NVIDIA H200", "peaks_gflop_per_s": {"fp32_fma": 25000, "fp16_tensor": 200000}}))
    v = verdict(results)
    assert v.platforms[2].peaks["fp16_tensor"][0] == 400000
    assert v.efficiency("cuda", "gpu-nvidia-h200", "architectural") == pytest.approx(235.2 / 400)


def test_architectural_efficiency_of_layers_on_two_units(results):
    """A run whose conv1 is on the tensor cores and the rest on the FP32 units is credited per unit: the
    time each part's FLOP takes at its unit's peak, not all of them at one peak."""
    write(results / "h200" / "hybrid.json", H200, [
        run_of("cuda", "winograd_conv1_mma", 0.05, threads=270336, device="NVIDIA H200", gpu="NVIDIA H200",
               executed=6.5e6, parts=[("fp32_fma", 1.6e6), ("fp16_tensor", 4.9e6)])])
    v = verdict(results)
    h200 = v.ids()[2]
    # 1000 images / 0.05 ms = 2e7 images/s: 32 TFLOP/s of a 50 TFLOP/s FP32 peak + 98 of a 400 tensor peak
    assert v.efficiency("cuda", h200, "architectural") == pytest.approx(32 / 50 + 98 / 400)
    # without its parts the same run would be all FP32 FMA: 130 TFLOP/s of 50, over 100 %
    write(results / "h200" / "hybrid.json", H200, [
        run_of("cuda", "winograd_conv1_mma", 0.05, threads=270336, device="NVIDIA H200", gpu="NVIDIA H200",
               executed=6.5e6)])
    assert verdict(results).efficiency("cuda", h200, "architectural") == pytest.approx(130 / 50)


def test_a_run_of_uncommitted_changes_does_not_supersede_committed_code(results):
    """An A/B's candidate build (git_dirty) is newer and faster, but no commit has its code: the verdict keeps
    the committed runs; a model with runs of uncommitted changes only is still an entry."""
    rep = write(results / "xeon" / "candidate.json", dict(XEON, git_dirty=True, date_utc="2099-01-01T00:00:00Z"),
                [run_of("openmp", "winograd", 0.5, threads=16, executed=2.0e6),
                 run_of("stdpar", "image_blocks", 3.0, threads=16)], commit="b" * 40)
    v = verdict(results)
    xeon = v.ids()[1]
    assert v.entry("openmp", xeon).run.forward_ms == 2.0
    assert v.entry("stdpar", xeon).run.forward_ms == 3.0
    rep.write_text(rep.read_text().replace('"git_dirty": true', '"git_dirty": false'))
    assert verdict(results).entry("openmp", xeon).run.forward_ms == 0.5  # committed, newer: it is the entry


def test_an_entry_above_the_peak_names_the_peak_as_suspect(results):
    r = run_tool("report", "--portability", results)
    assert r.returncode == 0 and "above 100 %" not in r.stdout, r.stdout
    # A Xeon peak measured at a tenth of the real one (a busy minute): openmp at 250 %, kokkos at 125 %
    (results / "xeon" / "fma_peak.json").write_text(json.dumps({"benchmarks": [
        {"name": "BM_FmaPeak/AllThreads_median", "aggregate_name": "median", "GFLOP/s": 400.0}]}))
    r = run_tool("report", "--portability", results)
    assert r.returncode == 0, r.stderr
    line = next(x for x in r.stdout.splitlines() if x.startswith("- above 100 %"))
    assert "P2 (FP32 FMA 400 GFLOP/s from " in line and "xeon/fma_peak.json" in line and "P3 (" not in line, line


def test_report_portability_json_and_markdown(results, tmp_path):
    r = run_tool("report", "--portability", "--format", "json", results)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert [p["id"] for p in data["platforms"]] == ["cpu-amd-epyc-9r14-2c", "cpu-intel-xeon-platinum-8480c-16c",
                                                    "gpu-nvidia-h200"]
    assert [p["kind"] for p in data["platforms"]] == ["cpu", "cpu", "gpu"]
    assert data["platforms"][2]["fastest"] == "cuda:fused_fp16x3"
    k = data["models"]["kokkos"]
    assert k["pp"] == pytest.approx(3 / (1 / 0.8 + 1 / 0.5 + 1 / 0.25), abs=1e-4) and k["supported"] == 3
    assert data["models"]["cuda"]["pp"] == 0 and data["models"]["cuda"]["pp_supported"] == 1
    assert data["models"]["openmp"]["efficiency"]["gpu-nvidia-h200"] is None
    assert data["models"]["kokkos"]["runs"]["cpu-amd-epyc-9r14-2c"]["threads"] == 2
    r = run_tool("report", "--portability", results, "--out", tmp_path / "page")
    assert r.returncode == 0, r.stderr
    assert "| kokkos | 80.0 % | 50.0 % | 25.0 % | 3 of 3 |" in r.stdout
    assert "winograd (2 thr, Kokkos::OpenMP)" in r.stdout
    names = sorted(p.name for p in (tmp_path / "page").iterdir())
    assert "portability.html" in names and "portability-cascade-application-1000.png" in names
    assert "portability-pp-architectural-1000.png" in names


def test_hostile_names_stay_data(results, tmp_path):
    bad = json.loads((results / "h200" / "gpu.json").read_text())
    bad["runs"][1]["backend"] = "<script>x|y</script>"
    (results / "h200" / "gpu.json").write_text(json.dumps(bad))
    r = run_tool("report", "--portability", results, "--out", tmp_path / "page")
    assert r.returncode == 0, r.stderr
    assert "<script>" not in r.stdout and "&lt;script&gt;x\\|y" in r.stdout
    assert "<script>" not in (tmp_path / "page" / "portability.html").read_text()


def test_bad_portability_arguments_are_one_line(results):
    for args, msg in ((("--platforms", "gpu-nope"), "unknown gpu-nope"), (("--images", "7"), "with 7 images"),
                      (("--format", "csv"), "md or json")):
        r = run_tool("report", "--portability", results, *args)
        assert r.returncode == 2 and msg in r.stderr and len(r.stderr.splitlines()) == 1, r.stderr


def test_report_options_that_do_not_go_together_are_one_line(results, tmp_path):
    for args, msg in ((("--portability", "--scaling"), "two reports: one at a time"),
                      (("--out", tmp_path / "o"), "go with --portability"),
                      (("--platforms", "gpu-nvidia-h200"), "go with --portability"),
                      (("--portability", "--images", "1000", "--images", "1000"), "takes one --images count"),
                      (("--portability", "--format", "latex"), "md or json"),
                      (("--scaling", "--platforms", "gpu-nvidia-h200"), "--platforms and --table do not apply"),
                      (("--scaling", "--table", "layers"), "--platforms and --table do not apply")):
        r = run_tool("report", results, *args)
        assert r.returncode == 2 and msg in r.stderr and len(r.stderr.splitlines()) == 1, (args, r.stderr)
    r = run_tool("report", "--portability", Path(__file__).resolve().parent / "data" / "serial.json")
    assert r.returncode == 2 and "no validated full-resource run in these reports: no platform to judge" in r.stderr


def test_platforms_limit_the_verdict_to_the_platforms_named(results):
    r = run_tool("report", "--portability", "--format", "json", results,
                 "--platforms", " gpu-nvidia-h200 , cpu-intel-xeon-platinum-8480c-16c,")  # spaces, a trailing comma
    assert r.returncode == 0, r.stderr
    assert sorted(p["id"] for p in json.loads(r.stdout)["platforms"]) == ["cpu-intel-xeon-platinum-8480c-16c",
                                                                         "gpu-nvidia-h200"]


def test_out_makes_its_folders_and_keeps_stdout_the_verdict_alone(results, tmp_path):
    plain = run_tool("report", "--portability", results)
    r = run_tool("report", "--portability", results, "--out", tmp_path / "a" / "b")
    assert r.returncode == 0, r.stderr
    assert r.stdout == plain.stdout and "wrote " in r.stderr  # what was written is said on stderr
    assert (tmp_path / "a" / "b" / "portability.html").is_file()
    (tmp_path / "file").write_text("mine\n")
    r = run_tool("report", "--portability", results, "--out", tmp_path / "file")
    assert r.returncode == 2 and "exists and is not a folder" in r.stderr, r.stderr
    assert (tmp_path / "file").read_text() == "mine\n"


def test_an_empty_table_says_why_only_for_the_portability_table(results, tmp_path):
    # The fixture's runs have no per-layer times: "no data" is the whole story for --table layers.
    r = run_tool("report", results, "--table", "layers")
    assert r.returncode == 2 and r.stderr.strip().endswith("no data for --table layers"), r.stderr
    one = tmp_path / "one"
    shutil.copytree(results / "xeon", one)
    r = run_tool("report", one, "--table", "portability")
    assert r.returncode == 2, r.stderr
    assert "on two platforms or more at one image count; at most 1 (Intel Xeon Platinum 8480C, 16 cores) at 1000 " \
           "images" in r.stderr, r.stderr



def test_the_verdicts_notes_name_left_out_runs_sorted_and_differing_commits(tmp_path):
    res = tmp_path / "res"
    write(res / "epyc.json", EPYC, [run_of("openmp", "winograd", 10.0, threads=2, passed=False),  # left out first
                                    run_of("openmp", "winograd", 18.0, threads=1),
                                    run_of("openmp", "winograd", 12.0, threads=2)])
    write(res / "epyc-kokkos.json", EPYC, [run_of("kokkos", "winograd", 13.0, threads=2)], commit="b" * 40)
    write(res / "xeon.json", XEON, [run_of("openmp", "winograd", 2.0, threads=16),
                                    run_of("kokkos", "winograd", 3.0, threads=16)])
    r = run_tool("report", "--portability", res)
    assert r.returncode == 0, r.stderr
    assert "- not entries: a CPU run on fewer threads than the platform's cores: 1; not validated, or validation " \
           "failed: 1" in r.stdout
    epyc, xeon = [line for line in r.stdout.splitlines() if line.startswith(("| P1 |", "| P2 |"))]
    assert f"| {'a' * 10}, {'b' * 10} (differ) |" in epyc, epyc  # its entries' code is not one commit
    assert f"| {'a' * 10} |" in xeon, xeon


def test_a_verdict_without_platforms_is_one_sentence():
    assert portability_view.markdown(portability.verdict([])) == \
        "No platform has a validated full-resource run at this image count.\n"


def test_the_peaks_above_an_entry_are_named_in_unit_order_and_no_peak_draws_no_architectural_chart(results,
                                                                                                  tmp_path):
    (results / "h200" / "gpu_peak.json").write_text(json.dumps(
        {"gpu_name": "NVIDIA H200", "peaks_gflop_per_s": {"fp32_fma": 1, "fp16_tensor": 1}}))
    r = run_tool("report", "--portability", results)
    line = next(x for x in r.stdout.splitlines() if x.startswith("- above 100 %"))
    assert "P3 (FP16 tensor 1 GFLOP/s from " in line and "; FP32 FMA 1 GFLOP/s from " in line, line
    for peak in (results / "h200" / "gpu_peak.json", results / "xeon" / "fma_peak.json"):
        peak.unlink()
    r = run_tool("report", "--portability", results, "--out", tmp_path / "page")
    assert r.returncode == 0, r.stderr
    assert not [p.name for p in (tmp_path / "page").iterdir() if "architectural" in p.name]
