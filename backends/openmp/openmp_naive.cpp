// openmp:naive, the thesis' OpenMP step: serial:naive's loops (common/kernels/cpu/thesis_naive.hpp),
// compiled here with OpenMP so that their `omp parallel for` over output maps takes effect. One image at
// a time, layer by layer: the parallel regions are small (16-20 maps), so fork/join costs show.
#include "common/kernels/cpu/thesis_naive.hpp"
#include "common/registry.hpp"

const cnn::VariantRegistration kOpenMpNaive{"openmp", 1, cnn::open_session<cnn::thesis::ThesisNaiveSession>,
    {"naive", "the thesis' OpenMP port: serial:naive's loops with `omp parallel for` over output maps", true}};
