# GCC offloading to NVIDIA GPUs (nvptx-none), shared by the directive-based backends: OpenACC (-fopenacc)
# and OpenMP target offload (-fopenmp). With GCC's nvptx offload compiler (Debian: gcc-12-offload-nvptx)
# the compute regions are also compiled to PTX; the same binary falls back to the host when no GPU is
# found, so CI tests it.
#
#   suite_gcc_offload_check(<model_flag> <probe_source> <prefix> ISA <isa> OFFLOAD <ON|OFF>)
#       <prefix>_COMPILES: the probe builds host-only (<model_flag> -foffload=disable)
#       <prefix>_HAS_NVPTX: it also builds with nvptx offload (only tried when OFFLOAD is ON)
#   suite_gcc_offload_target(<target> <model_flag> <has_nvptx> ISA <isa> DEFINE <macro> [LINK_PRIVATE])
#       compile and link flags for the target. The PTX is produced when a program or shared library is
#       linked (offload LTO): a static library passes the link flags on to every program linking it; a
#       shared library (LINK_PRIVATE) is linked with them itself and carries its own offload image.
#       <macro> is defined as "nvptx-none -misa=<isa>" (with nvptx, else "") so the code can say what it was
#       built for.
#   suite_gcc_offload_backend(<name> <model_flag> PROBE <source> NOT_ACCEPTED <reason> SOURCES <file>...
#                             [OFFLOAD_LIBRARY <lib> OFFLOAD_SOURCES <file>...])
#       a whole backend, the two above put together: the options SUITE_<NAME>_NVPTX_ISA (default sm_80) and
#       SUITE_<NAME>_OFFLOAD (ON); suite_skip_backend(<name> <reason>) when the probe does not compile; else
#       backend_<name> from SOURCES (-Wall -Wextra) with the offload flags and DEFINE SUITE_<NAME>_OFFLOAD_TARGET.
#       With OFFLOAD_LIBRARY, the offload code is the shared library <lib> (OFFLOAD_SOURCES, output in
#       <build>/lib, LINK_PRIVATE) that backend_<name> links, and SOURCES is compiled without the flags.
#
# A bare -fopenacc / -fopenmp offloads to every installed offload compiler with its defaults (nvptx:
# sm_35, which CUDA 13's ptxas rejects), hence -foffload=disable for host-only builds and probes. GCC 12
# knows sm_30 ... sm_80; the driver JIT-compiles the PTX for newer GPUs (sm_90 on Hopper).
include_guard(GLOBAL)
include(CheckCXXSourceCompiles)

function(suite_gcc_offload_check model_flag probe prefix)
  cmake_parse_arguments(ARG "" "ISA;OFFLOAD" "" ${ARGN})
  set(CMAKE_REQUIRED_QUIET ON)
  set(CMAKE_REQUIRED_FLAGS "${model_flag} -foffload=disable")
  check_cxx_source_compiles("${probe}" ${prefix}_COMPILES)
  set(${prefix}_COMPILES ${${prefix}_COMPILES} PARENT_SCOPE)
  set(${prefix}_HAS_NVPTX FALSE PARENT_SCOPE)
  if(${prefix}_COMPILES AND ARG_OFFLOAD)
    set(CMAKE_REQUIRED_FLAGS "${model_flag} -foffload=nvptx-none -foffload-options=nvptx-none=-misa=${ARG_ISA}")
    check_cxx_source_compiles("${probe}" ${prefix}_NVPTX_LINKS)
    set(${prefix}_HAS_NVPTX ${${prefix}_NVPTX_LINKS} PARENT_SCOPE)
  endif()
endfunction()

function(suite_gcc_offload_target target model_flag has_nvptx)
  cmake_parse_arguments(ARG "LINK_PRIVATE" "ISA;DEFINE" "" ${ARGN})
  set(link INTERFACE)
  if(ARG_LINK_PRIVATE)
    set(link PRIVATE)
  endif()
  target_compile_options(${target} PRIVATE ${model_flag})
  if(has_nvptx)
    set(offload_flags -foffload=nvptx-none -foffload-options=nvptx-none=-misa=${ARG_ISA})
    message(STATUS "${target}: nvptx offload (-misa=${ARG_ISA}) with host fallback")
    target_compile_options(${target} PRIVATE ${offload_flags})
    # The offload compiler's libm, for expf. -no-pie for programs: GCC 12's offload table
    # (crtoffloadtable.o) is not position independent, so a PIE linking it needs text relocations
    # ("relocation against '__offload_funcs_end'", "DT_TEXTREL in a PIE").
    # A shared library cannot avoid them: -z notext says the text relocations are intended (the loader
    # patches that one table's page at load time; nothing else in the library is affected).
    set(no_pie -no-pie)
    if(ARG_LINK_PRIVATE)
      set(no_pie LINKER:-z,notext)
    endif()
    target_link_options(${target} ${link} ${model_flag} ${offload_flags} -foffload-options=nvptx-none=-lm ${no_pie})
    target_compile_definitions(${target} PRIVATE ${ARG_DEFINE}="nvptx-none -misa=${ARG_ISA}")
  else()
    message(STATUS "${target}: host only (offload off, or no nvptx offload compiler: install gcc-12-offload-nvptx)")
    target_compile_options(${target} PRIVATE -foffload=disable)
    target_link_options(${target} ${link} ${model_flag} -foffload=disable)
    target_compile_definitions(${target} PRIVATE ${ARG_DEFINE}="")
  endif()
endfunction()

# The GCC offload models differ in their model flag, probe and file layout, not in how they are set up, so
# that is written here once.
function(suite_gcc_offload_backend name model_flag)
  # PARSE_ARGV: the probe source holds semicolons, which ${ARGN} would split.
  cmake_parse_arguments(PARSE_ARGV 2 ARG "" "PROBE;NOT_ACCEPTED;OFFLOAD_LIBRARY" "SOURCES;OFFLOAD_SOURCES")
  string(TOUPPER ${name} upper)
  set(prefix SUITE_${upper})
  # GCC 12 knows sm_30 ... sm_80; the driver JIT-compiles the PTX for newer GPUs (sm_90 on Hopper).
  set(${prefix}_NVPTX_ISA "sm_80" CACHE STRING "${name}: -misa for GCC's nvptx offload compiler")
  option(${prefix}_OFFLOAD "${name}: offload to NVIDIA GPUs when GCC's nvptx offload compiler is found" ON)
  set(isa ${${prefix}_NVPTX_ISA})
  suite_gcc_offload_check(${model_flag} "${ARG_PROBE}" ${prefix} ISA ${isa} OFFLOAD ${${prefix}_OFFLOAD})
  if(NOT ${prefix}_COMPILES)
    suite_skip_backend(${name} "${ARG_NOT_ACCEPTED}")
    return()
  endif()
  if(ARG_OFFLOAD_LIBRARY)
    set(lib ${ARG_OFFLOAD_LIBRARY})
    # With nvidia_driver.cpp's object (the GPU's PCI bus id for device_info): suite_common, a static library
    # built without -fPIC, cannot go into a shared library.
    add_library(${lib} SHARED ${ARG_OFFLOAD_SOURCES} $<TARGET_OBJECTS:suite_nvidia_driver>)
    target_include_directories(${lib} PRIVATE ${PROJECT_SOURCE_DIR})
    target_compile_options(${lib} PRIVATE -Wall -Wextra)
    target_link_options(${lib} PRIVATE LINKER:--no-undefined)
    set_target_properties(${lib} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib)
    suite_gcc_offload_target(${lib} ${model_flag} ${${prefix}_HAS_NVPTX}
      ISA ${isa} DEFINE ${prefix}_OFFLOAD_TARGET LINK_PRIVATE)
    suite_add_backend(${name} SOURCES ${ARG_SOURCES} LIBRARIES ${lib})
  else()
    suite_add_backend(${name} SOURCES ${ARG_SOURCES})
    suite_gcc_offload_target(backend_${name} ${model_flag} ${${prefix}_HAS_NVPTX}
      ISA ${isa} DEFINE ${prefix}_OFFLOAD_TARGET)
  endif()
  target_compile_options(backend_${name} PRIVATE -Wall -Wextra)
endfunction()
