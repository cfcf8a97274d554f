# Backend registration on the build side. Every folder backends/<name>/ is a backend: a CMakeLists.txt and a
# manifest.json, which is the only list of backends (README, "Adding a backend"). Code that backends share
# lives in common/kernels/. The top-level CMakeLists.txt calls suite_add_backend_folders().
#
# From each manifest CMake reads "order" (the position in `suite --list` and `--backend all`; ties
# alphabetical) and "kind" (cpu, gpu or portable), and the former variant names ("renamed"). For each folder
# it defines WITH_<NAME> = AUTO (default) | ON | OFF and, unless OFF or of a kind outside SUITE_BACKEND_KINDS
# while AUTO, adds the folder. The folder checks its toolchain and then calls one of:
#   suite_add_backend(<name> SOURCES ... [LIBRARIES ...])  builds backend_<name>; its files register their
#                                                           variants themselves (common/registry.hpp)
#   suite_skip_backend(<name> <reason>)                     toolchain missing: fails if WITH_<NAME>=ON,
#                                                           else `suite --list` says why
# after suite_add_backend, suite_add_backend_tests(<name> SOURCES ...) adds the folder's own tests.
# and may set the global property SUITE_NOTE_<name>, which the configure summary shows after "built".
# suite_generate_registry() then writes registry_generated.cpp: every known backend in order, with its kind,
# and why one was not built.

set(SUITE_KNOWN_KINDS cpu gpu portable)
# Presets and scripts choose backends by kind, never by name (e.g. the asan preset: cpu). "none" matches no
# kind: a build of the tools alone (the fuzz preset).
set(SUITE_BACKEND_KINDS "${SUITE_KNOWN_KINDS}" CACHE STRING
    "Kinds of backend (manifest \"kind\": cpu, gpu, portable; none) configured unless WITH_<NAME>=ON")

# Sets <name>_ORDER and <name>_KIND in the caller from backends/<name>/manifest.json; a missing or bad
# manifest stops the configure with what to fix.
function(suite_read_manifest name)
  set(manifest ${PROJECT_SOURCE_DIR}/backends/${name}/manifest.json)
  if(NOT EXISTS ${manifest})
    message(FATAL_ERROR "backends/${name}/ has no manifest.json: every folder under backends/ is a backend and "
                        "its manifest gives its order and kind (README.md, \"Adding a backend\")")
  endif()
  set_property(DIRECTORY ${PROJECT_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${manifest})
  file(READ ${manifest} text)
  # ERROR_VARIABLE reads NOTFOUND when there is no error: the messages quote the value, else the error.
  string(JSON order ERROR_VARIABLE order_error GET "${text}" order)
  string(JSON kind ERROR_VARIABLE kind_error GET "${text}" kind)
  string(LENGTH "${order}" digits)
  if(order_error OR NOT order MATCHES "^[0-9]+$" OR digits GREATER 9)
    if(order_error)
      set(order "${order_error}")
    endif()
    message(FATAL_ERROR "backends/${name}/manifest.json: \"order\" must be a whole number below 10^9 (${order})")
  endif()
  if(kind_error OR NOT kind IN_LIST SUITE_KNOWN_KINDS)
    if(kind_error)
      set(kind "${kind_error}")
    endif()
    list(JOIN SUITE_KNOWN_KINDS ", " kinds)
    message(FATAL_ERROR "backends/${name}/manifest.json: \"kind\" must be one of ${kinds} (${kind})")
  endif()
  string(JSON packages ERROR_VARIABLE no_packages GET "${text}" packages)
  if(NOT no_packages AND (packages MATCHES "/" OR NOT EXISTS ${PROJECT_SOURCE_DIR}/backends/${name}/${packages}))
    message(FATAL_ERROR "backends/${name}/manifest.json: \"packages\" must name a file in the folder, "
                        "as scripts/install-deps.sh reads it (${packages})")
  endif()
  set(${name}_ORDER ${order} PARENT_SCOPE)
  set(${name}_KIND ${kind} PARENT_SCOPE)
  set_property(GLOBAL PROPERTY SUITE_MANIFEST_${name} "${text}")  # the rest is read from it later
endfunction()

# The backend folders sorted by their manifests' order, then by name; sets <name>_KIND for each.
macro(suite_ordered_backends out_var)
  # CONFIGURE_DEPENDS: a new folder re-runs CMake at the next build, with no file edited.
  file(GLOB suite_entries CONFIGURE_DEPENDS LIST_DIRECTORIES true RELATIVE ${PROJECT_SOURCE_DIR}/backends
       ${PROJECT_SOURCE_DIR}/backends/*)
  set(suite_keyed "")
  foreach(name IN LISTS suite_entries)
    if(IS_DIRECTORY ${PROJECT_SOURCE_DIR}/backends/${name})
      suite_read_manifest(${name})
      string(LENGTH "${${name}_ORDER}" digits)
      math(EXPR padding "12 - ${digits}")
      string(REPEAT "0" ${padding} pad)
      list(APPEND suite_keyed "${pad}${${name}_ORDER}/${name}")
    endif()
  endforeach()
  list(SORT suite_keyed)
  list(TRANSFORM suite_keyed REPLACE "^[0-9]+/" "" OUTPUT_VARIABLE ${out_var})
endmacro()

function(suite_add_backend_folders)
  foreach(kind IN LISTS SUITE_BACKEND_KINDS)
    if(NOT kind IN_LIST SUITE_KNOWN_KINDS AND NOT kind STREQUAL "none")
      list(JOIN SUITE_KNOWN_KINDS ", " kinds)
      message(FATAL_ERROR "SUITE_BACKEND_KINDS: '${kind}' is no kind of backend (${kinds} or none)")
    endif()
  endforeach()
  suite_ordered_backends(ordered)
  foreach(name IN LISTS ordered)
    string(TOUPPER ${name} upper)
    set(WITH_${upper} AUTO CACHE STRING "Build the ${name} backend (AUTO, ON or OFF)")
    set_property(CACHE WITH_${upper} PROPERTY STRINGS AUTO ON OFF)
    set_property(GLOBAL APPEND PROPERTY SUITE_KNOWN_BACKENDS ${name})
    set_property(GLOBAL PROPERTY SUITE_KIND_${name} ${${name}_KIND})
    if(NOT EXISTS ${PROJECT_SOURCE_DIR}/backends/${name}/CMakeLists.txt)
      message(FATAL_ERROR "backends/${name}/ has no CMakeLists.txt (README.md, \"Adding a backend\")")
    endif()
    if(WITH_${upper} STREQUAL "OFF")
      set_property(GLOBAL PROPERTY SUITE_REASON_${name} "not built: disabled with -DWITH_${upper}=OFF")
    elseif(WITH_${upper} STREQUAL "AUTO" AND NOT ${name}_KIND IN_LIST SUITE_BACKEND_KINDS)
      set_property(GLOBAL PROPERTY SUITE_REASON_${name}
                   "not built: a ${${name}_KIND} backend, and this build configures SUITE_BACKEND_KINDS=${SUITE_BACKEND_KINDS}")
    else()
      add_subdirectory(${PROJECT_SOURCE_DIR}/backends/${name} ${CMAKE_BINARY_DIR}/backends/${name})
    endif()
  endforeach()
endfunction()

function(suite_skip_backend name reason)
  string(TOUPPER ${name} upper)
  if(WITH_${upper} STREQUAL "ON")
    message(FATAL_ERROR "WITH_${upper}=ON but the ${name} backend cannot be built: ${reason}")
  endif()
  set_property(GLOBAL PROPERTY SUITE_REASON_${name} "not built: ${reason}")
endfunction()

function(suite_add_backend name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBRARIES" ${ARGN})
  add_library(backend_${name} STATIC ${ARG_SOURCES})
  target_link_libraries(backend_${name} PUBLIC suite_common ${ARG_LIBRARIES})
  set_property(GLOBAL APPEND PROPERTY SUITE_BUILT_BACKENDS ${name})
endfunction()

# Tests of one backend's own behaviour (GoogleTest, with tests/test_support.hpp), compiled in its folder and
# linked into suite_tests (tests/CMakeLists.txt, SUITE_TEST_OBJECTS), so that no file outside the folder
# names it. Call it after suite_add_backend: a folder that skipped has no tests.
function(suite_add_backend_tests name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBRARIES" ${ARGN})
  if(NOT BUILD_TESTING)
    return()
  endif()
  add_library(${name}_tests OBJECT ${ARG_SOURCES})
  target_link_libraries(${name}_tests PRIVATE suite_test_support GTest::gtest ${ARG_LIBRARIES})
  target_compile_options(${name}_tests PRIVATE -Wall -Wextra)
  set_property(GLOBAL APPEND PROPERTY SUITE_TEST_OBJECTS ${name}_tests)
endfunction()

# The former names of a backend's variants, from its folder's manifest.json ("renamed": {"old": "new"}, as
# suite_read_manifest read it), as C++ initialisers; the report tools read the same file
# (scripts/suitereport/identity.py).
function(suite_renamed_variants name out_var)
  get_property(text GLOBAL PROPERTY SUITE_MANIFEST_${name})
  set(out "")
  string(JSON count ERROR_VARIABLE err LENGTH "${text}" renamed)
  if(err)
    set(count 0)
  endif()
  if(count GREATER 0)
    math(EXPR last "${count} - 1")
    foreach(i RANGE ${last})
      string(JSON old MEMBER "${text}" renamed ${i})
      string(JSON new GET "${text}" renamed ${old})
      string(APPEND out "      {\"${name}\", \"${old}\", \"${new}\"},\n")
    endforeach()
  endif()
  set(${out_var} "${out}" PARENT_SCOPE)
endfunction()

# The baseline every speedup is measured against: the backend whose manifest has "baseline", and that
# variant. The harness' tests run it where any real run will do (a CPU backend without dependencies, built
# wherever tests are), so that they name no backend; empty when no manifest has the field.
function(suite_baseline backend_var variant_var)
  get_property(known GLOBAL PROPERTY SUITE_KNOWN_BACKENDS)
  set(backend "")
  set(variant "")
  foreach(name IN LISTS known)
    get_property(text GLOBAL PROPERTY SUITE_MANIFEST_${name})
    string(JSON value ERROR_VARIABLE err GET "${text}" baseline)
    if(NOT err AND NOT backend)
      set(backend ${name})
      set(variant ${value})
    endif()
  endforeach()
  set(${backend_var} "${backend}" PARENT_SCOPE)
  set(${variant_var} "${variant}" PARENT_SCOPE)
endfunction()

function(suite_generate_registry)
  get_property(known GLOBAL PROPERTY SUITE_KNOWN_BACKENDS)
  get_property(built GLOBAL PROPERTY SUITE_BUILT_BACKENDS)
  set(entries "")
  set(renamed "")
  set(libs "")
  foreach(name IN LISTS known)
    suite_renamed_variants(${name} backend_renamed)
    string(APPEND renamed "${backend_renamed}")
    get_property(kind GLOBAL PROPERTY SUITE_KIND_${name})
    if(name IN_LIST built)
      string(APPEND entries "      {\"${name}\", \"${kind}\", \"\"},\n")
      # Whole archive: nothing references a variant file's registration, so a plain static link would drop it.
      # The archive goes inside the one -Wl flag (not CMake's $<LINK_LIBRARY:WHOLE_ARCHIVE,...>, which brackets
      # it with two flags): Kokkos' nvcc_wrapper moves archives away from the flags around them. The plain
      # item after it carries the backend's own dependencies and the build order.
      list(APPEND libs "-Wl,--whole-archive,$<TARGET_FILE:backend_${name}>,--no-whole-archive" backend_${name})
    else()
      get_property(reason GLOBAL PROPERTY SUITE_REASON_${name})
      if(NOT reason)
        set(reason "not built")
      endif()
      string(REPLACE "\\" "\\\\" reason "${reason}")
      string(REPLACE "\"" "\\\"" reason "${reason}")
      string(APPEND entries "      {\"${name}\", \"${kind}\", \"${reason}\"},\n")
    endif()
  endforeach()
  set(out ${CMAKE_BINARY_DIR}/generated/registry_generated.cpp)
  file(CONFIGURE OUTPUT ${out} CONTENT
"// Generated by cmake/SuiteBackends.cmake: every known backend in order, its kind, and why one was not built.
#include \"common/registry.hpp\"

namespace cnn {

const std::vector<RegistryEntry>& all_backends() {
  static const std::vector<RegistryEntry> entries = registry_entries({
@entries@  });
  return entries;
}

const std::vector<RenamedVariant>& renamed_variants() {
  static const std::vector<RenamedVariant> renamed{
@renamed@  };
  return renamed;
}

}  // namespace cnn
" @ONLY)
  add_library(suite_backends STATIC ${out})
  target_link_libraries(suite_backends PUBLIC suite_common ${libs})
endfunction()

function(suite_print_backend_summary)
  get_property(known GLOBAL PROPERTY SUITE_KNOWN_BACKENDS)
  get_property(built GLOBAL PROPERTY SUITE_BUILT_BACKENDS)
  foreach(name IN LISTS known)
    if(name IN_LIST built)
      get_property(note GLOBAL PROPERTY SUITE_NOTE_${name})  # e.g. what it was built against
      if(note)
        message(STATUS "backend ${name}: built (${note})")
      else()
        message(STATUS "backend ${name}: built")
      endif()
    else()
      get_property(reason GLOBAL PROPERTY SUITE_REASON_${name})
      message(STATUS "backend ${name}: ${reason}")
    endif()
  endforeach()
endfunction()
