// The device's nanosecond clock, the same on every SM (and every device).
#pragma once

namespace matchflow::cuda {

__device__ inline long long global_ns() {
  long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

}  // namespace matchflow::cuda
