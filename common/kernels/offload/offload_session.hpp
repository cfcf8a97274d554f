// The host side that the directive-based GPU backends (OpenACC, OpenMP offload) share: host arrays with a device
// copy (Mirror), the weights, and a Session base class holding the images and probabilities. The two
// programming models differ here only in the spelling of four data directives, so each backend hands its
// own in a DataDirectives table (openacc_session.cpp, omptarget_session.cpp) and this code is written once.
// The directives take raw bytes: the runtimes key a device copy by host address range, so a float array
// entered as bytes is found present by a compute region that names it as floats.
//
// Header-only and free of pragmas, so it compiles the same under -fopenacc (the executable) and -fopenmp
// (libomptarget_offload.so). Everything is a template over the backend's own table object, so each
// backend's instantiation is a distinct symbol: nothing is defined in both the executable and the shared
// library. On the host fallback every data directive is a no-op and the host arrays are used.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "common/kernels/offload/offload_runtime.hpp"
#include "common/backend.hpp"
#include "common/timer.hpp"

namespace cnn::offload {

// One backend's data directives, each over `bytes` bytes at `p`:   OpenACC            OpenMP target
struct DataDirectives {
  void (*copy_in)(const void* p, std::size_t bytes);   // enter data copyin   target enter data map(to:)
  void (*alloc)(const void* p, std::size_t bytes);     // enter data create   target enter data map(alloc:)
  void (*update_host)(void* p, std::size_t bytes);     // update self         target update from
  void (*remove)(const void* p, std::size_t bytes);    // exit data delete    target exit data map(delete:)
  const RuntimeFacts& (*facts)();                      // where the regions run: the backend's runtime_facts()
};

// A host array with, while entered, a device copy. Not movable: the runtime keys the device copy by the
// host address.
template <typename T, const DataDirectives& D>
class Mirror {
 public:
  Mirror() = default;
  Mirror(const Mirror&) = delete;
  Mirror& operator=(const Mirror&) = delete;
  ~Mirror() { unmap(); }

  // Sizes the host array (zeros, or `init`) and, if `resident`, gives it a device copy (a copy of `init`).
  void reset(std::size_t count, bool resident, const T* init = nullptr) {
    unmap();
    host_.assign(count, T{});
    if (init) std::copy(init, init + count, host_.begin());
    if (!resident || count == 0) return;
    if (init)
      D.copy_in(host_.data(), bytes());
    else
      D.alloc(host_.data(), bytes());
    mapped_ = true;
  }
  void update_host() {
    if (mapped_) D.update_host(host_.data(), bytes());
  }
  T* data() { return host_.data(); }
  const T* data() const { return host_.data(); }
  std::size_t size() const { return host_.size(); }
  std::size_t bytes() const { return host_.size() * sizeof(T); }
  std::size_t device_bytes() const { return mapped_ ? bytes() : 0; }

 private:
  void unmap() {
    if (!mapped_) return;
    D.remove(host_.data(), bytes());
    mapped_ = false;
  }
  std::vector<T> host_;
  bool mapped_ = false;
};

// The weights in the canonical layouts, resident or not.
template <const DataDirectives& D>
struct Weights {
  Mirror<float, D> w[3], b[3], fc_w, fc_b;

  void load(const Network& net, bool resident) {
    for (int l = 0; l < 3; ++l) {
      const ConvLayer& c = net.conv(l);
      w[l].reset(c.weights.size(), resident, c.weights.data());
      b[l].reset(c.bias.size(), resident, c.bias.data());
    }
    fc_w.reset(net.fc.weights.size(), resident, net.fc.weights.data());
    fc_b.reset(net.fc.bias.size(), resident, net.fc.bias.data());
  }
  std::size_t device_bytes() const {
    std::size_t bytes = fc_w.device_bytes() + fc_b.device_bytes();
    for (int l = 0; l < 3; ++l) bytes += w[l].device_bytes() + b[l].device_bytes();
    return bytes;
  }
};

// upload/download and the device facts, for sessions whose forward() reads images_ and writes probs_.
// `resident` (every variant from resident on): images and probabilities live on the device between calls,
// so upload/download are the h2d/d2h copies. Otherwise (the naive variants) forward() copies per layer and
// upload/download only hand over host pointers.
template <const DataDirectives& D>
class OffloadSession : public Session {
 public:
  OffloadSession(const Network& net, const RunConfig& config, bool resident)
      : resident_(resident), progress_(config.progress) {
    weights_.load(net, resident_);
  }
  ~OffloadSession() override { unmap_images(); }

  double upload(const std::uint8_t* pixels, std::size_t n) override {
    StopWatch sw;
    unmap_images();
    images_ = pixels;
    n_ = n;
    if (resident_) D.copy_in(pixels, n * kImageBytes);
    probs_.reset(n * kClasses, resident_);
    return sw.ms();
  }
  double download(float* probs) override {
    StopWatch sw;
    probs_.update_host();
    std::copy(probs_.data(), probs_.data() + probs_.size(), probs);
    return sw.ms();
  }
  bool on_device() const override { return resident_ && D.facts().on_gpu; }
  bool runs_on_gpu() const override { return D.facts().on_gpu; }
  std::vector<std::pair<std::string, std::string>> device_info() const override { return D.facts().info; }
  std::size_t device_memory_bytes() const override {
    if (!runs_on_gpu()) return 0;
    if (!resident_) return largest_call_device_bytes();
    return weights_.device_bytes() + probs_.device_bytes() + n_ * kImageBytes + activation_device_bytes();
  }

 protected:
  virtual std::size_t activation_device_bytes() const = 0;
  // Where nothing is resident: the most bytes one compute call maps (its copies live for the call alone).
  virtual std::size_t largest_call_device_bytes() const { return 0; }
  void report_progress(std::size_t done) const {
    if (progress_) progress_(done, n_);
  }

  bool resident_;
  Weights<D> weights_;
  const std::uint8_t* images_ = nullptr;  // the harness' pixels; on the device too when resident_
  std::size_t n_ = 0;
  Mirror<float, D> probs_;

 private:
  void unmap_images() {
    if (!resident_ || !images_) return;
    D.remove(images_, n_ * kImageBytes);
    images_ = nullptr;
  }
  std::function<void(std::size_t, std::size_t)> progress_;
};

}  // namespace cnn::offload
