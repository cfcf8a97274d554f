// openmp:image_parallel: threads over images. Each thread runs the optimised per-image forward pass of
// serial:register_tiles (common/kernels/cpu/fast_forward.hpp) with its own scratch buffers, so an image's activations
// stay in that core's cache through the whole network and threads never synchronise inside an image.
// Against openmp:naive this removes 11 fork/joins per image and the thesis' bounds-checked loops.
#include <omp.h>

#include "common/kernels/cpu/fast_forward.hpp"
#include "common/kernels/cpu/omp_threads.hpp"
#include "common/registry.hpp"
#include "common/timer.hpp"
#include "common/variant_table.hpp"

namespace cnn::openmp {
namespace {

// Images a thread takes from the shared queue at a time (dynamic schedule): few enough to balance the
// threads' ends, enough to keep the queue's atomics rare.
constexpr int kImagesPerGrab = 16;

class OpenMpImageParallelSession final : public HostSession {
 public:
  OpenMpImageParallelSession(const Network& net, const RunConfig& config)
      : HostSession(config, resolve_batch(config, kAllImages), omp_team_size(config.threads)),  // batch: a loop
        net_(net),
        scratch_(std::size_t(threads_)) {}

  double forward(LayerTimes&) override {
    StopWatch sw;
    for_each_slice(batch_, [&](std::size_t first, std::size_t last) {
#pragma omp parallel for num_threads(threads_) schedule(dynamic, kImagesPerGrab)
      for (std::ptrdiff_t i = std::ptrdiff_t(first); i < std::ptrdiff_t(last); ++i)
        fast::forward_image(net_, pixels_ + i * kImageBytes, scratch_[std::size_t(omp_get_thread_num())],
                            probs_.data() + i * kClasses);
    });
    return sw.ms();
  }

 private:
  fast::PackedNetwork net_;
  std::vector<fast::Scratch> scratch_;
};

const VariantRegistration kImageParallel{"openmp", 2, open_session<OpenMpImageParallelSession>,
    {"image_parallel", "threads over images, each running serial:register_tiles's kernel with its activations in cache", false}};

}  // namespace
}  // namespace cnn::openmp
