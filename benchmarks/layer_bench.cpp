// Each layer of the CPU kernels, per batch of images: the thesis' loops (serial:naive, and openmp:naive
// on one thread) and the optimised kernel (serial:opt, and per thread openmp:batch). Counter
// "images/s" is the batch size times the rate; ReLU and pool are one pass in the optimised kernel.
#include <benchmark/benchmark.h>

#include "backends/cpu_kernels/fast_forward.hpp"
#include "backends/cpu_kernels/thesis_naive.hpp"
#include "common/dataset.hpp"

namespace {
using namespace cnn;

const Network& network() {
  static const Network n = load_network(std::string(SUITE_DATA_DIR) + "/convnetjs-cifar10");
  return n;
}
const Dataset& images() {
  static const Dataset d = load_cifar10({std::string(SUITE_DATA_DIR) + "/cifar10"});
  return d;
}

// ---- optimised kernel: the scratch holds one image's activations, as in serial:opt / openmp:batch.
template <void (*Layer)(const fast::PackedNetwork&, fast::Scratch&)>
void BM_Opt(benchmark::State& state) {
  const fast::PackedNetwork net(network());
  fast::Scratch s;
  float probs[kClasses];
  fast::forward_image(net, images().image(0), s, probs);  // every buffer holds real activations
  const int batch = int(state.range(0));
  for (auto _ : state)
    for (int i = 0; i < batch; ++i) Layer(net, s);
  state.counters["images/s"] = benchmark::Counter(double(batch), benchmark::Counter::kIsIterationInvariantRate);
}
template <void (*Layer)(fast::Scratch&)>
void call(const fast::PackedNetwork&, fast::Scratch& s) { Layer(s); }
void fc(const fast::PackedNetwork& n, fast::Scratch& s) {
  float probs[kClasses];
  fast::fc_softmax(n, s, probs);
  benchmark::DoNotOptimize(probs);
}

BENCHMARK_TEMPLATE(BM_Opt, fast::conv1)->Name("opt/conv1")->Arg(1)->Arg(16)->Arg(256);
BENCHMARK_TEMPLATE(BM_Opt, call<fast::relu_pool1>)->Name("opt/relu_pool1")->Arg(1)->Arg(16)->Arg(256);
BENCHMARK_TEMPLATE(BM_Opt, fast::conv2)->Name("opt/conv2")->Arg(1)->Arg(16)->Arg(256);
BENCHMARK_TEMPLATE(BM_Opt, call<fast::relu_pool2>)->Name("opt/relu_pool2")->Arg(1)->Arg(16)->Arg(256);
BENCHMARK_TEMPLATE(BM_Opt, fast::conv3)->Name("opt/conv3")->Arg(1)->Arg(16)->Arg(256);
BENCHMARK_TEMPLATE(BM_Opt, call<fast::relu_pool3>)->Name("opt/relu_pool3")->Arg(1)->Arg(16)->Arg(256);
BENCHMARK_TEMPLATE(BM_Opt, fc)->Name("opt/fc_softmax")->Arg(1)->Arg(16)->Arg(256);

// ---- the thesis' loops: per-layer times of serial:naive over a batch of images.
void BM_ThesisConv(benchmark::State& state) {
  const int layer = int(state.range(0)), batch = int(state.range(1));
  const thesis::ThesisConv conv = thesis::to_thesis(network().conv(layer));
  const ConvSpec& s = conv.spec;
  thesis::Vol in(s.in_side, s.in_side, s.in_channels), out(s.out_side(), s.out_side(), s.filters);
  for (std::size_t i = 0; i < in.w.size(); ++i) in.w[i] = float(i % 7) * 0.1f - 0.3f;
  for (auto _ : state)
    for (int i = 0; i < batch; ++i) thesis::conv_forward(in, conv, out);
  state.counters["images/s"] = benchmark::Counter(double(batch), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_ThesisConv)->Name("naive/conv")->ArgNames({"layer", "batch"})->ArgsProduct({{0, 1, 2}, {1, 16}});

}  // namespace

BENCHMARK_MAIN();
