/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The clip's plan phases (sky-gpu-clip.cu lists every phase in order):
 *
 *   histogram  each block counts its chunk of the image by bucket in
 *              shared memory, keeping its own counts for the gather (and,
 *              per coarse bucket, for the full path's partition);
 *   plan       one block: bucket offsets (positions in sorted order), then
 *              a robust sigma and median from the counts; the tails, where
 *              every bound of the loop should fall, and the window of
 *              ranks every median can take, are gathered value by value,
 *              the central band between only ever summed whole;
 *   gather     each block places its gathered values grouped by bucket and
 *              sums the central band in registers;
 *   sums       per-bucket sums in double of the gathered buckets (or, on
 *              the full path, of every bucket), and per group of 256. */
#include "sky-gpu-clip-keys.cuh"

#include <cub/block/block_reduce.cuh>

namespace {

/* The plan's robust sigma: half the spread between the ranks of a
 * Gaussian's mean - 1 sigma and mean + 1 sigma (Phi(-1) and Phi(1) of the
 * sorted values), which sources in the upper tail barely move. */
constexpr double kPlanLowRank = 0.15865525393145705;
constexpr double kPlanHighRank = 0.8413447460685429;
/* The tails gathered value by value lie beyond median +- 2.5 of those
 * sigmas: the loop's bounds, median +- kappa sigma of a shrinking
 * interval, fall there for the kappas in use (3 by default); when one does
 * not, the loop says so and the full path runs. */
constexpr double kPlanTailSigmas = 2.5;
/* Ranks of slack beyond each end of the window every median can take (its
 * ends come from halved counts, exact to one rank). */
constexpr int64_t kPlanRankSlack = 2;
/* The least chunk of the image per block of the passes over it. */
constexpr int64_t kMinBlockPixels = 32768;

__device__ __forceinline__ void
count_value (uint32_t *s_hist, float v)
{
  /* NaN and +-Inf are blank (a caller's device array is read as it is). */
  if (isfinite (v))
    atomicAdd (&s_hist[bucket_of (v)], 1u);
}

/* Each block counts the non-blank pixels of its chunk (a multiple of 4
 * pixels, so every chunk starts 16-byte aligned) into the global counts,
 * and keeps its own counts, per bucket for the gather and per coarse
 * bucket for the full path's partition. */
__global__ void __launch_bounds__ (kHistThreads)
clipHistogramKernel (const float *__restrict__ image, int64_t n, int64_t chunk,
                     uint32_t *__restrict__ block_hist, uint32_t *__restrict__ block_coarse,
                     uint32_t *__restrict__ counts, double *__restrict__ bsum,
                     double *__restrict__ bsum2, double *__restrict__ gsum,
                     double *__restrict__ gsum2)
{
  extern __shared__ uint32_t s_hist[];
  sky_grid_wait ();
  const int64_t start = (int64_t) blockIdx.x * chunk;
  const int64_t end = min (n, start + chunk);

  /* The bucket sums of this run start from zero (the sums kernel comes
   * after this one). */
  for (int b = blockIdx.x * blockDim.x + threadIdx.x; b < kBuckets; b += gridDim.x * blockDim.x)
    {
      bsum[b] = bsum2[b] = 0;
      if (b < kGroups)
        gsum[b] = gsum2[b] = 0;
    }
  for (int b = threadIdx.x; b < kBuckets; b += blockDim.x)
    s_hist[b] = 0;
  __syncthreads ();

  if (start < end)
    {
      const int64_t nvec = (end - start) / 4;
      const float4 *v4 = reinterpret_cast<const float4 *> (image + start);
      int64_t i = threadIdx.x;
      /* Four independent 16-byte loads in flight per thread. */
      for (; i + 3 * blockDim.x < nvec; i += 4 * blockDim.x)
        {
          float4 a = __ldg (v4 + i), b = __ldg (v4 + i + blockDim.x);
          float4 c = __ldg (v4 + i + 2 * blockDim.x), d = __ldg (v4 + i + 3 * blockDim.x);
          count_value (s_hist, a.x); count_value (s_hist, a.y);
          count_value (s_hist, a.z); count_value (s_hist, a.w);
          count_value (s_hist, b.x); count_value (s_hist, b.y);
          count_value (s_hist, b.z); count_value (s_hist, b.w);
          count_value (s_hist, c.x); count_value (s_hist, c.y);
          count_value (s_hist, c.z); count_value (s_hist, c.w);
          count_value (s_hist, d.x); count_value (s_hist, d.y);
          count_value (s_hist, d.z); count_value (s_hist, d.w);
        }
      for (; i < nvec; i += blockDim.x)
        {
          float4 a = __ldg (v4 + i);
          count_value (s_hist, a.x); count_value (s_hist, a.y);
          count_value (s_hist, a.z); count_value (s_hist, a.w);
        }
      for (int64_t j = start + nvec * 4 + threadIdx.x; j < end; j += blockDim.x)
        count_value (s_hist, image[j]);
    }
  __syncthreads ();

  for (int b = threadIdx.x; b < kBuckets; b += blockDim.x)
    {
      uint32_t c = s_hist[b];
      block_hist[(size_t) blockIdx.x * kBuckets + b] = c;
      if (c != 0)
        atomicAdd (&counts[b], c);
    }
  /* The block's count per coarse bucket (128 buckets each), for the
   * partition pass's reservations. */
  const int lane = threadIdx.x & 31;
  for (int cb = threadIdx.x >> 5; cb < kCoarse; cb += blockDim.x >> 5)
    {
      uint32_t c = 0;
#pragma unroll
      for (int j = 0; j < kFinePerCoarse / 32; j++)
        c += s_hist[cb * kFinePerCoarse + j * 32 + lane];
      c = __reduce_add_sync (0xffffffffu, c);
      if (lane == 0)
        block_coarse[(size_t) blockIdx.x * kCoarse + cb] = c;
    }
}

/* The value at sorted position k, as if spread evenly over its bucket:
 * good enough to place the plan's bounds, which the loop checks. */
__device__ double
approx_value (const uint32_t *offs, uint32_t b, double k)
{
  const double lo = sky_key_float (b << kLowBits);
  const double hi = sky_key_float ((b << kLowBits) | ((1u << kLowBits) - 1));
  const double c = (double) (offs[b + 1] - offs[b]);
  const double f = c > 0 ? (k - offs[b] + 0.5) / c : 0.5;
  return lo + (hi - lo) * fmin (fmax (f, 0.0), 1.0);
}

/* Bucket offsets (in global and shared memory), the coarse buckets'
 * cursors of the full path's partition, the count of non-blank pixels and
 * the shift, the value of smallest magnitude in the bucket of the overall
 * median (close to it, so sums of x - shift lose nothing to an offset; the
 * CPU uses the median itself, which changes only rounding). Warp w scans
 * buckets w * 1024 .. w * 1024 + 1023 in coalesced rounds of 32, all 32 of
 * its lanes' loads issued at once: one round trip to L2, not 32. The
 * gather clears the counts for the next run. */
__device__ void
scan_counts (const uint32_t *__restrict__ counts, uint32_t *__restrict__ offs,
             uint32_t *__restrict__ coarse_cursor, SkyGpuState *__restrict__ st,
             uint32_t *s_offs)
{
  constexpr int kPerWarp = kBuckets / (kPlanThreads / 32);
  constexpr int kPerLane = kPerWarp / 32;
  __shared__ uint32_t s_base[kPlanThreads / 32 + 1];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int base = warp * kPerWarp;
  uint32_t c[kPerLane], sum = 0;

#pragma unroll
  for (int i = 0; i < kPerLane; i++)
    c[i] = counts[base + i * 32 + lane];
#pragma unroll
  for (int i = 0; i < kPerLane; i++)
    sum += c[i];
  sum = __reduce_add_sync (0xffffffffu, sum);
  if (lane == 0)
    s_base[warp] = sum;
  __syncthreads ();
  if (warp == 0)
    {
      uint32_t v = lane < kPlanThreads / 32 ? s_base[lane] : 0, incl = v;
#pragma unroll
      for (int o = 1; o < 32; o <<= 1)
        {
          uint32_t t = __shfl_up_sync (0xffffffffu, incl, o);
          if (lane >= o)
            incl += t;
        }
      __syncwarp ();
      s_base[lane] = incl - v;
      if (lane == 31)
        s_base[32] = incl;
    }
  __syncthreads ();

  const uint32_t total = s_base[32];
  const uint32_t median_pos = total > 0 ? (total - 1) / 2 : 0;
  uint32_t run = s_base[warp];
#pragma unroll
  for (int i = 0; i < kPerLane; i++)
    {
      const int b = base + i * 32 + lane;
      uint32_t incl = c[i];
#pragma unroll
      for (int o = 1; o < 32; o <<= 1)
        {
          uint32_t t = __shfl_up_sync (0xffffffffu, incl, o);
          if (lane >= o)
            incl += t;
        }
      const uint32_t at = run + incl - c[i];
      offs[b] = at;
      s_offs[b] = at;
      if (b % kFinePerCoarse == 0)
        coarse_cursor[b / kFinePerCoarse] = at;
      if (c[i] != 0 && at <= median_pos && median_pos < at + c[i])
        {
          uint32_t key = ((uint32_t) b << kLowBits)
                         | ((b & (1 << (SKY_CLIP_BUCKET_BITS - 1))) ? 0u : (1u << kLowBits) - 1);
          st->shift = (double) sky_key_float (key);
        }
      run += __shfl_sync (0xffffffffu, incl, 31);
    }
  if (threadIdx.x == 0)
    {
      offs[kBuckets] = total;
      s_offs[kBuckets] = total;
      st->ninput = total;
      st->empty = total == 0;
      if (total == 0)
        st->shift = 0;
    }
}

/* One block: the scan of the counts, then the plan: what the gather takes
 * (see the top of this file), or that the full path should run; points the
 * cursors of gathered buckets at their places in the gathered array. The
 * offsets stay in shared memory between the two. */
__global__ void __launch_bounds__ (kPlanThreads)
clipScanPlanKernel (const uint32_t *__restrict__ counts, uint32_t *__restrict__ offs,
                    uint32_t *__restrict__ cursor, uint32_t *__restrict__ coarse_cursor,
                    const SkyGpuParams *__restrict__ params, SkyGpuState *__restrict__ st)
{
  extern __shared__ uint32_t s_offs[];
  __shared__ Plan s_plan;
  __shared__ int s_ok;

  sky_grid_wait ();
  scan_counts (counts, offs, coarse_cursor, st, s_offs);
  __syncthreads ();
  const uint32_t total = s_offs[kBuckets];

  if (threadIdx.x == 0)
    {
      int ok = total > 0 && !params->full_clip;
      Plan p;
      p.nranges = 0;
      p.has_central = 0;
      p.clo = p.chi = 0;
      for (int j = 0; j < 3; j++)
        {
          p.lo[j] = 1;
          p.hi[j] = 0;
          p.base[j] = 0;
        }
      if (ok)
        {
          const double last = (double) (total - 1);
          const double k16 = kPlanLowRank * last, k50 = 0.5 * last;
          const double k84 = kPlanHighRank * last;
          const double q16 = approx_value (s_offs, bucket_at ((uint32_t) k16, s_offs), k16);
          const double m = approx_value (s_offs, bucket_at ((uint32_t) k50, s_offs), k50);
          const double q84 = approx_value (s_offs, bucket_at ((uint32_t) k84, s_offs), k84);
          const double sig = 0.5 * (q84 - q16), A = m - kPlanTailSigmas * sig,
                       B = m + kPlanTailSigmas * sig;
          uint32_t ba = 0, bb = 0;
          ok = isfinite (sig) && sig > 0 && isfinite (A) && isfinite (B);
          if (ok)
            {
              ba = bucket_of (__double2float_rn (A));
              bb = bucket_of (__double2float_rn (B));
              ok = ba + 1 < bb;
            }
          if (ok)
            {
              /* While every interval holds buckets ba + 1 .. bb - 1, at most
               * c_low values lie below it and c_high above, so each median's
               * rank lies in [(total - c_high) / 2 - 1, (total + c_low) / 2]. */
              const uint32_t c_low = s_offs[ba + 1], c_high = total - s_offs[bb];
              const int64_t r0 = max ((int64_t) 0,
                                      ((int64_t) total - c_high) / 2 - kPlanRankSlack);
              const int64_t r1 = min ((int64_t) total - 1,
                                      ((int64_t) total + c_low) / 2 + kPlanRankSlack);
              uint32_t lo[3] = { 0, bucket_at ((uint32_t) r0, s_offs), bb };
              uint32_t hi[3] = { ba, bucket_at ((uint32_t) r1, s_offs), kBuckets - 1 };
              uint32_t base = 0;
              /* Ranges [0, ba], [w0, w1], [bb, last bucket], sorted, merged. */
              for (int i = 1; i < 3; i++)
                for (int j = i; j > 0 && lo[j] < lo[j - 1]; j--)
                  {
                    uint32_t t = lo[j]; lo[j] = lo[j - 1]; lo[j - 1] = t;
                    t = hi[j]; hi[j] = hi[j - 1]; hi[j - 1] = t;
                  }
              for (int j = 0; j < 3; j++)
                {
                  if (p.nranges > 0 && lo[j] <= p.hi[p.nranges - 1] + 1)
                    p.hi[p.nranges - 1] = max (p.hi[p.nranges - 1], hi[j]);
                  else
                    {
                      p.lo[p.nranges] = lo[j];
                      p.hi[p.nranges] = hi[j];
                      p.nranges++;
                    }
                }
              for (int j = 0; j < p.nranges; j++)
                {
                  p.base[j] = base;
                  base += s_offs[p.hi[j] + 1] - s_offs[p.lo[j]];
                }
              p.has_central = p.nranges > 1;
              p.clo = p.hi[0] + 1;
              p.chi = p.nranges > 1 ? p.lo[p.nranges - 1] - 1 : 0;
              st->ngathered = base;
            }
        }
      st->fallback = total > 0 && !ok;
      st->nranges = p.nranges;
      for (int j = 0; j < 3; j++)
        {
          st->range_lo[j] = p.lo[j];
          st->range_hi[j] = p.hi[j];
          st->range_base[j] = p.base[j];
        }
      st->has_central = p.has_central;
      st->central_lo = p.clo;
      st->central_hi = p.chi;
      st->central_s = st->central_s2 = 0;
      if (!ok)
        st->ngathered = 0;
      s_plan = p;
      s_ok = ok;
    }
  __syncthreads ();
  if (!s_ok)
    return;
  const Plan p = s_plan;
  for (int j = 0; j < p.nranges; j++)
    for (uint32_t b = p.lo[j] + threadIdx.x; b <= p.hi[j]; b += blockDim.x)
      cursor[b] = p.base[j] + s_offs[b] - s_offs[p.lo[j]];
}

/* Gather: each block reserves its share of each gathered bucket's place in
 * the gathered array with one global atomic (from its counts kept by the
 * histogram pass, same chunks), and places its gathered values in one pass
 * over its chunk; the values of the central band it sums in registers
 * instead (one pair of double atomics per block). */
__global__ void __launch_bounds__ (kHistThreads)
clipGatherKernel (const float *__restrict__ image, int64_t n, int64_t chunk,
                  const uint32_t *__restrict__ block_hist, uint32_t *__restrict__ cursor,
                  float *__restrict__ gathered, SkyGpuState *__restrict__ st,
                  uint32_t *__restrict__ counts)
{
  typedef cub::BlockReduce<double, kHistThreads> Reduce;
  __shared__ typename Reduce::TempStorage tmp;
  extern __shared__ uint32_t s_pos[];
  sky_grid_wait ();
  const int64_t start = (int64_t) blockIdx.x * chunk;
  const int64_t end = min (n, start + chunk);

  /* The counts start from zero in the next run (the scan has read them). */
  for (int b = blockIdx.x * blockDim.x + threadIdx.x; b < kBuckets; b += gridDim.x * blockDim.x)
    counts[b] = 0;
  if (st->fallback || start >= end)
    return;  /* uniform over the block */
  const Plan p = load_plan (st);
  const double shift = st->shift;
  double cs = 0, cs2 = 0;

  reserve_places (block_hist + (size_t) blockIdx.x * kBuckets, cursor, s_pos,
                  [&] (uint32_t b) { return is_gathered (p, b); });
  __syncthreads ();
  for_chunk<4> (image, start, end, [&] (float v, bool valid) {
    uint32_t b = valid && isfinite (v) ? bucket_of (v) : kNone;
    if (b != kNone && !is_gathered (p, b))
      {
        const double d = (double) v - shift;
        cs += d;
        cs2 += d * d;
        b = kNone;
      }
    /* Gathered values are few and spread over many buckets: a plain
     * shared atomic each costs less than matching the warp. */
    if (b != kNone)
      gathered[atomicAdd (&s_pos[b], 1u)] = v;
  });

  cs = Reduce (tmp).Sum (cs);
  __syncthreads ();
  cs2 = Reduce (tmp).Sum (cs2);
  if (threadIdx.x == 0 && p.has_central)
    {
      atomicAdd (&st->central_s, cs);
      atomicAdd (&st->central_s2, cs2);
    }
}

__global__ void __launch_bounds__ (kSumThreads)
clipSumsKernel (const float *__restrict__ values, const SkyGpuState *__restrict__ st,
                int full, double *__restrict__ bsum, double *__restrict__ bsum2)
{
  sky_grid_wait ();
  if (st->fallback != full)
    return;
  sums_warp (values, full ? st->ninput : st->ngathered, st->shift,
             ((int64_t) blockIdx.x * blockDim.x + threadIdx.x) >> 5, bsum, bsum2);
}

/* One block per group of kGroup buckets. */
__global__ void __launch_bounds__ (kGroup)
clipGroupSumsKernel (const double *__restrict__ bsum, const double *__restrict__ bsum2,
                     double *__restrict__ gsum, double *__restrict__ gsum2,
                     const SkyGpuState *__restrict__ st, int full)
{
  sky_grid_wait ();
  if (st->fallback != full)
    return;
  typedef cub::BlockReduce<double, kGroup> Reduce;
  __shared__ typename Reduce::TempStorage tmp;
  const int b = blockIdx.x * kGroup + threadIdx.x;
  double s = Reduce (tmp).Sum (bsum[b]);

  __syncthreads ();
  double s2 = Reduce (tmp).Sum (bsum2[b]);
  if (threadIdx.x == 0)
    {
      gsum[blockIdx.x] = s;
      gsum2[blockIdx.x] = s2;
    }
}

} /* namespace */

void
sky_gpu_clip_geometry (const SkyGpu *gpu, int64_t n, int *blocks, int64_t *chunk)
{
  /* At least 32768 pixels a block, so that clearing, flushing and keeping
   * the block's 128 KiB histogram stays small beside counting; at most one
   * block per multiprocessor (the histogram fills its shared memory). The
   * kept histograms (blocks * 32768 counts) fit in d_work, which holds
   * the pixel count rounded up to 32768. */
  int64_t b = (n + kMinBlockPixels - 1) / kMinBlockPixels;

  if (b > gpu->nsm)
    b = gpu->nsm;
  if (b < 1)
    b = 1;
  *blocks = (int) b;
  *chunk = ((n + b - 1) / b + 3) / 4 * 4;
}

int
sky_gpu_clip_plan_prepare (SkyGpu *gpu)
{
  (void) gpu;
  SKY_CUDA (cudaFuncSetAttribute (clipHistogramKernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  (int) kHistSmem));
  SKY_CUDA (cudaFuncSetAttribute (clipScanPlanKernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  (int) kScanSmem));
  SKY_CUDA (cudaFuncSetAttribute (clipGatherKernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  (int) kHistSmem));
  return SKY_OK;
}

/* d_counts is zero here: zeroed when allocated, and by the gather after
 * each run has read it. The block histograms go to d_work, free until the
 * full path (if any) or the labelling. */
int
sky_gpu_clip_histogram_enqueue (SkyGpu *gpu, int64_t n)
{
  SKY_LAUNCH (clipHistogramKernel, gpu->clip_blocks, kHistThreads, kHistSmem, gpu->stream,
              gpu->d_image, n, gpu->clip_chunk, gpu->d_work, gpu->d_block_coarse, gpu->d_counts,
              gpu->d_bsum, gpu->d_bsum2, gpu->d_gsum, gpu->d_gsum2);
  return SKY_OK;
}

int
sky_gpu_clip_plan_enqueue (SkyGpu *gpu)
{
  SKY_LAUNCH (clipScanPlanKernel, 1, kPlanThreads, kScanSmem, gpu->stream, gpu->d_counts,
              gpu->d_offs, gpu->d_cursor, gpu->d_coarse_cursor, gpu->d_params, gpu->d_state);
  return SKY_OK;
}

int
sky_gpu_clip_gather_enqueue (SkyGpu *gpu, int64_t n)
{
  SKY_LAUNCH (clipGatherKernel, gpu->clip_blocks, kHistThreads, kHistSmem, gpu->stream,
              gpu->d_image, n, gpu->clip_chunk, gpu->d_work, gpu->d_cursor,
              sky_gpu_clip_gathered (gpu), gpu->d_state, gpu->d_counts);
  return SKY_OK;
}

int
sky_gpu_clip_sums_enqueue (SkyGpu *gpu, int64_t n, const float *d_values, int full)
{
  cudaStream_t s = gpu->stream;
  const int64_t sum_blocks = (n + kSumThreads * 4 * kSumItems - 1) / (kSumThreads * 4 * kSumItems);

  SKY_LAUNCH (clipSumsKernel, (unsigned) sum_blocks, kSumThreads, 0, s, d_values, gpu->d_state,
              full, gpu->d_bsum, gpu->d_bsum2);
  SKY_LAUNCH (clipGroupSumsKernel, kGroups, kGroup, 0, s, gpu->d_bsum, gpu->d_bsum2, gpu->d_gsum,
              gpu->d_gsum2, gpu->d_state, full);
  return SKY_OK;
}
