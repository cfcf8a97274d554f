#include "backends/onednn/onednn_graph.hpp"

#include <algorithm>
#include <numeric>

namespace cnn::onednn {
namespace {

using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;

memory::desc any(memory::dims dims) { return {dims, dt::f32, tag::any}; }

}  // namespace

std::string format_name(const memory::desc& md) {
  const dnnl_memory_desc_t& d = md.data;
  if (d.format_kind != dnnl_blocked) return "opaque";
  const auto& b = d.format_desc.blocking;
  static constexpr char kLetters[] = "abcdef";
  std::vector<int> order(std::size_t(d.ndims));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return b.strides[x] > b.strides[y]; });
  std::string name;
  for (const int dim : order) {
    const bool blocked = std::find(b.inner_idxs, b.inner_idxs + b.inner_nblks, dim) != b.inner_idxs + b.inner_nblks;
    name += blocked ? char(kLetters[dim] - 'a' + 'A') : kLetters[dim];
  }
  for (int k = 0; k < b.inner_nblks; ++k) name += std::to_string(b.inner_blks[k]) + kLetters[b.inner_idxs[k]];
  return name;
}

Graph::Graph(const Network& net, int images, const dnnl::engine& engine, dnnl::stream& stream)
    : images_(images), engine_(engine) {
  const memory::dim n = images;
  pixels_ = memory({{n, kImageChannels, kImageSide, kImageSide}, dt::u8, tag::nchw}, engine_, DNNL_MEMORY_NONE);
  probs_ = memory({{n, kClasses}, dt::f32, tag::nc}, engine_, DNNL_MEMORY_NONE);
  memory activations = pixels_;
  for (int l = 0; l < 3; ++l) add_conv_relu_pool(l, net.conv(l), activations, stream);
  add_fc_softmax(net.fc, activations, stream);
}

memory Graph::connect(const memory& from, const memory::desc& want) {
  if (from.get_desc() == want) return from;
  memory to(want, engine_);
  steps_.push_back({dnnl::reorder(from, to), {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}}});
  return to;
}

memory Graph::relayout(const std::vector<float>& values, const memory::desc& plain, const memory::desc& want,
                       dnnl::stream& stream) {
  // The source is only read; oneDNN's memory takes a non-const handle.
  memory src(plain, engine_, const_cast<float*>(values.data()));
  memory dst(want, engine_);
  dnnl::reorder(src, dst).execute(stream, src, dst);
  stream.wait();
  return dst;
}

void Graph::add_conv_relu_pool(int layer, const ConvLayer& conv, memory& activations, dnnl::stream& stream) {
  const ConvSpec& s = conv.spec;
  const memory::dim n = images_, pad = s.pad;
  const memory::dims weight_dims{s.filters, s.in_channels, s.kernel, s.kernel};
  const memory::desc bias_md({s.filters}, dt::f32, tag::x);
  const dnnl::convolution_forward::desc conv_d(
      dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
      any({n, s.in_channels, s.in_side, s.in_side}), any(weight_dims), bias_md,
      any({n, s.filters, s.out_side(), s.out_side()}), {1, 1}, {pad, pad}, {pad, pad});
  dnnl::post_ops relu;
  relu.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
  dnnl::primitive_attr attr;
  attr.set_post_ops(relu);
  const dnnl::convolution_forward::primitive_desc conv_pd(conv_d, attr, engine_);

  memory src;
  if (layer == 0) {
    // The images: uint8 -> float in the format conv1 wants, then x / 255 - 0.5 in place.
    src = connect(activations, conv_pd.src_desc());
    const dnnl::eltwise_forward::primitive_desc norm_pd(
        {dnnl::prop_kind::forward_inference, dnnl::algorithm::eltwise_linear, src.get_desc(), 1.0f / 255.0f, -0.5f},
        engine_);
    steps_.push_back({dnnl::eltwise_forward(norm_pd), {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, src}}});
  } else {
    src = connect(activations, conv_pd.src_desc());
  }
  const memory weights = relayout(conv.weights, {weight_dims, dt::f32, tag::oihw}, conv_pd.weights_desc(), stream);
  const memory bias = relayout(conv.bias, bias_md, conv_pd.bias_desc(), stream);
  const memory conv_out(conv_pd.dst_desc(), engine_);
  steps_.push_back({dnnl::convolution_forward(conv_pd),
                    {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_BIAS, bias}, {DNNL_ARG_DST, conv_out}}});

  const memory::dim p = s.pooled_side();
  const dnnl::pooling_forward::primitive_desc pool_pd(
      {dnnl::prop_kind::forward_inference, dnnl::algorithm::pooling_max, conv_out.get_desc(),
       any({n, s.filters, p, p}), {2, 2}, {2, 2}, {0, 0}, {0, 0}},
      engine_);
  activations = memory(pool_pd.dst_desc(), engine_);
  steps_.push_back({dnnl::pooling_forward(pool_pd), {{DNNL_ARG_SRC, conv_out}, {DNNL_ARG_DST, activations}}});

  const std::string name = "conv" + std::to_string(layer + 1);
  choices_.emplace_back(name, std::string(conv_pd.impl_info_str()) + ", src " + format_name(src.get_desc()) +
                                  ", weights " + format_name(conv_pd.weights_desc()) + ", dst " +
                                  format_name(conv_pd.dst_desc()));
  choices_.emplace_back("pool" + std::to_string(layer + 1), pool_pd.impl_info_str());
}

void Graph::add_fc_softmax(const FcLayer& fc, memory& activations, dnnl::stream& stream) {
  const FcSpec& s = fc.spec;
  const memory::dim n = images_;
  // The FC weights as a 4-D (outputs, channels, y, x) tensor: the canonical order is pool3's planar order.
  const memory::dims weight_dims{s.outputs, s.in_channels, s.in_side, s.in_side};
  const memory::desc bias_md({s.outputs}, dt::f32, tag::x);
  const dnnl::inner_product_forward::primitive_desc ip_pd(
      {dnnl::prop_kind::forward_inference, any({n, s.in_channels, s.in_side, s.in_side}), any(weight_dims), bias_md,
       probs_.get_desc()},
      engine_);
  const memory src = connect(activations, ip_pd.src_desc());
  const memory weights = relayout(fc.weights, {weight_dims, dt::f32, tag::oihw}, ip_pd.weights_desc(), stream);
  const memory bias = relayout(fc.bias, bias_md, ip_pd.bias_desc(), stream);
  steps_.push_back({dnnl::inner_product_forward(ip_pd),
                    {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_BIAS, bias}, {DNNL_ARG_DST, probs_}}});
  const dnnl::softmax_forward::primitive_desc softmax_pd(
      {dnnl::prop_kind::forward_inference, probs_.get_desc(), 1}, engine_);
  steps_.push_back({dnnl::softmax_forward(softmax_pd), {{DNNL_ARG_SRC, probs_}, {DNNL_ARG_DST, probs_}}});
  choices_.emplace_back("fc", std::string(ip_pd.impl_info_str()) + ", src " + format_name(ip_pd.src_desc()) +
                                  ", weights " + format_name(ip_pd.weights_desc()));
  choices_.emplace_back("softmax", softmax_pd.impl_info_str());
  activations = probs_;
}

void Graph::run(const std::uint8_t* pixels, float* probs, dnnl::stream& stream) {
  pixels_.set_data_handle(const_cast<std::uint8_t*>(pixels));  // only read
  probs_.set_data_handle(probs);
  for (Step& step : steps_) step.primitive.execute(stream, step.args);
  stream.wait();
}

}  // namespace cnn::onednn
