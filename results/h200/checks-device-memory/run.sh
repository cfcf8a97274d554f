#!/usr/bin/env bash
# The GPU machine's check of memory_bytes.device_peak: every GPU variant names the device memory it held
# (the naive offload variants, which copy per layer, and Kokkos-CUDA said 0 before). Run from the repository
# root there, with build/cuda and build/cuda-kokkos made here by scripts/gpu-build.sh and carried.
#   results/h200/checks-device-memory/run.sh <out-dir>
set -uo pipefail
out=${1:?usage: run.sh <out-dir>}
build=build/cuda
source scripts/gpu-libs.sh
suite=$build/bin/suite
in=(--data data/cifar10 --weights data/convnetjs-cifar10)
work=$(mktemp -d)
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$work/device.txt"
echo "=== every GPU variant of the main binary, 1200 and 50000 images"
gpu=$(python3 scripts/backends --suite "$suite" --where kind=gpu --variants)
"$suite" "${in[@]}" --backend "$gpu" --images 1200,50000 --quiet --output "$work/gpu.json"; echo "rc=$?"
echo "=== Kokkos-CUDA beside cuda:winograd_mma (the verdict's run: 1200 and 50000 images, --repeat 20)"
backends/kokkos/gpu-bench.sh --verdict "$build" "$work"; echo "rc=$?"
python3 - "$work/gpu.json" "$work/kokkos-cuda-suite.json" <<'PY' | tee "$work/memory.txt"
import json, sys
for path in sys.argv[1:]:
    for r in json.load(open(path))["runs"]:
        m = r.get("memory_bytes", {})
        print(f'{r["backend"]}:{r["variant"]:<22} {r["images"]:>6} images  device peak {m.get("device_peak", 0) / 2**20:9.1f} MiB'
              f'  forward median {r["forward_ms"]["median"]:.3f} ms  {"validated" if r["validation"]["passed"] else "FAILED"}')
PY
echo "=== suite_tests, the whole binary, on this machine"
timeout 400 "$build/tests/suite_tests" --gtest_brief=1 > "$work/gtests.txt" 2>&1; echo "rc=$?"; tail -n 15 "$work/gtests.txt"
gzip -9 "$work"/*.json
cp "$work"/* "$out"/
ls -la "$out"
