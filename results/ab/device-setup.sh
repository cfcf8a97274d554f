# Sourced on the GPU machine by the A/B scripts under results/ab/, as `source results/ab/device-setup.sh TARBALL`
# (a build/exp/NAME.tar.xz carried there) with $OUT set: unpacks it into a fresh folder of its own (mktemp -d,
# so that no earlier tarball's files and no folder another user made are used) as $B, and $build for
# scripts/gpu-libs.sh, which puts its libraries on LD_LIBRARY_PATH; makes $R (under $OUT) with the GPU and
# the boot in $R/device.txt, and sets $in to the suite's data and weights. A missing tarball or $OUT returns 1
# with one line. It leaves the caller's shell options as they are (no set -u in the caller's shell).
if [ -z "${OUT:-}" ]; then
  echo "device-setup.sh: OUT is not set (the folder that gets r/ with the reports)" >&2
  return 1
fi
if [ -z "${1:-}" ] || [ ! -f "$1" ]; then
  echo "device-setup.sh: ${1:-''}: no such tarball (usage: source results/ab/device-setup.sh TARBALL)" >&2
  return 1
fi
R=$OUT/r
B=$(mktemp -d "${TMPDIR:-/tmp}/$(basename -- "$1" .tar.xz).XXXXXX") || return 1
mkdir -p "$R" || return 1
tar -C "$B" -xJf "$1" || { echo "device-setup.sh: $1: cannot unpack into $B" >&2; return 1; }
build=$B
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/gpu-libs.sh"
in="--data data/cifar10 --weights data/convnetjs-cifar10"
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; cat /proc/sys/kernel/random/boot_id; } > "$R/device.txt"
