// Device-side pieces the CUDA variants share.
#pragma once

#include <cstdint>

#include "common/fp32_math.hpp"
#include "common/network_spec.hpp"

namespace cnn::cuda {

// n pixels to floats, one thread each: the input step of the layer-wise variants and of the vendor library's.
static __global__ void normalise_kernel(const std::uint8_t* in, float* out, std::size_t n) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = normalise_pixel_fp32(in[i]);
}

// Programmatic dependent launch (sm_90; launch_after_previous in cuda_support.hpp launches such a kernel).
// allow_next_kernel: this block has come far enough that the next kernel on the stream may take the SMs that
// blocks of this one leave (it starts once every block has called it or exited). wait_for_previous_kernel:
// returns once the kernel before this one has finished and its writes are visible; a no-op when this kernel was
// launched the ordinary way.
__device__ __forceinline__ void allow_next_kernel() { asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory"); }
__device__ __forceinline__ void wait_for_previous_kernel() { asm volatile("griddepcontrol.wait;\n" ::: "memory"); }

// One kernel's output handed to the next kernel on the stream (launched with launch_after_previous) before the
// whole grid is done. wait_for_previous_kernel waits for the previous grid to finish, so the blocks that start
// on the SMs its last rounds leave idle would only load weights. Both kernels are persistent, a producer block
// writing its images in rounds: once all its blocks have begun their last round, every earlier round is
// written. The producer allows the consumer to launch in its second to last round, so that the consumer's blocks
// are resident when the producer's first blocks exit, and counts the blocks that began their last round
// (begin_last_round: one thread, after the barrier that follows the earlier rounds' writes); the consumer awaits
// the count once (await_earlier_rounds: one thread, before a barrier), takes the images those rounds wrote, and
// waits for the whole producer before it reads an image of the last rounds, the tail (before_reading: every
// reading thread). The count is a running total: nothing is reset between passes. A consumer still calls
// wait_for_previous_kernel before it exits, so that the stream sees each kernel finish after the one before it.
// A null `started` is no hand-off: the producer counts nothing, and a consumer reads without waiting, so a kernel
// that takes hand-offs must be given one.
struct Handoff {
  unsigned* started = nullptr;  // producer blocks that began their last round, a running total
  unsigned started_target = 0;  // `started` once every producer block of this pass has
  int tail = 0;                 // the first image written in a last round

  __device__ __forceinline__ void begin_last_round() const {
    if (!started) return;
    asm volatile("fence.acq_rel.gpu;\n" ::: "memory");  // the block's writes, ordered by its barrier, first
    asm volatile("red.relaxed.gpu.global.add.u32 [%0], 1;\n" ::"l"(started) : "memory");
  }
  __device__ __forceinline__ void await_earlier_rounds() const {
    if (!started) return;
    for (;;) {
      unsigned v;
      asm volatile("ld.acquire.gpu.global.u32 %0, [%1];\n" : "=r"(v) : "l"(started) : "memory");
      if (int(v - started_target) >= 0) return;
      __nanosleep(100);
    }
  }
  __device__ __forceinline__ void before_reading(int first, int count) const {
    if (started && first + count > tail) wait_for_previous_kernel();
  }
};

inline unsigned blocks_for(std::size_t threads, unsigned per_block) {
  return unsigned((threads + per_block - 1) / per_block);
}

}  // namespace cnn::cuda
