#!/usr/bin/env bash
# The suite under mpirun with 2 ranks on the CPU (README, "Under MPI"): split and replicate validate on both
# ranks and make one report; a rank that reads bad data or fails validation ends the job with that exit
# code and one line naming the rank. Skipped (77) where the suite was built without MPI or mpirun is absent.
# The runs are the baseline's (backend:variant, from the manifests: tests/CMakeLists.txt), a CPU run.
set -uo pipefail
suite=${1:?usage: mpi_test.sh <suite> <suite_mpi_faulty|none> <baseline backend:variant>}
faulty=${2:?}
baseline=${3:?}
if ! command -v mpirun >/dev/null; then echo "skipped: no mpirun (Debian: openmpi-bin)"; exit 77; fi
if [ "$faulty" = none ]; then echo "skipped: the suite was built without MPI (Debian: libopenmpi-dev)"; exit 77; fi
# OpenMPI refuses to start as root unless both are set (containers, CI); harmless for other users.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# The sanitizer build: OpenMPI keeps allocations of its dlopen'ed components past MPI_Finalize, which
# LeakSanitizer reports as leaks (in "<unknown module>": no suppression can name them); the suite's own
# leaks are checked by every other test of that build.
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*"; for f in err*.txt; do [ -f "$f" ] && { echo "--- $f"; cat "$f"; }; done; exit 1; }
mpi() { mpirun -q -n 2 --oversubscribe "$@"; }
# 240 images: the baseline is the thesis' naive loops, which take minutes at 1200 under the sanitizer build.
run_args=(--backend "$baseline" --images 240 --quiet)

# split: 120 images a rank, each validated, one report with both ranks' figures; the .npy in image order;
# each rank takes its GPU from CUDA_VISIBLE_DEVICES (no CUDA is initialised for a CPU run)
"$suite" "${run_args[@]}" --output solo.json --save-probs solo.npy 2>err-solo.txt || fail "single process"
mpi -x CUDA_VISIBLE_DEVICES=4,6 "$suite" "${run_args[@]}" --output split.json --save-probs split.npy 2>err-split.txt ||
  fail "split: exit $?"
cmp -s solo.npy split.npy || fail "split: the gathered probabilities differ from a single process's"
# replicate, the CPUs shared out by the suite itself (mpirun binds none): a block of them each
mpi --bind-to none "$suite" "${run_args[@]}" --mpi-mode replicate --output replicate.json 2>err-replicate.txt ||
  fail "replicate: exit $?"
CPUS=$(nproc) python3 - <<'PY' || fail "replicate.json: the ranks' CPUs"
import json, os
def cpus(text):
    out = set()
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out |= set(range(int(lo), int(hi or lo) + 1))
    return out
meta = json.load(open("replicate.json"))["meta"]
b = meta["mpi"]["binding"]
assert meta["openmp_proc_bind"] == "", meta["openmp_proc_bind"]  # no default binding under a launcher
if int(os.environ["CPUS"]) >= 2:
    assert not cpus(b[0]["cpus"]) & cpus(b[1]["cpus"]), b
assert all(x["threads"] == len(cpus(x["cpus"])) for x in b), b
PY
python3 - <<'PY' || fail "the reports"
import json
solo = json.load(open("solo.json"))["runs"][0]
for name, mode, per_rank in (("split", "split", 120), ("replicate", "replicate", 240)):
    r = json.load(open(name + ".json"))
    m = r["meta"]["mpi"]
    assert m["ranks"] == 2 and m["mode"] == mode, m
    assert [b["rank"] for b in m["binding"]] == [0, 1] and all(b["cpus"] for b in m["binding"]), m
    run = r["runs"][0]
    assert run["mpi"]["images_per_rank"] == [per_rank, per_rank], run["mpi"]
    ranks = run["mpi"]["validation_per_rank"]
    assert [(v["rank"], v["passed"], v["compared"]) for v in ranks] == [(0, True, per_rank), (1, True, per_rank)], ranks
    assert run["validation"]["passed"] and run["validation"]["compared"] == 2 * per_rank, run["validation"]
    assert run["images"] == 240 and run["accuracy"] == solo["accuracy"] and solo["images"] == 240, run
    slowest = run["forward_ms"]["median"]
    assert max(run["mpi"]["forward_median_ms_per_rank"]) <= run["forward_ms"]["max"] + 1e-9, run["mpi"]
    assert abs(run["mpi"]["aggregate_images_per_s"] - 2 * per_rank / (slowest / 1000)) < 1e-6 * run["mpi"]["aggregate_images_per_s"]
    assert run["mpi"]["load_imbalance"] >= 1.0
gpus = [b["gpu"] for b in json.load(open("split.json"))["meta"]["mpi"]["binding"]]
assert gpus == ["4", "6"], gpus
print("split and replicate reports ok")
PY

# one line naming the rank, its exit code, and no report; `expect CODE PATTERN LOG REPORT`
expect() {
  local code=$1 pattern=$2 log=$3 report=$4
  [ "$(grep -c '^suite:' "$log")" = 1 ] || fail "$log: not one line from the suite"
  grep -q "$pattern" "$log" || fail "$log: no line matching '$pattern'"
  [ "$5" = "$code" ] || fail "$log: exit $5, expected $code"
}
printf 'not a CIFAR-10 file' >bad.bin
mpirun -q -n 1 "$suite" "${run_args[@]}" --output bad.json : -n 1 "$suite" "${run_args[@]}" --data bad.bin \
  --output bad.json 2>err-bad.txt
expect 3 '^suite: error: rank 1: bad.bin: size 19 is not a multiple' err-bad.txt bad.json $?
[ ! -e bad.json ] || fail "bad data on rank 1 left a report"
# every rank failing alike: the line names no rank
mpi "$suite" "${run_args[@]}" --data bad.bin --output bad.json 2>err-bad-both.txt
expect 3 '^suite: error: bad.bin: size 19 is not a multiple' err-bad-both.txt bad.json $?
[ ! -e bad.json ] || fail "bad data on both ranks left a report"
ls -A | grep -q '^\.\|suite-' && fail "a temporary or default-named file was left: $(ls -A)"

# validation fails on rank 1 only: exit 5, the rank named, the report written and saying which rank failed
mpi "$faulty" --backend faulty:rank1 --images 20 --quiet --output faulty.json 2>err-faulty.txt
expect 5 '^suite: error: rank 1: validation failed for faulty:rank1 on 10 images' err-faulty.txt faulty.json $?
python3 -c "
import json; v = json.load(open('faulty.json'))['runs'][0]['mpi']['validation_per_rank']
assert [x['passed'] for x in v] == [True, False], v" || fail "faulty.json does not say that rank 1 failed"

# a forward pass fails on rank 1 while rank 0 waits at the pass's barrier: both end, exit 1, no report
timeout 120 mpirun -q -n 2 --oversubscribe "$faulty" --backend faulty:rank1_throws --images 20 --quiet \
  --output throws.json 2>err-throws.txt
expect 1 '^suite: error: rank 1: faulty:rank1_throws: a forward pass failed on this rank' err-throws.txt throws.json $?
[ ! -e throws.json ] || fail "a failed forward pass on rank 1 left a report"

# --mpi-mode outside an MPI job: a usage error
"$suite" --mpi-mode split --backend "$baseline" --images 20 --quiet --output none.json 2>err-usage.txt
expect 2 '^suite: error: --mpi-mode: only for a suite started by an MPI launcher' err-usage.txt none.json $?
echo "mpi tests passed"
