// Registration of the serial backend: its variants, in the order a reader should meet them.
#include "backends/serial/serial_variants.hpp"
#include "common/variant_table.hpp"

namespace cnn {

std::unique_ptr<Backend> make_serial_backend() {
  return std::make_unique<VariantTable>(
      "serial", [] { return Availability{true, "", "CPU, 1 thread"}; },
      std::vector<VariantEntry>{
          {{"naive", "the thesis' serial C loops: ConvNetJS volumes, bounds-checked padding, layer by layer", true},
           serial::open_naive},
          {{"opt", "no bounds checks, packed weights, registers blocked over pixels x all filters (cpu_kernels)", false},
           serial::open_opt},
          {{"winograd", "serial:opt with Winograd F(4x4,5x5) conv2 and conv3: 64 multiplies per tile instead of 400", false},
           serial::open_winograd},
      });
}

}  // namespace cnn
