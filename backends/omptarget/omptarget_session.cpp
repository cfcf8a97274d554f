#include "backends/omptarget/omptarget_session.hpp"

#include "common/timer.hpp"

namespace cnn::omptarget {

void Weights::load(const Network& net, bool resident) {
  for (int l = 0; l < 3; ++l) {
    const ConvLayer& c = net.conv(l);
    w[l].reset(c.weights.size(), resident, c.weights.data());
    b[l].reset(c.bias.size(), resident, c.bias.data());
  }
  fc_w.reset(net.fc.weights.size(), resident, net.fc.weights.data());
  fc_b.reset(net.fc.bias.size(), resident, net.fc.bias.data());
}

std::size_t Weights::device_bytes() const {
  std::size_t bytes = fc_w.device_bytes() + fc_b.device_bytes();
  for (int l = 0; l < 3; ++l) bytes += w[l].device_bytes() + b[l].device_bytes();
  return bytes;
}

TargetSession::TargetSession(const Network& net, const RunConfig& config, bool resident)
    : resident_(resident), progress_(config.progress) {
  weights_.load(net, resident_);
}

TargetSession::~TargetSession() { unmap_images(); }

void TargetSession::unmap_images() {
  if (!resident_ || !images_) return;
  // GCC 12 warns that a local named only in an exit-data map is unused; the directive is still emitted.
  [[maybe_unused]] const std::uint8_t* p = images_;
  const std::size_t bytes = n_ * kImageBytes;
#pragma omp target exit data map(delete : p[0:bytes])
  images_ = nullptr;
}

double TargetSession::upload(const std::uint8_t* pixels, std::size_t n) {
  StopWatch sw;
  unmap_images();
  images_ = pixels;
  n_ = n;
  if (resident_) {
    const std::size_t bytes = n * kImageBytes;
#pragma omp target enter data map(to : pixels[0:bytes])
  }
  probs_.reset(n * kClasses, resident_);
  return sw.ms();
}

double TargetSession::download(float* probs) {
  StopWatch sw;
  probs_.update_host();
  std::copy(probs_.data(), probs_.data() + probs_.size(), probs);
  return sw.ms();
}

std::size_t TargetSession::device_memory_bytes() const {
  if (!on_device()) return 0;
  return weights_.device_bytes() + probs_.device_bytes() + n_ * kImageBytes + activation_device_bytes();
}

std::size_t chunk_images(const RunConfig& config, std::size_t fallback) {
  const std::size_t want = config.batch ? config.batch : fallback;
  return std::max<std::size_t>(1, config.images ? std::min(want, config.images) : want);
}

}  // namespace cnn::omptarget
