// suite: the benchmark driver. Everything it does is in runner.cpp; this file only connects it to the
// generated list of backends.
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <iterator>

#include "common/errors.hpp"
#include "common/registry.hpp"
#include "suite/runner.hpp"
#include "suite/startup.hpp"
#include "suite/team.hpp"

namespace {
// OpenMP threads that spin briefly, then sleep, unless the user chose a wait policy: libgomp's default spin
// (GOMP_SPINCOUNT 300000) collapses fine-grained OpenMP (the thesis' port: 11 regions per image) when other
// processes hold the cores (a 5x slowdown measured on a busy 2-core machine), and no spin at all (PASSIVE
// alone) wakes a sleeping thread at every region. 10000 spins was the fastest of the three, or level with it,
// on the 2-core Xeon, quiet and under load: the thesis' port at 300 images 458 ms against 608 passive; with six
// CPU hogs 2191 ms against 3680 passive and 8061 at 300000 (results/ab/xeon-2core-wait-policy/). And OpenMP threads
// bound one per hardware thread, spread over the cores, unless the user chose a binding: what
// Kokkos::OpenMP asks for (Kokkos 3.4 warns at start-up when OMP_PROC_BIND is unset and recommends
// OMP_PROC_BIND=spread OMP_PLACES=threads), and the same for every OpenMP backend, so that Kokkos' and
// plain OpenMP's rows run alike. libgomp reads its variables in its initialiser, and a setenv in .preinit_array does
// not reach it: there glibc's environment is not set up yet (getenv finds nothing) and its start-up then
// installs the process's original one (measured with OMP_DISPLAY_ENV=verbose: GOMP_SPINCOUNT stayed at
// 300000 and OMP_PROC_BIND FALSE with a setenv in .preinit_array). So when one of these defaults (the
// wait policy included) is missing, the suite executes itself again, once, with them added, before any
// library's initialiser has run; if that fails (no /proc), it goes on unbound and the report says so.
// Under an MPI launcher the binding defaults are left out: libgomp would bind the main thread to the first
// of the places it makes of all the CPUs that the launcher gave, before the rank takes its share of them
// (suite/binding.hpp); the threads that the backends start inherit the rank's share instead.
void default_openmp_threads_bound(int, char** argv, char** envp) {
  // Each default is added where its variable is unset and so is the one it goes with: the spin count goes with
  // the wait policy, so a user who chose a policy gets libgomp's spin for it. The first two are not bindings.
  static const struct {
    const char* setting;
    const char* unless;  // "NAME=" of the variable it goes with, or null
  } defaults[] = {{"OMP_WAIT_POLICY=PASSIVE", nullptr},
                  {"GOMP_SPINCOUNT=10000", "OMP_WAIT_POLICY="},
                  {"OMP_PROC_BIND=spread", nullptr},
                  {"OMP_PLACES=threads", nullptr}};
  const std::size_t wanted = cnn::launched_by_mpi(envp) ? 2 : std::size(defaults);
  std::size_t n = 0;
  while (envp && envp[n]) ++n;
  static char* env[4096];
  if (n + std::size(defaults) + 1 > std::size(env)) return;
  const auto is_set = [&](const char* d) {
    const std::size_t name = std::strchr(d, '=') - d + 1;  // "NAME=" is set, even to an empty value
    for (std::size_t i = 0; i < n; ++i)
      if (std::strncmp(envp[i], d, name) == 0) return true;
    return false;
  };
  std::size_t m = 0;
  for (; m < n; ++m) env[m] = envp[m];
  for (std::size_t k = 0; k < wanted; ++k) {
    const auto& d = defaults[k];
    if (!is_set(d.setting) && !(d.unless && is_set(d.unless))) env[m++] = const_cast<char*>(d.setting);
  }
  if (m == n) return;
  env[m] = nullptr;
  ::execve("/proc/self/exe", argv, env);
}
// .preinit_array runs before any shared library's initialisers, so all of this happens there: thread counts
// in the environment are checked, the OpenMP defaults above are put in place, then closed standard streams
// are reopened before a library's initialiser can open a file on their numbers (suite/startup.hpp; after
// the re-execution, so that the program that runs still knows which were closed).
void before_libraries(int argc, char** argv, char** envp) {
  char message[512];
  if (cnn::thread_environment_error(envp, message, sizeof message)) {
    (void)!::write(STDERR_FILENO, message, std::strlen(message));
    ::_exit(cnn::kExitUsage);
  }
  default_openmp_threads_bound(argc, argv, envp);  // may start this program again: streams as given
  cnn::reopen_closed_standard_streams();
}
[[gnu::section(".preinit_array"), gnu::used, maybe_unused]] void (*const run_before_libraries)(int, char**, char**) =
    &before_libraries;
}  // namespace

int main(int argc, char** argv) {
  return cnn::suite_main(std::vector<std::string>(argv + 1, argv + argc), cnn::all_backends());
}
