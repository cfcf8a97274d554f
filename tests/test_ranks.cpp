// The parts of an MPI run that need no MPI: how images and CPUs are shared out, which GPU a rank takes, and
// how rank 0 makes one record of the ranks' runs (suite/ranks.hpp, suite/binding.hpp). The runs themselves
// are tests/mpi/mpi_test.sh's.
#include <gtest/gtest.h>

#include <cmath>

#include "suite/binding.hpp"
#include "suite/ranks.hpp"
#include "suite/startup.hpp"
#include "suite/team.hpp"
#include "tests/test_support.hpp"

namespace cnn {
namespace {

TEST(Ranks, SplitGivesContiguousBlocksWithTheRemainderOnTheFirstRanks) {
  const std::size_t images = 10;
  std::size_t next = 0;
  const std::size_t want[] = {4, 3, 3};
  for (int r = 0; r < 3; ++r) {
    const Share s = share_of(images, r, 3, MpiMode::split);
    EXPECT_EQ(s.start, next);
    EXPECT_EQ(s.count, want[r]);
    next += s.count;
  }
  EXPECT_EQ(next, images);
  EXPECT_EQ(share_of(10, 2, 3, MpiMode::replicate).start, 0u);
  EXPECT_EQ(share_of(10, 2, 3, MpiMode::replicate).count, 10u);
}

TEST(Ranks, ASliceCyclesThroughTheData) {
  Dataset d;
  d.labels = {0, 1, 2};
  d.pixels.resize(3 * kImageBytes);
  for (std::size_t i = 0; i < 3; ++i) d.pixels[i * kImageBytes] = std::uint8_t(10 + i);
  const Dataset s = slice_of(d, 2, 3);
  EXPECT_EQ(s.labels, (std::vector<std::uint8_t>{2, 0, 1}));
  EXPECT_EQ(s.pixels[0], 12);
  EXPECT_EQ(s.pixels[kImageBytes], 10);
}

TEST(Binding, CpusAreSharedInContiguousBlocks) {
  const std::vector<int> cpus = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  EXPECT_EQ(cpu_share(cpus, 0, 4), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(cpu_share(cpus, 1, 4), (std::vector<int>{3, 4, 5}));
  EXPECT_EQ(cpu_share(cpus, 2, 4), (std::vector<int>{6, 7}));  // the first rank past the remainder: no extra CPU
  EXPECT_EQ(cpu_share(cpus, 3, 4), (std::vector<int>{8, 9}));
  EXPECT_EQ(cpu_share({4, 5}, 3, 4), (std::vector<int>{5}));  // fewer CPUs than ranks: one each, shared
  EXPECT_EQ(cpu_list_text({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
}

TEST(Binding, GpusGoRoundRobinFromTheVisibleList) {
  EXPECT_EQ(gpu_for(nullptr, 2, 3), "1");
  EXPECT_EQ(gpu_for(nullptr, 0, 0), "");
  EXPECT_EQ(gpu_for("4, 6", 8, 1), "6");
  EXPECT_EQ(gpu_for("GPU-abc", 8, 3), "GPU-abc");  // ranks share the one GPU they may use
  EXPECT_EQ(gpu_for("", 8, 0), "");
  EXPECT_EQ(gpu_for("4,,6", 8, 1), "6");  // an empty item is no GPU
}

// The launchers' local rank: a whole number below 2^20, else none (-1); the first variable set wins.
TEST(Binding, TheLocalRankIsReadOnlyFromAWholeNumber) {
  const test::WithoutEnvironment none({"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"});
  const auto rank_of = [](const char* value) {
    ::setenv("OMPI_COMM_WORLD_LOCAL_RANK", value, 1);
    return launcher_local_rank();
  };
  EXPECT_EQ(rank_of("3"), 3);
  EXPECT_EQ(rank_of("3x"), -1);
  EXPECT_EQ(rank_of("1048575"), 1048575);
  EXPECT_EQ(rank_of("1048576"), -1);
}

// An MPI launcher is known by the variables it sets for each process, by their whole names.
TEST(Team, TheLaunchersAreKnownByTheirVariables) {
  const auto launched = [](std::vector<const char*> env) {
    env.push_back(nullptr);
    return launched_by_mpi(env.data());
  };
  EXPECT_TRUE(launched({"HOME=/root", "OMPI_COMM_WORLD_SIZE=2"}));  // Open MPI
  EXPECT_TRUE(launched({"PMIX_RANK=0"}));                           // PMIx (Open MPI 5, Slurm)
  EXPECT_TRUE(launched({"PMI_RANK=1"}));                            // MPICH's Hydra
  EXPECT_FALSE(launched({"OMPI_ALLOW_RUN_AS_ROOT=1", "PMI_SIZE=2", "PMIX_RANKS=0"}));
  EXPECT_FALSE(launched({}));
}

// The thread counts in the environment, checked before libgomp reads them (suite/startup.cpp).
TEST(Startup, ThreadCountsInTheEnvironmentAreCheckedAsLibgompReadsThem) {
  const auto error = [](std::vector<const char*> env) {
    env.push_back(nullptr);
    char message[512] = "";
    return thread_environment_error(env.data(), message, sizeof message) ? std::string(message) : std::string();
  };
  EXPECT_EQ(error({"OMP_NUM_THREADS=\t4 ,2\n"}), "");  // spaces of any kind around each item
  EXPECT_EQ(error({"OMP_NUM_THREADS=0"}),
            "suite: error: OMP_NUM_THREADS='0': not a positive thread count or comma-separated list of them\n");
  EXPECT_EQ(error({"OMP_NUM_THREADS_DEV_1=99999999999999999999999999"}),  // saturates, no overflow
            "suite: error: OMP_NUM_THREADS_DEV_1='99999999999999999999999999': more than 4096 threads (the limit of "
            "--threads)\n");
  // Kokkos' variable: only a count beyond the limit (its own check says the rest), and no suffixed forms
  EXPECT_EQ(error({"KOKKOS_NUM_THREADS=abc", "KOKKOS_NUM_THREADS_X=99999"}), "");
  // the value quoted on one line: bytes outside printable ASCII as \xNN, cut after 60 characters
  EXPECT_EQ(error({"OMP_NUM_THREADS=\xc3\xa9"}),
            "suite: error: OMP_NUM_THREADS='\\xC3\\xA9': not a positive thread count or comma-separated list of "
            "them\n");
  const std::string long_value(70, 'x');
  const std::string variable = "OMP_NUM_THREADS=" + long_value;
  EXPECT_EQ(error({variable.c_str()}), "suite: error: OMP_NUM_THREADS='" + std::string(60, 'x') +
                                           "...': not a positive thread count or comma-separated list of them\n");
}

TEST(Ranks, RankZeroCombinesTheRanksRuns) {
  RunRecord r;
  r.backend = "b";
  r.variant = "v";
  r.images = 6;
  r.forward_samples_ms = {2.0};  // the slowest rank's
  RunRecord own0 = r, own1 = r;
  own0.validation = {6, 0, 0, 1e-6, 1, 1e-4, true};
  own1.validation = {4, 1, 0, 0.5, 2, 1e-4, false};
  own0.accuracy = 0.5;
  own1.accuracy = 1.0;
  own1.images = 4;
  const std::vector<std::string> ranks = {rank_summary(own0, {0, 6}, {1.0}), rank_summary(own1, {6, 4}, {2.0})};
  r.validation = own0.validation;
  combine_ranks(r, ranks, MpiMode::split, 4000);
  EXPECT_EQ(r.images, 10u);
  EXPECT_FALSE(r.validation.passed);
  EXPECT_EQ(r.validation.compared, 10u);
  EXPECT_EQ(r.validation.worst_image, 8u);
  EXPECT_DOUBLE_EQ(r.accuracy, 0.7);
  EXPECT_DOUBLE_EQ(r.mpi["aggregate_images_per_s"].get<double>(), 5000.0);
  EXPECT_DOUBLE_EQ(r.mpi["load_imbalance"].get<double>(), 2.0 / 1.5);
  const std::vector<std::string> lines = validation_failures(r);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].rfind("rank 1: validation failed for b:v on 4 images", 0), 0u) << lines[0];
}

// The combined record whatever rank failed or was slowest: a failure of the first rank stays one, counts are
// sums, the largest peak memory is kept, an output that was not a number (JSON null) is the worst difference,
// and distinct images are at most those loaded.
TEST(Ranks, TheCombinedRecordDoesNotDependOnTheRanksOrder) {
  RunRecord r;
  r.backend = "b";
  r.variant = "v";
  r.forward_samples_ms = {3.0};
  RunRecord own0 = r, own1 = r;
  own0.validation = {5, 2, 1, 0.5, 3, 1e-4, false};
  own1.validation = {5, 1, 2, 1e-6, 0, 1e-4, true};
  own0.validation.max_abs_prob_diff = NAN;  // written as null
  own0.peak_host_memory_bytes = 900;
  own1.peak_host_memory_bytes = 100;
  const std::vector<std::string> ranks = {rank_summary(own0, {0, 5}, {3.0}), rank_summary(own1, {5, 5}, {1.0})};
  r.validation = own1.validation;
  combine_ranks(r, ranks, MpiMode::split, 7);
  EXPECT_FALSE(r.validation.passed);
  EXPECT_EQ(r.validation.top1_mismatches, 3u);
  EXPECT_EQ(r.validation.near_ties, 3u);
  EXPECT_TRUE(std::isinf(r.validation.max_abs_prob_diff));
  EXPECT_EQ(r.validation.worst_image, 3u);
  EXPECT_EQ(r.peak_host_memory_bytes, 900u);
  EXPECT_EQ(r.images, 10u);
  EXPECT_EQ(r.distinct_images, 7u);
  EXPECT_DOUBLE_EQ(r.mpi["load_imbalance"].get<double>(), 3.0 / 2.0);
  const std::vector<std::string> lines = validation_failures(r);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].rfind("rank 0: ", 0), 0u) << lines[0];
  // Replicated, every rank ran all the images: the aggregate rate counts each rank's.
  RunRecord rep = r;
  rep.images = 5;
  rep.mpi = nullptr;
  rep.validation = own1.validation;
  combine_ranks(rep, ranks, MpiMode::replicate, 7);
  EXPECT_EQ(rep.images, 5u);
  EXPECT_DOUBLE_EQ(rep.mpi["aggregate_images_per_s"].get<double>(), 10 / 0.003);
}

}  // namespace
}  // namespace cnn
