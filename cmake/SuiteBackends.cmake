# Backend registration on the build side. Every folder backends/<name>/ with a CMakeLists.txt is a backend
# (shared code lives in common/kernels/); the top-level CMakeLists.txt calls suite_add_backend_folders().
#
# For each folder it defines WITH_<NAME> = AUTO (default) | ON | OFF and, unless OFF, adds the folder. The
# folder checks its toolchain and then calls one of:
#   suite_add_backend(<name> SOURCES ... [LIBRARIES ...])  builds backend_<name>; its files register their
#                                                           variants themselves (common/registry.hpp)
#   suite_skip_backend(<name> <reason>)                     toolchain missing: fails if WITH_<NAME>=ON,
#                                                           else `suite --list` says why
# and may set the global property SUITE_NOTE_<name>, which the configure summary shows after "built".
# suite_generate_registry() then writes registry_generated.cpp: every known backend in order, and why one
# was not built.

# Known models first, in the order a reader should meet them; any other folder follows alphabetically.
set(SUITE_BACKEND_ORDER serial openmp stdpar openacc omptarget kokkos cuda cudnn onednn)
set(SUITE_SHARED_FOLDERS)

function(suite_add_backend_folders)
  # CONFIGURE_DEPENDS: a new folder re-runs CMake at the next build, with no file edited.
  file(GLOB folders CONFIGURE_DEPENDS RELATIVE ${PROJECT_SOURCE_DIR}/backends
       ${PROJECT_SOURCE_DIR}/backends/*/CMakeLists.txt)
  list(TRANSFORM folders REPLACE "/CMakeLists.txt$" "")
  list(SORT folders)
  list(REMOVE_ITEM folders ${SUITE_SHARED_FOLDERS})
  set(ordered "")
  foreach(name IN LISTS SUITE_BACKEND_ORDER)
    if(name IN_LIST folders)
      list(APPEND ordered ${name})
      list(REMOVE_ITEM folders ${name})
    endif()
  endforeach()
  list(APPEND ordered ${folders})
  foreach(name IN LISTS ordered)
    string(TOUPPER ${name} upper)
    set(WITH_${upper} AUTO CACHE STRING "Build the ${name} backend (AUTO, ON or OFF)")
    set_property(CACHE WITH_${upper} PROPERTY STRINGS AUTO ON OFF)
    set_property(GLOBAL APPEND PROPERTY SUITE_KNOWN_BACKENDS ${name})
    if(WITH_${upper} STREQUAL "OFF")
      set_property(GLOBAL PROPERTY SUITE_REASON_${name} "not built: disabled with -DWITH_${upper}=OFF")
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

# The former names of a backend's variants, from its folder's manifest.json ("renamed": {"old": "new"}), as
# C++ initialisers; the report tools read the same file (scripts/suitereport/identity.py).
function(suite_renamed_variants name out_var)
  set(manifest ${PROJECT_SOURCE_DIR}/backends/${name}/manifest.json)
  set(out "")
  if(EXISTS ${manifest})
    set_property(DIRECTORY ${PROJECT_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${manifest})
    file(READ ${manifest} text)
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
  endif()
  set(${out_var} "${out}" PARENT_SCOPE)
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
    if(name IN_LIST built)
      string(APPEND entries "      {\"${name}\", \"\"},\n")
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
      string(APPEND entries "      {\"${name}\", \"${reason}\"},\n")
    endif()
  endforeach()
  set(out ${CMAKE_BINARY_DIR}/generated/registry_generated.cpp)
  file(CONFIGURE OUTPUT ${out} CONTENT
"// Generated by cmake/SuiteBackends.cmake: every known backend in order, and why one was not built.
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
