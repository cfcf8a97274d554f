// The FP64 reference is the ground truth: it must reproduce the thesis' conv1 output and accuracy.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <sstream>

#include "common/network.hpp"
#include "suite/reference.hpp"
#include "suite/validation.hpp"
#include "tests/test_support.hpp"

namespace cnn::test {
namespace {

TEST(Reference, Conv1MatchesTheThesisGoldOutputTo1e6) {
  const std::string text = read_text_file(data_dir() / "convnetjs-cifar10" / "conv1_image0.gold.txt");
  const auto eol = text.find('\n');
  ASSERT_EQ(text.substr(0, eol), "32,32,16");
  const std::vector<double> gold = parse_numbers(text.substr(eol + 1), "gold");
  ASSERT_EQ(gold.size(), 16u * 32 * 32);
  const std::vector<double> mine = reference_conv1(trained_network(), training_images().image(0));
  ASSERT_EQ(mine.size(), gold.size());
  double worst = 0;
  for (std::size_t i = 0; i < gold.size(); ++i) worst = std::max(worst, std::fabs(mine[i] - gold[i]));
  EXPECT_LE(worst, 1e-6);
  EXPECT_GT(worst, 0.0) << "gold has 6 decimals: an exact match would mean we compared the file with itself";
}

TEST(Reference, ClassifiesTheFirst1200ImagesAt7825Percent) {
  const auto& ref = reference_first(1200);
  const auto& labels = training_images().labels;
  std::size_t right = 0;
  for (std::size_t i = 0; i < 1200; ++i) right += argmax10(&ref[i * 10]) == labels[i];
  EXPECT_EQ(right, 939u);  // 939 / 1200 = 78.25 %, the thesis' figure
}

TEST(Reference, ProbabilitiesArePositiveAndSumToOne) {
  const auto& ref = reference_first(37);
  for (std::size_t i = 0; i < 37; ++i) {
    const double* p = &ref[i * 10];
    EXPECT_NEAR(std::accumulate(p, p + 10, 0.0), 1.0, 1e-12);
    for (int k = 0; k < 10; ++k) EXPECT_GT(p[k], 0.0);
  }
}

// ---- validation

std::vector<float> as_float(const std::vector<double>& v) { return {v.begin(), v.end()}; }

TEST(Validation, PassesFp32RoundingAndCatchesRealErrors) {
  const auto& ref = reference_first(37);
  std::vector<float> p = as_float(ref);
  Validation v = validate(p.data(), 37, ref, 37);
  EXPECT_TRUE(v.passed);
  EXPECT_EQ(v.compared, 37u);
  EXPECT_LT(v.max_abs_prob_diff, 1e-7);

  p[5 * 10 + 3] += 2e-4f;
  v = validate(p.data(), 37, ref, 37);
  EXPECT_FALSE(v.passed);
  EXPECT_EQ(v.worst_image, 5u);
  EXPECT_NEAR(v.max_abs_prob_diff, 2e-4, 1e-6);

  p = as_float(ref);
  p[7 * 10 + 2] = NAN;
  v = validate(p.data(), 37, ref, 37);
  EXPECT_FALSE(v.passed);
  // NaN would compare false with every later difference and, merged, give way to a finite one: a failed run
  // would show a difference within tolerance.
  EXPECT_EQ(v.max_abs_prob_diff, INFINITY);
  EXPECT_EQ(v.worst_image, 7u);
}

TEST(Validation, SwappedTop1IsAMismatchUnlessTheReferenceTies) {
  std::vector<double> ref = {0.5, 0.3, 0.2, 0, 0, 0, 0, 0, 0, 0};
  std::vector<float> p = {0.3f, 0.5f, 0.2f, 0, 0, 0, 0, 0, 0, 0};
  Validation v = validate(p.data(), 1, ref, 1);
  EXPECT_EQ(v.top1_mismatches, 1u);
  EXPECT_EQ(v.near_ties, 0u);
  EXPECT_FALSE(v.passed);
  ref = {0.40004, 0.39996, 0.2, 0, 0, 0, 0, 0, 0, 0};
  p = {0.39999f, 0.40001f, 0.2f, 0, 0, 0, 0, 0, 0, 0};
  v = validate(p.data(), 1, ref, 1);
  EXPECT_EQ(v.top1_mismatches, 0u);
  EXPECT_EQ(v.near_ties, 1u);
  EXPECT_TRUE(v.passed);
}

// Each probability within tolerance, yet the top class swapped where the reference's two are 1.2e-4 apart:
// a wrong answer that only the top-1 check sees.
TEST(Validation, ATop1MismatchFailsWithEveryProbabilityWithinTolerance) {
  const std::vector<double> ref = {0.40006, 0.39994, 0.2, 0, 0, 0, 0, 0, 0, 0};
  const std::vector<float> p = {0.39999f, 0.40001f, 0.2f, 0, 0, 0, 0, 0, 0, 0};
  const Validation v = validate(p.data(), 1, ref, 1);
  ASSERT_LE(v.max_abs_prob_diff, v.tolerance);
  EXPECT_EQ(v.top1_mismatches, 1u);
  EXPECT_EQ(v.near_ties, 0u);
  EXPECT_FALSE(v.passed);
}

// A run validates its forward pass and its end-to-end pass over the same images: the merged counts are the
// worse pass's, never more than the images compared.
TEST(Validation, TwoPassesOfTheSameImagesCountTheWorse) {
  const auto& ref = reference_first(37);
  std::vector<float> forward = as_float(ref), e2e = as_float(ref);
  const auto wrong_top1 = [&](std::vector<float>& p, int i) {  // the reference's top class dropped to 0
    p[std::size_t(i) * 10 + argmax10(&ref[std::size_t(i) * 10])] = 0.0f;
  };
  for (int i : {1, 2, 3}) wrong_top1(forward, i);
  for (int i : {2, 3, 4, 5}) wrong_top1(e2e, i);  // 4 images, 2 of them the forward pass's
  Validation v = validate(forward.data(), 37, ref, 37);
  const Validation other = validate(e2e.data(), 37, ref, 37);
  ASSERT_EQ(v.top1_mismatches, 3u);
  ASSERT_EQ(other.top1_mismatches, 4u);
  merge(v, other);
  EXPECT_FALSE(v.passed);
  EXPECT_EQ(v.compared, 37u);
  EXPECT_EQ(v.top1_mismatches, 4u);  // summed, 7
  EXPECT_EQ(v.near_ties, 0u);
}

// One pass failing is the run failing, whichever of the two it is; the larger difference names its image.
TEST(Validation, AMergedRunFailsWhenEitherPassFailed) {
  const auto& ref = reference_first(37);
  const std::vector<float> good = as_float(ref);
  std::vector<float> bad = good;
  bad[9 * 10 + 4] += 2e-4f;
  const Validation passing = validate(good.data(), 37, ref, 37), failing = validate(bad.data(), 37, ref, 37);
  ASSERT_TRUE(passing.passed);
  ASSERT_FALSE(failing.passed);
  for (const bool failing_first : {false, true}) {
    Validation v = failing_first ? failing : passing;
    merge(v, failing_first ? passing : failing);
    EXPECT_FALSE(v.passed) << failing_first;
    EXPECT_EQ(v.worst_image, 9u) << failing_first;
    EXPECT_NEAR(v.max_abs_prob_diff, 2e-4, 1e-6) << failing_first;
  }
}

TEST(Validation, CyclesThroughTheReference) {
  const auto& ref = reference_first(3);
  std::vector<float> p;
  for (int rep = 0; rep < 3; ++rep) p.insert(p.end(), ref.begin(), ref.end());
  EXPECT_TRUE(validate(p.data(), 9, ref, 3).passed);
  p[8 * 10] += 0.5f;  // image 8 is image 2 again
  EXPECT_FALSE(validate(p.data(), 9, ref, 3).passed);
}

}  // namespace
}  // namespace cnn::test
