// Each step of each shared CPU kernel (common/kernels/cpu), per batch of images (Google Benchmark, its own
// JSON output). A benchmark is named after the kernel it times (the backends' READMEs say which variants run
// which kernel), so that a new variant of an old kernel needs no new benchmark:
// - thesis_naive, thesis_naive_threads: the thesis' 11 layers, one thread / output maps over every thread
//   (layer_bench_naive.cpp);
// - fast_forward: the register-tiled kernel's steps on one thread (conv, ReLU and pool are one step there);
//   fast_forward_threads: the same steps with the batch split over every thread, each with its own scratch;
// - winograd_forward: the Winograd steps of each conv (input transform, element-wise GEMMs, output
//   transform + bias + pool + ReLU) on one thread, and each whole conv (conv_relu_poolN) on a group of
//   winograd::kImageGroup images; "images/s" counts the images one call covers.
// Counter "images/s" is the batch size times the rate.
#include <benchmark/benchmark.h>
#include <omp.h>

#include "common/kernels/cpu/fast_forward.hpp"
#include "common/kernels/cpu/winograd_forward.hpp"
#include "benchmarks/bench_data.hpp"

namespace cnn::bench {
namespace {

using Step = void (*)(const fast::PackedNetwork&, fast::Scratch&);
const fast::PackedNetwork& packed() {
  static const fast::PackedNetwork n(network());
  return n;
}

// A scratch whose every buffer holds image 0's real activations.
fast::Scratch filled_scratch() {
  fast::Scratch s;
  float probs[kClasses];
  fast::forward_image(packed(), images().image(0), s, probs);
  return s;
}

void BM_FastForward(benchmark::State& state, Step step) {
  const fast::PackedNetwork& net = packed();
  fast::Scratch s = filled_scratch();
  const int batch = int(state.range(0));
  for (auto _ : state) {
    for (int i = 0; i < batch; ++i) step(net, s);
    benchmark::ClobberMemory();
  }
  state.counters["images/s"] = benchmark::Counter(double(batch), benchmark::Counter::kIsIterationInvariantRate);
}

void BM_FastForwardThreads(benchmark::State& state, Step step) {
  const fast::PackedNetwork& net = packed();
  const int threads = omp_get_max_threads(), batch = int(state.range(0));
  std::vector<fast::Scratch> scratch;
  for (int t = 0; t < threads; ++t) scratch.push_back(filled_scratch());
  for (auto _ : state) {
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int i = 0; i < batch; ++i) step(net, scratch[std::size_t(omp_get_thread_num())]);
  }
  state.counters["images/s"] = benchmark::Counter(double(batch), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["threads"] = threads;
}

void load(const fast::PackedNetwork&, fast::Scratch& s) { fast::load_image(images().image(0), s); }
void fc(const fast::PackedNetwork& n, fast::Scratch& s) {
  float probs[kClasses];
  fast::fc_softmax(n, s, probs);
  benchmark::DoNotOptimize(probs);
}

const std::pair<const char*, Step> kSteps[] = {
    {"load_image", load},
    {"conv_relu_pool1", fast::conv_relu_pool1},
    {"conv_relu_pool2", fast::conv_relu_pool2},
    {"conv_relu_pool3", fast::conv_relu_pool3},
    {"fc_softmax", fc},
};

void register_fast_forward() {
  for (const auto& [name, step] : kSteps)
    benchmark::RegisterBenchmark((std::string("fast_forward/") + name).c_str(), BM_FastForward, step)
        ->ArgName("batch")
        ->Arg(1)
        ->Arg(16)
        ->Arg(256);
  for (const auto& [name, step] : kSteps)
    benchmark::RegisterBenchmark((std::string("fast_forward_threads/") + name).c_str(), BM_FastForwardThreads, step)
        ->ArgName("batch")
        ->Arg(16)
        ->Arg(256)
        ->UseRealTime();
}

using WinogradStep = void (*)(const winograd::PackedNetwork&, winograd::Scratch&);

// One group's scratch holding real activations (images 0..kImageGroup-1), the winograd network once per process.
void BM_Winograd(benchmark::State& state, WinogradStep step, int images_per_call) {
  static const winograd::PackedNetwork net(network());
  winograd::Scratch s;
  float probs[winograd::kImageGroup * kClasses];
  winograd::forward_images(net, images().image(0), winograd::kImageGroup, s, probs);
  for (auto _ : state) {
    step(net, s);
    benchmark::ClobberMemory();
  }
  state.counters["images/s"] = benchmark::Counter(double(images_per_call), benchmark::Counter::kIsIterationInvariantRate);
}

void register_winograd() {
  constexpr int G = winograd::kImageGroup;
  const std::tuple<const char*, WinogradStep, int> steps[] = {
      {"conv1_input_transform", winograd::input_transform1, 1},
      {"conv1_elementwise_output_transform_relu_pool", winograd::elementwise_output_transform1, 1},
      {"conv_relu_pool1", winograd::conv_relu_pool1, G},
      {"conv2_input_transform", winograd::input_transform2, winograd::kImageGroup2},
      {"conv2_elementwise", winograd::elementwise2, winograd::kImageGroup2},
      {"conv2_output_transform_relu_pool", winograd::output_transform2, winograd::kImageGroup2},
      {"conv_relu_pool2", winograd::conv_relu_pool2, G},
      {"conv3_input_transform", winograd::input_transform3, G},
      {"conv3_elementwise", winograd::elementwise3, G},
      {"conv3_output_transform_relu_pool", winograd::output_transform3, G},
      {"conv_relu_pool3", winograd::conv_relu_pool3, G},
  };
  for (const auto& [name, step, images] : steps)
    benchmark::RegisterBenchmark((std::string("winograd_forward/") + name).c_str(), BM_Winograd, step, images);
}

}  // namespace
}  // namespace cnn::bench

int main(int argc, char** argv) {
  cnn::bench::register_naive_one_thread();
  cnn::bench::register_naive_threads();
  cnn::bench::register_fast_forward();
  cnn::bench::register_winograd();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
