// The weights and images the layer benchmarks run on (loaded once per process).
#pragma once

#include <string>

#include "common/network.hpp"
#include "suite/dataset.hpp"

namespace cnn::bench {

inline const Network& network() {
  static const Network n = load_network(std::string(SUITE_DATA_DIR) + "/convnetjs-cifar10");
  return n;
}
inline const Dataset& images() {
  static const Dataset d = load_cifar10({std::string(SUITE_DATA_DIR) + "/cifar10"});
  return d;
}

void register_naive_one_thread();  // layer_bench_naive.cpp, compiled without OpenMP
void register_naive_threads();     // the same source, compiled with OpenMP

}  // namespace cnn::bench
