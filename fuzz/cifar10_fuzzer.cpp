// libFuzzer target: the CIFAR-10 batch parser must either load a data set or throw InputError; never
// crash, read out of bounds or keep a half-parsed data set.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "common/errors.hpp"
#include "suite/dataset.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  cnn::Dataset d;
  try {
    cnn::parse_cifar10(data, size, "fuzz", d);
  } catch (const cnn::InputError&) {
    if (d.size() != 0 || !d.pixels.empty()) std::abort();  // a failed parse leaves nothing behind
    return 0;
  }
  if (d.size() * cnn::kRecordBytes != size || d.pixels.size() != d.size() * cnn::kImageBytes) std::abort();
  for (auto l : d.labels)
    if (l > 9) std::abort();
  return 0;
}
