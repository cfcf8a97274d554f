#!/usr/bin/python3
"""No file outside a backend's folder names a backend (README.md, "Adding a backend"), except README.md,
results/ (committed reports) and generated files (not in git). The names are the folders under backends/,
so a new backend is checked as soon as it exists.

Words that spell a backend's name but mean something else (the CUDA toolkit's folder, PyTorch's device) are
cut out of each line before it is matched (NOT_BACKENDS), so that a backend named elsewhere in the same
line or file is still found. The few files that name backends by design say why in NAMED.
  backend_names_test.py <source dir>       (exit 77, skipped, outside a git checkout)
"""

import re
import subprocess
import sys
from pathlib import Path

# Where a backend may be named: path prefix -> why.
ALLOWED = {
    "backends/": "a backend's own folder; its README, tests and comments may point at another's code",
    "results/": "committed reports: data, named by what ran",
    "README.md": "the project's description and figures",
}

# Files that name backends by design, each with why; keep it short (the test fails on an entry that no
# longer names one).
NAMED = {
    "scripts/README.md": "the report tools' manual: measured examples, named by what ran (as README.md)",
    "scripts/tests/": "the report tools' tests and their fixtures: reports, named by what ran (as results/)",
    "tests/new_backend/backend_names_test.py": "this test: its patterns and checks spell the words they cut out",
}

# Words that are no backend, cut out of a line before it is matched: (regex, why). Each must still occur
# somewhere (the test fails on one that matches nothing), and each is narrow enough that a backend named
# beside it is still found.
NOT_BACKENDS = [
    (r"/usr/local/cuda\b", "the CUDA toolkit's folder"),
    (r"\bcommon/kernels/cuda\b|\bcnn::cuda\b|\bcuda::(?=\w)",
     "the CUDA language's shared code (common/kernels/cuda/, namespace cnn::cuda), named after the language as "
     "cpu/ and offload/ are after theirs"),
    (r"\"cuda: ", "the prefix of the CUDA runtime's errors (README: exit codes), from the shared CUDA code"),
    (r"\bbuild/cuda\b", "the GPU build's default folder (scripts/gpu-build.sh), named after the toolkit it needs"),
    (r"\bkokkos-install/(openmp|cuda)\b",
     "Kokkos' install folders, one per execution space (OpenMP, CUDA)"),
    (r"\btorch\.(cuda|version\.cuda|backends\.cuda|backends\.cudnn)\b|\bcudnn\.benchmark\b|--device cuda\b|"
     r"device == \"cuda\"|\"cpu\", \"cuda\"|pytorch[-:]cuda\b",
     "PyTorch's device 'cuda' and its cuda/cudnn modules (the peer, scripts/peer_pytorch.py)"),
    (r"\(gpu\|cuda\|nvidia\|", "a GPU's device name, as a report records it, contains 'cuda'"),
    (r"#include <openacc\.h>", "the OpenACC runtime's API, through which libgomp's OpenMP offload is asked of its "
     "GPU too (common/kernels/offload/)"),
]


def names_in(line, names):
    """The backend names a line still holds once the NOT_BACKENDS words are cut out."""
    for pattern, _ in NOT_BACKENDS:
        line = re.sub(pattern, " ", line)
    return sorted(set(re.findall(r"\b(" + "|".join(map(re.escape, names)) + r")\b", line)))


def allowed(path, table):
    return any(path == p or (p.endswith("/") and path.startswith(p)) for p in table)


def self_check(names):
    """This test can fail: a name planted beside each word cut out is still found, and the words are cut."""
    samples = ["/usr/local/cuda/bin", "common/kernels/cuda/x.hpp", "namespace cnn::cuda {", "\"cuda: out of",
               "build/kokkos-install/openmp", "build/cuda", "torch.cuda.synchronize()", "--device cuda",
               "(gpu|cuda|nvidia|h100)", "#include <openacc.h>"]
    for sample in samples:
        if names_in(sample, names):
            return f"a non-backend word is not cut out: {sample!r} -> {names_in(sample, names)}"
        for name in names:
            if names_in(f"{sample} --backend {name}", names) != [name]:
                return f"'--backend {name}' beside {sample!r} is not found"
    return None


def main():
    src = Path(sys.argv[1]).resolve()
    names = sorted(p.name for p in (src / "backends").glob("*") if p.is_dir())
    if not names:
        print("backend_names_test: FAILED: no folder under backends/", file=sys.stderr)
        return 1
    broken = self_check(names)
    if broken:
        print(f"backend_names_test: FAILED: the check itself: {broken}", file=sys.stderr)
        return 1
    # safe.directory: a clone owned by another user (a CI checkout) is read, never written.
    try:
        done = subprocess.run(["git", "-c", f"safe.directory={src}", "-C", src, "grep", "-n", "-I", "-E",
                               r"\b(" + "|".join(names) + r")\b"],
                              capture_output=True, text=True, timeout=120, check=False)
    except (OSError, subprocess.SubprocessError) as e:
        print(f"backend_names_test: skipped: git grep cannot run ({e})")
        return 77
    if done.returncode not in (0, 1):  # 1: no match at all
        print(f"backend_names_test: skipped: not a git checkout ({done.stderr.strip()})")
        return 77
    unexpected, named_files, cut = [], set(), set()
    for hit in done.stdout.splitlines():
        path, number, text = hit.split(":", 2)
        if allowed(path, ALLOWED):
            continue
        for pattern, _ in NOT_BACKENDS:
            if re.search(pattern, text):
                cut.add(pattern)
        found = names_in(text, names)
        if not found:
            continue
        entry = next((p for p in NAMED if allowed(path, {p: ""})), None)
        if entry:
            named_files.add(entry)
        else:
            unexpected.append(f"{path}:{number}: {', '.join(found)}: {text.strip()[:120]}")
    if unexpected:
        print("backend_names_test: FAILED: these lines name a backend (" + ", ".join(names) + ") outside its "
              "folder; take the names from the manifests (scripts/backends, suite --list --format json, the "
              "tests' kBaseline), move the file into the backend's folder, or, for a word that is no backend, "
              "add a narrow pattern to NOT_BACKENDS with why:\n  " + "\n  ".join(unexpected), file=sys.stderr)
        return 1
    stale = [p for p in NAMED if p not in named_files] + [p for p, _ in NOT_BACKENDS if p not in cut]
    if stale:
        print("backend_names_test: FAILED: entries that no longer match anything (remove them): " + ", ".join(stale),
              file=sys.stderr)
        return 1
    print(f"backend_names_test: no backend named outside its folder but in {len(ALLOWED)} allowed places and "
          f"{len(NAMED)} files that name them by design")
    return 0


if __name__ == "__main__":
    sys.exit(main())
