// The Session shape every GPU variant shares: the uint8 images and the probabilities live in device
// memory; upload/download are the timed h2d/d2h copies; forward() runs the variant over the images in
// chunks of `batch`; end_to_end() overlaps the copies with compute on several streams, and times the images' copy
// alone (the host link's floor for it).
// A variant only implements run(): the network on `count` images already on the device.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/kernels/cuda/cuda_support.hpp"

namespace cnn::cuda {

// Per-layer timing of layer-wise variants: an event after each layer, summed per layer name.
class LayerEvents {
 public:
  explicit LayerEvents(cudaStream_t s);
  ~LayerEvents();
  LayerEvents(const LayerEvents&) = delete;
  LayerEvents& operator=(const LayerEvents&) = delete;
  void mark(const char* layer);  // the layer just enqueued ends here
  void add_to(LayerTimes& layers) const;

 private:
  cudaStream_t stream_;
  std::vector<std::pair<std::string, cudaEvent_t>> marks_;  // first: the start
};

class DeviceSession : public Session {
 public:
  DeviceSession(std::string label, const RunConfig& config, std::size_t preferred_batch);
  ~DeviceSession() override;

  double upload(const std::uint8_t* pixels, std::size_t n) override;
  double forward(LayerTimes& layers) override;
  double download(float* probs) override;
  std::optional<EndToEnd> end_to_end(const std::uint8_t* pixels, std::size_t n, float* probs) override;
  std::size_t batch() const override { return batch_; }
  bool on_device() const override { return true; }
  std::vector<std::pair<std::string, std::string>> device_info() const override { return cuda::device_info(); }
  std::size_t device_memory_bytes() const override { return allocated_; }

 protected:
  // The network on `count` images at d_images (uint8, planar), count x 10 probabilities into d_probs,
  // enqueued on stream s. `layers` is set when per-layer times are wanted.
  virtual void run(const std::uint8_t* d_images, float* d_probs, std::size_t count, cudaStream_t s,
                   LayerEvents* layers) = 0;
  virtual bool layerwise() const { return false; }
  void* alloc(std::size_t bytes);  // freed with the session
  // Weights (floats, or 32-bit words of split weights in fragment order): allocated, copied, freed with the session.
  const float* to_device(const std::vector<float>& host);
  const std::uint32_t* to_device(const std::vector<std::uint32_t>& host);

  std::string label_;  // "backend:variant", for NVTX
  std::size_t batch_;

 private:
  const void* copy_to_device(const void* host, std::size_t bytes);
  double copy_images(const std::uint8_t* host, std::size_t n);  // n images to the device buffer, timed
  cudaStream_t stream_ = nullptr;
  std::vector<void*> allocations_;
  std::size_t allocated_ = 0;
  std::uint8_t* d_images_ = nullptr;
  float* d_probs_ = nullptr;
  std::size_t n_ = 0;
  double forward_ms_per_image_ = 0;  // of the last forward pass: end_to_end() picks its streams by it
  struct FreeHost {
    void operator()(void* p) const { cudaFreeHost(p); }
  };
  std::unique_ptr<std::uint8_t, FreeHost> pinned_images_;  // end_to_end()'s host side, pinned_n_ images
  std::unique_ptr<float, FreeHost> pinned_probs_;
  std::size_t pinned_n_ = 0;
};

}  // namespace cnn::cuda
