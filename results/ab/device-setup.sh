# Sourced on the GPU machine by the A/B scripts under results/ab/, as `source results/ab/device-setup.sh TARBALL`
# (a build/exp/NAME.tar.xz carried there): unpacks it into /tmp/NAME ($B, and $build for scripts/gpu-libs.sh,
# which puts its libraries on LD_LIBRARY_PATH), makes $R (under $OUT) with the GPU and the boot in
# $R/device.txt, and sets $in to the suite's data and weights.
set -u
R=$OUT/r
B=/tmp/$(basename "$1" .tar.xz)
mkdir -p "$R" "$B"
tar -C "$B" -xJf "$1"
build=$B
source scripts/gpu-libs.sh
in="--data data/cifar10 --weights data/convnetjs-cifar10"
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; cat /proc/sys/kernel/random/boot_id; } > "$R/device.txt"
