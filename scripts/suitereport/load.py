"""Finding, reading and checking suite reports (schema: suite/report.cpp, schema_version 1).

A report named on the command line must be a valid suite report; in a folder that is scanned, JSON
files that are no suite report at all (no schema_version, e.g. `suite --format gbench` output) and
reports without runs are skipped with a note on stderr, anything else that is wrong is an error.
"""

import json
import math
import os
import re
import stat
import sys
from dataclasses import dataclass, field
from pathlib import Path

from . import identity, safe_io

SCHEMA_VERSION = 1
REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_RESULTS = REPO_ROOT / "results"
# Under the scanned folder: private runs, generated files, and A/B checks of two commits (scripts/ab-bench.sh),
# whose A side is old code, not today's figures.
SKIPPED_DIRS = ("local", "charts", "history", "verdict", "ab")
LAYER_KINDS = ("conv", "relu", "pool", "fc", "softmax")
PEAK_FILES = ("fma_peak.json", "gpu_peak.json")  # a platform's measured peaks beside its reports (portability.py)
# Bounds of the counts a report may hold (the suite caps --images at 10^7): beyond them a crafted
# number would overflow a float conversion or make a chart's file name, not describe a run.
MAX_COUNT = 10 ** 9
MIN_FORWARD_MS = 1e-6  # 1 ns: below it a time is no measurement (5e-324 divided images by zero)


class ReportError(Exception):
    """Bad input: one line that names the file and what is wrong."""


class UntimedRun(ReportError):
    """A run the suite wrote without a forward time (it failed before timing): left out, noted. `name`:
    its benchmark (backend:variant/images:N/threads:T), so that the gate can fail it in NEW."""

    name = ""


@dataclass(frozen=True)
class Machine:
    """The computer that ran a report: its CPU (model and logical cores), its GPU if a run used one, and
    the user's label (suite --label). The key is that hardware (identity.py); the host name and the
    folder a report is kept in (set_name) are shown, never compared."""

    set_name: str
    host: str
    cpu_model: str = ""
    gpu_name: str = ""
    logical_cores: int = 0
    label_text: str = ""  # meta.label

    @property
    def cpu(self):
        return identity.cpu_platform(self.cpu_model, self.logical_cores, self.label_text)

    @property
    def key(self):
        return (self.cpu.id, self.gpu_name)

    @property
    def label(self):
        return self.cpu.label + (" + " + self.gpu_name if self.gpu_name else "")

    @property
    def slug(self):
        return (self.cpu.id + ("-" + identity.slug(self.gpu_name) if self.gpu_name else ""))[:120]


@dataclass
class Run:
    backend: str
    variant: str
    images: int
    forward_ms: float  # median of the timed forward passes
    device: str = ""
    threads: int = 1
    batch: int = 0
    distinct_images: int = 0
    forward_min_ms: float = 0.0
    forward_max_ms: float = 0.0
    samples: list = field(default_factory=list)  # the timed forward passes, ms (the gate's input)
    images_per_s: float = 0.0
    gflop_per_s: float = 0.0
    accuracy: float = None
    validation: dict = field(default_factory=dict)
    phases_ms: dict = field(default_factory=dict)
    layers_ms: dict = field(default_factory=dict)
    device_info: dict = field(default_factory=dict)
    machine: Machine = None
    source: str = ""
    date: str = ""
    git_commit: str = ""
    git_dirty: bool = False  # measured on uncommitted changes (an A/B's candidate build)
    meta_peak_gflops: float = 0.0  # the platform's peak, where a report states it (meta.peak_gflops)
    reported_variant: str = ""  # the name the report used, where the variant was renamed since
    arith_unit: str = ""  # the unit its arithmetic ran on (report's arithmetic.unit; "" in older reports)
    # (unit, executed GFLOP/s on it) per unit its arithmetic ran on: arithmetic.parts, or the one unit
    arith_parts: tuple = ()
    platform: identity.Platform = None  # where it ran: its GPU, or its machine's CPU
    machine_load: dict = field(default_factory=dict)  # the suite's load readings (numbers only): gate.busy_reason
    mpi: dict = field(default_factory=dict)  # a run under mpirun: ranks, mode, aggregate_images_per_s (_mpi_of)

    @property
    def name(self):
        return f"{self.backend}:{self.variant}"

    @property
    def ranks(self):
        """The MPI ranks that ran it together (1: a single process)."""
        return self.mpi.get("ranks", 1)

    @property
    def passed(self):
        return self.validation.get("passed") is True

    @property
    def host_fallback(self):
        """An offload model that ran on the host for want of a device: on no platform of its own."""
        return identity.is_host_fallback(self.device)

    @property
    def on_gpu(self):
        """From what the run says about its device, not from the backend's name."""
        if any(k.startswith("gpu_") for k in self.device_info):
            return True
        return re.search(r"\b(gpu|cuda|nvidia|h100|h200|a100|rocm|hip)\b", self.device.lower()) is not None

    @property
    def passed_or_unvalidated(self):
        """Usable as a baseline: validated and passed, or a peer that does not validate."""
        return self.passed or not self.validation

    @property
    def max_abs_prob_diff(self):
        """None where the report has none (a failed run may write null)."""
        v = self.validation.get("max_abs_prob_diff")
        return float(v) if _is_number(v) and math.isfinite(v) else None  # a peer's json.dump writes NaN

    def layer_totals(self):
        """conv/relu/pool/fc/softmax totals (ms) of a layer-wise run; layers of another kind: 'other'."""
        totals = {}
        for layer, ms in self.layers_ms.items():
            kind = next((k for k in LAYER_KINDS if layer.lower().startswith(k)), "other")
            totals[kind] = totals.get(kind, 0.0) + ms
        return totals


@dataclass
class Report:
    path: str
    meta: dict
    runs: list
    untimed: list = field(default_factory=list)  # UntimedRun of the runs left out (the gate fails them in NEW)


def _is_number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _arith_parts(arith, executed, ips):
    """((unit, executed GFLOP/s), ...) of a report's `arithmetic`: its `parts` where every one names a unit
    and a positive FLOP count, else the one `unit` with all of `executed`; () where neither is recorded."""
    parts = arith.get("parts")
    if isinstance(parts, list) and parts and all(
            isinstance(q, dict) and isinstance(q.get("unit"), str) and _number(q, "executed_flop_per_image") > 0
            for q in parts):
        return tuple((q["unit"], ips * _number(q, "executed_flop_per_image") / 1e9) for q in parts)
    unit = arith.get("unit")
    return ((unit, ips * executed / 1e9),) if isinstance(unit, str) and unit and executed > 0 else ()


def _number(obj, key, default=0.0, where=None):
    """obj[key] as a float, `default` where it is absent or no number; a NaN or infinity is bad input
    (with `where`) or the default: no table shows `nan`, no chart gets an infinite axis."""
    v = obj.get(key, default) if isinstance(obj, dict) else default
    if not _is_number(v):
        return default
    try:
        v = float(v)
    except OverflowError:  # an integer of hundreds of digits
        v = math.inf
    if not math.isfinite(v):
        if where is not None:
            raise ReportError(f"{where}: '{key}' is {_shown_value(v)}, not a finite number")
        return default
    return v


def _shown_value(v):
    """v as the JSON said it (NaN, Infinity, "false"), cut to 40 characters."""
    try:
        text = json.dumps(v)
    except (TypeError, ValueError):
        text = type(v).__name__
    return text if len(text) <= 40 else text[:37] + "..."


def _count(r, key, where, default, low=0):
    """An integer field (threads, batch, ...): absent means default; anything but a whole number in
    [low, MAX_COUNT] is bad input (Infinity used to end in an OverflowError traceback)."""
    v = r.get(key)
    if v is None:
        return default
    if isinstance(v, float) and math.isfinite(v) and v.is_integer():  # 2.0 from a peer's JSON writer
        v = int(v)
    if not isinstance(v, int) or isinstance(v, bool) or not low <= v <= MAX_COUNT:
        raise ReportError(f"{where}: '{key}' must be an integer from {low} to {MAX_COUNT}, not {_shown_value(v)}")
    return v


def _forward_time(x):
    """A time the suite measured: a finite number of at least MIN_FORWARD_MS (a JSON NaN, Infinity,
    a negative or a string is no time, and must not be shown as 0 ms or pass the gate)."""
    return _is_number(x) and math.isfinite(x) and x >= MIN_FORWARD_MS


def _mpi_of(r, where):
    """The figures of a run under mpirun that scripts/report --scaling reads; {} in a single process's run
    (and in reports from before the suite ran under MPI)."""
    m = r.get("mpi")
    if m is None:
        return {}
    ranks, mode = (m.get("ranks"), m.get("mode")) if isinstance(m, dict) else (None, None)
    if not isinstance(ranks, int) or isinstance(ranks, bool) or not 1 <= ranks <= MAX_COUNT or not isinstance(mode, str):
        raise ReportError(f"{where}: 'mpi' needs a positive integer 'ranks' and a 'mode'")
    return {"ranks": ranks, "mode": mode,
            "aggregate_images_per_s": _number(m, "aggregate_images_per_s", where=f"{where}: mpi"),
            "load_imbalance": _number(m, "load_imbalance", 1.0, where=f"{where}: mpi")}


def _parse_run(path, i, r, machine, meta):
    where = f"{path}: runs[{i}]"
    if not isinstance(r, dict):
        raise ReportError(f"{where}: not a JSON object")
    for key in ("backend", "variant"):
        if not isinstance(r.get(key), str) or not r[key]:
            raise ReportError(f"{where}: missing or empty '{key}'")
    images = r.get("images")
    if isinstance(images, float) and math.isfinite(images) and images.is_integer():  # 1200.0 from a peer
        images = int(images)
    if not isinstance(images, int) or isinstance(images, bool) or not 1 <= images <= MAX_COUNT:
        raise ReportError(f"{where}: 'images' must be a positive integer (at most {MAX_COUNT})")
    threads = _count(r, "threads", where, 1)
    validation = r.get("validation") if isinstance(r.get("validation"), dict) else {}
    if "passed" in validation and not isinstance(validation["passed"], bool):
        # "false" is truthy: a string here must not read as a pass, nor silently as a failure
        raise ReportError(f"{where}: 'validation.passed' must be true or false, not {_shown_value(validation['passed'])}")
    fwd = r.get("forward_ms")
    median = fwd.get("median") if isinstance(fwd, dict) else None
    if median is None:
        median = (r.get("phases_ms") or {}).get("forward") if isinstance(r.get("phases_ms"), dict) else None
    if median == 0 and not isinstance(median, bool):
        # The suite's own mark of a run that failed before it was timed (median 0, no passes).
        e = UntimedRun(f"{where}: no positive forward time (forward_ms.median)")
        e.name = f"{r['backend']}:{identity.current_variant(r['backend'], r['variant'])}/images:{images}/threads:{threads}"
        raise e
    if not _forward_time(median):
        what = "missing" if median is None else _shown_value(median)
        raise ReportError(f"{where}: forward_ms.median is {what}, not a time in ms (a finite number of at least "
                          f"{MIN_FORWARD_MS:g})")
    fwd = fwd if isinstance(fwd, dict) else {}
    samples = fwd.get("samples")
    samples = [] if samples is None else samples
    if not isinstance(samples, list):
        raise ReportError(f"{where}: forward_ms.samples is not a list")
    for k, x in enumerate(samples):
        if not _forward_time(x):
            raise ReportError(f"{where}: forward_ms.samples[{k}] is {_shown_value(x)}, not a time in ms")
    ips = _number(r, "images_per_s", where=where) or images / (median / 1000.0)
    flops = _number(meta, "flops_per_image", where=f"{path}: meta")
    gflops = _number(r, "gflop_per_s", where=where) or (ips * flops / 1e9 if flops else 0.0)
    acc = r.get("accuracy")
    if _is_number(acc):
        _number(r, "accuracy", where=where)
    load_readings = r.get("machine_load")

    def number_dict(key):
        d = r.get(key)
        return {k: float(v) for k, v in d.items() if _is_number(v) and math.isfinite(v)} if isinstance(d, dict) else {}

    layers = number_dict("layers_ms")
    order = ["conv1", "relu1", "pool1", "conv2", "relu2", "pool2", "conv3", "relu3", "pool3", "fc", "softmax"]
    layers = dict(sorted(layers.items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else len(order)))
    variant = identity.current_variant(r["backend"], r["variant"])
    arith = r.get("arithmetic") if isinstance(r.get("arithmetic"), dict) else {}
    executed = _number(arith, "executed_flop_per_image")
    arith_parts = _arith_parts(arith, executed, ips)
    run = Run(
        backend=r["backend"],
        variant=variant,
        reported_variant=r["variant"],
        arith_unit=arith.get("unit") if isinstance(arith.get("unit"), str) else "",
        arith_parts=arith_parts,
        images=images,
        forward_ms=float(median),
        device=r.get("device") if isinstance(r.get("device"), str) else "",
        threads=threads,
        batch=_count(r, "batch", where, 0),
        distinct_images=_count(r, "distinct_images", where, images),
        forward_min_ms=_number(fwd, "min", median, where=f"{where}: forward_ms"),
        forward_max_ms=_number(fwd, "max", median, where=f"{where}: forward_ms"),
        samples=[float(x) for x in samples],
        images_per_s=ips,
        gflop_per_s=gflops,
        accuracy=float(acc) if _is_number(acc) else None,
        validation=validation,
        phases_ms=number_dict("phases_ms"),
        layers_ms=layers,
        device_info=r.get("device_info") if isinstance(r.get("device_info"), dict) else {},
        machine=machine,
        source=str(path),
        date=meta.get("date_utc", "") if isinstance(meta.get("date_utc"), str) else "",
        git_commit=meta.get("git_commit", "") if isinstance(meta.get("git_commit"), str) else "",
        git_dirty=meta.get("git_dirty") is True,  # the string "true" is not true
        meta_peak_gflops=_number(meta, "peak_gflops", where=f"{path}: meta"),
        machine_load=({k: float(v) for k, v in load_readings.items() if _is_number(v) and math.isfinite(v)}
                      if isinstance(load_readings, dict) else {}),
        mpi=_mpi_of(r, where),
    )
    run.platform = identity.platform_of(run.on_gpu, run.device, run.device_info, machine.cpu_model,
                                        machine.logical_cores, machine.gpu_name, machine.label_text)
    return run


def _machine(meta, runs, set_name):
    """A report's machine; its GPU from meta.gpu, else from the first run that names one (a report of
    Kokkos-CUDA runs alone has no meta.gpu)."""
    gpu = meta.get("gpu") if isinstance(meta.get("gpu"), dict) else {}
    gpu_name = str(gpu.get("gpu_name", "") or "")
    for r in runs if not gpu_name else []:
        info = r.get("device_info") if isinstance(r, dict) else None
        if isinstance(info, dict) and isinstance(info.get("gpu_name"), str) and info["gpu_name"]:
            gpu_name = info["gpu_name"]
            break
    cores = meta.get("logical_cores")
    return Machine(
        set_name=set_name,
        host=str(meta.get("host", "") or "unknown host"),
        cpu_model=str(meta.get("cpu_model", "") or ""),
        gpu_name=gpu_name,
        logical_cores=int(cores) if _is_number(cores) and 0 < cores < MAX_COUNT else 0,  # NaN: unknown
        label_text=str(meta.get("label", "") or "") if isinstance(meta.get("label", ""), str) else "",
    )


def is_suite_report(data):
    """Whether parsed JSON is a suite report at all (any schema_version): what a folder scan reads."""
    return isinstance(data, dict) and "schema_version" in data


def read_report(path, set_name="", strict=True):
    """Reads one report. Returns None (after a note on stderr) for a file that a folder scan skips."""
    path = Path(path)
    where = shown(path)
    try:
        # safe_io: /dev/zero, a FIFO or a file over the size limit is refused in one line, not read
        text = safe_io.read_text(where, "file or folder")
    except safe_io.UnsafePath as e:
        raise ReportError(str(e)) from None
    if not text.strip():
        raise ReportError(f"{where}: empty file, not a report")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise ReportError(f"{where}: not JSON (line {e.lineno} column {e.colno}: {e.msg})") from None
    except RecursionError:
        raise ReportError(f"{where}: JSON nested too deeply to be a report") from None
    except ValueError as e:  # an integer of more than 4300 digits (Python's int/str conversion limit)
        raise ReportError(f"{where}: not a readable report ({str(e).split(';')[0]})") from None
    if not is_suite_report(data):
        if strict:
            raise ReportError(f"{where}: not a suite report (no schema_version)")
        print(f"note: skipping {where}: not a suite report (no schema_version)", file=sys.stderr)
        return None
    version = data["schema_version"]
    if version != SCHEMA_VERSION:
        raise ReportError(f"{where}: schema_version {version!r} is not supported (these tools read {SCHEMA_VERSION})")
    meta = data.get("meta", {})
    if not isinstance(meta, dict):
        raise ReportError(f"{where}: 'meta' is not an object")
    runs = data.get("runs")
    if not isinstance(runs, list):
        raise ReportError(f"{where}: no 'runs' list")
    if not runs:
        if strict:
            raise ReportError(f"{where}: the report has no runs")
        print(f"note: skipping {where}: the report has no runs", file=sys.stderr)
        return None
    _count(meta, "logical_cores", f"{where}: meta", 0)  # NaN, Infinity, "2": bad input, not 0 cores
    machine = _machine(meta, runs, set_name)
    parsed, untimed = [], []
    for i, r in enumerate(runs):
        try:
            parsed.append(_parse_run(where, i, r, machine, meta))
        except UntimedRun as e:
            if len(runs) == 1:
                raise
            print(f"note: left out {e}", file=sys.stderr)
            untimed.append(e)
    if not parsed:
        raise ReportError(f"{where}: no run has a forward time")
    return Report(path=where, meta=meta, runs=parsed, untimed=untimed)


def shown(path):
    """The path as the user would write it: relative to the working folder where it is inside it."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return str(path)
    return str(Path(path).absolute()) if rel.startswith("..") else rel


def find_report_files(root):
    """JSON files under a folder, sorted, skipping local/ and charts/ directly under it."""
    root = Path(root)
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        if here == root:
            dirnames[:] = [d for d in dirnames if d not in SKIPPED_DIRS]
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for f in sorted(filenames):
            if f.endswith(".json") and f not in PEAK_FILES:
                if _regular(here / f):
                    out.append(here / f)
    return out


def _regular(path):
    """A FIFO, device, socket or dangling link named *.json in a scanned folder is skipped with a note:
    reading it would block forever (a FIFO) or never end (/dev/zero)."""
    try:
        mode = os.stat(path).st_mode
    except OSError as e:
        print(f"note: skipping {shown(path)}: cannot read ({os.strerror(e.errno) if e.errno else e})",
              file=sys.stderr)
        return False
    if not stat.S_ISREG(mode):
        print(f"note: skipping {shown(path)}: not a regular file (a FIFO, device or socket)", file=sys.stderr)
        return False
    return True


def load_reports(paths=None, default=DEFAULT_RESULTS, allow_empty=False, skip_bad=False):
    """Reports from files and folders (default: results/). Raises ReportError on bad input; with
    skip_bad, a bad report found in a folder is skipped with a note instead."""
    paths = [Path(p) for p in paths] if paths else [Path(default)]
    reports = []
    for p in paths:
        if p.is_dir():
            for f in find_report_files(p):
                rel = f.parent.relative_to(p)
                set_name = "" if str(rel) == "." else rel.as_posix()
                try:
                    rep = read_report(f, set_name=set_name, strict=False)
                except ReportError as e:
                    if not skip_bad:
                        raise
                    print(f"note: skipping {e}", file=sys.stderr)
                    continue
                if rep:
                    reports.append(rep)
        else:
            reports.append(read_report(p))
    if not reports and not allow_empty:
        raise ReportError(f"{', '.join(shown(p) for p in paths)}: no suite reports found")
    return reports


def all_runs(reports):
    return [r for rep in reports for r in rep.runs]
