// Most backends are a name, an availability check and a list of variants, each with a function that
// opens a session. VariantTable is that, so a backend folder needs no class of its own.
#pragma once

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/backend.hpp"
#include "common/errors.hpp"

namespace cnn {

struct VariantEntry {
  VariantInfo info;
  std::function<std::unique_ptr<Session>(const Network&, const RunConfig&)> open;
};

class VariantTable : public Backend {
 public:
  VariantTable(std::string name, std::function<Availability()> availability, std::vector<VariantEntry> variants)
      : name_(std::move(name)), availability_(std::move(availability)), variants_(std::move(variants)) {}

  std::string name() const override { return name_; }
  std::vector<VariantInfo> variants() const override {
    std::vector<VariantInfo> out;
    for (const auto& v : variants_) out.push_back(v.info);
    return out;
  }
  Availability availability() const override { return availability_(); }
  std::unique_ptr<Session> open(const std::string& variant, const Network& net,
                                const RunConfig& config) const override {
    for (const auto& v : variants_)
      if (v.info.name == variant) return v.open(net, config);
    throw UsageError("backend '" + name_ + "' has no variant '" + variant + "'");
  }

 private:
  std::string name_;
  std::function<Availability()> availability_;
  std::vector<VariantEntry> variants_;
};

// Sessions on the host: the images stay where the harness keeps them (no copy, no h2d phase), and the
// probabilities live in probs_.
class HostSession : public Session {
 public:
  double upload(const std::uint8_t* pixels, std::size_t n) override {
    pixels_ = pixels;
    n_ = n;
    probs_.assign(n * kClasses, 0.0f);
    return 0;
  }
  double download(float* probs) override {
    std::copy(probs_.begin(), probs_.end(), probs);
    return 0;
  }

  std::size_t batch() const override { return batch_; }
  int threads() const override { return threads_; }

 protected:
  HostSession() = default;  // one image at a time, one thread, no progress reported (test backends)
  // batch: the images of one parallel loop or kernel pass, as batch() reports them; threads: the team's size.
  HostSession(const RunConfig& config, std::size_t batch, int threads)
      : batch_(batch), threads_(threads), progress_(config.progress) {}

  // step(first, last) over the images [0, n_) in slices of `slice`, progress reported after each slice from
  // the calling thread (between parallel loops, never inside one): the work is the same whether or not there
  // is progress to report (a terminal or not).
  template <class Step>
  void for_each_slice(std::size_t slice, Step&& step) {
    for (std::size_t first = 0; first < n_; first += slice) {
      const std::size_t last = first + std::min(slice, n_ - first);  // slice may be kAllImages
      step(first, last);
      if (progress_) progress_(last, n_);
    }
  }

  const std::uint8_t* pixels_ = nullptr;
  std::size_t n_ = 0;
  std::vector<float> probs_;
  const std::size_t batch_ = 1;
  const int threads_ = 1;

 private:
  std::function<void(std::size_t, std::size_t)> progress_;
};

}  // namespace cnn
