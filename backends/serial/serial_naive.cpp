// serial:naive, a faithful C++ port of the thesis' serial code (common/kernels/cpu/thesis_naive.hpp),
// compiled without OpenMP. It is the baseline: every other variant's speedup is measured against it.
#include "common/kernels/cpu/thesis_naive.hpp"
#include "common/registry.hpp"

const cnn::VariantRegistration kSerialNaive{"serial", 1, cnn::open_session<cnn::thesis::ThesisNaiveSession>,
    {"naive", "the thesis' serial C loops: ConvNetJS volumes, bounds-checked padding, layer by layer", true}};
