// The network as a chain of oneDNN 2.x primitives for a fixed number of images, created once:
//   u8 images --reorder--> f32 --eltwise linear (x/255 - 0.5)--> [conv + fused ReLU -> max pool] x3
//   --> inner product --> softmax (in place, into the caller's probabilities).
// Every conv and the inner product are described with format_tag::any, so the library picks the memory
// formats it runs fastest (blocked layouts such as nChw16c on AVX-512); a reorder is inserted only where one
// primitive's output format differs from the next one's input format. Weights are re-laid into the chosen
// formats once, here, not per pass.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "common/network.hpp"

namespace cnn::onednn {

class Graph {
 public:
  Graph(const Network& net, int images, const dnnl::engine& engine, dnnl::stream& stream);

  // `images()` images (planar uint8, kImageBytes each) -> images() x kClasses probabilities.
  void run(const std::uint8_t* pixels, float* probs, dnnl::stream& stream);
  int images() const { return images_; }

  // What the library chose: implementation and memory formats, per primitive ("conv1" ->
  // "jit:avx512_core, src abcd, weights Acdb16a, dst aBcd16b"), for the report's device_info.
  const std::vector<std::pair<std::string, std::string>>& choices() const { return choices_; }

 private:
  struct Step {
    dnnl::primitive primitive;
    std::unordered_map<int, dnnl::memory> args;
  };
  // `from` in the format `want`: `from` itself when the formats agree, else a new memory filled by a reorder step.
  dnnl::memory connect(const dnnl::memory& from, const dnnl::memory::desc& want);
  void add_conv_relu_pool(int layer, const ConvLayer& conv, dnnl::memory& activations, dnnl::stream& stream);
  void add_fc_softmax(const FcLayer& fc, dnnl::memory& activations, dnnl::stream& stream);
  // The weights `values` (plain layout `plain`) re-laid into `want`, now.
  dnnl::memory relayout(const std::vector<float>& values, const dnnl::memory::desc& plain,
                        const dnnl::memory::desc& want, dnnl::stream& stream);

  int images_;
  dnnl::engine engine_;
  dnnl::memory pixels_, probs_;  // the caller's buffers, handles set per run
  std::vector<Step> steps_;
  std::vector<std::pair<std::string, std::string>> choices_;
};

// The layout of a memory descriptor in oneDNN's letter notation: dimensions a, b, c, d outermost first,
// upper case where blocked, then the inner blocks ("aBcd16b" is nChw16c, "ABcd16b16a" is OIhw16i16o).
std::string format_name(const dnnl::memory::desc& md);

}  // namespace cnn::onednn
