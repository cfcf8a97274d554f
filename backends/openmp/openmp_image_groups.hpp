// The session of openmp:image_parallel and openmp:winograd: threads over groups of images, each thread with
// its own scratch, so a group's activations stay in that core's cache through the whole network and threads
// never synchronise inside a group. `Kernel` is the per-group forward pass:
//   Kernel::Network, Kernel::Scratch, Kernel::kImages (images per group) and
//   Kernel::forward(net, pixels, count, scratch, probs) for count <= kImages images.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstddef>
#include <vector>

#include "common/kernels/cpu/omp_threads.hpp"
#include "common/timer.hpp"
#include "common/variant_table.hpp"

namespace cnn::openmp {

// Images a thread takes from the shared queue at a time (dynamic schedule): few enough to balance the
// threads' ends, enough to keep the queue's atomics rare.
inline constexpr std::size_t kImagesPerGrab = 16;

template <class Kernel>
class ImageGroupsSession final : public HostSession {
  static constexpr std::size_t G = Kernel::kImages;
  static_assert(kImagesPerGrab % G == 0, "a grab is whole groups");

 public:
  ImageGroupsSession(const Network& net, const RunConfig& config)
      : HostSession(config, resolve_batch(config, kAllImages), omp_team_size(config.threads)),  // batch: a loop
        net_(net),
        scratch_(std::size_t(threads_)) {}

  double forward(LayerTimes&) override {
    StopWatch sw;
    for_each_slice(batch_, [&](std::size_t first, std::size_t last) {
      const std::ptrdiff_t groups = std::ptrdiff_t((last - first + G - 1) / G);
#pragma omp parallel for num_threads(threads_) schedule(dynamic, kImagesPerGrab / G)
      for (std::ptrdiff_t g = 0; g < groups; ++g) {
        const std::size_t image = first + std::size_t(g) * G, count = std::min(G, last - image);
        Kernel::forward(net_, pixels_ + image * kImageBytes, count, scratch_[std::size_t(omp_get_thread_num())],
                        probs_.data() + image * kClasses);
      }
    });
    return sw.ms();
  }

 private:
  typename Kernel::Network net_;
  std::vector<typename Kernel::Scratch> scratch_;
};

}  // namespace cnn::openmp
