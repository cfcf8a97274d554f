// The machine's FP32 FMA peak: 16 independent chains of 16-float FMAs (enough to cover the FMA latency
// on every pipe), on one thread and on all threads. Counter "GFLOP/s" is 2 FLOP per lane per FMA.
#include <benchmark/benchmark.h>
#include <omp.h>

namespace {

typedef float v16 __attribute__((vector_size(64)));
constexpr int kChains = 16;
constexpr long kSteps = 1 << 20;       // one thread's call
constexpr long kWindowSteps = 1 << 12;  // all threads: one slice of the time window (about 10 us)

// `seed` comes through benchmark::DoNotOptimize, so the compiler cannot hoist the call out of the loop.
float fma_chains(float seed, long steps) {
  v16 acc[kChains];
  for (int k = 0; k < kChains; ++k) acc[k] = v16{} + seed + float(k) * 1e-7f;
  const v16 a = v16{} + 0.9999999f, b = v16{} + 1e-7f;
  for (long i = 0; i < steps; ++i) {
#pragma GCC unroll 16
    for (int k = 0; k < kChains; ++k) acc[k] = acc[k] * a + b;
  }
  float s = 0;
  for (int k = 0; k < kChains; ++k) s += acc[k][0];
  return s;
}

constexpr double flop_of(long steps) { return 2.0 * 16 * kChains * double(steps); }

void BM_FmaPeakOneThread(benchmark::State& state) {
  for (auto _ : state) {
    float seed = 1.0f;
    benchmark::DoNotOptimize(seed);
    benchmark::DoNotOptimize(fma_chains(seed, kSteps));
  }
  state.counters["GFLOP/s"] = benchmark::Counter(flop_of(kSteps) * double(state.iterations()) / 1e9,
                                                 benchmark::Counter::kIsRate);
}

// All threads at once for a common time window: the FLOP they completed inside it over its length. Not
// "the same work per thread, until the last one is done": on a VM one vCPU slowed by its host (or two that
// share a core) would stretch every repetition, and the peak would read as low as half of what the cores
// deliver to a dynamically scheduled workload (seen on a 16-core Xeon VM: 1395 against 2486 GFLOP/s).
void BM_FmaPeakAllThreads(benchmark::State& state) {
  const int threads = omp_get_max_threads();
  constexpr double kWindowS = 0.02;
  double flop = 0, seconds = 0;
  for (auto _ : state) {
    long slices = 0;
    double start = 0;
#pragma omp parallel reduction(+ : slices)
    {
#pragma omp barrier
#pragma omp single
      start = omp_get_wtime();  // the implicit barrier after it: every thread starts in the window
      const double end = start + kWindowS;
      float seed = 1.0f;
      while (true) {
        benchmark::DoNotOptimize(seed);
        benchmark::DoNotOptimize(fma_chains(seed, kWindowSteps));
        if (omp_get_wtime() > end) break;  // a slice that ends past the window is not counted
        ++slices;
      }
    }
    flop += flop_of(kWindowSteps) * double(slices);
    seconds += kWindowS;
  }
  state.counters["threads"] = threads;
  state.counters["GFLOP/s"] = flop / seconds / 1e9;
}

}  // namespace

BENCHMARK(BM_FmaPeakOneThread)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FmaPeakAllThreads)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
