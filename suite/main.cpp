// suite: the benchmark driver. Everything it does is in runner.cpp; this file only connects it to the
// generated list of backends.
#include "common/registry.hpp"
#include "suite/runner.hpp"

int main(int argc, char** argv) {
  return cnn::suite_main(std::vector<std::string>(argv + 1, argv + argc), cnn::all_backends());
}
