// The machine's FP32 FMA peak: 16 independent chains of 16-float FMAs (enough to cover the FMA latency
// on every pipe), on one thread and on all threads. Counter "GFLOP/s" is 2 FLOP per lane per FMA.
#include <benchmark/benchmark.h>
#include <omp.h>

namespace {

typedef float v16 __attribute__((vector_size(64)));
constexpr int kChains = 16;
constexpr long kSteps = 1 << 20;

// `seed` comes through benchmark::DoNotOptimize, so the compiler cannot hoist the call out of the loop.
float fma_chains(float seed) {
  v16 acc[kChains];
  for (int k = 0; k < kChains; ++k) acc[k] = v16{} + seed + float(k) * 1e-7f;
  const v16 a = v16{} + 0.9999999f, b = v16{} + 1e-7f;
  for (long i = 0; i < kSteps; ++i) {
#pragma GCC unroll 16
    for (int k = 0; k < kChains; ++k) acc[k] = acc[k] * a + b;
  }
  float s = 0;
  for (int k = 0; k < kChains; ++k) s += acc[k][0];
  return s;
}

constexpr double kFlopPerCall = 2.0 * 16 * kChains * kSteps;

void BM_FmaPeakOneThread(benchmark::State& state) {
  for (auto _ : state) {
    float seed = 1.0f;
    benchmark::DoNotOptimize(seed);
    benchmark::DoNotOptimize(fma_chains(seed));
  }
  state.counters["GFLOP/s"] = benchmark::Counter(kFlopPerCall * double(state.iterations()) / 1e9,
                                                 benchmark::Counter::kIsRate);
}

void BM_FmaPeakAllThreads(benchmark::State& state) {
  const int threads = omp_get_max_threads();
  for (auto _ : state) {
    float seed = 1.0f;
    benchmark::DoNotOptimize(seed);
#pragma omp parallel
    benchmark::DoNotOptimize(fma_chains(seed));
  }
  state.counters["threads"] = threads;
  state.counters["GFLOP/s"] = benchmark::Counter(kFlopPerCall * threads * double(state.iterations()) / 1e9,
                                                 benchmark::Counter::kIsRate);
}

}  // namespace

BENCHMARK(BM_FmaPeakOneThread)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FmaPeakAllThreads)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
