/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Segmentation on the device: mask = pixel > bound, where the clip kernel
 * left bound = the largest float not above the threshold (as the CPU's
 * sky_threshold_bound), so the float comparison is exact. Blanks stay 0:
 * NaN compares false, and +Inf (blank too: a caller's device array is read
 * as it is) is excluded; a flat image (no bound) gives an empty mask. */
#include "sky-gpu-private.h"

namespace {

constexpr int kThreads = 256;
constexpr int kPixels = 16; /* per thread: four 16-byte loads, one 16-byte store */

__device__ __forceinline__ uint32_t
above (float v, float bound)
{
  return v > bound && v < INFINITY;
}

__device__ __forceinline__ uint32_t
pack4 (float4 v, float bound)
{
  return above (v.x, bound) | above (v.y, bound) << 8 | above (v.z, bound) << 16
         | above (v.w, bound) << 24;
}

/* Covers the mask's padding too (up to padded), writing zeros there, so
 * the tile kernels of the label step may read whole tiles. */
__global__ void __launch_bounds__ (kThreads)
segmentKernel (const float *__restrict__ image, int64_t n, int64_t padded,
               const SkyGpuState *__restrict__ st, uint8_t *__restrict__ mask)
{
  sky_grid_wait ();
  const int64_t i0 = ((int64_t) blockIdx.x * blockDim.x + threadIdx.x) * kPixels;
  const int has = st->has_bound;
  const float bound = st->bound;

  if (i0 >= padded)
    return;
  if (i0 + kPixels <= n)
    {
      const float4 *p = reinterpret_cast<const float4 *> (image + i0);
      uint4 out = make_uint4 (0, 0, 0, 0);
      if (has)
        {
          float4 a = __ldg (p), b = __ldg (p + 1), c = __ldg (p + 2), d = __ldg (p + 3);
          out = make_uint4 (pack4 (a, bound), pack4 (b, bound), pack4 (c, bound), pack4 (d, bound));
        }
      *reinterpret_cast<uint4 *> (mask + i0) = out;
      return;
    }
  for (int j = 0; j < kPixels; j++)
    {
      int64_t i = i0 + j;
      mask[i] = (i < n && has && above (image[i], bound)) ? 1 : 0;
    }
}

} /* namespace */

int
sky_gpu_segment_enqueue (SkyGpu *gpu, int64_t n)
{
  const int64_t padded = (n + SKY_LABEL_TILE - 1) / SKY_LABEL_TILE * SKY_LABEL_TILE;
  const int64_t threads = padded / kPixels;
  const int64_t blocks = (threads + kThreads - 1) / kThreads;

  SKY_LAUNCH (segmentKernel, (unsigned) blocks, kThreads, 0, gpu->stream, gpu->d_image, n, padded,
              gpu->d_state, gpu->d_mask);
  return SKY_OK;
}
