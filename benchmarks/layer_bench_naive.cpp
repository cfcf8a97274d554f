// Each of the 11 layers of the thesis' loops (common/kernels/cpu/thesis_naive.hpp) over a batch of images:
// on one thread when this file is compiled without OpenMP, with `omp parallel for` over output maps on every
// thread when it is compiled with it (CMakeLists.txt builds it both ways). The volumes hold image 0's real activations;
// each layer's input and output are the ones the network passes it.
#include <benchmark/benchmark.h>

#include "common/kernels/cpu/thesis_naive.hpp"
#include "benchmarks/bench_data.hpp"

namespace cnn::bench {
namespace {

struct NaiveNet {
  thesis::ThesisConv conv[3];
  std::vector<float> fc_w;
  // input, then per conv layer its output and its pooled output; then the 10 scores.
  thesis::Vol input{kImageSide, kImageSide, kImageChannels};
  std::vector<thesis::Vol> out, pooled;
  float scores[kClasses] = {};

  NaiveNet() {
    const Network& n = network();
    for (int l = 0; l < 3; ++l) {
      const ConvSpec& s = n.conv(l).spec;
      conv[l] = thesis::to_thesis(n.conv(l));
      out.emplace_back(s.out_side(), s.out_side(), s.filters);
      pooled.emplace_back(s.pooled_side(), s.pooled_side(), s.filters);
    }
    fc_w = thesis::to_thesis(n.fc);
    thesis::load_image(images().image(0), input);
    for (int l = 0; l < 11; ++l) run(l);  // every volume holds real activations
  }
  const thesis::Vol& conv_input(int l) const { return l == 0 ? input : pooled[std::size_t(l - 1)]; }

  // Layer l of kLayers (0..10), in the network's order.
  void run(int l) {
    const int c = l / 3;
    switch (kLayers[std::size_t(l)].kind) {
      case LayerKind::conv: thesis::conv_forward(conv_input(c), conv[c], out[std::size_t(c)]); break;
      case LayerKind::relu: thesis::relu_forward(out[std::size_t(c)]); break;
      case LayerKind::pool: thesis::pool_forward(out[std::size_t(c)], pooled[std::size_t(c)]); break;
      case LayerKind::fc: thesis::fc_forward(pooled[2], fc_w, network().fc.bias, scores); break;
      case LayerKind::softmax: softmax_fp32(scores); break;
    }
  }
};

void BM_NaiveLayer(benchmark::State& state, int layer) {
  static NaiveNet net;
  const int batch = int(state.range(0));
  for (auto _ : state) {
    for (int i = 0; i < batch; ++i) net.run(layer);
    benchmark::ClobberMemory();
  }
  state.counters["images/s"] = benchmark::Counter(double(batch), benchmark::Counter::kIsIterationInvariantRate);
}

void register_naive(const std::string& prefix) {
  for (int l = 0; l < int(kLayers.size()); ++l)
    benchmark::RegisterBenchmark((prefix + "/" + std::string(kLayers[std::size_t(l)].name)).c_str(), BM_NaiveLayer, l)
        ->ArgName("batch")
        ->Arg(1)
        ->Arg(16)
        ->UseRealTime();  // with OpenMP the work is on every thread, not only the one CPU time counts
}

}  // namespace

#ifdef _OPENMP
void register_naive_threads() { register_naive("thesis_naive_threads"); }
#else
void register_naive_one_thread() { register_naive("thesis_naive"); }
#endif

}  // namespace cnn::bench
