/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The clip's full path, which runs only when the plan missed (the loop set
 * st->fallback) and otherwise returns at once: every value partitioned by
 * the top 8 key bits, then scattered by bucket, summed, and the same loop
 * over all of them. One cooperative kernel with grid barriers between the
 * phases where the device launches those, else five kernels. Still on the
 * device with no host round trip; the median is an exact order statistic
 * and the sums are double either way. */
#include "sky-gpu-clip-loop.cuh"

#include <cooperative_groups.h>

namespace cg = cooperative_groups;

namespace {

/* Places one value in its bucket (key >> SHIFT): lanes of a warp with the
 * same bucket (neighbouring pixels often are) take their places with one
 * shared atomic, so that a hot bucket does not serialise the warp. */
template <int SHIFT>
__device__ __forceinline__ void
place_value (float v, bool valid, uint32_t *s_pos, float *__restrict__ out, int lane)
{
  const uint32_t b = valid && isfinite (v) ? sky_float_key (v) >> SHIFT : 0xffffffffu;
  const uint32_t peers = __match_any_sync (0xffffffffu, b);

  if (b == 0xffffffffu)
    return;
  const int leader = __ffs (peers) - 1;
  uint32_t at = 0;
  if (lane == leader)
    at = atomicAdd (&s_pos[b], (uint32_t) __popc (peers));
  at = __shfl_sync (peers, at, leader);
  out[at + __popc (peers & ((1u << lane) - 1))] = v;
}

/* Counts one value in its bucket, a warp's equal buckets in one atomic. */
__device__ __forceinline__ void
count_fine (float v, bool valid, uint32_t *s_hist, int lane)
{
  const uint32_t b = valid ? bucket_of (v) : 0xffffffffu;
  const uint32_t peers = __match_any_sync (0xffffffffu, b);

  if (b != 0xffffffffu && lane == __ffs (peers) - 1)
    atomicAdd (&s_hist[b], (uint32_t) __popc (peers));
}

/* Partition: the non-blank pixels of each block's chunk go to their coarse
 * bucket (top 8 key bits) in tmp, at places the block reserved with one
 * global atomic per coarse bucket. Few coarse buckets hold pixels, so the
 * writes form few streams that fill whole lines in L2; a direct scatter
 * into 32768 buckets leaves so many lines half written that L2 thrashes.
 * This is one block's share (s_pos: kCoarse places), also the first phase
 * of the cooperative full path. */
__device__ __forceinline__ void
partition_body (const float *__restrict__ image, int64_t n, int64_t chunk,
                const uint32_t *__restrict__ block_coarse, uint32_t *__restrict__ coarse_cursor,
                float *__restrict__ tmp, const uint32_t *__restrict__ offs,
                uint32_t *__restrict__ cursor, double *__restrict__ bsum,
                double *__restrict__ bsum2, double *__restrict__ gsum,
                double *__restrict__ gsum2, SkyGpuState *__restrict__ st, uint32_t *s_pos)
{
  const int64_t start = (int64_t) blockIdx.x * chunk;
  const int64_t end = min (n, start + chunk);
  const int lane = threadIdx.x & 31;

  /* The full path's starting state: cursors at the bucket offsets, sums
   * cleared, and the plan that takes every bucket. */
  for (int b = blockIdx.x * blockDim.x + threadIdx.x; b < kBuckets; b += gridDim.x * blockDim.x)
    {
      cursor[b] = offs[b];
      bsum[b] = bsum2[b] = 0;
      if (b < kGroups)
        gsum[b] = gsum2[b] = 0;
    }
  if (blockIdx.x == 0 && threadIdx.x == 0)
    {
      st->nranges = 1;
      st->range_lo[0] = 0;
      st->range_hi[0] = kBuckets - 1;
      st->range_base[0] = 0;
      st->has_central = 0;
      st->ngathered = st->ninput;
    }
  for (int c = threadIdx.x; c < kCoarse; c += blockDim.x)
    {
      uint32_t k = block_coarse[(size_t) blockIdx.x * kCoarse + c];
      s_pos[c] = k != 0 ? atomicAdd (&coarse_cursor[c], k) : 0;
    }
  __syncthreads ();
  if (start >= end)
    return;
  for_chunk (image, start, end, [&] (float v, bool valid) {
    place_value<kCoarseShift> (v, valid, s_pos, tmp, lane);
  });
}

__global__ void __launch_bounds__ (kHistThreads)
clipPartitionKernel (const float *__restrict__ image, int64_t n, int64_t chunk,
                     const uint32_t *__restrict__ block_coarse,
                     uint32_t *__restrict__ coarse_cursor, float *__restrict__ tmp,
                     const uint32_t *__restrict__ offs, uint32_t *__restrict__ cursor,
                     double *__restrict__ bsum, double *__restrict__ bsum2,
                     double *__restrict__ gsum, double *__restrict__ gsum2,
                     SkyGpuState *__restrict__ st)
{
  __shared__ uint32_t s_pos[kCoarse];

  sky_grid_wait ();
  if (!st->fallback)
    return;  /* the full path only */
  partition_body (image, n, chunk, block_coarse, coarse_cursor, tmp, offs, cursor, bsum, bsum2,
                  gsum, gsum2, st, s_pos);
}

/* Scatter: each block takes a chunk of the partitioned values (which spans
 * one or a few coarse buckets, so at most a few hundred fine ones), counts
 * it by fine bucket, reserves its share of each with one global atomic,
 * and places its values. Order inside a bucket is arbitrary; nothing
 * downstream depends on it. One block's share (s_pos: kBuckets places). */
__device__ __forceinline__ void
scatter_body (const float *__restrict__ tmp, const SkyGpuState *__restrict__ st,
              uint32_t *__restrict__ cursor, float *__restrict__ values, uint32_t *s_pos)
{
  const int64_t nv = st->ninput;
  const int64_t chunk = ((nv + gridDim.x - 1) / gridDim.x + 3) / 4 * 4;
  const int64_t start = (int64_t) blockIdx.x * chunk;
  const int64_t end = min (nv, start + chunk);
  const int lane = threadIdx.x & 31;

  if (start >= end)
    return;  /* uniform over the block */
  for (int b = threadIdx.x; b < kBuckets; b += blockDim.x)
    s_pos[b] = 0;
  __syncthreads ();
  for_chunk (tmp, start, end, [&] (float v, bool valid) { count_fine (v, valid, s_pos, lane); });
  __syncthreads ();
  reserve_places (s_pos, cursor, s_pos, [] (uint32_t) { return true; });
  __syncthreads ();
  for_chunk (tmp, start, end, [&] (float v, bool valid) {
    place_value<kLowBits> (v, valid, s_pos, values, lane);
  });
}

__global__ void __launch_bounds__ (kHistThreads)
clipScatterKernel (const float *__restrict__ tmp, const SkyGpuState *__restrict__ st,
                   uint32_t *__restrict__ cursor, float *__restrict__ values)
{
  extern __shared__ uint32_t s_pos[];
  sky_grid_wait ();
  if (!st->fallback)
    return;  /* the full path only */
  scatter_body (tmp, st, cursor, values, s_pos);
}

/* The whole full path in one cooperative launch (a block per
 * multiprocessor at most, all resident): partition, scatter, bucket sums,
 * group sums and the loop, with a grid barrier between each; when the plan
 * held, every block returns at once, so that path costs one launch. */
__global__ void __launch_bounds__ (kHistThreads, 1)
clipFullKernel (const float *__restrict__ image, int64_t n, int64_t chunk,
                const uint32_t *__restrict__ block_coarse, uint32_t *__restrict__ coarse_cursor,
                float *__restrict__ tmp, const uint32_t *__restrict__ offs,
                uint32_t *__restrict__ cursor, double *__restrict__ bsum,
                double *__restrict__ bsum2, double *__restrict__ gsum,
                double *__restrict__ gsum2, float *__restrict__ values,
                const SkyGpuParams *__restrict__ params, SkyGpuState *__restrict__ st)
{
  extern __shared__ __align__ (16) uint32_t s_full[];
  __shared__ LoopShared sh;

  sky_grid_wait ();
  if (!st->fallback)
    return;  /* uniform over the grid */
  cg::grid_group grid = cg::this_grid ();
  const int lane = threadIdx.x & 31;
  const int64_t warp0 = ((int64_t) blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  const int64_t nwarps = ((int64_t) gridDim.x * blockDim.x) >> 5;

  partition_body (image, n, chunk, block_coarse, coarse_cursor, tmp, offs, cursor, bsum, bsum2,
                  gsum, gsum2, st, s_full);
  grid.sync ();
  scatter_body (tmp, st, cursor, values, s_full);
  grid.sync ();
  {
    const int64_t nv = st->ninput;
    const double shift = st->shift;
    for (int64_t w = warp0; w * 32 * 4 * kSumItems < nv; w += nwarps)
      sums_warp (values, nv, shift, w, bsum, bsum2);
  }
  grid.sync ();
  for (int64_t g = warp0; g < kGroups; g += nwarps)
    {
      double gs = 0, gs2 = 0;
      for (int j = lane; j < kGroup; j += 32)
        {
          gs += bsum[g * kGroup + j];
          gs2 += bsum2[g * kGroup + j];
        }
      gs = warp_sum (gs);
      gs2 = warp_sum (gs2);
      if (lane == 0)
        {
          gsum[g] = gs;
          gsum2[g] = gs2;
        }
    }
  grid.sync ();
  if (blockIdx.x == 0)
    loop_body<kHistThreads> (values, offs, bsum, bsum2, gsum, gsum2, params, st, s_full, sh);
}

} /* namespace */

int
sky_gpu_clip_full_prepare (SkyGpu *gpu)
{
  (void) gpu;
  SKY_CUDA (cudaFuncSetAttribute (clipScatterKernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  (int) kHistSmem));
  SKY_CUDA (cudaFuncSetAttribute (clipFullKernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  (int) kLoopSmem));
  return SKY_OK;
}

/* The partition goes through the gathered values' buffer, free again once
 * the plan has missed; the values by bucket go to d_work. */
int
sky_gpu_clip_full_enqueue (SkyGpu *gpu, int64_t n)
{
  cudaStream_t s = gpu->stream;
  const int blocks = gpu->clip_blocks;
  const int64_t chunk = gpu->clip_chunk;
  float *d_partitioned = sky_gpu_clip_gathered (gpu);
  float *d_values = sky_gpu_clip_values (gpu);

  /* One cooperative kernel (a plain launch: a cooperative grid needs every
   * multiprocessor free), or (SKYSIFT_GPU_FULL_COOP=0) five kernels. */
  if (gpu->full_coop)
    {
      cudaLaunchConfig_t cfg = {};
      cudaLaunchAttribute attr[1];
      cfg.gridDim = dim3 ((unsigned) blocks);
      cfg.blockDim = dim3 (kHistThreads);
      cfg.dynamicSmemBytes = kLoopSmem;
      cfg.stream = s;
      attr[0].id = cudaLaunchAttributeCooperative;
      attr[0].val.cooperative = 1;
      cfg.attrs = attr;
      cfg.numAttrs = 1;
      SKY_CUDA (cudaLaunchKernelEx (&cfg, clipFullKernel, (const float *) gpu->d_image, n, chunk,
                                    (const uint32_t *) gpu->d_block_coarse, gpu->d_coarse_cursor,
                                    d_partitioned, (const uint32_t *) gpu->d_offs, gpu->d_cursor,
                                    gpu->d_bsum, gpu->d_bsum2, gpu->d_gsum, gpu->d_gsum2, d_values,
                                    (const SkyGpuParams *) gpu->d_params, gpu->d_state));
      return SKY_OK;
    }
  SKY_LAUNCH (clipPartitionKernel, blocks, kHistThreads, 0, s, gpu->d_image, n, chunk,
              gpu->d_block_coarse, gpu->d_coarse_cursor, d_partitioned, gpu->d_offs,
              gpu->d_cursor, gpu->d_bsum, gpu->d_bsum2, gpu->d_gsum, gpu->d_gsum2, gpu->d_state);
  SKY_LAUNCH (clipScatterKernel, blocks, kHistThreads, kHistSmem, s, d_partitioned, gpu->d_state,
              gpu->d_cursor, d_values);
  int ret = sky_gpu_clip_sums_enqueue (gpu, n, d_values, 1);
  if (ret == SKY_OK)
    ret = sky_gpu_clip_loop_enqueue (gpu, n, d_values, 1);
  return ret;
}
