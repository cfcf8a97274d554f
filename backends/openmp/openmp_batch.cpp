// openmp:batch: threads over images. Each thread runs the optimised per-image forward pass of serial:opt
// (backends/cpu_kernels/fast_forward.hpp) with its own scratch buffers, so an image's activations stay in
// that core's cache through the whole network and threads never synchronise inside an image. Against
// openmp:naive this removes 11 fork/joins per image and the thesis' bounds-checked loops.
#include <omp.h>

#include "backends/cpu_kernels/fast_forward.hpp"
#include "common/registry.hpp"
#include "common/timer.hpp"
#include "common/variant_table.hpp"

namespace cnn::openmp {
namespace {

class BatchSession final : public HostSession {
 public:
  BatchSession(const Network& net, const RunConfig& config)
      : net_(net),
        threads_(config.threads > 0 ? config.threads : omp_get_max_threads()),
        chunk_(config.batch > 0 ? config.batch : 16),
        scratch_(std::size_t(threads_)),
        progress_(config.progress) {}

  double forward(LayerTimes&) override {
    StopWatch sw;
    const std::ptrdiff_t n = std::ptrdiff_t(n_);
    // Progress is reported between slices of the data so that only the calling thread prints.
    const std::ptrdiff_t slice = progress_ ? std::max<std::ptrdiff_t>(4096, std::ptrdiff_t(chunk_)) : n;
    for (std::ptrdiff_t first = 0; first < n; first += slice) {
      const std::ptrdiff_t last = std::min(n, first + slice);
#pragma omp parallel for num_threads(threads_) schedule(dynamic, chunk_)
      for (std::ptrdiff_t i = first; i < last; ++i) {
        fast::forward_image(net_, pixels_ + i * kImageBytes, scratch_[std::size_t(omp_get_thread_num())],
                            probs_.data() + i * kClasses);
      }
      if (progress_) progress_(std::size_t(last), n_);
    }
    return sw.ms();
  }
  std::size_t batch() const override { return chunk_; }
  int threads() const override { return threads_; }

 private:
  fast::PackedNetwork net_;
  int threads_;
  std::size_t chunk_;  // images a thread takes at a time (dynamic schedule)
  std::vector<fast::Scratch> scratch_;
  std::function<void(std::size_t, std::size_t)> progress_;
};

const VariantRegistration kBatch{
    "openmp", 2,
    {"batch", "threads over images, each running serial:opt's kernel with its activations in cache", false},
    open_session<BatchSession>};

}  // namespace
}  // namespace cnn::openmp
