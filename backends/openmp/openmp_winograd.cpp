// openmp:winograd: threads over groups of images, as openmp:image_parallel, each group running the
// Winograd forward pass of serial:winograd (common/kernels/cpu/winograd_forward.hpp) with its own scratch.
#include <omp.h>

#include "common/kernels/cpu/omp_threads.hpp"
#include "common/kernels/cpu/winograd_f4x5.hpp"
#include "common/kernels/cpu/winograd_forward.hpp"
#include "common/registry.hpp"
#include "common/timer.hpp"
#include "common/variant_table.hpp"

namespace cnn::openmp {
namespace {

// Groups of winograd::kImageGroup images a thread takes from the shared queue at a time (dynamic schedule):
// openmp:image_parallel's 16 images.
constexpr int kGroupsPerGrab = 16 / winograd::kImageGroup;

class OpenMpWinogradSession final : public HostSession {
 public:
  OpenMpWinogradSession(const Network& net, const RunConfig& config)
      : HostSession(config, resolve_batch(config, kAllImages), omp_team_size(config.threads)),  // batch: a loop
        net_(net),
        scratch_(std::size_t(threads_)) {}

  double forward(LayerTimes&) override {
    StopWatch sw;
    constexpr std::size_t G = winograd::kImageGroup;
    for_each_slice(batch_, [&](std::size_t first, std::size_t last) {
      const std::ptrdiff_t groups = std::ptrdiff_t((last - first + G - 1) / G);
#pragma omp parallel for num_threads(threads_) schedule(dynamic, kGroupsPerGrab)
      for (std::ptrdiff_t g = 0; g < groups; ++g) {
        const std::size_t image = first + std::size_t(g) * G, count = std::min(G, last - image);
        winograd::forward_images(net_, pixels_ + image * kImageBytes, count,
                                 scratch_[std::size_t(omp_get_thread_num())], probs_.data() + image * kClasses);
      }
    });
    return sw.ms();
  }

 private:
  winograd::PackedNetwork net_;
  std::vector<winograd::Scratch> scratch_;
};

const VariantRegistration kWinograd{"openmp", 3, open_session<OpenMpWinogradSession>,
    {"winograd", "threads over groups of images, each through serial:winograd's kernel", false,
     {"fp32_fma", winograd::kExecutedFlopPerImage}}};

}  // namespace
}  // namespace cnn::openmp
