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

 protected:
  const std::uint8_t* pixels_ = nullptr;
  std::size_t n_ = 0;
  std::vector<float> probs_;
};

}  // namespace cnn
