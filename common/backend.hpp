// The one interface between the harness and a programming model.
//
// A Backend names itself and its variants and says whether it can run here. For a run, the harness
// opens a Session (setup: weight re-layout, allocations, uploads of weights), then:
//   upload(images) -> forward() [warm-ups and repeats] -> download(probabilities)
// Each call returns the milliseconds it took on the backend's own clock (steady clock on the CPU,
// CUDA events on a GPU). Backends never parse files and never see the command line.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/network.hpp"

namespace cnn {

// What a variant's arithmetic runs on and how much of it there is, so that efficiency is measured against
// the right peak: Winograd executes fewer FLOP than the network's direct convolution (kFlopsPerImage, the
// "useful" FLOP every variant is credited with), 3xFP16 executes three tensor-core products per useful one.
struct ArithmeticPart {
  std::string unit;
  double flop_per_image = 0;
};
struct Arithmetic {
  std::string unit = "fp32_fma";  // "fp32_fma", "fp16_tensor", "tf32_tensor"
  double flop_per_image = 0;      // executed FLOP per image on `unit`; 0: kFlopsPerImage (direct convolution)
  // Executed FLOP per image on other units, where layers run on different ones (conv1 on the tensor cores,
  // the rest on the FP32 units); architectural efficiency then weighs each part by its own unit's peak.
  std::vector<ArithmeticPart> other_units{};
};

struct VariantInfo {
  std::string name;         // "naive", "fused", ...
  std::string description;  // one line: what this step changes
  bool layerwise = false;   // forward() fills per-layer times
  Arithmetic arithmetic{};
};

struct Availability {
  bool runnable = false;
  std::string reason;  // why not, when not runnable ("no CUDA device: ...")
  std::string device;  // what it runs on ("CPU", "NVIDIA H200", "Kokkos::Serial", ...)
};

struct RunConfig {
  std::size_t images = 0;  // the images the session will be given (upload's n)
  std::size_t batch = 0;   // --batch: images per kernel launch or parallel loop; 0: the variant chooses
  int threads = 0;        // CPU threads; 0: all logical cores
  // Called from the calling thread with (images done, images total); may be empty.
  std::function<void(std::size_t, std::size_t)> progress;
};

using LayerTimes = std::vector<std::pair<std::string, double>>;  // in network order, milliseconds

// Session::end_to_end's times. Once the forward pass is faster than the host link can bring the images, the
// copy sets the pace: h2d_pinned_ms, the images' copy alone from the same pinned host buffer, is that floor.
struct EndToEnd {
  double ms = 0;                        // copies overlapping compute, every image
  std::optional<double> h2d_pinned_ms;  // the images' host-to-device copy alone, where measured
};

class Session {
 public:
  virtual ~Session() = default;
  // Makes the images (uint8, planar, kImageBytes each) available to forward(); on a GPU this is the h2d copy.
  virtual double upload(const std::uint8_t* pixels, std::size_t n) = 0;
  // One forward pass over all uploaded images. Layer-wise variants add each layer's time to `layers`.
  virtual double forward(LayerTimes& layers) = 0;
  // Copies the n x 10 probabilities of the last forward() to `probs`.
  virtual double download(float* probs) = 0;
  // Optional: upload + forward + download of the same images, with copies overlapping compute
  // (pinned memory, streams). Returns its times (EndToEnd), and fills `probs`.
  virtual std::optional<EndToEnd> end_to_end(const std::uint8_t* /*pixels*/, std::size_t /*n*/, float* /*probs*/) {
    return std::nullopt;
  }
  // The effective batch, fixed when the session opens: resolve_batch() for variants that work in chunks,
  // 1 for those that take one image at a time (they ignore --batch).
  virtual std::size_t batch() const = 0;
  virtual bool on_device() const { return false; }  // true: upload/download are real h2d/d2h copies
  // true: forward() computes on a GPU, whose energy counter then measures the run. Also where the data is not
  // resident there (the naive offload variants copy per layer: on_device() is false).
  virtual bool runs_on_gpu() const { return on_device(); }
  virtual int threads() const { return 1; }
  // Key/value facts about the device used (GPU name, driver, CUDA version, execution space ...).
  virtual std::vector<std::pair<std::string, std::string>> device_info() const { return {}; }
  // Peak device memory in bytes, where the backend can tell (0: not applicable).
  virtual std::size_t device_memory_bytes() const { return 0; }
};

// The images one kernel launch or parallel loop works on: --batch when given, else the variant's preferred
// size; never more than the run's images (when known), at least 1.
inline std::size_t resolve_batch(const RunConfig& config, std::size_t preferred) {
  std::size_t b = config.batch > 0 ? config.batch : preferred;
  if (config.images > 0 && b > config.images) b = config.images;
  return b > 0 ? b : 1;
}
inline constexpr std::size_t kAllImages = std::size_t(-1);  // a preferred batch: every image in one launch

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  virtual std::vector<VariantInfo> variants() const = 0;  // the first is the thesis' faithful port
  virtual Availability availability() const = 0;
  virtual std::unique_ptr<Session> open(const std::string& variant, const Network& net,
                                        const RunConfig& config) const = 0;
};

}  // namespace cnn
