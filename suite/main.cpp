// suite: the benchmark driver. Everything it does is in runner.cpp; this file only connects it to the
// generated list of backends.
#include <cstdlib>
#include <cstring>
#include <iterator>

#include <unistd.h>

#include "common/registry.hpp"
#include "suite/runner.hpp"

namespace {
// OpenMP threads that wait by sleeping, not spinning, unless the user chose otherwise. libgomp spins by
// default, which collapses fine-grained OpenMP (openmp:naive: 11 regions per image) when another process
// holds a core: the spinning thread takes the core from the one doing the work (a 5x slowdown measured on
// a busy 2-core machine). libgomp reads the variable when it is loaded, before main(): an executable's
// .preinit_array runs before any shared library's initialisers, so it is set there.
void default_openmp_waits_to_passive(int, char**, char**) { ::setenv("OMP_WAIT_POLICY", "PASSIVE", 0); }
[[gnu::section(".preinit_array"), gnu::used, maybe_unused]] void (*const set_openmp_waits)(int, char**, char**) =
    &default_openmp_waits_to_passive;

// OpenMP threads bound one per hardware thread, spread over the cores, unless the user chose a binding: what
// Kokkos::OpenMP asks for (Kokkos 3.4 warns at start-up when OMP_PROC_BIND is unset and recommends
// OMP_PROC_BIND=spread OMP_PLACES=threads), and the same for every OpenMP backend, so that the kokkos and
// openmp rows run alike. libgomp reads its variables in its initialiser, and a setenv in .preinit_array does
// not reach it: there glibc's environment is not set up yet (getenv finds nothing) and its start-up then
// installs the process's original one (measured with OMP_DISPLAY_ENV=verbose: GOMP_SPINCOUNT stayed at
// 300000 with the hook above, OMP_PROC_BIND FALSE with a setenv here). So when one of these defaults (the
// wait policy included) is missing, the suite executes itself again, once, with them added, before any
// library's initialiser has run; if that fails (no /proc), it goes on unbound and the report says so.
void default_openmp_threads_bound(int, char** argv, char** envp) {
  static const char* const defaults[] = {"OMP_PROC_BIND=spread", "OMP_PLACES=threads", "OMP_WAIT_POLICY=PASSIVE"};
  std::size_t n = 0;
  while (envp && envp[n]) ++n;
  static char* env[4096];
  if (n + std::size(defaults) + 1 > std::size(env)) return;
  std::size_t m = 0;
  for (; m < n; ++m) env[m] = envp[m];
  for (const char* d : defaults) {
    const std::size_t name = std::strchr(d, '=') - d + 1;  // "NAME=" is set, even to an empty value
    bool set = false;
    for (std::size_t i = 0; i < n && !set; ++i) set = std::strncmp(envp[i], d, name) == 0;
    if (!set) env[m++] = const_cast<char*>(d);
  }
  if (m == n) return;
  env[m] = nullptr;
  ::execve("/proc/self/exe", argv, env);
}
[[gnu::section(".preinit_array"), gnu::used, maybe_unused]] void (*const set_openmp_binding)(int, char**, char**) =
    &default_openmp_threads_bound;
}  // namespace

int main(int argc, char** argv) {
  // glibc's own start-up restores the environment it was given after .preinit_array ran: set it again so
  // that this process (its report) and its children see what libgomp saw.
  ::setenv("OMP_WAIT_POLICY", "PASSIVE", 0);
  return cnn::suite_main(std::vector<std::string>(argv + 1, argv + argc), cnn::all_backends());
}
