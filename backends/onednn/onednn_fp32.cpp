// onednn:fp32, the CPU vendor yardstick: the network through oneDNN's primitives (onednn_graph.hpp), created
// once per session for the chunk size and, when the image count leaves one, for the tail. FP32 throughout;
// denormals are flushed on oneDNN's threads, as the optimised kernels and the PyTorch peer do.
#include <omp.h>

#include <algorithm>
#include <memory>

#include <oneapi/dnnl/dnnl_debug.h>

#include "backends/onednn/onednn_graph.hpp"
#include "backends/onednn/onednn_fp32.hpp"
#include "common/registry.hpp"
#include "common/errors.hpp"
#include "common/flush_denormals.hpp"
#include "common/timer.hpp"
#include "common/variant_table.hpp"

namespace cnn::onednn {
namespace {

// Images per chunk: primitives for 64 images keep a chunk's largest activation (conv1's output, 64 KB per
// image) within L2 + L3 of a small machine.
constexpr std::size_t kDefaultChunk = 64;

// oneDNN's OpenMP runtime runs on omp_get_max_threads() threads of the calling thread: set while alive, so
// that later backends in the same process see the caller's setting again.
class OmpThreads {
 public:
  explicit OmpThreads(int n) : saved_(omp_get_max_threads()) { omp_set_num_threads(n); }
  ~OmpThreads() { omp_set_num_threads(saved_); }
  OmpThreads(const OmpThreads&) = delete;
  OmpThreads& operator=(const OmpThreads&) = delete;

 private:
  int saved_;
};

// FTZ/DAZ on every thread of the OpenMP team oneDNN uses (libgomp keeps the same pool threads between
// regions of the same size), for the duration of a pass.
void flush_denormals_on_team([[maybe_unused]] int threads, [[maybe_unused]] bool on) {
#ifdef CNN_FLUSH_DENORMALS
#pragma omp parallel num_threads(threads)
  {
    const unsigned csr = _mm_getcsr();
    _mm_setcsr(on ? csr | 0x8040u : csr & ~0x8040u);
  }
#endif
}

class Fp32Session final : public HostSession {
 public:
  Fp32Session(const Network& net, const RunConfig& config)
      : HostSession(config, resolve_batch(config, kDefaultChunk),
                    config.threads > 0 ? config.threads : omp_get_max_threads()),
        net_(net) {
    const OmpThreads team(threads_);
    full_ = std::make_unique<Graph>(net_, int(batch_), engine_, stream_);
    if (config.images % batch_) tail_ = std::make_unique<Graph>(net_, int(config.images % batch_), engine_, stream_);
  }

  double forward(LayerTimes&) override {
    const OmpThreads team(threads_);
    StopWatch sw;
    flush_denormals_on_team(threads_, true);
    for_each_slice(batch_, [&](std::size_t first, std::size_t last) {
      graph_for(last - first).run(pixels_ + first * kImageBytes, probs_.data() + first * kClasses, stream_);
    });
    flush_denormals_on_team(threads_, false);
    return sw.ms();
  }

  std::vector<std::pair<std::string, std::string>> device_info() const override {
    const dnnl_version_t* v = dnnl_version();
    std::vector<std::pair<std::string, std::string>> info{
        {"onednn_version", std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch)},
        {"onednn_cpu_isa", dnnl_cpu_isa2str(dnnl_get_effective_cpu_isa())},
        {"onednn_cpu_runtime", "OpenMP"},
    };
    for (const auto& [layer, choice] : full_->choices()) info.emplace_back("onednn_" + layer, choice);
    return info;
  }

 private:
  // The graph for a chunk of n images: the full one, the tail one, or (when upload() brought a count other
  // than the configured one) a tail built now.
  Graph& graph_for(std::size_t n) {
    if (n == batch_) return *full_;
    if (!tail_ || std::size_t(tail_->images()) != n) tail_ = std::make_unique<Graph>(net_, int(n), engine_, stream_);
    return *tail_;
  }

  Network net_;  // kept for a tail graph built after setup
  dnnl::engine engine_{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream_{engine_};
  std::unique_ptr<Graph> full_, tail_;
};

}  // namespace

std::string device() {
  const dnnl_version_t* v = dnnl_version();
  return "CPU, " + std::to_string(omp_get_num_procs()) + " cores (oneDNN " + std::to_string(v->major) + "." +
         std::to_string(v->minor) + "." + std::to_string(v->patch) + ", " +
         dnnl_cpu_isa2str(dnnl_get_effective_cpu_isa()) + ")";
}

std::unique_ptr<Session> open_fp32(const Network& net, const RunConfig& config) {
  try {
    return std::make_unique<Fp32Session>(net, config);
  } catch (const dnnl::error& e) {
    throw SuiteError(kExitOther, std::string("onednn: setting up the primitives failed: ") + e.what());
  }
}

namespace {
const VariantRegistration kFp32{"onednn", 1, open_fp32,
    {"fp32", "oneDNN 2.x primitives: conv with fused ReLU, max pool, inner product, softmax; formats chosen "
             "by the library", false}};
}  // namespace

}  // namespace cnn::onednn
