"""What a run is, whatever its report is called or where it is kept: the platform it ran on and its
variant's current name. Every tool (report, plot, compare, history, the portability verdict) asks here.

Platform: the hardware, never the host name (every VM calls itself `vm`) nor the folder (folders are
storage). A GPU run's platform is its GPU (the host CPU only feeds it); a CPU run's is the CPU model with
its logical core count (the 2-core EPYC VM and a 64-core EPYC are different platforms). A user label
(`suite --label`, meta.label) is added where two machines share a CPU model and core count but must be
told apart. An offload model that fell back to the host (no device) ran on no platform of its own: it is
marked `host_fallback` and counts on no CPU platform.

Session: the Linux boot a run was in (meta.boot_id; this_boot_id() for runs the tools start): two runs of
one boot compare like for like (history.judge_across_boots).

Variant names: a backend folder's manifest.json lists the names its variants had before ("renamed":
{"old": "new"}); reports are read with the new names, so old and new runs are one series everywhere.
"""

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from . import manifests as backend_manifests

REPO_ROOT = backend_manifests.REPO_ROOT
BACKENDS_DIRS = (backend_manifests.BACKENDS_DIR,)
BOOT_ID_RE = re.compile(r"^[0-9a-f-]{1,64}$")  # a UUID, as Linux writes it


def this_boot_id():
    """The running boot's id (Linux), as the suite records it in meta.boot_id; "" where there is none."""
    try:
        text = Path("/proc/sys/kernel/random/boot_id").read_text()[:100].strip()
    except OSError:
        return ""
    return text if BOOT_ID_RE.match(text) else ""


@dataclass(frozen=True)
class Platform:
    id: str  # stable and file-name safe: "cpu-amd-epyc-2c", "gpu-nvidia-h200"
    kind: str  # "cpu" or "gpu"
    label: str  # for people: "AMD EPYC, 2 cores", "NVIDIA H200"
    cores: int = 0  # logical cores of a CPU platform


def slug(text):
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _clean_cpu(model):
    """`Intel(R) Xeon(R) Processor` -> `Intel Xeon Processor`: the marks are not part of the name."""
    return re.sub(r"\s+", " ", re.sub(r"\((R|TM|tm|r)\)", "", model)).strip()


def cpu_platform(cpu_model, logical_cores, label=""):
    name = _clean_cpu(cpu_model or "") or "unknown CPU"
    cores = int(logical_cores or 0)
    text = f"{name}, {cores} cores" if cores else name
    pid = f"cpu-{slug(name)}" + (f"-{cores}c" if cores else "")
    if label:
        text += f" ({label})"
        pid += f"-{slug(label)}"
    return Platform(pid[:120], "cpu", text, cores)


def gpu_platform(gpu_name, label=""):
    name = (gpu_name or "").strip() or "unknown GPU"
    text, pid = name, f"gpu-{slug(name)}"
    if label:
        text += f" ({label})"
        pid += f"-{slug(label)}"
    return Platform(pid[:120], "gpu", text, 0)


def is_host_fallback(device):
    """An offload model's run on the host because no device was found (its device string says so)."""
    return str(device).lower().startswith("host fallback")


def gpu_name_of(device_info, meta_gpu_name, device):
    """The GPU a GPU run used: its own device_info, else the report's meta.gpu, else its device string."""
    name = str((device_info or {}).get("gpu_name", "") or "")
    if name:
        return name
    if meta_gpu_name:
        return meta_gpu_name
    m = re.search(r"\b((?:NVIDIA|AMD|Intel)\s+[A-Za-z0-9 -]*\d[A-Za-z0-9-]*)", str(device))
    return m.group(1).strip() if m else ""


def platform_of(on_gpu, device, device_info, cpu_model, logical_cores, meta_gpu_name="", label=""):
    if on_gpu:
        return gpu_platform(gpu_name_of(device_info, meta_gpu_name, device), label)
    return cpu_platform(cpu_model, logical_cores, label)


@lru_cache(maxsize=None)
def renamed_variants():
    """{(backend, old variant): new variant} from every backends/<model>/manifest.json."""
    table = {}
    for root in BACKENDS_DIRS:
        for backend, data in backend_manifests.manifests(root).items():
            renamed = data.get("renamed")
            if isinstance(renamed, dict):
                for old, new in renamed.items():
                    if isinstance(old, str) and isinstance(new, str):
                        table[(backend, old)] = new
    return table


def current_variant(backend, variant):
    """The variant's name today (a renamed variant's old name maps to its new one)."""
    return renamed_variants().get((backend, variant), variant)
