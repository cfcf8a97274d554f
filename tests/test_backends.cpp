// Every backend and variant built into this binary, on every image count that exercises a different
// path (one image, an odd tail, several batches), is validated against the FP64 reference through the
// same Session interface the harness uses. A new backend is covered here without touching this file.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "common/registry.hpp"
#include "suite/validation.hpp"
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
      // A report's platform is its GPU: a session on one names it, or the history files its runs on an
      // "unknown GPU" wherever no other run of the report names it.
      if (session->runs_on_gpu()) {
        const auto info = session->device_info();
        EXPECT_TRUE(std::any_of(info.begin(), info.end(),
                                [](const auto& kv) { return kv.first == "gpu_name" && !kv.second.empty(); }))
            << c.backend << ":" << c.variant << " runs on a GPU and does not name it (gpu_name)";
      }
      // The effective batch is fixed by open() (the report reads it there): 1..n, --batch when it fits.
      const std::size_t opened_batch = session->batch();
      EXPECT_GE(opened_batch, 1u);
      EXPECT_LE(opened_batch, n);
      session->upload(data.pixels.data(), n);
      EXPECT_EQ(session->batch(), opened_batch) << "upload must not change the batch";
      LayerTimes layers;
      EXPECT_GE(session->forward(layers), 0.0);
      // memory_bytes.device_peak: 0 means "no device", never "not counted".
      const std::string name = c.backend + ":" + c.variant;
      if (session->runs_on_gpu())
        EXPECT_GT(session->device_memory_bytes(), 0u) << name << " runs on a GPU and reports no device memory";
      else
        EXPECT_EQ(session->device_memory_bytes(), 0u) << name << " runs on the host and reports device memory";
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

TEST(Batch, ResolvedFromTheFlagOrTheVariantsChoiceWithinTheImageCount) {
  RunConfig cfg;
  cfg.images = 1200;
  EXPECT_EQ(resolve_batch(cfg, 4096), 1200u);       // never more than the images
  EXPECT_EQ(resolve_batch(cfg, 256), 256u);         // the variant's choice
  EXPECT_EQ(resolve_batch(cfg, kAllImages), 1200u);  // one launch
  cfg.batch = 16;
  EXPECT_EQ(resolve_batch(cfg, 4096), 16u);  // --batch wins
  cfg.batch = 5000;
  EXPECT_EQ(resolve_batch(cfg, 4096), 1200u);
  cfg.images = 0;  // image count unknown: no clamp, but at least 1
  EXPECT_EQ(resolve_batch(cfg, 4096), 5000u);
  cfg.batch = 0;
  EXPECT_EQ(resolve_batch(cfg, 0), 1u);
}

// The registry is the backends/ folders, built or not (the build knows them all), in their manifests' order
// (ties by name) and with their manifests' kinds, then backends registered in this binary only: the test
// backend of tests/throwaway_backend/, which no other file names.
TEST(Registry, ListsEveryBackendFolderInItsManifestsOrderThenTheTestBackend) {
  std::vector<std::string> expected = backend_folders();
  ASSERT_FALSE(expected.empty());
  const auto order = [](const std::string& name) { return backend_manifest(name).at("order").get<long>(); };
  std::stable_sort(expected.begin(), expected.end(), [&](const auto& a, const auto& b) { return order(a) < order(b); });
  expected.push_back("throwaway");
  std::vector<std::string> names;
  for (const auto& e : all_backends()) {
    names.push_back(e.name);
    if (e.name != "throwaway") EXPECT_EQ(e.kind, backend_manifest(e.name).at("kind").get<std::string>()) << e.name;
    if (!e.make) EXPECT_FALSE(e.not_built_reason.empty()) << e.name << " must say why it is not built";
  }
  EXPECT_EQ(names, expected);
}

// `suite --list --format json` (what the scripts read) lists every folder with its kind, and each variant it
// can run is a case of the every-variant test above: a backend in the list is validated there.
TEST(Registry, EveryRunnableVariantOfTheListIsACaseOfTheEveryVariantTest) {
  const auto r = run_suite({"--list", "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto listed = nlohmann::json::parse(r.out).at("backends");
  ASSERT_EQ(listed.size(), backend_folders().size());
  const auto cases = runnable_variants();
  for (const auto& b : listed) {
    EXPECT_EQ(b.at("kind"), backend_manifest(b.at("name")).at("kind")) << b.dump();
    if (!b.at("runnable").get<bool>()) continue;
    for (const auto& v : b.at("variants")) {
      const bool found = std::any_of(cases.begin(), cases.end(),
                                     [&](const Case& c) { return c.backend == b.at("name") && c.variant == v.at("name"); });
      EXPECT_TRUE(found) << b.at("name") << ":" << v.at("name") << " is not a case of EveryVariant";
    }
  }
  EXPECT_EQ(run_suite({"--list", "--format", "csv"}).exit_code, 2) << "--list is a table or JSON";
}

TEST(Registry, BuildsEveryRegisteredBackendAndRefusesUnknownOnes) {
  for (const auto& name : registered_backend_names()) {
    const auto backend = make_registered_backend(name);
    EXPECT_EQ(backend->name(), name);
    EXPECT_FALSE(backend->variants().empty()) << name;
  }
  EXPECT_THROW(make_registered_backend("nosuch"), std::logic_error);
  const auto throwaway = make_registered_backend("throwaway");
  ASSERT_EQ(throwaway->variants().size(), 1u);
  EXPECT_EQ(throwaway->variants()[0].name, "fp64");
}

}  // namespace
}  // namespace cnn::test
