// stdpar:layers, the thesis' loops (common/kernels/cpu/thesis_naive.hpp: the same conv_map, pool_map,
// relu, FC and softmax functions as serial:naive) with C++17 parallel algorithms as the parallel layer:
// layer by layer over a chunk of images, one std::for_each(par_unseq) per layer over (image, output map)
// for conv and pool, over images for ReLU, FC and softmax. Against openmp:naive (which forks over the 16-20
// maps of one image) every algorithm call has images x maps iterations to spread.
#include <algorithm>
#include <execution>

#include "common/kernels/cpu/thesis_naive.hpp"
#include "backends/stdpar/stdpar_support.hpp"
#include "common/registry.hpp"

namespace cnn::stdpar {
namespace {

using thesis::Vol;

constexpr std::size_t kChunk = 64;  // images per round of 11 layer calls

std::vector<Vol> volumes(std::size_t n, int side, int depth) { return std::vector<Vol>(n, Vol(side, side, depth)); }

class LayersSession final : public HostSession {
 public:
  LayersSession(const Network& net, const RunConfig& config)
      : HostSession(config, resolve_batch(config, kChunk), resolve_threads(config)),
        convs_{thesis::to_thesis(net.conv1), thesis::to_thesis(net.conv2), thesis::to_thesis(net.conv3)},
        fc_w_(thesis::to_thesis(net.fc)),
        fc_bias_(net.fc.bias),
        index_(indices(batch_ * std::size_t(kConv2.filters))),
        input_(volumes(batch_, kImageSide, kImageChannels)) {
    for (int l = 0; l < 3; ++l) {
      const ConvSpec& s = kConvs[l];
      conv_out_[l] = volumes(batch_, s.out_side(), s.filters);
      pool_out_[l] = volumes(batch_, s.pooled_side(), s.filters);
    }
    static_assert(kConv2.filters >= kConv1.filters && kConv2.filters >= kConv3.filters, "index_ covers every layer");
  }

  double forward(LayerTimes& layers) override {
    const ThreadLimit limit(threads_);
    double t[kLayers.size()] = {};
    StopWatch total, sw;
    // std::for_each(par_unseq) over the first `count` indices, timed as layer `layer`.
    auto parallel = [&](int layer, std::size_t count, auto&& body) {
      sw.restart();
      std::for_each(std::execution::par_unseq, index_.begin(), index_.begin() + std::ptrdiff_t(count), body);
      t[layer] += sw.ms();
    };
    for_each_slice(batch_, [&](std::size_t first, std::size_t last) {
      const std::size_t n = last - first;
      std::for_each(std::execution::par_unseq, index_.begin(), index_.begin() + std::ptrdiff_t(n),
                    [&](int i) { thesis::load_image(pixels_ + (first + i) * kImageBytes, input_[i]); });
      for (int l = 0; l < 3; ++l) {
        const int F = kConvs[l].filters;
        const std::vector<Vol>& in = l == 0 ? input_ : pool_out_[l - 1];
        std::vector<Vol>& conv = conv_out_[l];
        std::vector<Vol>& pool = pool_out_[l];
        parallel(3 * l, n * F, [&](int k) { thesis::conv_map(in[k / F], convs_[l], conv[k / F], k % F); });
        parallel(3 * l + 1, n, [&](int i) { thesis::relu_forward(conv[i]); });
        parallel(3 * l + 2, n * F, [&](int k) { thesis::pool_map(conv[k / F], pool[k / F], k % F); });
      }
      float* probs = probs_.data() + first * kClasses;
      parallel(9, n, [&](int i) { thesis::fc_forward(pool_out_[2][i], fc_w_, fc_bias_, probs + i * kClasses); });
      parallel(10, n, [&](int i) { softmax_fp32(probs + i * kClasses); });
    });
    for (std::size_t l = 0; l < kLayers.size(); ++l) layers.emplace_back(std::string(kLayers[l].name), t[l]);
    return total.ms();
  }

 private:
  thesis::ThesisConv convs_[3];
  std::vector<float> fc_w_, fc_bias_;
  std::vector<int> index_;
  std::vector<Vol> input_, conv_out_[3], pool_out_[3];  // one volume per image of a chunk
};

const VariantRegistration kLayers{"stdpar", 1, open_session<LayersSession>,
    {"layers", "the thesis' loops, layer by layer over a chunk of images, std::for_each(par_unseq) over "
               "(image, output map)", true}};
}  // namespace

}  // namespace cnn::stdpar
