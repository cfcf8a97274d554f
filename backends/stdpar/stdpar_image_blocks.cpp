// stdpar:image_blocks: std::for_each(par) over blocks of images, each image through the optimised per-image
// kernel of serial:register_tiles and openmp:image_parallel (common/kernels/cpu/fast_forward.hpp). The algorithm is
// openmp:image_parallel's; only the thread layer differs (libstdc++'s parallel algorithms on TBB instead of an
// OpenMP dynamic schedule), so the two measure the cost of the parallel layer. `par`, not `par_unseq`:
// each block uses its thread's scratch buffers (thread_local), which unsequenced execution does not allow.
#include <algorithm>
#include <execution>

#include "common/kernels/cpu/fast_forward.hpp"
#include "backends/stdpar/stdpar_support.hpp"
#include "common/registry.hpp"
#include "common/timer.hpp"
#include "common/variant_table.hpp"

namespace cnn::stdpar {
namespace {

// Images per task (the grain of the parallel loop, not its batch): openmp:image_parallel's dynamic chunk.
constexpr std::size_t kBlock = 16;

class ImageBlocksSession final : public HostSession {
 public:
  ImageBlocksSession(const Network& net, const RunConfig& config)
      : HostSession(config, resolve_batch(config, kAllImages), resolve_threads(config)),  // batch: a for_each
        net_(net) {}

  double forward(LayerTimes&) override {
    const ThreadLimit limit(threads_);
    StopWatch sw;
    // One std::for_each per batch.
    for_each_slice(batch_, [&](std::size_t first, std::size_t last) {
      const std::size_t blocks = (last - first + kBlock - 1) / kBlock;
      if (index_.size() < blocks) index_ = indices(blocks);
      std::for_each(std::execution::par, index_.begin(), index_.begin() + std::ptrdiff_t(blocks), [&](int b) {
        thread_local fast::Scratch scratch;
        const std::size_t begin = first + std::size_t(b) * kBlock, end = std::min(last, begin + kBlock);
        for (std::size_t i = begin; i < end; ++i)
          fast::forward_image(net_, pixels_ + i * kImageBytes, scratch, probs_.data() + i * kClasses);
      });
    });
    return sw.ms();
  }

 private:
  fast::PackedNetwork net_;
  std::vector<int> index_;
};

const VariantRegistration kImageBlocks{"stdpar", 2, open_session<ImageBlocksSession>,
    {"image_blocks", "std::for_each(par) over blocks of images, each image through serial:register_tiles's kernel", false}};
}  // namespace

}  // namespace cnn::stdpar
