// The thesis' single-threaded C loops (a port of ConvNetJS), shared by the CPU backends' naive variants:
// - activations are ConvNetJS volumes, w[((sx * y) + x) * depth + d] (channel fastest);
// - each conv output sums over the 5x5 window with a bounds check for the zero padding;
// - one image at a time through the 11 layers, each layer timed and the times summed over the images,
//   as the thesis reports them.
// The OpenMP port of the thesis is these loops plus `omp parallel for` over the output maps: the pragmas
// below take effect only in a translation unit compiled with OpenMP, so the single-threaded port and the
// OpenMP one are the same code, one step apart.
#pragma once

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>

#include "common/fp32_math.hpp"
#include "common/timer.hpp"
#include "common/variant_table.hpp"

// The two builds of these inline functions differ, so each lives in its own inline namespace: one
// definition per name, as the one-definition rule demands.
#ifdef _OPENMP
#include "common/kernels/cpu/omp_threads.hpp"
#define THESIS_OMP_FOR _Pragma("omp parallel for")
#define THESIS_BUILD with_openmp
#else
#define THESIS_OMP_FOR
#define THESIS_BUILD without_openmp
#endif

namespace cnn::thesis {
inline namespace THESIS_BUILD {


struct Vol {
  int sx, sy, depth;
  std::vector<float> w;
  Vol(int sx_, int sy_, int d) : sx(sx_), sy(sy_), depth(d), w(std::size_t(sx_) * sy_ * d, 0.0f) {}
  float get(int x, int y, int d) const { return w[((std::size_t(sx) * y) + x) * depth + d]; }
  void set(int x, int y, int d, float v) { w[((std::size_t(sx) * y) + x) * depth + d] = v; }
};

// A conv layer as ConvNetJS holds it: one volume per filter (kernel x, kernel y, channel).
struct ThesisConv {
  ConvSpec spec;
  std::vector<Vol> filters;
  std::vector<float> bias;
};

inline ThesisConv to_thesis(const ConvLayer& L) {
  const ConvSpec& s = L.spec;
  ThesisConv t{s, {}, L.bias};
  for (int f = 0; f < s.filters; ++f) {
    Vol v(s.kernel, s.kernel, s.in_channels);
    for (int c = 0; c < s.in_channels; ++c)
      for (int y = 0; y < s.kernel; ++y)
        for (int x = 0; x < s.kernel; ++x) v.set(x, y, c, L.w(f, c, y, x));
    t.filters.push_back(std::move(v));
  }
  return t;
}

// One planar uint8 image into a 32x32x3 volume.
inline void load_image(const std::uint8_t* img, Vol& input) {
  for (int c = 0; c < kImageChannels; ++c)
    for (int y = 0; y < kImageSide; ++y)
      for (int x = 0; x < kImageSide; ++x)
        input.set(x, y, c, normalise_pixel<float>(img[(c * kImageSide + y) * kImageSide + x]));
}

// Output map d of a conv layer: the thesis' loop body, a function so that other ports (C++ parallel algorithms) can run
// the maps with their own parallel construct.
inline void conv_map(const Vol& V, const ThesisConv& L, Vol& A, int d) {
  const int stride = 1, pad = L.spec.pad;
  const Vol& f = L.filters[d];
  int y = -pad;
  for (int ay = 0; ay < A.sy; y += stride, ++ay) {
    int x = -pad;
    for (int ax = 0; ax < A.sx; x += stride, ++ax) {
      float a = 0.0f;
      for (int fy = 0; fy < f.sy; ++fy) {
        const int oy = y + fy;
        for (int fx = 0; fx < f.sx; ++fx) {
          const int ox = x + fx;
          if (oy >= 0 && oy < V.sy && ox >= 0 && ox < V.sx) {
            for (int fd = 0; fd < f.depth; ++fd) {
              a += f.w[((f.sx * fy) + fx) * f.depth + fd] * V.w[((V.sx * oy) + ox) * V.depth + fd];
            }
          }
        }
      }
      a += L.bias[d];
      A.set(ax, ay, d, a);
    }
  }
}

inline void conv_forward(const Vol& V, const ThesisConv& L, Vol& A) {
  THESIS_OMP_FOR
  for (int d = 0; d < L.spec.filters; ++d) conv_map(V, L, A, d);
}

inline void relu_forward(Vol& V) {
  const int n = int(V.w.size());
  THESIS_OMP_FOR
  for (int i = 0; i < n; ++i)
    if (V.w[i] < 0) V.w[i] = 0;
}

// Output map d of a 2x2 max pool (the thesis' loop body).
inline void pool_map(const Vol& V, Vol& A, int d) {
  const int size = 2, stride = 2;
  int x = 0;
  for (int ax = 0; ax < A.sx; x += stride, ++ax) {
    int y = 0;
    for (int ay = 0; ay < A.sy; y += stride, ++ay) {
      float a = -99999.0f;
      for (int fx = 0; fx < size; ++fx)
        for (int fy = 0; fy < size; ++fy) {
          const int oy = y + fy, ox = x + fx;
          if (oy >= 0 && oy < V.sy && ox >= 0 && ox < V.sx) a = std::max(a, V.get(ox, oy, d));
        }
      A.set(ax, ay, d, a);
    }
  }
}

inline void pool_forward(const Vol& V, Vol& A) {
  THESIS_OMP_FOR
  for (int d = 0; d < A.depth; ++d) pool_map(V, A, d);
}

// The FC weights in the thesis' order: output, y, x, channel, i.e. the order of the input volume's w.
inline std::vector<float> to_thesis(const FcLayer& fc) {
  const FcSpec& s = fc.spec;
  std::vector<float> w(fc.weights.size());
  for (int o = 0; o < s.outputs; ++o)
    for (int y = 0; y < s.in_side; ++y)
      for (int x = 0; x < s.in_side; ++x)
        for (int c = 0; c < s.in_channels; ++c)
          w[std::size_t(o) * s.inputs() + (y * s.in_side + x) * s.in_channels + c] =
              fc.weights[std::size_t(o) * s.inputs() + (c * s.in_side + y) * s.in_side + x];
  return w;
}

inline void fc_forward(const Vol& V, const std::vector<float>& w, const std::vector<float>& bias, float* out) {
  const int n_in = int(V.w.size());
  for (int i = 0; i < kClasses; ++i) {
    float a = 0.0f;
    for (int d = 0; d < n_in; ++d) a += V.w[d] * w[std::size_t(i) * n_in + d];
    out[i] = a + bias[i];
  }
}

// The threads the (OpenMP-built) session's loops get: 1 where it is built without OpenMP.
inline int team_size([[maybe_unused]] int requested) {
#ifdef _OPENMP
  return omp_team_size(requested);
#else
  return 1;
#endif
}

class ThesisNaiveSession final : public HostSession {
 public:
  ThesisNaiveSession(const Network& net, const RunConfig& config)
      : HostSession(config, 1, team_size(config.threads)),
        convs_{to_thesis(net.conv1), to_thesis(net.conv2), to_thesis(net.conv3)},
        fc_w_(to_thesis(net.fc)),
        fc_bias_(net.fc.bias) {}

  double forward(LayerTimes& layers) override {
#ifdef _OPENMP
    omp_set_num_threads(threads_);
#endif
    double t[kLayers.size()] = {};
    StopWatch total;
    Vol input(kImageSide, kImageSide, kImageChannels);
    auto out_vol = [](const ConvSpec& s) { return Vol(s.out_side(), s.out_side(), s.filters); };
    auto pool_vol = [](const ConvSpec& s) { return Vol(s.pooled_side(), s.pooled_side(), s.filters); };
    Vol c1 = out_vol(kConv1), p1 = pool_vol(kConv1), c2 = out_vol(kConv2), p2 = pool_vol(kConv2);
    Vol c3 = out_vol(kConv3), p3 = pool_vol(kConv3);
    Vol* conv_in[3] = {&input, &p1, &p2};
    Vol* conv_out[3] = {&c1, &c2, &c3};
    Vol* pool_out[3] = {&p1, &p2, &p3};
    for_each_slice(256, [&](std::size_t first, std::size_t last) {  // an image at a time; 256: progress
      for (std::size_t i = first; i < last; ++i) {
        load_image(pixels_ + i * kImageBytes, input);
        StopWatch sw;
        for (int l = 0; l < 3; ++l) {
          sw.restart();
          conv_forward(*conv_in[l], convs_[l], *conv_out[l]);
          t[3 * l] += sw.ms();
          sw.restart();
          relu_forward(*conv_out[l]);
          t[3 * l + 1] += sw.ms();
          sw.restart();
          pool_forward(*conv_out[l], *pool_out[l]);
          t[3 * l + 2] += sw.ms();
        }
        float* out = probs_.data() + i * kClasses;
        sw.restart();
        fc_forward(p3, fc_w_, fc_bias_, out);
        t[9] += sw.ms();
        sw.restart();
        softmax_fp32(out);
        t[10] += sw.ms();
      }
    });
    for (std::size_t l = 0; l < kLayers.size(); ++l) layers.emplace_back(std::string(kLayers[l].name), t[l]);
    return total.ms();
  }

 private:
  ThesisConv convs_[3];
  std::vector<float> fc_w_, fc_bias_;
};

}  // namespace THESIS_BUILD
}  // namespace cnn::thesis

#undef THESIS_OMP_FOR
#undef THESIS_BUILD
