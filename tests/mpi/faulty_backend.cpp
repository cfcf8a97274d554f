// A test backend for tests/mpi/mpi_test.sh, linked into suite_mpi_faulty only: correct results (the FP64
// reference rounded to FP32) on every MPI rank but rank 1. faulty:rank1's probabilities are off by 0.01 there,
// so that one rank of a job fails validation while the others pass; faulty:rank1_throws fails its forward
// pass there, while the other ranks are between barriers.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "common/registry.hpp"
#include "common/timer.hpp"
#include "common/variant_table.hpp"
#include "suite/reference.hpp"

namespace cnn::test {
namespace {

bool is_rank_one() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"})
    if (const char* v = std::getenv(name)) return std::strcmp(v, "1") == 0;
  return false;
}

template <bool kThrows>
class FaultySession final : public HostSession {
 public:
  FaultySession(const Network& net, const RunConfig&) : net_(net), error_(is_rank_one() && !kThrows ? 0.01f : 0.0f) {}
  double forward(LayerTimes&) override {
    if (kThrows && is_rank_one()) throw std::runtime_error("faulty:rank1_throws: a forward pass failed on this rank");
    StopWatch sw;
    for (std::size_t i = 0; i < n_; ++i) {
      const auto p = reference_forward(net_, pixels_ + i * kImageBytes);
      std::transform(p.begin(), p.end(), probs_.begin() + std::ptrdiff_t(i * kClasses),
                     [this](double v) { return float(v) + error_; });
    }
    return sw.ms();
  }
  std::size_t batch() const override { return 1; }

 private:
  const Network& net_;
  float error_;
};

const BackendRegistration kFaulty{"faulty", [] { return Availability{true, "", "CPU (test backend)"}; }};

const VariantRegistration kRankOne{"faulty", 1, open_session<FaultySession<false>>,
    {"rank1", "wrong by 0.01 on MPI rank 1 (a test backend)", false}};
const VariantRegistration kThrowsOnRankOne{"faulty", 2, open_session<FaultySession<true>>,
    {"rank1_throws", "a forward pass that fails on MPI rank 1 (a test backend)", false}};

}  // namespace
}  // namespace cnn::test
