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
      : net_(net),
        threads_(resolve_threads(config)),
        batch_(resolve_batch(config, kAllImages)),
        progress_(config.progress) {}

  double forward(LayerTimes&) override {
    const ThreadLimit limit(threads_);
    StopWatch sw;
    // One std::for_each per batch; progress is reported between them (only the calling thread reports), so
    // the batch never depends on whether there is progress to report.
    for (std::size_t first = 0; first < n_; first += batch_) {
      const std::size_t last = std::min(n_, first + batch_);
      const std::size_t blocks = (last - first + kBlock - 1) / kBlock;
      if (index_.size() < blocks) index_ = indices(blocks);
      std::for_each(std::execution::par, index_.begin(), index_.begin() + std::ptrdiff_t(blocks), [&](int b) {
        thread_local fast::Scratch scratch;
        const std::size_t begin = first + std::size_t(b) * kBlock, end = std::min(last, begin + kBlock);
        for (std::size_t i = begin; i < end; ++i)
          fast::forward_image(net_, pixels_ + i * kImageBytes, scratch, probs_.data() + i * kClasses);
      });
      if (progress_) progress_(last, n_);
    }
    return sw.ms();
  }
  std::size_t batch() const override { return batch_; }  // images per parallel loop
  int threads() const override { return threads_; }

 private:
  fast::PackedNetwork net_;
  int threads_;
  std::size_t batch_;
  std::vector<int> index_;
  std::function<void(std::size_t, std::size_t)> progress_;
};

const VariantRegistration kImageBlocks{"stdpar", 2, open_session<ImageBlocksSession>,
    {"image_blocks", "std::for_each(par) over blocks of images, each image through serial:register_tiles's kernel", false}};
}  // namespace

}  // namespace cnn::stdpar
