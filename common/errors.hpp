// Errors that reach the user: each carries the exit code the README documents.
#pragma once

#include <stdexcept>
#include <string>

namespace cnn {

enum ExitCode : int {
  kExitOk = 0,
  kExitOther = 1,
  kExitUsage = 2,
  kExitBadInput = 3,       // data or weight files missing or malformed
  kExitUnavailable = 4,    // backend not built, or no device for it
  kExitValidation = 5,     // results disagree with the FP64 reference
  kExitInterrupted = 128,  // + signal number (130 for SIGINT, 143 for SIGTERM)
};

class SuiteError : public std::runtime_error {
 public:
  SuiteError(int exit_code, const std::string& what) : std::runtime_error(what), code_(exit_code) {}
  int exit_code() const { return code_; }

 private:
  int code_;
};

struct UsageError : SuiteError {
  explicit UsageError(const std::string& w) : SuiteError(kExitUsage, w) {}
};
struct InputError : SuiteError {
  explicit InputError(const std::string& w) : SuiteError(kExitBadInput, w) {}
};
struct UnavailableError : SuiteError {
  explicit UnavailableError(const std::string& w) : SuiteError(kExitUnavailable, w) {}
};

}  // namespace cnn
