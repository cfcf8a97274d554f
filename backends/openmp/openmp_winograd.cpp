// openmp:winograd: threads over groups of images, as openmp:batch, each group running the Winograd
// forward pass of serial:winograd (backends/cpu_kernels/winograd_forward.hpp) with its own scratch.
#include <omp.h>

#include "backends/cpu_kernels/winograd_forward.hpp"
#include "backends/openmp/openmp_variants.hpp"
#include "common/timer.hpp"
#include "common/variant_table.hpp"

namespace cnn::openmp {
namespace {

class WinogradSession final : public HostSession {
 public:
  WinogradSession(const Network& net, const RunConfig& config)
      : net_(net),
        threads_(config.threads > 0 ? config.threads : omp_get_max_threads()),
        chunk_(std::max<std::size_t>(1, (config.batch > 0 ? config.batch : 16) / winograd::kGroup)),
        scratch_(std::size_t(threads_)),
        progress_(config.progress) {}

  double forward(LayerTimes&) override {
    StopWatch sw;
    constexpr std::ptrdiff_t G = winograd::kGroup;
    const std::ptrdiff_t groups = (std::ptrdiff_t(n_) + G - 1) / G;
    // Progress is reported between slices of the data so that only the calling thread prints.
    const std::ptrdiff_t slice = progress_ ? std::max<std::ptrdiff_t>(4096 / G, std::ptrdiff_t(chunk_)) : groups;
    for (std::ptrdiff_t first = 0; first < groups; first += slice) {
      const std::ptrdiff_t last = std::min(groups, first + slice);
#pragma omp parallel for num_threads(threads_) schedule(dynamic, chunk_)
      for (std::ptrdiff_t i = first; i < last; ++i) {
        const std::size_t image = std::size_t(i * G), count = std::min<std::size_t>(G, n_ - image);
        winograd::forward_images(net_, pixels_ + image * kImageBytes, count,
                                 scratch_[std::size_t(omp_get_thread_num())], probs_.data() + image * kClasses);
      }
      if (progress_) progress_(std::min(n_, std::size_t(last * G)), n_);
    }
    return sw.ms();
  }
  std::size_t batch() const override { return chunk_ * winograd::kGroup; }
  int threads() const override { return threads_; }

 private:
  winograd::PackedNetwork net_;
  int threads_;
  std::size_t chunk_;  // groups a thread takes at a time (dynamic schedule)
  std::vector<winograd::Scratch> scratch_;
  std::function<void(std::size_t, std::size_t)> progress_;
};

}  // namespace

std::unique_ptr<Session> open_winograd(const Network& net, const RunConfig& config) {
  return std::make_unique<WinogradSession>(net, config);
}

}  // namespace cnn::openmp
