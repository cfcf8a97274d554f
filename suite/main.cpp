// suite: the benchmark driver. Everything it does is in runner.cpp; this file only connects it to the
// generated list of backends.
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "common/errors.hpp"
#include "common/registry.hpp"
#include "suite/runner.hpp"
#include "suite/startup.hpp"

namespace {
// OpenMP threads that wait by sleeping, not spinning, unless the user chose otherwise. libgomp spins by
// default, which collapses fine-grained OpenMP (openmp:naive: 11 regions per image) when another process
// holds a core: the spinning thread takes the core from the one doing the work (a 5x slowdown measured on
// a busy 2-core machine). libgomp reads the variable when it is loaded, before main(): an executable's
// .preinit_array runs before any shared library's initialisers, so it is set there. Thread counts in the
// environment are checked there for the same reason, and closed standard streams are reopened there before
// a library's initialiser can open a file on their numbers (suite/startup.hpp).
void before_libraries(int, char**, char** envp) {
  cnn::reopen_closed_standard_streams();
  char message[512];
  if (cnn::thread_environment_error(envp, message, sizeof message)) {
    (void)!::write(STDERR_FILENO, message, std::strlen(message));
    ::_exit(cnn::kExitUsage);
  }
  ::setenv("OMP_WAIT_POLICY", "PASSIVE", 0);
}
[[gnu::section(".preinit_array"), gnu::used, maybe_unused]] void (*const run_before_libraries)(int, char**, char**) =
    &before_libraries;
}  // namespace

int main(int argc, char** argv) {
  // glibc's own start-up restores the environment it was given after .preinit_array ran: set it again so
  // that this process (its report) and its children see what libgomp saw.
  ::setenv("OMP_WAIT_POLICY", "PASSIVE", 0);
  return cnn::suite_main(std::vector<std::string>(argv + 1, argv + argc), cnn::all_backends());
}
