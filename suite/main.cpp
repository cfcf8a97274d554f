// suite: the benchmark driver. Everything it does is in runner.cpp; this file only connects it to the
// generated list of backends.
#include <cstdlib>

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
}  // namespace

int main(int argc, char** argv) {
  // glibc's own start-up restores the environment it was given after .preinit_array ran: set it again so
  // that this process (its report) and its children see what libgomp saw.
  ::setenv("OMP_WAIT_POLICY", "PASSIVE", 0);
  return cnn::suite_main(std::vector<std::string>(argv + 1, argv + argc), cnn::all_backends());
}
