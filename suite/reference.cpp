#include "suite/reference.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>

#include "common/errors.hpp"
#include "common/text.hpp"
#include "suite/thread_stacks.hpp"

namespace cnn {
namespace {

// Activations as planes [channel][y][x] with `pad` zeros around each plane, so the 5x5 loops need no
// bounds checks.
struct Planes {
  int channels, side, pad;
  std::vector<double> v;
  Planes(int c, int s, int p) : channels(c), side(s), pad(p), v(std::size_t(c) * (s + 2 * p) * (s + 2 * p)) {}
  int stride() const { return side + 2 * pad; }
  double& at(int c, int y, int x) { return v[(std::size_t(c) * stride() + y + pad) * stride() + x + pad]; }
  const double& at(int c, int y, int x) const {
    return v[(std::size_t(c) * stride() + y + pad) * stride() + x + pad];
  }
};

Planes input_planes(const std::uint8_t* image, int pad) {
  Planes in(kImageChannels, kImageSide, pad);
  for (int c = 0; c < kImageChannels; ++c)
    for (int y = 0; y < kImageSide; ++y)
      for (int x = 0; x < kImageSide; ++x)
        in.at(c, y, x) = normalise_pixel<double>(image[(c * kImageSide + y) * kImageSide + x]);
  return in;
}

// out[f][y][x] = bias[f] + sum_{c,ky,kx} w[f][c][ky][kx] * in[c][y+ky-pad][x+kx-pad]; out has no padding.
Planes conv(const Planes& in, const ConvLayer& L) {
  const ConvSpec& s = L.spec;
  const int S = s.out_side(), K = s.kernel;
  Planes out(s.filters, S, 0);
  for (int f = 0; f < s.filters; ++f) {
    double* o = &out.at(f, 0, 0);
    std::fill(o, o + S * S, L.bias64[f]);
    for (int c = 0; c < s.in_channels; ++c)
      for (int ky = 0; ky < K; ++ky)
        for (int kx = 0; kx < K; ++kx) {
          const double w = L.weights64[((std::size_t(f) * s.in_channels + c) * K + ky) * K + kx];
          for (int y = 0; y < S; ++y) {
            const double* row = &in.at(c, y + ky - s.pad, kx - s.pad);
            double* orow = o + y * S;
            for (int x = 0; x < S; ++x) orow[x] += w * row[x];
          }
        }
  }
  return out;
}

// ReLU then 2x2/2 max pool, into planes padded for the next conv.
Planes relu_pool(const Planes& in, int next_pad) {
  const int S = in.side / 2;
  Planes out(in.channels, S, next_pad);
  for (int c = 0; c < in.channels; ++c)
    for (int y = 0; y < S; ++y)
      for (int x = 0; x < S; ++x) {
        const double m = std::max({in.at(c, 2 * y, 2 * x), in.at(c, 2 * y, 2 * x + 1),
                                   in.at(c, 2 * y + 1, 2 * x), in.at(c, 2 * y + 1, 2 * x + 1)});
        out.at(c, y, x) = std::max(m, 0.0);  // max then ReLU == ReLU then max
      }
  return out;
}

// The largest magnitude among a layer's outputs, so far.
void track(double& peak, const Planes& p) {
  for (const double v : p.v) peak = std::max(peak, std::fabs(v));
}

// reference_forward, and the largest pre-activation it met (conv outputs and logits): above float32's range, no
// FP32 backend can compute this image.
std::array<double, kClasses> forward_with_peak(const Network& net, const std::uint8_t* image, double& peak) {
  Planes c = conv(input_planes(image, kConv1.pad), net.conv1);
  track(peak, c);
  Planes a = relu_pool(c, kConv2.pad);
  c = conv(a, net.conv2);
  track(peak, c);
  a = relu_pool(c, kConv3.pad);
  c = conv(a, net.conv3);
  track(peak, c);
  a = relu_pool(c, 0);  // 20 x 4 x 4, flattened c, y, x: the FC's canonical order

  std::array<double, kClasses> z{};
  const int n_in = kFc.inputs();
  for (int o = 0; o < kClasses; ++o) {
    double acc = net.fc.bias64[o];
    for (int i = 0; i < n_in; ++i) acc += net.fc.weights64[std::size_t(o) * n_in + i] * a.v[i];
    z[o] = acc;
    peak = std::max(peak, std::fabs(acc));
  }
  const double zmax = *std::max_element(z.begin(), z.end());
  double sum = 0;
  for (double& v : z) sum += (v = std::exp(v - zmax));
  for (double& v : z) v /= sum;
  return z;
}

}  // namespace

std::vector<double> reference_conv1(const Network& net, const std::uint8_t* image) {
  return conv(input_planes(image, kConv1.pad), net.conv1).v;
}

std::array<double, kClasses> reference_forward(const Network& net, const std::uint8_t* image) {
  double peak = 0;
  return forward_with_peak(net, image, peak);
}

std::vector<double> reference_probs(const Network& net, const Dataset& data, std::size_t n, int threads) {
  std::vector<double> probs(n * kClasses);
  // The run's first parallel region, where libgomp would end the process if a thread's stack could not be
  // mapped: checked here, after the last large allocation before it.
  const int team = openmp_team_size(threads);
  require_room_for_thread_stacks(team);
  std::vector<double> peaks(n, 0.0);  // each image's: an exception cannot leave the parallel region
#pragma omp parallel for schedule(dynamic, 16) num_threads(team)
  for (std::ptrdiff_t i = 0; i < std::ptrdiff_t(n); ++i) {
    const auto p = forward_with_peak(net, data.image(std::size_t(i)), peaks[std::size_t(i)]);
    std::copy(p.begin(), p.end(), probs.begin() + i * kClasses);
  }
  // Weights within float32's range can still drive an activation beyond it (every weight 3e38): every FP32
  // backend would then fail validation with an infinite difference, blamed on the backends. The weights are
  // the bad input.
  const auto first = std::find_if(peaks.begin(), peaks.end(), [](double p) { return !(p <= double(FLT_MAX)); });
  if (first != peaks.end()) {
    char value[32];
    std::snprintf(value, sizeof value, "%.3g", *first);
    throw InputError(display(net.source) + ": these weights drive an activation of image " +
                     std::to_string(first - peaks.begin()) + " to " + value +
                     ", beyond float32's range: no FP32 backend can compute it");
  }
  return probs;
}

}  // namespace cnn
