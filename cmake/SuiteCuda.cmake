# CUDA language and the shared CUDA support library (common/kernels/cuda), for the backend folders that include it.
# Include it from a backend folder: sets SUITE_CUDA_FOUND there, or SUITE_CUDA_WHY when nvcc is missing.
# Variables and imported targets are per directory, so everything but the library is set on each include.
include(CheckLanguage)
if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX} AND EXISTS /usr/local/cuda/bin/nvcc)
  set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)  # the toolkit's usual home, also when not on PATH
endif()
check_language(CUDA)
if(NOT CMAKE_CUDA_COMPILER)
  set(SUITE_CUDA_FOUND FALSE)
  set(SUITE_CUDA_WHY "nvcc not found (CUDA toolkit missing)")
  return()
endif()
if(NOT CMAKE_CUDA_ARCHITECTURES)
  # Hopper machine code, plus PTX that newer GPUs compile at load time.
  set(CMAKE_CUDA_ARCHITECTURES "90-real;90-virtual" CACHE STRING "CUDA architectures" FORCE)
endif()
enable_language(CUDA)
set(CMAKE_CUDA_STANDARD 17)  # CMake 3.25 knows no CUDA20 dialect for nvcc; the shared headers are C++17-clean
set(CMAKE_CUDA_STANDARD_REQUIRED ON)
find_package(CUDAToolkit REQUIRED)
set(SUITE_CUDA_FOUND TRUE)
if(TARGET suite_cuda_support)
  return()
endif()
# Host code only (CUDA runtime calls, no kernels): compiled by the C++ compiler, which is much quicker than nvcc.
add_library(suite_cuda_support STATIC ${PROJECT_SOURCE_DIR}/common/kernels/cuda/cuda_support.cpp
                                      ${PROJECT_SOURCE_DIR}/common/kernels/cuda/cuda_device_session.cpp)
target_link_libraries(suite_cuda_support PUBLIC suite_common CUDA::cudart_static)
target_include_directories(suite_cuda_support PUBLIC ${CUDAToolkit_INCLUDE_DIRS})
# The network spec's constexpr helpers (out_side() ...) are used in device code.
target_compile_options(suite_cuda_support PUBLIC $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr>)
