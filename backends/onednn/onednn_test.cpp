// oneDNN-specific paths the every-variant test (tests/test_backends.cpp) does not reach.
#include <gtest/gtest.h>

#include "backends/onednn/onednn_fp32.hpp"
#include "backends/onednn/onednn_graph.hpp"
#include "suite/validation.hpp"
#include "tests/test_support.hpp"

namespace cnn::test {
namespace {

using dnnl::memory;

// The session builds its primitives for the configured image count; a pass over another count (here a
// different tail, and fewer images than one chunk) must build the graph it needs, not reuse a wrong one.
TEST(OneDnn, PassOverAnotherImageCountThanConfiguredIsValidated) {
  RunConfig cfg;
  cfg.images = 128;
  cfg.batch = 48;  // primitives for 48 images and a 32-image tail
  const auto session = onednn::open_fp32(trained_network(), cfg);
  const auto& data = training_images();
  for (const std::size_t n : {std::size_t(128), std::size_t(37), std::size_t(1), std::size_t(128)}) {
    session->upload(data.pixels.data(), n);
    LayerTimes layers;
    session->forward(layers);
    std::vector<float> probs(n * kClasses, -1.0f);
    session->download(probs.data());
    const Validation v = validate(probs.data(), n, reference_first(n), n);
    EXPECT_TRUE(v.passed) << "n=" << n << " max diff " << v.max_abs_prob_diff;
  }
}

// device_info names the layouts the library chose in its letter notation; check the spelling on known tags.
TEST(OneDnn, FormatNameSpellsBlockedLayouts) {
  const memory::dims dims{2, 16, 8, 8};
  EXPECT_EQ(onednn::format_name({dims, memory::data_type::f32, memory::format_tag::nchw}), "abcd");
  EXPECT_EQ(onednn::format_name({dims, memory::data_type::f32, memory::format_tag::nhwc}), "acdb");
  EXPECT_EQ(onednn::format_name({dims, memory::data_type::f32, memory::format_tag::nChw16c}), "aBcd16b");
  EXPECT_EQ(onednn::format_name({dims, memory::data_type::f32, memory::format_tag::OIhw16i16o}), "ABcd16b16a");
}

}  // namespace
}  // namespace cnn::test
