// Host-side timing. GPU backends time with CUDA events inside their sessions and report milliseconds
// through the same Session interface, so the harness reports every backend the same way.
#pragma once

#include <chrono>

namespace cnn {

class StopWatch {
 public:
  StopWatch() : start_(Clock::now()) {}
  void restart() { start_ = Clock::now(); }
  double ms() const { return std::chrono::duration<double, std::milli>(Clock::now() - start_).count(); }

 private:
  using Clock = std::chrono::steady_clock;
  Clock::time_point start_;
};

}  // namespace cnn
