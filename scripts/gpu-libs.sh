# Sourced by the GPU-machine scripts (gpu-bench.sh, verdict-bench.sh, ...) with $build set: puts on
# LD_LIBRARY_PATH the runtime libraries a carried build needs and the GPU machine may lack: GCC's libgomp
# with its nvptx plugin (scripts/gcc-offload-runtime.sh puts them in <build>/offload-runtime), Google Benchmark
# (<build>/testlibs), an offload backend's shared library (<build>/lib), and cuDNN/cuBLAS, which the PyTorch installation there ships when the CUDA toolkit
# does not.
libs=$build/offload-runtime:$build/testlibs:$build/lib
for lib in libcudnn.so.9 libcublas.so.13; do
  if ! ldconfig -p | grep -q "$lib" && [ ! -e /usr/local/cuda/lib64/$lib ]; then
    found=$(find / -xdev -name "$lib" -not -path "*/proc/*" 2>/dev/null | head -n 1)
    [ -n "$found" ] && libs=$libs:$(dirname "$found")
  fi
done
export LD_LIBRARY_PATH=$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
