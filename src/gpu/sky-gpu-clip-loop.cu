/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The clip's loop phase: the clipping loop (sky-gpu-clip-loop.cuh) as one
 * block, over the gathered values or, on the full path, all of them. */
#include "sky-gpu-clip-loop.cuh"

namespace {

/* The loop's block by image size: up to 4096 x 4096 pixels 256 threads,
 * up to 8192 x 8192 512, larger 1024. */
constexpr int64_t kLoop256Pixels = (int64_t) 4096 * 4096;
constexpr int64_t kLoop512Pixels = (int64_t) 8192 * 8192;

template <int T>
__global__ void __launch_bounds__ (T, 1)
clipLoopKernel (const float *__restrict__ values, const uint32_t *__restrict__ offs,
                const double *__restrict__ bsum, const double *__restrict__ bsum2,
                const double *__restrict__ gsum, const double *__restrict__ gsum2,
                const SkyGpuParams *__restrict__ params, SkyGpuState *__restrict__ st, int full)
{
  extern __shared__ __align__ (16) uint32_t s_loop[];
  __shared__ LoopShared sh;

  sky_grid_wait ();
  if (st->fallback != full)
    return;
  loop_body<T> (values, offs, bsum, bsum2, gsum, gsum2, params, st, s_loop, sh);
}

} /* namespace */

int
sky_gpu_clip_loop_prepare (SkyGpu *gpu)
{
  (void) gpu;
  SKY_CUDA (cudaFuncSetAttribute (clipLoopKernel<256>,
                                  cudaFuncAttributeMaxDynamicSharedMemorySize, (int) kLoopSmem));
  SKY_CUDA (cudaFuncSetAttribute (clipLoopKernel<512>,
                                  cudaFuncAttributeMaxDynamicSharedMemorySize, (int) kLoopSmem));
  SKY_CUDA (cudaFuncSetAttribute (clipLoopKernel<1024>,
                                  cudaFuncAttributeMaxDynamicSharedMemorySize, (int) kLoopSmem));
  return SKY_OK;
}

/* The loop kernel over values (the gathered ones, or all of them when
 * full), in a block of as many threads as suits the image's size: every
 * warp repeats the loop's scalar logic, so images of up to 4096 x 4096
 * pixels, whose buckets hold few values, take 256 threads, up to 8192 x
 * 8192 512, larger ones 1024 (measured on the H200;
 * SKYSIFT_GPU_LOOP_THREADS=256|512|1024 chooses, for tuning: see
 * sky-gpu-switches.cu). */
int
sky_gpu_clip_loop_enqueue (SkyGpu *gpu, int64_t n, const float *d_values, int full)
{
  const size_t smem = kLoopSmem;
  int threads = n <= kLoop256Pixels ? 256 : n <= kLoop512Pixels ? 512 : 1024;
  cudaStream_t s = gpu->stream;

  if (gpu->switches.loop_threads != 0)
    threads = gpu->switches.loop_threads;
#define SKY_LOOP_LAUNCH(T)                                                                  \
  SKY_LAUNCH (clipLoopKernel<T>, 1, T, smem, s, d_values, gpu->d_offs, gpu->d_bsum,          \
              gpu->d_bsum2, gpu->d_gsum, gpu->d_gsum2, gpu->d_params, gpu->d_state, full)
  switch (threads)
    {
    case 256: SKY_LOOP_LAUNCH (256); break;
    case 512: SKY_LOOP_LAUNCH (512); break;
    default: SKY_LOOP_LAUNCH (1024); break;
    }
#undef SKY_LOOP_LAUNCH
  return SKY_OK;
}
