#!/usr/bin/python3
"""No file outside a backend's folder names a backend (README.md, "Adding a backend"), except README.md,
results/ (committed reports), generated files (not in git) and the allow-list below, each entry with why.
The names are the folders under backends/, so a new backend is checked as soon as it exists.
  backend_names_test.py <source dir>       (exit 77, skipped, outside a git checkout)
"""

import re
import subprocess
import sys
from pathlib import Path

# Where a backend's name is no list of backends: path prefix -> why it may name one.
ALLOWED = {
    "backends/": "a backend's own folder; its README and comments may point at another's code",
    "results/": "committed reports: data, named by what ran",
    "README.md": "the project's description and figures",
    "CMakePresets.json": "Kokkos_ROOT names the OpenMP space of Kokkos' install folder, not a backend",
    "cmake/SuiteCuda.cmake": "/usr/local/cuda is the CUDA toolkit's folder",
    "common/kernels/": "shared kernels: comments say which variants use them (their code names none)",
    "benchmarks/": "micro-benchmarks of named variants' kernels and of the GPU's peaks",
    "suite/main.cpp": "why OpenMP threads are bound as Kokkos asks: a comment about two runtimes",
    "scripts/README.md": "the scripts' manual: examples with real backend names",
    "scripts/build-kokkos.sh": "builds one backend's toolchain (Kokkos)",
    "scripts/openacc-runtime.sh": "carries GCC's offload runtime, named after the model it serves",
    "scripts/gpu-libs.sh": "the GPU machine's CUDA/cuDNN library paths",
    "scripts/gpu-tensor-bench.sh": "a measurement of named CUDA variants (tensor-core paths)",
    "scripts/cpu-bench.sh": "a measurement of named CPU variants' kernels",
    "scripts/gpu-bench.sh": "named comparisons (Kokkos-CUDA beside a CUDA variant), OOM/sanitizer/Nsight checks of "
                            "named variants, PyTorch's device 'cuda'; its lists come from scripts/backends",
    "scripts/verdict-bench.sh": "Kokkos-CUDA beside the fastest CUDA variant, PyTorch's device 'cuda'; its lists "
                                "come from scripts/backends",
    "scripts/gpu-build.sh": "Kokkos' CUDA install folder and build/cuda, the GPU build's folder; its backend "
                            "selections come from scripts/backends",
    "scripts/verdict-build.sh": "Kokkos' install folders (openmp, cuda spaces), the offload runtime script; its "
                                "backend selections come from scripts/backends",
    "scripts/run-suite.sh": "the quick start builds Kokkos' OpenMP space (scripts/build-kokkos.sh)",
    "scripts/run-tests.sh": "the quick start builds Kokkos' OpenMP space (scripts/build-kokkos.sh)",
    "scripts/peer_pytorch.py": "the PyTorch peer: 'cuda' is PyTorch's device name",
    "scripts/suitereport/charts.py": "help text: the speedup chart's baseline by name",
    "scripts/suitereport/plot_main.py": "help text: the speedup chart's baseline by name",
    "scripts/suitereport/readme_main.py": "a chart title: the speedup's baseline by name",
    "scripts/suitereport/report_main.py": "help text: the speedups' baseline and peers by name",
    "scripts/suitereport/dashboard.py": "an example URL in a docstring",
    "scripts/suitereport/history_main.py": "an example command in the help",
    "scripts/suitereport/portability.py": "examples of models in a docstring",
    "scripts/suitereport/load.py": "'cuda' in a device name marks a GPU run (a device, not a backend)",
    "scripts/suitereport/backfill.py": "the default set of named CPU variants a history backfill measures",
    "scripts/tests/": "the report tools' tests and fixtures: reports, which name what ran",
    "tests/test_cli.cpp": "CLI tests run the baseline (built everywhere) and check named GPU refusals",
    "tests/test_gbench.cpp": "runs the baseline, built everywhere",
    "tests/test_nothing_lost.cpp": "runs the baseline, built everywhere",
    "tests/test_support.cpp": "the interrupted run is the baseline's slowest variant, built everywhere",
    "tests/test_support.hpp": "documents that interrupted run",
    "tests/new_backend/backend_names_test.py": "this allow-list: its reasons quote names",
    "tests/mpi/mpi_test.sh": "runs two ranks of the baseline, built everywhere",
    "scripts/mpi-scaling.sh": "the runs issue 30 names: openmp:winograd on the Xeon host, cuda:fused_fp16x3 on its GPU",
    "tests/install_test.sh": "runs the installed suite on the baseline, built everywhere",
}


def main():
    src = Path(sys.argv[1]).resolve()
    names = sorted(p.name for p in (src / "backends").glob("*") if p.is_dir())
    if not names:
        print("backend_names_test: FAILED: no folder under backends/", file=sys.stderr)
        return 1
    try:
        done = subprocess.run(["git", "-C", src, "grep", "-l", "-I", "-E", r"\b(" + "|".join(names) + r")\b"],
                              capture_output=True, text=True, timeout=120, check=False)
    except (OSError, subprocess.SubprocessError) as e:
        print(f"backend_names_test: skipped: git grep cannot run ({e})")
        return 77
    if done.returncode not in (0, 1):  # 1: no match at all
        print(f"backend_names_test: skipped: not a git checkout ({done.stderr.strip()})")
        return 77
    unexpected = [f for f in done.stdout.splitlines() if not any(f.startswith(p) for p in ALLOWED)]
    if unexpected:
        print("backend_names_test: FAILED: these files name a backend (" + ", ".join(names) + ") outside its "
              "folder; take the list from the manifests (scripts/backends, suite --list --format json) or add the "
              "file to ALLOWED with why:\n  " + "\n  ".join(unexpected), file=sys.stderr)
        return 1
    stale = [p for p in ALLOWED if not re.match(r"^(backends|results)/$", p) and not (src / p).exists()]
    if stale:
        print("backend_names_test: FAILED: allow-list entries for paths that no longer exist: " + ", ".join(stale),
              file=sys.stderr)
        return 1
    print(f"backend_names_test: no backend named outside its folder but in the {len(ALLOWED)} allowed places")
    return 0


if __name__ == "__main__":
    sys.exit(main())
