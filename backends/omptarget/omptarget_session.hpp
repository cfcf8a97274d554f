// What the OpenMP target sessions share: host arrays with a device copy (Mirror), the images and
// probabilities, and the weights. On the host fallback every map is a no-op and the host arrays are used.
// (The OpenACC backend has the same structure with `acc enter data`; the directives differ.)
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "backends/omptarget/omptarget_runtime.hpp"
#include "common/backend.hpp"

namespace cnn::omptarget {

// A host array with, while mapped, a device copy (`target enter data` / `exit data`). Not movable: the
// runtime keys the device copy by the host address.
template <typename T>
class Mirror {
 public:
  Mirror() = default;
  Mirror(const Mirror&) = delete;
  Mirror& operator=(const Mirror&) = delete;
  ~Mirror() { unmap(); }

  // Sizes the host array (zeros, or `init`) and, if `resident`, gives it a device copy.
  void reset(std::size_t count, bool resident, const T* init = nullptr) {
    unmap();
    host_.assign(count, T{});
    if (init) std::copy(init, init + count, host_.begin());
    if (!resident || count == 0) return;
    T* p = host_.data();
    if (init) {
#pragma omp target enter data map(to : p[0:count])
    } else {
#pragma omp target enter data map(alloc : p[0:count])
    }
    mapped_ = true;
  }
  void update_host() {
    if (!mapped_) return;
    T* p = host_.data();
    const std::size_t count = host_.size();
#pragma omp target update from(p[0:count])
  }
  T* data() { return host_.data(); }
  const T* data() const { return host_.data(); }
  std::size_t size() const { return host_.size(); }
  std::size_t device_bytes() const { return mapped_ ? host_.size() * sizeof(T) : 0; }

 private:
  void unmap() {
    if (!mapped_) return;
    // GCC 12 warns that a local named only in an exit-data map is unused; the directive is still emitted.
    [[maybe_unused]] T* p = host_.data();
    const std::size_t count = host_.size();
#pragma omp target exit data map(delete : p[0:count])
    mapped_ = false;
  }
  std::vector<T> host_;
  bool mapped_ = false;
};

// The weights in the canonical layouts, resident or not.
struct Weights {
  Mirror<float> w[3], b[3], fc_w, fc_b;
  void load(const Network& net, bool resident);
  std::size_t device_bytes() const;
};

// upload/download and the device facts, for sessions whose forward() reads images_ and writes probs_.
// `resident` (omptarget:resident, omptarget:fused): images and probabilities live on the device between
// calls, so upload/download are the h2d/d2h copies. Otherwise (omptarget:layers) forward() maps per layer.
class TargetSession : public Session {
 public:
  TargetSession(const Network& net, const RunConfig& config, bool resident);
  ~TargetSession() override;
  double upload(const std::uint8_t* pixels, std::size_t n) override;
  double download(float* probs) override;
  bool on_device() const override { return resident_ && runtime_facts().on_gpu; }
  std::vector<std::pair<std::string, std::string>> device_info() const override { return runtime_facts().info; }
  std::size_t device_memory_bytes() const override;

 protected:
  virtual std::size_t activation_device_bytes() const = 0;
  void report_progress(std::size_t done) const {
    if (progress_) progress_(done, n_);
  }

  bool resident_;
  Weights weights_;
  const std::uint8_t* images_ = nullptr;  // the harness' pixels; mapped to the device when resident_
  std::size_t n_ = 0;
  Mirror<float> probs_;

 private:
  void unmap_images();
  std::function<void(std::size_t, std::size_t)> progress_;
};

// Images per chunk: the configured batch, else `fallback`, never more than the images of the run.
std::size_t chunk_images(const RunConfig& config, std::size_t fallback);

}  // namespace cnn::omptarget
