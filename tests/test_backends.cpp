// Every backend and variant built into this binary, on every image count that exercises a different
// path (one image, an odd tail, several batches), is validated against the FP64 reference through the
// same Session interface the harness uses. A new backend is covered here without touching this file.
#include <gtest/gtest.h>

#include "common/registry.hpp"
#include "common/validation.hpp"
#include "tests/test_support.hpp"

namespace cnn::test {
namespace {

struct Case {
  std::string backend, variant;
  friend void PrintTo(const Case& c, std::ostream* os) { *os << c.backend << ":" << c.variant; }
};

std::vector<Case> runnable_variants() {
  std::vector<Case> out;
  for (const auto& e : all_backends()) {
    if (!e.make) continue;
    const auto b = e.make();
    if (!b->availability().runnable) continue;
    for (const auto& v : b->variants()) out.push_back({e.name, v.name});
  }
  return out;
}

class EveryVariant : public ::testing::TestWithParam<Case> {};

TEST_P(EveryVariant, MatchesFp64ReferenceOnOddImageCounts) {
  const Case& c = GetParam();
  std::unique_ptr<Backend> backend;
  for (const auto& e : all_backends())
    if (e.name == c.backend) backend = e.make();
  ASSERT_TRUE(backend);
  const auto& data = training_images();
  for (const std::size_t n : {std::size_t(1), std::size_t(37), std::size_t(300)}) {
    for (const std::size_t batch : {std::size_t(0), std::size_t(16)}) {
      RunConfig cfg;
      cfg.images = n;
      cfg.batch = batch;
      auto session = backend->open(c.variant, trained_network(), cfg);
      session->upload(data.pixels.data(), n);
      LayerTimes layers;
      EXPECT_GE(session->forward(layers), 0.0);
      std::vector<float> probs(n * kClasses, -1.0f);
      session->download(probs.data());
      const Validation v = validate(probs.data(), n, reference_first(n), n);
      EXPECT_TRUE(v.passed) << c.backend << ":" << c.variant << " n=" << n << " batch=" << batch
                            << " max diff " << v.max_abs_prob_diff << " mismatches " << v.top1_mismatches;
      const bool layerwise = [&] {
        for (const auto& vi : backend->variants())
          if (vi.name == c.variant) return vi.layerwise;
        return false;
      }();
      if (layerwise) EXPECT_EQ(layers.size(), kLayers.size()) << "layer-wise variants time all 11 layers";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Registry, EveryVariant, ::testing::ValuesIn(runnable_variants()),
                         [](const auto& info) { return info.param.backend + "_" + info.param.variant; });

TEST(Registry, ListsSerialAndEveryPlannedModel) {
  std::vector<std::string> names;
  for (const auto& e : all_backends()) names.push_back(e.name);
  EXPECT_EQ(names, (std::vector<std::string>{"serial", "openmp", "stdpar", "openacc", "omptarget", "kokkos", "cuda", "cudnn", "onednn"}));
  for (const auto& e : all_backends())
    if (!e.make) EXPECT_FALSE(e.not_built_reason.empty()) << e.name << " must say why it is not built";
}

}  // namespace
}  // namespace cnn::test
