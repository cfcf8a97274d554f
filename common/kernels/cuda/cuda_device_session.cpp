#include "common/kernels/cuda/cuda_device_session.hpp"

#include <algorithm>
#include <cstring>

#include "common/timer.hpp"

namespace cnn::cuda {

LayerEvents::LayerEvents(cudaStream_t s) : stream_(s) { mark("start"); }

LayerEvents::~LayerEvents() {
  for (auto& [name, e] : marks_) cudaEventDestroy(e);
}

void LayerEvents::mark(const char* layer) {
  cudaEvent_t e;
  check(cudaEventCreate(&e), "cudaEventCreate");
  check(cudaEventRecord(e, stream_), "cudaEventRecord");
  marks_.emplace_back(layer, e);
}

void LayerEvents::add_to(LayerTimes& layers) const {
  if (!marks_.empty()) check(cudaEventSynchronize(marks_.back().second), "cudaEventSynchronize");
  if (layers.empty())
    for (const auto& l : kLayers) layers.emplace_back(std::string(l.name), 0.0);
  for (std::size_t i = 1; i < marks_.size(); ++i) {
    float ms = 0;
    check(cudaEventElapsedTime(&ms, marks_[i - 1].second, marks_[i].second), "cudaEventElapsedTime");
    for (auto& [name, total] : layers)
      if (name == marks_[i].first) total += ms;
  }
}

DeviceSession::DeviceSession(std::string label, const RunConfig& config, std::size_t preferred_batch)
    : label_(std::move(label)), batch_(resolve_batch(config, preferred_batch)) {
  // No cudaSetDevice: it would force the primary context current, and an OpenACC run earlier in this
  // process (GCC's libgomp, which made its own context current) would then launch into the wrong context
  // ("invalid resource handle"). Without it the runtime adopts whatever context is current on device 0.
  check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
}

DeviceSession::~DeviceSession() {
  cudaStreamSynchronize(stream_);
  for (void* p : allocations_) cudaFree(p);
  cudaStreamDestroy(stream_);
}

void* DeviceSession::alloc(std::size_t bytes) {
  void* p = device_alloc(bytes);
  allocations_.push_back(p);
  allocated_ += bytes;
  return p;
}

const void* DeviceSession::copy_to_device(const void* host, std::size_t bytes) {
  void* d = alloc(bytes);
  check(cudaMemcpy(d, host, bytes, cudaMemcpyHostToDevice), "weights h2d");
  return d;
}
const float* DeviceSession::to_device(const std::vector<float>& host) {
  return static_cast<const float*>(copy_to_device(host.data(), host.size() * sizeof(float)));
}
const std::uint32_t* DeviceSession::to_device(const std::vector<std::uint32_t>& host) {
  return static_cast<const std::uint32_t*>(copy_to_device(host.data(), host.size() * sizeof(std::uint32_t)));
}

double DeviceSession::upload(const std::uint8_t* pixels, std::size_t n) {
  NvtxRange range(label_ + "/h2d");
  if (n > n_) {
    d_images_ = static_cast<std::uint8_t*>(alloc(n * kImageBytes));
    d_probs_ = static_cast<float*>(alloc(n * kClasses * sizeof(float)));
  }
  n_ = n;
  return copy_images(pixels, n);
}

double DeviceSession::copy_images(const std::uint8_t* host, std::size_t n) {
  EventTimer t;
  t.start(stream_);
  check(cudaMemcpyAsync(d_images_, host, n * kImageBytes, cudaMemcpyHostToDevice, stream_), "h2d copy");
  t.stop(stream_);
  return t.ms();
}

double DeviceSession::forward(LayerTimes& layers) {
  NvtxRange range(label_ + "/forward");
  EventTimer t;
  std::optional<LayerEvents> events;
  if (layerwise()) events.emplace(stream_);
  t.start(stream_);
  for (std::size_t first = 0; first < n_; first += batch_) {
    const std::size_t count = std::min(batch_, n_ - first);
    run(d_images_ + first * kImageBytes, d_probs_ + first * kClasses, count, stream_, events ? &*events : nullptr);
  }
  t.stop(stream_);
  check(cudaGetLastError(), (label_ + " kernel launch").c_str());
  const double ms = t.ms();
  check(cudaStreamSynchronize(stream_), (label_ + " forward").c_str());
  if (events) events->add_to(layers);
  forward_ms_per_image_ = ms / double(n_);
  return ms;
}

double DeviceSession::download(float* probs) {
  NvtxRange range(label_ + "/d2h");
  EventTimer t;
  t.start(stream_);
  check(cudaMemcpyAsync(probs, d_probs_, n_ * kClasses * sizeof(float), cudaMemcpyDeviceToHost, stream_),
        "d2h copy");
  t.stop(stream_);
  return t.ms();
}

// Pinned host buffers of the session's own (an application streaming images would own pinned buffers), the
// harness' pixels copied in and the probabilities out untimed, and chunks on several streams: chunk k + 1's copy
// runs while chunk k computes. Registering the harness' buffers in place instead failed where a small one shares
// a page with another registered one (1 image on an H100: "cudaHostRegister(probs): invalid argument").
std::optional<EndToEnd> DeviceSession::end_to_end(const std::uint8_t* pixels, std::size_t n, float* probs) {
  NvtxRange range(label_ + "/end_to_end");
  // Layer-wise variants reuse one set of intermediate buffers, so their chunks cannot run concurrently;
  // upload() sized the device image buffer for n images.
  if (layerwise() || n > n_) return std::nullopt;
  if (n > pinned_n_) {
    pinned_images_.reset();
    pinned_probs_.reset();
    pinned_n_ = 0;
    void *images = nullptr, *out = nullptr;
    if (cudaMallocHost(&images, n * kImageBytes) != cudaSuccess ||
        cudaMallocHost(&out, n * kClasses * sizeof(float)) != cudaSuccess) {
      cudaFreeHost(images);
      cudaGetLastError();  // no pinned memory to spare: no end-to-end figure, the run goes on
      return std::nullopt;
    }
    pinned_images_.reset(static_cast<std::uint8_t*>(images));
    pinned_probs_.reset(static_cast<float*>(out));
    pinned_n_ = n;
  }
  std::uint8_t* const host_images = pinned_images_.get();
  float* const host_probs = pinned_probs_.get();
  std::memcpy(host_images, pixels, n * kImageBytes);
  // The images' copy alone, once before the pass and not reported: the first copy from a freshly written pinned
  // buffer runs slower (H200, 1200 images: 0.097 ms against 0.075), and an application that streams images
  // reuses its buffers. Its time tells whether the pass computes faster than the link brings the images.
  const double copy_ms = copy_images(host_images, n);
  // The copy left these very images on the device: zeros instead, so that a pass that reads an image before
  // its copy has landed fails validation.
  check(cudaMemsetAsync(d_images_, 0, n * kImageBytes, stream_), "cudaMemsetAsync");
  // Where the pass computes faster than the link brings the images, chunks that compute side by side only
  // slow each other: 2 streams. Where it computes slower, a third and a fourth stream let a chunk's compute
  // fill the tail of the one before. H200, 50000 images (results/ab/h200-e2e-streamed/): winograd_mma (forward
  // 2.45 ms, copy 2.78) 3.142 ms end to end with 4 streams, 3.098 with 2; winograd (forward 4.29) 4.756 with
  // 4, 5.061 with 2; winograd_conv1_mma (3.41) 3.862 and 3.942.
  const int used = forward_ms_per_image_ * double(n) < copy_ms ? 2 : 4;
  cudaStream_t streams[4];
  for (int i = 0; i < used; ++i)
    check(cudaStreamCreateWithFlags(&streams[i], cudaStreamNonBlocking), "cudaStreamCreate");
  const std::size_t chunk = std::min(batch_, std::max<std::size_t>(1024, (n + 15) / 16));

  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  StopWatch clock;
  int k = 0;
  for (std::size_t first = 0; first < n; first += chunk, ++k) {
    const std::size_t count = std::min(chunk, n - first);
    cudaStream_t s = streams[k % used];
    check(cudaMemcpyAsync(d_images_ + first * kImageBytes, host_images + first * kImageBytes, count * kImageBytes,
                          cudaMemcpyHostToDevice, s),
          "h2d copy");
    run(d_images_ + first * kImageBytes, d_probs_ + first * kClasses, count, s, nullptr);
    check(cudaMemcpyAsync(host_probs + first * kClasses, d_probs_ + first * kClasses,
                          count * kClasses * sizeof(float), cudaMemcpyDeviceToHost, s),
          "d2h copy");
  }
  check(cudaDeviceSynchronize(), (label_ + " end to end").c_str());
  const double ms = clock.ms();
  for (int i = 0; i < used; ++i) cudaStreamDestroy(streams[i]);
  std::memcpy(probs, host_probs, n * kClasses * sizeof(float));
  // The same images' copy alone again, timed, in one piece from the same pinned buffer: what the link allows.
  return EndToEnd{ms, copy_images(host_images, n)};
}

}  // namespace cnn::cuda
