#!/usr/bin/env bash
# Puts GCC 12's offload runtime (libgomp and its nvptx plugin, from Debian's libgomp1 and
# libgomp-plugin-nvptx1), which every backend built with GCC's offloading (manifest "cuda_build":
# "gcc_offload") runs on, into <build-dir>/offload-runtime/, to travel with a build to a GPU machine that
# has the NVIDIA driver (libcuda) but not these libraries. There, run with
#   LD_LIBRARY_PATH=<build-dir>/offload-runtime <build-dir>/bin/suite --backend <model>
# (GOMP_DEBUG=1 shows libgomp loading the plugin and the device it found).
# Run it where apt-get works (here); it needs no root.
set -euo pipefail
[ $# -eq 1 ] && [ -n "$1" ] || { echo "gcc-offload-runtime.sh: usage: gcc-offload-runtime.sh <build-dir>" >&2; exit 2; }
# Checked before the download: '' would be /offload-runtime, a leading '-' an option of mkdir and cp.
[ -d "$1" ] || { echo "gcc-offload-runtime.sh: $1: no such folder (the build folder comes first)" >&2; exit 2; }
case $1 in -*) dest="./$1/offload-runtime" ;; *) dest="$1/offload-runtime" ;; esac
mkdir -p "$dest"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# apt-get downloads as the _apt user when run as root: it must be able to write here, or it downloads
# unsandboxed with a warning.
if [ "$(id -u)" -eq 0 ] && id -u _apt >/dev/null 2>&1; then chown _apt "$work"; else chmod 755 "$work"; fi
# The same version as the compiler that built the offload code: the libgomp ABI must match.
version=$(dpkg-query -W -f='${Version}' libgomp1 2>/dev/null || true)
(
  cd "$work"
  for pkg in libgomp1 libgomp-plugin-nvptx1; do
    apt-get download "$pkg${version:+=$version}" >/dev/null
  done
  for deb in ./*.deb; do dpkg -x "$deb" root; done
)
cp -a "$work"/root/usr/lib/x86_64-linux-gnu/libgomp.so.1* \
      "$work"/root/usr/lib/x86_64-linux-gnu/libgomp-plugin-nvptx.so.1* "$dest"/
echo "GCC offload runtime (libgomp ${version:-from the archive}) in $dest:"
ls -1 "$dest"
