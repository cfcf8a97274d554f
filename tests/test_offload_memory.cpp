// The device memory the directive-based sessions report (memory_bytes.device_peak), against what they map.
// The sessions run here with fake data directives that count the bytes entered on a "GPU", and fake compute
// calls that map what the directive-based backends' per-layer data clauses map (their copyin/copyout or
// map(to/from) extents) and note the most the device held at once.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <vector>

#include "common/kernels/offload/offload_variants.hpp"
#include "tests/test_support.hpp"

namespace cnn::offload {
namespace {

std::map<const void*, std::size_t> g_entered;  // host address -> bytes, while entered (enter/exit data)
std::size_t g_peak = 0;                        // the most bytes on the device at once, compute calls' own too
bool g_on_gpu = true;

std::size_t entered_bytes() {
  std::size_t bytes = 0;
  for (const auto& [p, b] : g_entered) bytes += b;
  return bytes;
}
void enter(const void* p, std::size_t bytes) {
  g_entered[p] = bytes;
  g_peak = std::max(g_peak, entered_bytes());
}
void leave(const void* p, std::size_t) { g_entered.erase(p); }
void update_host(void*, std::size_t) {}

const RuntimeFacts& facts() {
  static RuntimeFacts gpu{true, 1, "fake GPU", {}}, host{false, 0, "host fallback", {}};
  return g_on_gpu ? gpu : host;
}
constexpr DataDirectives kFake{enter, enter, update_host, leave, facts};

// Whether [p, p + bytes) lies in an entered array (present, as the runtimes find it: by address range).
bool present(const void* p, std::size_t bytes) {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  for (const auto& [q, n] : g_entered) {
    const auto b = reinterpret_cast<std::uintptr_t>(q);
    if (a >= b && a + bytes <= b + n) return true;
  }
  return false;
}

// One compute call: its arrays that are not present are copied for the call alone, next to what is.
struct Mapped {
  std::size_t bytes = 0;
  template <typename T>
  Mapped& operator()(const T* p, std::size_t count) {
    if (!present(p, count * sizeof(T))) bytes += count * sizeof(T);
    return *this;
  }
  ~Mapped() { g_peak = std::max(g_peak, entered_bytes() + bytes); }
};

// The layer calls, with the extents of the backends' data clauses.
struct LayerCalls {
  template <typename In>
  void conv(const In* in, int n, const ConvSpec& s, const float* w, const float* b, float* out) const {
    Mapped{}(in, std::size_t(n) * s.in_channels * s.in_side * s.in_side)(w, s.weight_count())(b, s.filters)(
        out, std::size_t(n) * s.filters * s.out_side() * s.out_side());
  }
  void relu(float* a, std::size_t count) const { Mapped{}(a, count); }
  void pool(const float* in, int n, const ConvSpec& s, float* out) const {
    Mapped{}(in, std::size_t(n) * s.filters * s.out_side() * s.out_side())(
        out, std::size_t(n) * s.filters * s.pooled_side() * s.pooled_side());
  }
  void fc(const float* in, int n, const float* w, const float* b, float* out) const {
    Mapped{}(in, std::size_t(n) * kFc.inputs())(w, std::size_t(kFc.inputs()) * kClasses)(b, kClasses)(
        out, std::size_t(n) * kClasses);
  }
  void softmax(float* a, int n) const { Mapped{}(a, std::size_t(n) * kClasses); }
};

struct FusedCalls {
  template <typename In>
  void conv_relu_pool(const In* in, int n, const ConvSpec& s, const float* w, const float* b, float* out) const {
    Mapped{}(in, std::size_t(n) * s.in_channels * s.in_side * s.in_side)(w, s.weight_count())(b, s.filters)(
        out, std::size_t(n) * s.filters * s.pooled_side() * s.pooled_side());
  }
  void fc_softmax(const float* in, int n, const float* w, const float* b, float* probs) const {
    LayerCalls{}.fc(in, n, w, b, probs);
  }
};

// Opens a session, runs `images` images through it and returns (what it reports, the device's peak).
template <typename Open>
std::pair<std::size_t, std::size_t> reported_and_peak(Open open, std::size_t images, std::size_t batch,
                                                      bool told = true) {
  g_entered.clear();
  g_peak = 0;
  const RunConfig config{told ? images : 0, batch, 1, {}};
  auto session = open(test::trained_network(), config);
  const std::vector<std::uint8_t> pixels(images * kImageBytes, 128);
  session->upload(pixels.data(), images);
  LayerTimes layers;
  session->forward(layers);
  return {session->device_memory_bytes(), g_peak};
}

auto open_layerwise(bool resident) {
  return [resident](const Network& net, const RunConfig& config) {
    return std::make_unique<LayerwiseSession<kFake, LayerCalls>>(net, config, resident);
  };
}
auto open_fused() {
  return [](const Network& net, const RunConfig& config) {
    return std::make_unique<FusedSession<kFake, FusedCalls>>(net, config);
  };
}

// One chunk; several, the last one short; fewer images than the chunk (a session not told how many).
struct Run {
  std::size_t images, batch;
  bool told;
};
const Run kRuns[] = {{5, 0, true}, {5, 2, true}, {3, 64, false}};

TEST(OffloadMemory, CopyingPerLayerReportsTheLargestCallsCopies) {
  g_on_gpu = true;
  for (const auto& [images, batch, told] : kRuns) {
    const auto [reported, peak] = reported_and_peak(open_layerwise(false), images, batch, told);
    EXPECT_GT(peak, 0u);
    EXPECT_EQ(reported, peak) << images << " images, batch " << batch;
  }
}

TEST(OffloadMemory, ResidentSessionsReportWhatTheyEntered) {
  g_on_gpu = true;
  for (const auto& [images, batch, told] : kRuns) {
    for (const auto& [name, result] :
         {std::pair{"layerwise", reported_and_peak(open_layerwise(true), images, batch, told)},
          std::pair{"fused", reported_and_peak(open_fused(), images, batch, told)}}) {
      EXPECT_GT(result.second, 0u);
      EXPECT_EQ(result.first, result.second) << name << ", " << images << " images, batch " << batch;
    }
  }
}

TEST(OffloadMemory, HostFallbackReportsNoDeviceMemory) {
  g_on_gpu = false;
  EXPECT_EQ(reported_and_peak(open_layerwise(false), 5, 0).first, 0u);
  EXPECT_EQ(reported_and_peak(open_layerwise(true), 5, 0).first, 0u);
  EXPECT_EQ(reported_and_peak(open_fused(), 5, 0).first, 0u);
  g_on_gpu = true;
}

}  // namespace
}  // namespace cnn::offload
