// kokkos:naive: the network layer by layer, one flat parallel_for (RangePolicy) per layer over every output
// value of a chunk of images, with a fence after each so that each of the 11 layers gets its own time.
#include "backends/kokkos/kokkos_session.hpp"
#include "common/registry.hpp"

namespace cnn::kokkos {
namespace {

using Range = Kokkos::RangePolicy<Space, Kokkos::IndexType<long>>;

template <class Sh>
void conv_layer(long images, const float* in, const float* w, const float* b, float* out) {
  constexpr long per_image = long(Sh::filters) * Sh::side * Sh::side;
  Kokkos::parallel_for("conv", Range(0, images * per_image), KOKKOS_LAMBDA(long i) {
    const long img = i / per_image;
    const int r = int(i % per_image);
    const int f = r / (Sh::side * Sh::side), y = (r / Sh::side) % Sh::side, x = r % Sh::side;
    out[i] = conv_at<Sh>(in + img * Sh::channels * Sh::side * Sh::side, w, b, f, y, x);
  });
}

void relu_layer(long count, float* v) {
  Kokkos::parallel_for("relu", Range(0, count), KOKKOS_LAMBDA(long i) { v[i] = v[i] > 0.0f ? v[i] : 0.0f; });
}

template <class Sh>
void pool_layer(long images, const float* in, float* out) {
  constexpr int p = Sh::pooled;
  Kokkos::parallel_for("pool", Range(0, images * Sh::filters * p * p), KOKKOS_LAMBDA(long i) {
    const long plane = i / (p * p);  // image * filters + f
    const int y = int(i % (p * p)) / p, x = int(i % p);
    const float* src = in + plane * Sh::side * Sh::side + (2 * y) * Sh::side + 2 * x;
    out[i] = max4(src[0], src[1], src[Sh::side], src[Sh::side + 1]);
  });
}

class KokkosNaiveSession final : public KokkosSession {
 public:
  // Big chunks feed a GPU; on the host a few hundred images keep each layer's buffers near the cache.
  KokkosNaiveSession(const Network& net, const RunConfig& config)
      : KokkosSession(net, config, kHostSpace ? 256 : 8192) {}

  double forward(LayerTimes& layers) override {
    const long chunk = long(batch());
    ensure_buffers(chunk);
    double t[kLayers.size()] = {};
    const StopWatch total;
    for (long first = 0; first < long(n_); first += chunk) {
      const long m = std::min<long>(chunk, long(n_) - first);
      run_chunk(first, m, t);
    }
    for (std::size_t l = 0; l < kLayers.size(); ++l) layers.emplace_back(std::string(kLayers[l].name), t[l]);
    return total.ms();
  }

 private:
  void ensure_buffers(long chunk) {
    if (long(input_.extent(0)) >= chunk * kImageBytes) return;
    auto make = [&](const char* label, long per_image) { return Floats(std::string(label), std::size_t(chunk * per_image)); };
    input_ = make("input", kImageBytes);
    c1_ = make("conv1", Shape1::filters * Shape1::side * Shape1::side);
    p1_ = make("pool1", Shape1::filters * Shape1::pooled * Shape1::pooled);
    c2_ = make("conv2", Shape2::filters * Shape2::side * Shape2::side);
    p2_ = make("pool2", Shape2::filters * Shape2::pooled * Shape2::pooled);
    c3_ = make("conv3", Shape3::filters * Shape3::side * Shape3::side);
    p3_ = make("pool3", kFcInputs);
  }

  // Runs f, waits for the device, adds the milliseconds to t.
  template <class F>
  static void timed(double& t, F&& f) {
    const StopWatch t0;
    f();
    Kokkos::fence();
    t += t0.ms();
  }

  // Public: nvcc refuses device lambdas inside private member functions.
 public:
  void run_chunk(long first, long m, double* t) {
    const std::uint8_t* px = pixels_.data() + first * kImageBytes;
    float* in = input_.data();
    float *c1 = c1_.data(), *p1 = p1_.data(), *c2 = c2_.data(), *p2 = p2_.data(), *c3 = c3_.data(), *p3 = p3_.data();
    float* out = probs_.data() + first * kClasses;
    const float *fw = fc_w_.data(), *fb = fc_b_.data();
    timed(t[0], [&] {  // conv1 includes turning the bytes into floats
      Kokkos::parallel_for("normalise", Range(0, m * kImageBytes),
                           KOKKOS_LAMBDA(long i) { in[i] = normalise_pixel_fp32(px[i]); });
      conv_layer<Shape1>(m, in, w_[0].data(), b_[0].data(), c1);
    });
    timed(t[1], [&] { relu_layer(m * Shape1::filters * Shape1::side * Shape1::side, c1); });
    timed(t[2], [&] { pool_layer<Shape1>(m, c1, p1); });
    timed(t[3], [&] { conv_layer<Shape2>(m, p1, w_[1].data(), b_[1].data(), c2); });
    timed(t[4], [&] { relu_layer(m * Shape2::filters * Shape2::side * Shape2::side, c2); });
    timed(t[5], [&] { pool_layer<Shape2>(m, c2, p2); });
    timed(t[6], [&] { conv_layer<Shape3>(m, p2, w_[2].data(), b_[2].data(), c3); });
    timed(t[7], [&] { relu_layer(m * Shape3::filters * Shape3::side * Shape3::side, c3); });
    timed(t[8], [&] { pool_layer<Shape3>(m, c3, p3); });
    timed(t[9], [&] {
      Kokkos::parallel_for("fc", Range(0, m * kClasses), KOKKOS_LAMBDA(long i) {
        out[i] = fc_at(p3 + (i / kClasses) * kFcInputs, fw, fb, int(i % kClasses));
      });
    });
    timed(t[10], [&] {
      Kokkos::parallel_for("softmax", Range(0, m), KOKKOS_LAMBDA(long img) {
        softmax_fp32(out + img * kClasses);
      });
    });
  }


 private:
  Floats input_, c1_, p1_, c2_, p2_, c3_, p3_;
};

const VariantRegistration kNaive{"kokkos", 1, open_session<KokkosNaiveSession>,
    {"naive", "layer by layer: one RangePolicy parallel_for per layer over all outputs of a chunk", true}};

}  // namespace
}  // namespace cnn::kokkos
