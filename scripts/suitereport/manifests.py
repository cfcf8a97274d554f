"""The backends' manifests (backends/<model>/manifest.json), the only list of backends: CMake reads their
order and kind, the scripts (scripts/backends) and the report tools read the rest from here.

Fields (README.md, "Adding a backend"): order, kind (cpu, gpu, portable), label, and optionally vendor,
baseline, packages, host_fallback, host_libraries, cuda_build, slow, scaling, history, renamed, quick_start, the hooks cpu_build, gpu_build, gpu_bench,
verdict_bench, cpu_bench (scripts/backend-hooks.sh), readme_blocks (readme_blocks.py).
"""

import json
from functools import lru_cache
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
# The source tree (scripts/suitereport -> backends/), or an install (share/cnn-suite/scripts -> backends/).
BACKENDS_DIR = REPO_ROOT / "backends"
PEER = ("pytorch", "PyTorch")  # scripts/peer_pytorch.py: a framework beside the backends, not a backend folder


def manifests(root=None):
    """{backend: manifest dict} in the suite's order (manifest "order", then name). A manifest that cannot
    be read counts as {} (its folder is still a backend; CMake stops on it with what to fix)."""
    return _read(Path(root or BACKENDS_DIR))


@lru_cache(maxsize=None)
def _read(root):
    found = {}
    for manifest in sorted(root.glob("*/manifest.json")):
        try:
            data = json.loads(manifest.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = {}
        found[manifest.parent.name] = data if isinstance(data, dict) else {}

    def rank(name):
        order = found[name].get("order")
        return (order if isinstance(order, int) else 1 << 30, name)

    return {name: found[name] for name in sorted(found, key=rank)}


def suite_order():
    """Backend names in the order of `suite --list`, the peer last (the charts' colours follow it)."""
    return tuple(manifests()) + (PEER[0],)


def baseline():
    """(backend, variant) every speedup is measured against: the manifest with "baseline"."""
    for name, m in manifests().items():
        if isinstance(m.get("baseline"), str):
            return (name, m["baseline"])
    return ("", "")


def vendor_peers():
    """{backend: label} of the vendor libraries (manifest "vendor": true) and the framework peer: the GPU
    libraries, the peer (it runs on both devices), then the CPU libraries, so columns read GPU to CPU."""
    vendors = [(name, m) for name, m in manifests().items() if m.get("vendor") is True]
    peers = {name: m.get("label", name) for name, m in vendors if m.get("kind") == "gpu"}
    peers[PEER[0]] = PEER[1]
    peers.update({name: m.get("label", name) for name, m in vendors if m.get("kind") != "gpu"})
    return peers


def history_set():
    """The history's default benchmark set: every manifest's "history" variants, as backend:variant, in the
    suite's order."""
    return tuple(f"{name}:{v}" for name, m in manifests().items()
                 for v in (m.get("history") if isinstance(m.get("history"), list) else []))


def cpu_build_hooks(chosen):
    """[(backend, hook's argv)] of the chosen backends whose manifest has a "cpu_build" (a script of its
    folder that prepares a toolchain Debian lacks and prints the CMake arguments to build on it)."""
    out = []
    for name, m in manifests().items():
        hook = m.get("cpu_build")
        if name in chosen and isinstance(hook, str) and hook.strip():
            words = hook.split()
            out.append((name, [str(BACKENDS_DIR / name / words[0]), *words[1:]]))
    return out


def cmake_off(chosen):
    """-DWITH_<NAME>=OFF for every backend not in `chosen` (names): how a build leaves them out."""
    return [f"-DWITH_{name.upper()}=OFF" for name in manifests() if name not in chosen]
