"""Tests of suitereport/load.py, the data boundary: which reports are read, what each field may hold,
and the one line that names what is wrong (cli.run prints a ReportError as `prog: error: ...`, exit 2).
Each test pins a check that a mutation of load.py removed without any other test noticing."""

import copy
import json
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parent / "data"
SERIAL = DATA / "serial.json"
sys.path.insert(0, str(SCRIPTS))

from suitereport import load  # noqa: E402
from tools_inprocess import run_tool  # noqa: E402

_SERIAL = json.loads(SERIAL.read_text())


def serial():
    return copy.deepcopy(_SERIAL)


def first_run(**fields):
    """serial.json with fields of its first run replaced (a value of ... deletes the field)."""
    data = serial()
    for k, v in fields.items():
        if v is ...:
            data["runs"][0].pop(k, None)
        else:
            data["runs"][0][k] = v
    return data


def read(tmp_path, data, name="r.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return load.read_report(path)


def refused(tmp_path, data):
    """The message of the ReportError that reading `data` raises."""
    with pytest.raises(load.ReportError) as e:
        read(tmp_path, data)
    return str(e.value)


# ---- counts: whole numbers within bounds


@pytest.mark.parametrize("field, value, message", [
    ("images", 10 ** 9 + 1, "'images' must be a positive integer (at most 1000000000)"),
    ("images", 0, "'images' must be a positive integer"),
    ("images", True, "'images' must be a positive integer"),
    ("images", 50.5, "'images' must be a positive integer"),
    ("threads", 10 ** 9 + 1, "'threads' must be an integer from 0 to 1000000000, not 1000000001"),
    ("threads", True, "'threads' must be an integer from 0 to 1000000000, not true"),
    ("threads", 2.5, "'threads' must be an integer from 0 to 1000000000, not 2.5"),
])
def test_a_count_that_is_no_count_is_refused(tmp_path, field, value, message):
    """images and threads beyond 10^9, booleans and fractions are bad input in one line."""
    assert message in refused(tmp_path, first_run(**{field: value}))


def test_counts_at_their_bounds_and_whole_floats_from_a_peer_are_read(tmp_path):
    """10^9 images is still a count; 50.0 and 2.0 (a peer's JSON writer) read as 50 and 2."""
    run = read(tmp_path, first_run(images=10 ** 9, threads=10 ** 9)).runs[0]
    assert (run.images, run.threads) == (10 ** 9, 10 ** 9)
    run = read(tmp_path, first_run(images=50.0, threads=2.0)).runs[0]
    assert (run.images, run.threads) == (50, 2)
    assert type(run.images) is int and type(run.threads) is int


def test_absent_counts_take_their_defaults(tmp_path):
    """No threads: 1 thread; no distinct_images: every image distinct; no batch: 0."""
    run = read(tmp_path, first_run(threads=..., distinct_images=..., batch=...)).runs[0]
    assert (run.threads, run.distinct_images, run.batch) == (1, 50, 0)


@pytest.mark.parametrize("key", ["backend", "variant"])
def test_an_empty_backend_or_variant_is_refused(tmp_path, key):
    """A run named "" would be a row without a name."""
    assert f"runs[0]: missing or empty '{key}'" in refused(tmp_path, first_run(**{key: ""}))


# ---- numbers: booleans, NaN, overflow


def test_a_boolean_is_no_number(tmp_path):
    """accuracy: true is no accuracy, images_per_s: true no rate (JSON true is not 1)."""
    run = read(tmp_path, first_run(accuracy=True, images_per_s=True)).runs[0]
    assert run.accuracy is None
    assert run.images_per_s == pytest.approx(50 / (211.638246 / 1000.0))


def test_an_integer_too_large_for_a_float_is_bad_input(tmp_path):
    """gflop_per_s of 401 digits overflows a float: an error, not 0 nor a traceback."""
    message = refused(tmp_path, first_run(gflop_per_s=10 ** 400))
    assert "runs[0]: 'gflop_per_s' is Infinity, not a finite number" in message


def test_a_nan_accuracy_is_bad_input(tmp_path):
    """No table shows an accuracy of nan."""
    assert "'accuracy' is NaN, not a finite number" in refused(tmp_path, first_run(accuracy=float("nan")))


def test_a_long_bad_value_is_cut_in_the_message(tmp_path):
    """The error line shows at most 40 characters of the value it refuses."""
    data = first_run()
    data["runs"][0]["forward_ms"]["median"] = "x" * 500
    message = refused(tmp_path, data)
    assert 'forward_ms.median is "' + "x" * 36 + '..., not a time' in message
    assert len(message.split("r.json: ", 1)[1]) < 150


# ---- the forward time


def test_a_median_of_one_nanosecond_is_a_time(tmp_path):
    """MIN_FORWARD_MS itself is a time (the bound is inclusive), in the median and in the samples."""
    data = first_run(images_per_s=...)
    data["runs"][0]["forward_ms"].update(median=1e-6, min=1e-6, samples=[1e-6, 2e-6])
    run = read(tmp_path, data).runs[0]
    assert run.forward_ms == 1e-6 and run.samples == [1e-6, 2e-6]


def test_a_time_from_phases_where_forward_ms_is_absent(tmp_path):
    """An older report without forward_ms: its median is phases_ms.forward."""
    run = read(tmp_path, first_run(forward_ms=...)).runs[0]
    assert run.forward_ms == 211.638246 and run.samples == []


def test_a_median_of_false_is_bad_input_not_an_untimed_run(tmp_path):
    """false == 0 in Python: it must not read as the suite's mark of a run that failed untimed."""
    data = serial()
    data["runs"][0]["forward_ms"]["median"] = False
    assert "runs[0]: forward_ms.median is false, not a time" in refused(tmp_path, data)


def test_a_single_untimed_run_is_named_in_the_error(tmp_path):
    """A report whose one run failed before it was timed says which run and why."""
    data = serial()
    data["runs"] = data["runs"][:1]
    data["runs"][0]["forward_ms"] = {"min": 0, "median": 0, "max": 0, "samples": []}
    with pytest.raises(load.UntimedRun) as e:
        read(tmp_path, data)
    assert "runs[0]: no positive forward time" in str(e.value)
    assert e.value.name == "serial:naive/images:50/threads:1"


def test_samples_that_are_no_list_are_bad_input(tmp_path):
    """forward_ms.samples: 5 is one error line, not a TypeError traceback."""
    data = serial()
    data["runs"][0]["forward_ms"]["samples"] = 5
    assert "runs[0]: forward_ms.samples is not a list" in refused(tmp_path, data)
    path = tmp_path / "samples.json"
    path.write_text(json.dumps(data))
    r = run_tool("report", path)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip().endswith("forward_ms.samples is not a list"), r.stderr


def test_rates_are_derived_from_the_median_where_absent(tmp_path):
    """No images_per_s: images / median (s); no gflop_per_s: that rate times meta.flops_per_image."""
    data = first_run(images_per_s=..., gflop_per_s=...)
    data["runs"][0]["forward_ms"]["median"] = 200.0
    run = read(tmp_path, data).runs[0]
    assert run.images_per_s == pytest.approx(250.0)
    assert run.gflop_per_s == pytest.approx(250.0 * 7840000.0 / 1e9)


# ---- mpi


@pytest.mark.parametrize("mpi", [{"ranks": 0, "mode": "weak"}, {"ranks": 2}, {"ranks": 2, "mode": 3}])
def test_mpi_needs_positive_ranks_and_a_mode(tmp_path, mpi):
    """0 ranks or no mode is no run under mpirun: bad input."""
    assert "'mpi' needs a positive integer 'ranks' and a 'mode'" in refused(tmp_path, first_run(mpi=mpi))


def test_mpi_without_a_load_imbalance_is_balanced(tmp_path):
    """An absent load_imbalance reads as 1.0 (balanced), not 0."""
    run = read(tmp_path, first_run(mpi={"ranks": 2, "mode": "strong"})).runs[0]
    assert run.mpi == {"ranks": 2, "mode": "strong", "aggregate_images_per_s": 0.0, "load_imbalance": 1.0}
    assert run.ranks == 2


# ---- what a run carries over from its report


def test_layers_are_in_network_order_whatever_the_report_order(tmp_path):
    """The layer table lists conv1 .. softmax in the network's order, unknown layers last."""
    layers = {"softmax": 0.1, "zeta": 0.5, "fc": 0.2, "conv2": 3.0, "relu1": 0.3, "conv1": 5.0}
    run = read(tmp_path, first_run(layers_ms=layers)).runs[0]
    assert list(run.layers_ms) == ["conv1", "relu1", "conv2", "fc", "softmax", "zeta"]


@pytest.mark.parametrize("value, dirty", [(True, True), ("true", False), (1, False), (False, False)])
def test_only_a_json_true_marks_a_dirty_build(tmp_path, value, dirty):
    """meta.git_dirty: the string "true" or 1 is not true."""
    data = serial()
    data["meta"]["git_dirty"] = value
    assert read(tmp_path, data).runs[0].git_dirty is dirty


def test_a_gpu_named_by_a_run_alone_is_the_machines_gpu(tmp_path):
    """A report of GPU runs without meta.gpu (Kokkos-CUDA alone) is still on that GPU."""
    data = serial()
    data["meta"].pop("gpu", None)
    data["runs"][1]["device_info"] = {"gpu_name": "NVIDIA H200"}
    machine = read(tmp_path, data).runs[0].machine
    assert machine.gpu_name == "NVIDIA H200" and machine.label.endswith(" + NVIDIA H200")


# ---- the report's shape


@pytest.mark.parametrize("change, message", [
    ({"meta": []}, "'meta' is not an object"),
    ({"runs": {"0": {}}}, "no 'runs' list"),
    ({"runs": "runs"}, "no 'runs' list"),
])
def test_a_report_of_the_wrong_shape_is_one_error(tmp_path, change, message):
    """meta that is no object, runs that is no list: a ReportError naming it, not an AttributeError."""
    data = serial()
    data.update(change)
    assert refused(tmp_path, data).endswith(message)


def test_a_report_whose_runs_all_failed_untimed_is_an_error(tmp_path):
    """Every run left out: no report of zero runs goes on to the tables."""
    data = serial()
    for r in data["runs"]:
        r["forward_ms"] = {"min": 0, "median": 0, "max": 0, "samples": []}
    assert refused(tmp_path, data).endswith("r.json: no run has a forward time")


# ---- which files a folder scan reads


def test_a_scan_skips_hidden_folders_peaks_and_the_generated_folders_at_its_top(tmp_path):
    """.git/, fma_peak.json and top-level local/charts/history/verdict/ab are not reports; a folder
    named ab/ deeper down is a machine's folder like any other."""
    for rel in (".hidden/r.json", "cpu/.cache/r.json", "cpu/fma_peak.json", "gpu_peak.json", "local/r.json",
                "ab/r.json", "charts/r.json", "cpu/r.json", "cpu/ab/r.json", "top.json"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("{}")
    found = [p.relative_to(tmp_path).as_posix() for p in load.find_report_files(tmp_path)]
    assert found == ["top.json", "cpu/r.json", "cpu/ab/r.json"]


def test_a_report_at_the_top_of_a_scanned_folder_has_no_set_name(tmp_path):
    """The folder a report is kept in: "" at the top, else its path below the scanned folder."""
    (tmp_path / "cpu").mkdir()
    for rel in ("top.json", "cpu/r.json"):
        (tmp_path / rel).write_text(SERIAL.read_text())
    names = sorted(rep.runs[0].machine.set_name for rep in load.load_reports([tmp_path]))
    assert names == ["", "cpu"]


# ---- what a run says about itself


def test_a_nan_probability_difference_is_none(tmp_path):
    """A peer's json.dump writes NaN: the validation cell shows no max diff, not nan."""
    data = serial()
    data["runs"][0]["validation"]["max_abs_prob_diff"] = float("nan")
    assert read(tmp_path, data).runs[0].max_abs_prob_diff is None


def test_a_nan_minimum_time_is_bad_input(tmp_path):
    """forward_ms.min and max are checked like the median: no chart gets a NaN error bar."""
    data = serial()
    data["runs"][0]["forward_ms"]["min"] = float("nan")
    assert "runs[0]: forward_ms: 'min' is NaN, not a finite number" in refused(tmp_path, data)


def test_a_nan_peak_in_meta_is_bad_input(tmp_path):
    """meta.peak_gflops of NaN is an error, not an efficiency of nan."""
    data = serial()
    data["meta"]["peak_gflops"] = float("nan")
    assert "r.json: meta: 'peak_gflops' is NaN, not a finite number" in refused(tmp_path, data)


def test_layer_kinds_ignore_case():
    """CONV1 is a convolution, not "other"."""
    run = load.Run("b", "v", 1, 1.0, layers_ms={"CONV1": 2.0, "Relu1": 1.0, "bn": 0.5})
    assert run.layer_totals() == {"conv": 2.0, "relu": 1.0, "other": 0.5}


def test_a_run_with_gpu_figures_is_on_a_gpu_whatever_its_device_says():
    """device_info with gpu_* keys marks a GPU run even where the device text names no GPU."""
    assert load.Run("b", "v", 1, 1.0, device="Device 0", device_info={"gpu_clock_mhz": 1980}).on_gpu
    assert not load.Run("b", "v", 1, 1.0, device="Device 0", device_info={"cpu": 1}).on_gpu


def test_arithmetic_parts_need_a_unit_and_flops_each(tmp_path):
    """A part of 0 FLOP is no split: the run's one unit takes all its executed FLOP; an empty unit is none."""
    arith = {"unit": "fma", "executed_flop_per_image": 2e6,
             "parts": [{"unit": "fma", "executed_flop_per_image": 2e6}, {"unit": "tensor", "executed_flop_per_image": 0}]}
    run = read(tmp_path, first_run(images_per_s=1000.0, arithmetic=arith)).runs[0]
    assert run.arith_parts == (("fma", pytest.approx(2.0)),) and run.arith_unit == "fma"
    arith["parts"][1]["executed_flop_per_image"] = 1e6
    run = read(tmp_path, first_run(images_per_s=1000.0, arithmetic=arith)).runs[0]
    assert run.arith_parts == (("fma", pytest.approx(2.0)), ("tensor", pytest.approx(1.0)))
    run = read(tmp_path, first_run(arithmetic={"unit": "", "executed_flop_per_image": 2e6})).runs[0]
    assert run.arith_parts == ()
