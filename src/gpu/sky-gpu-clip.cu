/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Kappa-sigma clipping on the device, by the CPU's method (sky-cpu-clip.c).
 *
 * Every pass keeps the pixels strictly inside an interval nested in the
 * last, so the survivors are the non-blank pixels inside (L, H), the
 * intersection of the intervals so far. Pixels are bucketed by the top 15
 * bits of an order-preserving key. A pass needs exact values only in the
 * buckets of its two bounds and of its median; every bucket between counts
 * whole. So nothing sorts or scatters the whole image:
 *
 *   histogram  each block counts its chunk in shared memory (128 KiB of
 *              32-bit counters) into the global counts;
 *   scan, plan one block: bucket offsets (positions in sorted order), then
 *              from the counts a robust sigma (half the spread
 *              of the 16th to 84th percentiles) and median; the tails
 *              beyond median +- 2.5 sigma, where every bound of the loop
 *              should fall, and the window of ranks every median of the
 *              loop can take, are gathered value by value; the central
 *              band between is only ever needed whole;
 *   gather     each block places its gathered values (a few per cent of
 *              the pixels) grouped by bucket, and sums the central band in
 *              registers: one pass over the image;
 *   sums       per-bucket sums of (x - shift) and its square in double for
 *              the gathered buckets, and per group of 256 buckets;
 *   loop       one block on one multiprocessor runs the passes with no
 *              host round trip: the median by a radix select inside its
 *              bucket (histograms of the low key bits, kept while the
 *              median stays there), the next interval's count and moments
 *              from its two edge buckets value by value, the whole buckets
 *              between from their sums (kept while they stay the same),
 *              and the central band whole. Every warp repeats the pass's
 *              scalar logic, so the block is 256 threads for images of up
 *              to 4096 x 4096 pixels and larger ones for larger images.
 *
 * The loop checks at every pass that its median and bounds lie in
 * gathered buckets and that its interval holds the whole central band. If
 * not (a distribution the plan misjudged), it says so, and the full path
 * runs instead, still on the device with no host round trip, as one
 * cooperative kernel with grid barriers between its phases (it returns at
 * once when the plan held): all values partitioned by the top 8 key bits,
 * then scattered by bucket, summed, and the same loop over all of them. The median is an exact order statistic
 * and the sums are double either way, so the statistics, iteration count
 * and survivor count are the CPU's. */
#include "sky-gpu-private.h"

#include <cooperative_groups.h>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <math.h>
#include <stdlib.h>

namespace cg = cooperative_groups;

namespace {

constexpr int kBuckets = SKY_CLIP_BUCKETS;
constexpr int kLowBits = 32 - SKY_CLIP_BUCKET_BITS;  /* 17 key bits inside a bucket */
constexpr int kGroup = SKY_CLIP_GROUP;
constexpr int kGroups = SKY_CLIP_GROUPS;
constexpr int kCoarseShift = 24;                     /* partition by the top 8 key bits */
constexpr int kCoarse = 256;
constexpr int kFinePerCoarse = kBuckets / kCoarse;   /* 128 */
constexpr int kSel1Bins = 1 << (kLowBits - 8);       /* key bits 16..8 */
constexpr int kSel2Bins = 256;                       /* key bits 7..0 */
constexpr int kHistThreads = 1024;
constexpr int kScanThreads = 1024;
constexpr int kSumThreads = 256;
constexpr int kSumItems = 8;                         /* 16-byte loads per lane */
constexpr int kLoopThreads = 1024;
constexpr int kLoopWarps = kLoopThreads / 32;
constexpr size_t kHistSmem = kBuckets * sizeof (uint32_t);
constexpr size_t kScanSmem = (kBuckets + 1) * sizeof (uint32_t);
constexpr uint32_t kNone = 0xffffffffu;  /* no bucket: blank, or not gathered */
constexpr int kPlanThreads = 1024;

__device__ __forceinline__ uint32_t
bucket_of (float v)
{
  return sky_float_key (v) >> kLowBits;
}

/* ------------------------------------------------------------ histogram */

__device__ __forceinline__ void
count_value (uint32_t *s_hist, float v)
{
  if (!isnan (v))
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

/* ----------------------------------------------------------------- scan */

/* ---------------------------------------------------------------- plan */

/* The plan as every kernel reads it from the state. */
struct Plan {
  int nranges;
  uint32_t lo[3], hi[3], base[3];
  int has_central;
  uint32_t clo, chi;
};

__device__ __forceinline__ Plan
load_plan (const SkyGpuState *st)
{
  Plan p;
  p.nranges = st->nranges;
  for (int j = 0; j < 3; j++)
    {
      p.lo[j] = st->range_lo[j];
      p.hi[j] = st->range_hi[j];
      p.base[j] = st->range_base[j];
    }
  p.has_central = st->has_central;
  p.clo = st->central_lo;
  p.chi = st->central_hi;
  return p;
}

/* Whether bucket b is gathered, and where its first value is. */
__device__ __forceinline__ bool
gathered_at (const Plan &p, const uint32_t *offs, uint32_t b, uint32_t *at)
{
  /* Over the three places with constant indices, so that the plan stays in
   * registers (a loop to nranges would put it in local memory). */
#pragma unroll
  for (int j = 0; j < 3; j++)
    if (j < p.nranges && p.lo[j] <= b && b <= p.hi[j])
      {
        *at = p.base[j] + offs[b] - offs[p.lo[j]];
        return true;
      }
  return false;
}

__device__ __forceinline__ bool
is_gathered (const Plan &p, uint32_t b)
{
  bool in = false;
#pragma unroll
  for (int j = 0; j < 3; j++)
    in |= j < p.nranges && p.lo[j] <= b && b <= p.hi[j];
  return in;
}

/* The value at sorted position k, as if spread evenly over its bucket:
 * good enough to place the plan's bounds, which the loop checks. */
__device__ double
approx_value (const uint32_t *offs, uint32_t b, double k)
{
  const double lo = sky_key_float (b << kLowBits), hi = sky_key_float ((b << kLowBits) | ((1u << kLowBits) - 1));
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
  constexpr int kPerWarp = kBuckets / (kScanThreads / 32);
  constexpr int kPerLane = kPerWarp / 32;
  __shared__ uint32_t s_base[kScanThreads / 32 + 1];
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
      uint32_t v = lane < kScanThreads / 32 ? s_base[lane] : 0, incl = v;
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

/* -------------------------------------------------------------- scatter */

/* The bucket that holds sorted position r: binary search in offsets. */
__device__ __forceinline__ uint32_t
bucket_at (uint32_t r, const uint32_t *offs)
{
  uint32_t lo = 0, hi = kBuckets - 1;

  while (lo < hi)
    {
      const uint32_t mid = (lo + hi + 1) / 2;
      if (offs[mid] <= r)
        lo = mid;
      else
        hi = mid - 1;
    }
  return lo;
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
          const double k16 = 0.15865525393145705 * last, k50 = 0.5 * last;
          const double k84 = 0.8413447460685429 * last;
          const double q16 = approx_value (s_offs, bucket_at ((uint32_t) k16, s_offs), k16);
          const double m = approx_value (s_offs, bucket_at ((uint32_t) k50, s_offs), k50);
          const double q84 = approx_value (s_offs, bucket_at ((uint32_t) k84, s_offs), k84);
          const double sig = 0.5 * (q84 - q16), A = m - 2.5 * sig, B = m + 2.5 * sig;
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
              const int64_t r0 = max ((int64_t) 0, ((int64_t) total - c_high) / 2 - 2);
              const int64_t r1 = min ((int64_t) total - 1, ((int64_t) total + c_low) / 2 + 2);
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

/* Places one value in its bucket (key >> SHIFT): lanes of a warp with the
 * same bucket (neighbouring pixels often are) take their places with one
 * shared atomic, so that a hot bucket does not serialise the warp. */
template <int SHIFT>
__device__ __forceinline__ void
place_value (float v, bool valid, uint32_t *s_pos, float *__restrict__ out, int lane)
{
  const uint32_t b = valid && !isnan (v) ? sky_float_key (v) >> SHIFT : 0xffffffffu;
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

/* Runs f (value, valid) over in[start .. end), K 16-byte loads a lane in
 * flight at a time, every lane of a warp in every call (for the match).
 * start is a multiple of 4. */
template <int K = 2, typename F>
__device__ __forceinline__ void
for_chunk (const float *__restrict__ in, int64_t start, int64_t end, F f)
{
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
  const int64_t nvec = (end - start) / 4;
  const float4 *v4 = reinterpret_cast<const float4 *> (in + start);

  for (int64_t i0 = (int64_t) warp * 32; i0 < nvec; i0 += (int64_t) nwarps * 32 * K)
    {
      float4 a[K];
#pragma unroll
      for (int j = 0; j < K; j++)
        {
          const int64_t i = i0 + (int64_t) j * nwarps * 32 + lane;
          a[j] = i < nvec ? __ldg (v4 + i) : make_float4 (0, 0, 0, 0);
        }
#pragma unroll
      for (int j = 0; j < K; j++)
        {
          const bool v = i0 + (int64_t) j * nwarps * 32 + lane < nvec;
          f (a[j].x, v); f (a[j].y, v); f (a[j].z, v); f (a[j].w, v);
        }
    }
  if (warp == 0)
    {
      const int64_t j = start + nvec * 4 + lane;
      f (j < end ? in[j] : 0.0f, j < end);
    }
}

/* s_pos[b] = the block's place in bucket b, reserved with one global
 * atomic per bucket that needs one (take (b, count)). The loads and the
 * atomics of sixteen buckets are all in flight before any result is used:
 * one by one, each would wait out a round trip to L2. */
template <typename Take>
__device__ __forceinline__ void
reserve_places (const uint32_t *row, uint32_t *__restrict__ cursor, uint32_t *s_pos,
                Take take)
{
  constexpr int kAtOnce = 16;
  for (int b0 = threadIdx.x; b0 < kBuckets; b0 += kAtOnce * blockDim.x)
    {
      uint32_t c[kAtOnce], at[kAtOnce];
#pragma unroll
      for (int i = 0; i < kAtOnce; i++)
        {
          const int b = b0 + i * blockDim.x;
          c[i] = b < kBuckets ? row[b] : 0;
        }
#pragma unroll
      for (int i = 0; i < kAtOnce; i++)
        {
          const int b = b0 + i * blockDim.x;
          at[i] = c[i] != 0 && take (b) ? atomicAdd (&cursor[b], c[i]) : 0;
        }
#pragma unroll
      for (int i = 0; i < kAtOnce; i++)
        if (b0 + i * blockDim.x < kBuckets)
          s_pos[b0 + i * blockDim.x] = at[i];
    }
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
    uint32_t b = valid && !isnan (v) ? bucket_of (v) : kNone;
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

/* ----------------------------------------------------------------- sums */

__device__ __forceinline__ double
warp_sum (double v)
{
#pragma unroll
  for (int o = 16; o > 0; o >>= 1)
    v += __shfl_down_sync (0xffffffffu, v, o);
  return v;
}

/* Per-bucket sums of d = x - shift and d * d. Values are grouped by bucket,
 * so a warp's 1024 values (eight 16-byte loads a lane) are mostly one
 * bucket: then one warp reduction and one pair of atomics; else each lane
 * flushes its own runs. Warp warp's share: values warp * 1024 .. + 1023 of
 * nv. */
__device__ __forceinline__ void
sums_warp (const float *__restrict__ values, int64_t nv, double shift, int64_t warp,
           double *__restrict__ bsum, double *__restrict__ bsum2)
{
  const int lane = threadIdx.x & 31;
  const int64_t base = warp * 32 * 4 * kSumItems;
  const float4 *v4 = reinterpret_cast<const float4 *> (values);
  float4 v[kSumItems];

  if (base >= nv)
    return;
  const int64_t last = min (base + 32 * 4 * kSumItems, nv) - 1;
  const uint32_t first_b = bucket_of (values[base]), last_b = bucket_of (values[last]);
  const bool whole = base + 32 * 4 * kSumItems <= nv;

  /* Lane's values: 4 (i * 32 + lane) + 0..3, rising with i. */
#pragma unroll
  for (int i = 0; i < kSumItems; i++)
    {
      const int64_t q = (base >> 2) + i * 32 + lane;
      v[i] = whole || 4 * q + 3 < nv ? v4[q] : make_float4 (NAN, NAN, NAN, NAN);
      if (!whole && 4 * q + 3 >= nv)
        {
          /* The tail of the values: load what exists one by one. */
          if (4 * q < nv) v[i].x = values[4 * q];
          if (4 * q + 1 < nv) v[i].y = values[4 * q + 1];
          if (4 * q + 2 < nv) v[i].z = values[4 * q + 2];
        }
    }

  if (first_b == last_b)
    {
      double s = 0, s2 = 0;
#pragma unroll
      for (int i = 0; i < kSumItems; i++)
        {
          const float e[4] = { v[i].x, v[i].y, v[i].z, v[i].w };
#pragma unroll
          for (int k = 0; k < 4; k++)
            if (!isnan (e[k]))
              {
                double d = (double) e[k] - shift;
                s += d;
                s2 += d * d;
              }
        }
      s = warp_sum (s);
      s2 = warp_sum (s2);
      if (lane == 0)
        {
          atomicAdd (&bsum[first_b], s);
          atomicAdd (&bsum2[first_b], s2);
        }
      return;
    }

  uint32_t cur = 0xffffffffu;
  double s = 0, s2 = 0;
#pragma unroll
  for (int i = 0; i < kSumItems; i++)
    {
      const float e[4] = { v[i].x, v[i].y, v[i].z, v[i].w };
#pragma unroll
      for (int k = 0; k < 4; k++)
        {
          if (isnan (e[k]))
            continue;
          const uint32_t b = bucket_of (e[k]);
          if (b != cur)
            {
              if (cur != 0xffffffffu)
                {
                  atomicAdd (&bsum[cur], s);
                  atomicAdd (&bsum2[cur], s2);
                }
              cur = b;
              s = s2 = 0;
            }
          double d = (double) e[k] - shift;
          s += d;
          s2 += d * d;
        }
    }
  if (cur != 0xffffffffu)
    {
      atomicAdd (&bsum[cur], s);
      atomicAdd (&bsum2[cur], s2);
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

/* ----------------------------------------------------------------- loop */

constexpr size_t kLoopSmem = ((kBuckets + 1) * sizeof (uint32_t) + 15) / 16 * 16;

struct LoopShared {
  /* Counts of key bits 16..8 in hist1_bucket, and of bits 7..0 under
   * (hist2_bucket, hist2_prefix), each as its inclusive prefix sums. */
  __align__ (16) uint32_t hist1[kSel1Bins];
  __align__ (16) uint32_t hist2[kSel2Bins];
  double red_d[2][kLoopWarps][4];              /* block sums, two buffers in turn */
  unsigned long long red_u[2][kLoopWarps][2];
};

/* What the loop keeps between passes. Every thread runs the same scalar
 * logic on the same values, so this is the same in every thread and lives
 * in registers: no barrier is needed to read it. */
struct LoopCache {
  uint32_t hist1_bucket, hist2_bucket, hist2_prefix;
  uint32_t whole_lo, whole_hi;              /* buckets summed in whole_s, whole_s2 */
  double whole_s, whole_s2;
  int parity;                               /* the reduction buffer to use next */
  uint32_t med_bucket;                      /* the last median's bucket */
  int builds;                               /* histograms built (profile) */
};

/* Sums four doubles and two counts over the block; every thread gets them.
 * One barrier: each warp adds up the warps' partial sums itself, and the
 * next call writes the other buffer. */
__device__ __forceinline__ void
block_sum (double &a, double &b, double &e, double &f, unsigned long long &c,
           unsigned long long &d, LoopShared &sh, LoopCache &lc)
{
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, p = lc.parity;

#pragma unroll
  for (int o = 16; o > 0; o >>= 1)
    {
      a += __shfl_down_sync (0xffffffffu, a, o);
      b += __shfl_down_sync (0xffffffffu, b, o);
      e += __shfl_down_sync (0xffffffffu, e, o);
      f += __shfl_down_sync (0xffffffffu, f, o);
      c += __shfl_down_sync (0xffffffffu, c, o);
      d += __shfl_down_sync (0xffffffffu, d, o);
    }
  if (lane == 0)
    {
      sh.red_d[p][warp][0] = a;
      sh.red_d[p][warp][1] = b;
      sh.red_d[p][warp][2] = e;
      sh.red_d[p][warp][3] = f;
      sh.red_u[p][warp][0] = c;
      sh.red_u[p][warp][1] = d;
    }
  __syncthreads ();
  const bool has = lane < (int) (blockDim.x >> 5);
  a = has ? sh.red_d[p][lane][0] : 0.0;
  b = has ? sh.red_d[p][lane][1] : 0.0;
  e = has ? sh.red_d[p][lane][2] : 0.0;
  f = has ? sh.red_d[p][lane][3] : 0.0;
  c = has ? sh.red_u[p][lane][0] : 0ull;
  d = has ? sh.red_u[p][lane][1] : 0ull;
#pragma unroll
  for (int o = 16; o > 0; o >>= 1)
    {
      a += __shfl_down_sync (0xffffffffu, a, o);
      b += __shfl_down_sync (0xffffffffu, b, o);
      e += __shfl_down_sync (0xffffffffu, e, o);
      f += __shfl_down_sync (0xffffffffu, f, o);
      c += __shfl_down_sync (0xffffffffu, c, o);
      d += __shfl_down_sync (0xffffffffu, d, o);
    }
  a = __shfl_sync (0xffffffffu, a, 0);
  b = __shfl_sync (0xffffffffu, b, 0);
  e = __shfl_sync (0xffffffffu, e, 0);
  f = __shfl_sync (0xffffffffu, f, 0);
  c = __shfl_sync (0xffffffffu, c, 0);
  d = __shfl_sync (0xffffffffu, d, 0);
  lc.parity ^= 1;
}

/* The bucket that holds sorted position r (0 <= r < number of values): a
 * binary search in the shared copy of the offsets. Every thread runs it on
 * the same data and gets the same answer, so no barrier is needed. */
__device__ __forceinline__ uint32_t
bucket_of_position (uint32_t r, const uint32_t *s_offs)
{
  uint32_t lo = 0, hi = kBuckets - 1;

  while (lo < hi)
    {
      uint32_t mid = (lo + hi + 1) / 2;
      if (s_offs[mid] <= r)
        lo = mid;
      else
        hi = mid - 1;
    }
  return lo;
}

/* Calls f on every value of values[start .. start + count), spread over the
 * block, with 16-byte loads two at a time in the aligned middle. */
template <typename F>
__device__ __forceinline__ void
for_values (const float *__restrict__ values, uint32_t start, uint32_t count, F f)
{
  const uint32_t head = min (count, (4u - (start & 3u)) & 3u);
  const uint32_t body = (count - head) / 4;
  const float4 *v4 = reinterpret_cast<const float4 *> (values + start + head);

  if (threadIdx.x < head)
    f (values[start + threadIdx.x]);
  uint32_t i = threadIdx.x;
  for (; i + blockDim.x < body; i += 2 * blockDim.x)
    {
      const float4 a = v4[i], b = v4[i + blockDim.x];
      f (a.x); f (a.y); f (a.z); f (a.w);
      f (b.x); f (b.y); f (b.z); f (b.w);
    }
  if (i < body)
    {
      const float4 a = v4[i];
      f (a.x); f (a.y); f (a.z); f (a.w);
    }
  const uint32_t tail = start + head + body * 4;
  if (tail + threadIdx.x < start + count)
    f (values[tail + threadIdx.x]);
}

/* Turns a histogram of NBINS counts into its inclusive prefix sums, in
 * place (warp 0; the caller puts a barrier after). */
template <int NBINS>
__device__ __forceinline__ void
prefix_bins (uint32_t *hist)
{
  constexpr int per = NBINS / 32;
  if (threadIdx.x < 32)
    {
      const int lane = threadIdx.x;
      uint4 *h4 = reinterpret_cast<uint4 *> (hist + lane * per);
      uint32_t h[per];
#pragma unroll
      for (int q = 0; q < per / 4; q++)
        {
          const uint4 w = h4[q];
          h[4 * q] = w.x;
          h[4 * q + 1] = w.y;
          h[4 * q + 2] = w.z;
          h[4 * q + 3] = w.w;
        }
#pragma unroll
      for (int j = 1; j < per; j++)
        h[j] += h[j - 1];
      uint32_t incl = h[per - 1];
#pragma unroll
      for (int o = 1; o < 32; o <<= 1)
        {
          const uint32_t t = __shfl_up_sync (0xffffffffu, incl, o);
          if (lane >= o)
            incl += t;
        }
      const uint32_t before = incl - h[per - 1];
#pragma unroll
      for (int q = 0; q < per / 4; q++)
        h4[q] = make_uint4 (h[4 * q] + before, h[4 * q + 1] + before, h[4 * q + 2] + before,
                            h[4 * q + 3] + before);
    }
}

/* The bin of a histogram (given as inclusive prefix sums) that holds rank
 * k, and k's rank inside it: the number of bins whose prefix is at most k.
 * Each warp finds it by itself (16-byte loads, one warp sum), so no
 * barrier follows. */
template <int NBINS>
__device__ __forceinline__ void
find_bin (const uint32_t *prefix, uint32_t k, uint32_t *bin, uint32_t *rank)
{
  constexpr int per = NBINS / 32;
  const int lane = threadIdx.x & 31;
  const uint4 *p4 = reinterpret_cast<const uint4 *> (prefix + lane * per);
  uint32_t below = 0;

#pragma unroll
  for (int q = 0; q < per / 4; q++)
    {
      const uint4 w = p4[q];
      below += (w.x <= k) + (w.y <= k) + (w.z <= k) + (w.w <= k);
    }
  const uint32_t b = __reduce_add_sync (0xffffffffu, below);
  *bin = b;
  *rank = k - (b > 0 ? prefix[b - 1] : 0u);
}

/* The key of rank k among the count values of bucket b, at values[start..]:
 * a radix select over the 17 key bits below the bucket's, 9 then 8. Each
 * histogram is kept while later calls ask the same bucket (and prefix):
 * the median moves little from one pass to the next. Rebuilding one waits
 * for every warp to have read it. */
__device__ uint32_t
select_key (const float *__restrict__ values, uint32_t start, uint32_t count, uint32_t b,
            uint32_t k, LoopShared &sh, LoopCache &lc)
{
  uint32_t d1, k1, d2, k2;

  if (lc.hist1_bucket != b)
    {
      __syncthreads ();
      for (int i = threadIdx.x; i < kSel1Bins; i += blockDim.x)
        sh.hist1[i] = 0;
      __syncthreads ();
      for_values (values, start, count, [&] (float v) {
        atomicAdd (&sh.hist1[(sky_float_key (v) >> 8) & (kSel1Bins - 1)], 1u);
      });
      __syncthreads ();
      prefix_bins<kSel1Bins> (sh.hist1);
      __syncthreads ();
      lc.hist1_bucket = b;
      lc.hist2_bucket = kNone;
      lc.builds += 1;
    }
  find_bin<kSel1Bins> (sh.hist1, k, &d1, &k1);

  if (lc.hist2_bucket != b || lc.hist2_prefix != d1)
    {
      __syncthreads ();
      for (int i = threadIdx.x; i < kSel2Bins; i += blockDim.x)
        sh.hist2[i] = 0;
      __syncthreads ();
      for_values (values, start, count, [&] (float v) {
        const uint32_t key = sky_float_key (v);
        if (((key >> 8) & (kSel1Bins - 1)) == d1)
          atomicAdd (&sh.hist2[key & (kSel2Bins - 1)], 1u);
      });
      __syncthreads ();
      prefix_bins<kSel2Bins> (sh.hist2);
      __syncthreads ();
      lc.hist2_bucket = b;
      lc.hist2_prefix = d1;
      lc.builds += 16;
    }
  find_bin<kSel2Bins> (sh.hist2, k1, &d2, &k2);
  return (b << kLowBits) | (d1 << 8) | d2;
}

/* The non-blank values strictly inside (L, H): how many, the sorted
 * position of the first, and their sums of d = x - shift and d * d. Only
 * the buckets of L and H are read value by value; the buckets between come
 * whole from their sums (a value in a bucket above L's is above L, even
 * when (float) L rounded, and likewise below H), added up again only when
 * those buckets change; one block reduction. */
struct Interval {
  uint32_t n, first;
  double s, s2;
  bool ok;  /* false: the plan does not cover this interval */
};

__device__ Interval
interval_of (const float *__restrict__ values, const uint32_t *s_offs, const Plan &plan,
             double central_s, double central_s2, const double *__restrict__ bsum,
             const double *__restrict__ bsum2, const double *__restrict__ gsum,
             const double *__restrict__ gsum2, double L, double H, double shift,
             LoopShared &sh, LoopCache &lc)
{
  const bool has_l = L != -INFINITY, has_h = H != INFINITY;
  const uint32_t bl = has_l ? bucket_of (__double2float_rn (L)) : 0;
  const uint32_t bh = has_h ? bucket_of (__double2float_rn (H)) : kBuckets - 1;
  const bool one = has_l && has_h && bh == bl;
  uint32_t at_l = 0, at_h = 0;
  Interval out;

  /* The edges' values must be gathered, and the central band, summed
   * whole, must lie strictly between them. Uniform over the block. */
  out.ok = (!has_l || gathered_at (plan, s_offs, bl, &at_l))
           && (!has_h || gathered_at (plan, s_offs, bh, &at_h))
           && (!plan.has_central
               || ((!has_l || bl < plan.clo) && (!has_h || bh > plan.chi)));
  if (!out.ok)
    return out;
  double s = 0, s2 = 0, ws = 0, ws2 = 0;
  unsigned long long n_in = 0, above_l = 0;
  uint32_t lo = has_l ? bl + 1 : 0, hi = has_h ? bh : kBuckets;
  if (one)
    hi = lo;
  const bool whole_kept = lc.whole_lo == lo && lc.whole_hi == hi;

  /* Whole buckets lo .. hi - 1 (unless kept from the last call): partial
   * groups at the ends bucket by bucket, whole groups between from the
   * group sums; at most 638 loads, in flight with the edges' loads. */
  if (lo < hi && !whole_kept)
    {
      const uint32_t g0 = (lo + kGroup - 1) / kGroup, g1 = hi / kGroup;
      if (g0 < g1)
        {
          const uint32_t head = g0 * kGroup - lo, groups = g1 - g0, tail = hi - g1 * kGroup;
          for (uint32_t i = threadIdx.x; i < head + groups + tail; i += blockDim.x)
            {
              if (i < head)
                {
                  ws += bsum[lo + i];
                  ws2 += bsum2[lo + i];
                }
              else if (i < head + groups)
                {
                  ws += gsum[g0 + (i - head)];
                  ws2 += gsum2[g0 + (i - head)];
                }
              else
                {
                  ws += bsum[g1 * kGroup + (i - head - groups)];
                  ws2 += bsum2[g1 * kGroup + (i - head - groups)];
                }
            }
        }
      else
        for (uint32_t i = lo + threadIdx.x; i < hi; i += blockDim.x)
          {
            ws += bsum[i];
            ws2 += bsum2[i];
          }
    }

  auto edge = [&] (float x) {
    const double v = x;
    if (v > L && v < H)
      {
        const double d = v - shift;
        n_in++;
        s += d;
        s2 += d * d;
      }
  };
  if (has_l)
    for_values (values, at_l, s_offs[bl + 1] - s_offs[bl], [&] (float x) {
      above_l += (double) x > L;
      edge (x);
    });
  if (has_h && !one)
    for_values (values, at_h, s_offs[bh + 1] - s_offs[bh], edge);

  block_sum (s, s2, ws, ws2, n_in, above_l, sh, lc);
  if (lo < hi)
    {
      if (whole_kept)
        {
          ws = lc.whole_s;
          ws2 = lc.whole_s2;
        }
      else
        {
          lc.whole_lo = lo;
          lc.whole_hi = hi;
          lc.whole_s = ws;
          lc.whole_s2 = ws2;
        }
      s += ws;
      s2 += ws2;
      if (plan.has_central)
        {
          /* Gathered buckets' sums cover only them; the band comes whole. */
          s += central_s;
          s2 += central_s2;
        }
    }

  out.n = (uint32_t) n_in + (lo < hi ? s_offs[hi] - s_offs[lo] : 0);
  out.first = has_l ? s_offs[bl + 1] - (uint32_t) above_l : 0;
  out.s = s;
  out.s2 = s2;
  return out;
}

/* The whole clipping loop in one block of T threads. Every thread runs the
 * same scalar logic on the same broadcast values, so control flow stays
 * uniform; that logic is repeated by every warp, so small buckets (small
 * images) go faster with fewer warps, large ones with more. The bucket
 * offsets sit in shared memory (128 KiB). */
template <int T>
__device__ __forceinline__ void
loop_body (const float *__restrict__ values, const uint32_t *__restrict__ offs,
           const double *__restrict__ bsum, const double *__restrict__ bsum2,
           const double *__restrict__ gsum, const double *__restrict__ gsum2,
           const SkyGpuParams *__restrict__ params, SkyGpuState *__restrict__ st,
           uint32_t *s_offs, LoopShared &sh)
{
  const Plan plan = load_plan (st);
  const double central_s = st->central_s, central_s2 = st->central_s2;
  const double kappa = params->clip_kappa;
  const int max_iter = params->max_iter;
  const double shift = st->shift;
  double L = -INFINITY, H = INFINITY, median = NAN, mean = NAN, sigma = NAN;
  int iterations = 0, converged = 0, flat = 0;
  Interval cur;
  LoopCache lc;

  if (st->empty)
    {
      if (threadIdx.x == 0)
        {
          st->median = st->sigma = st->mean = NAN;
          st->n = 0;
          st->iterations = st->converged = st->flat = 0;
          st->threshold_value = NAN;
          st->has_bound = 0;
          st->bound = 0;
        }
      return;
    }

  {
    /* The offsets, 16 bytes a load, all of a thread's loads in flight. */
    constexpr int kWords = kBuckets / 4, kPer = T >= 1024 ? 8 : 16;
    const uint4 *o4 = reinterpret_cast<const uint4 *> (offs);
    uint4 *s4 = reinterpret_cast<uint4 *> (s_offs);
    for (int w0 = threadIdx.x; w0 < kWords; w0 += kPer * blockDim.x)
      {
        uint4 r[kPer];
#pragma unroll
        for (int j = 0; j < kPer; j++)
          if (w0 + j * (int) blockDim.x < kWords)
            r[j] = __ldg (o4 + w0 + j * blockDim.x);
#pragma unroll
        for (int j = 0; j < kPer; j++)
          if (w0 + j * (int) blockDim.x < kWords)
            s4[w0 + j * blockDim.x] = r[j];
      }
    if (threadIdx.x == 0)
      s_offs[kBuckets] = offs[kBuckets];
  }
  lc.hist1_bucket = lc.hist2_bucket = lc.hist2_prefix = kNone;
  lc.whole_lo = lc.whole_hi = kNone;
  lc.whole_s = lc.whole_s2 = 0;
  lc.parity = 0;
  lc.med_bucket = 0;
  lc.builds = 0;
#ifdef SKY_GPU_LOOP_PROFILE
  const bool prof = params->loop_profile && threadIdx.x == 0;
#else
  constexpr bool prof = false;
#endif
  long long t_prof = prof ? clock64 () : 0;
  __syncthreads ();
  if (prof)
    {
      const long long t = clock64 ();
      printf ("loop setup %lld cycles\n", t - t_prof);
      t_prof = clock64 ();
    }

  /* Leaves for the full path when the plan misjudged this image. */
#define SKY_PLAN_MISSED()                                                      \
  do                                                                           \
    {                                                                          \
      if (threadIdx.x == 0)                                                    \
        st->fallback = 1;                                                      \
      return;                                                                  \
    }                                                                          \
  while (0)

  cur = interval_of (values, s_offs, plan, central_s, central_s2, bsum, bsum2, gsum, gsum2, L, H,
                     shift, sh, lc);
  if (!cur.ok)
    SKY_PLAN_MISSED ();
  if (prof)
    {
      const long long t = clock64 ();
      printf ("loop first interval %lld cycles\n", t - t_prof);
      t_prof = clock64 ();
    }
  for (;;)
    {
      long long t_sel = 0, t_math = 0;
      const uint32_t r = cur.first + (cur.n - 1) / 2;
      const uint32_t b = s_offs[lc.med_bucket] <= r && r < s_offs[lc.med_bucket + 1]
                             ? lc.med_bucket
                             : bucket_of_position (r, s_offs);
      uint32_t at;
      lc.med_bucket = b;
      if (!gathered_at (plan, s_offs, b, &at))
        SKY_PLAN_MISSED ();
      double med = sky_key_float (select_key (values, at, s_offs[b + 1] - s_offs[b], b,
                                          r - s_offs[b], sh, lc));
      if (cur.n % 2 == 0)
        {
          const uint32_t r2 = r + 1;
          const uint32_t b2 = r2 < s_offs[b + 1] ? b : bucket_of_position (r2, s_offs);
          if (!gathered_at (plan, s_offs, b2, &at))
            SKY_PLAN_MISSED ();
          med = 0.5 * (med + (double) sky_key_float (select_key (values, at,
                                                              s_offs[b2 + 1] - s_offs[b2], b2,
                                                              r2 - s_offs[b2], sh, lc)));
        }
      if (prof)
        t_sel = clock64 ();

      /* As sky-cpu-clip.c's run_moments and clip_bounds. */
      const double n = (double) cur.n;
      const double var = cur.s2 / n - (cur.s / n) * (cur.s / n);
      median = med;
      mean = shift + cur.s / n;
      sigma = var > 0 ? sqrt (var) : 0.0;
      iterations++;

      const double half = kappa * sigma;
      double lo = med - half, hi = med + half;
      if (lo == 0)
        lo = 0.0;
      if (hi == 0)
        hi = -0.0;
      const double L2 = fmax (L, lo), H2 = fmin (H, hi);
      if (prof)
        t_math = clock64 ();
      Interval next = interval_of (values, s_offs, plan, central_s, central_s2, bsum, bsum2, gsum,
                                   gsum2, L2, H2, shift, sh, lc);
      if (!next.ok)
        SKY_PLAN_MISSED ();
      if (prof)
        {
          const long long t = clock64 ();
          printf ("loop pass %d: select %lld, math %lld, interval %lld cycles; n %u, median "
                  "bucket %u (%u values), builds %d\n",
                  iterations, t_sel - t_prof, t_math - t_sel, t - t_math, cur.n, b,
                  s_offs[b + 1] - s_offs[b], lc.builds);
          lc.builds = 0;
          t_prof = clock64 ();
        }

      /* next.n > cur.n cannot happen (the intervals nest); >= ends the
       * loop even if it did. */
      if (next.n >= cur.n)
        {
          converged = 1;
          break;
        }
      if (next.n == 0)
        {
          /* Nothing strictly inside the bounds (sigma 0): no background. */
          flat = 1;
          converged = 1;
          break;
        }
      if (max_iter > 0 && iterations >= max_iter)
        break;
      L = L2;
      H = H2;
      cur = next;
    }
#undef SKY_PLAN_MISSED

  if (threadIdx.x == 0)
    {
      double t = NAN;
      st->median = median;
      st->sigma = sigma;
      st->mean = mean;
      st->n = cur.n;
      st->iterations = iterations;
      st->converged = converged;
      st->flat = flat;
      /* sky_threshold_value (), then sky_float_floor (). */
      if (!flat && cur.n > 0)
        t = params->relative ? median + params->threshold * sigma : params->threshold * sigma;
      st->threshold_value = t;
      st->has_bound = !isnan (t);
      st->bound = isnan (t) ? 0 : sky_float_floor (t);
    }
}

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

void
sky_gpu_clip_geometry (const SkyGpu *gpu, int64_t n, int *blocks, int64_t *chunk)
{
  /* At least 32768 pixels a block, so that clearing, flushing and keeping
   * the block's 128 KiB histogram stays small beside counting; at most one
   * block per multiprocessor (the histogram fills its shared memory). The
   * kept histograms (blocks * 32768 counts) fit in d_work, which holds
   * the pixel count rounded up to 32768. */
  int64_t b = (n + 32767) / 32768;

  if (b > gpu->nsm)
    b = gpu->nsm;
  if (b < 1)
    b = 1;
  *blocks = (int) b;
  *chunk = ((n + b - 1) / b + 3) / 4 * 4;
}

int
sky_gpu_clip_prepare (SkyGpu *gpu)
{
  (void) gpu;
  SKY_CUDA (cudaFuncSetAttribute (clipHistogramKernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  (int) kHistSmem));
  SKY_CUDA (cudaFuncSetAttribute (clipScatterKernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  (int) kHistSmem));
  SKY_CUDA (cudaFuncSetAttribute (clipFullKernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  (int) kLoopSmem));
  SKY_CUDA (cudaFuncSetAttribute (clipLoopKernel<256>,
                                  cudaFuncAttributeMaxDynamicSharedMemorySize, (int) kLoopSmem));
  SKY_CUDA (cudaFuncSetAttribute (clipLoopKernel<512>,
                                  cudaFuncAttributeMaxDynamicSharedMemorySize, (int) kLoopSmem));
  SKY_CUDA (cudaFuncSetAttribute (clipLoopKernel<1024>,
                                  cudaFuncAttributeMaxDynamicSharedMemorySize, (int) kLoopSmem));
  SKY_CUDA (cudaFuncSetAttribute (clipGatherKernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  (int) kHistSmem));
  SKY_CUDA (cudaFuncSetAttribute (clipScanPlanKernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  (int) kScanSmem));
  return SKY_OK;
}

/* The loop kernel over values (the gathered ones, or all of them when
 * full), in a block of as many threads as suits the image's size: every
 * warp repeats the loop's scalar logic, so images of up to 4096 x 4096
 * pixels, whose buckets hold few values, take 256 threads, up to 8192 x
 * 8192 512, larger ones 1024 (measured on the H200;
 * SKYSIFT_GPU_LOOP_THREADS=256|512|1024 chooses, for tuning). */
static int
launch_loop (SkyGpu *gpu, int64_t n, const float *values, int full)
{
  const size_t smem = kLoopSmem;
  const char *env = getenv ("SKYSIFT_GPU_LOOP_THREADS");
  int threads = n <= (int64_t) 4096 * 4096 ? 256 : n <= (int64_t) 8192 * 8192 ? 512 : 1024;
  cudaStream_t s = gpu->stream;

  if (env != NULL && (atoi (env) == 256 || atoi (env) == 512 || atoi (env) == 1024))
    threads = atoi (env);
#define SKY_LOOP_LAUNCH(T)                                                                  \
  SKY_LAUNCH (clipLoopKernel<T>, 1, T, smem, s, values, gpu->d_offs, gpu->d_bsum,          \
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

int
sky_gpu_clip_enqueue (SkyGpu *gpu, int64_t n)
{
  int ret;
  cudaStream_t s = gpu->stream;
  const int blocks = gpu->clip_blocks;
  const int64_t chunk = gpu->clip_chunk;
  float *values = reinterpret_cast<float *> (gpu->d_work);
  float *gathered = reinterpret_cast<float *> (gpu->d_labels); /* free until labelling */
  const int64_t sum_blocks = (n + kSumThreads * 4 * kSumItems - 1) / (kSumThreads * 4 * kSumItems);

  /* d_counts is zero here: zeroed when allocated, and by the scan kernel
   * after each run reads it. The block histograms sit in d_work, free
   * until the full path (if any) or the labelling. */
  SKY_LAUNCH (clipHistogramKernel, blocks, kHistThreads, kHistSmem, s, gpu->d_image, n, chunk,
              gpu->d_work, gpu->d_block_coarse, gpu->d_counts, gpu->d_bsum, gpu->d_bsum2,
              gpu->d_gsum, gpu->d_gsum2);
  SKY_LAUNCH (clipScanPlanKernel, 1, kPlanThreads, kScanSmem, s, gpu->d_counts, gpu->d_offs,
              gpu->d_cursor, gpu->d_coarse_cursor, gpu->d_params, gpu->d_state);
  SKY_LAUNCH (clipGatherKernel, blocks, kHistThreads, kHistSmem, s, gpu->d_image, n, chunk,
              gpu->d_work, gpu->d_cursor, gathered, gpu->d_state, gpu->d_counts);
  SKY_LAUNCH (clipSumsKernel, (unsigned) sum_blocks, kSumThreads, 0, s, gathered, gpu->d_state, 0,
              gpu->d_bsum, gpu->d_bsum2);
  SKY_LAUNCH (clipGroupSumsKernel, kGroups, kGroup, 0, s, gpu->d_bsum, gpu->d_bsum2, gpu->d_gsum,
              gpu->d_gsum2, gpu->d_state, 0);
  if ((ret = launch_loop (gpu, n, gathered, 0)) != SKY_OK)
    return ret;

  /* The full path, which returns at once unless the plan missed: one
   * cooperative kernel (a plain launch: a cooperative grid needs every
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
                                    gathered, (const uint32_t *) gpu->d_offs, gpu->d_cursor,
                                    gpu->d_bsum, gpu->d_bsum2, gpu->d_gsum, gpu->d_gsum2, values,
                                    (const SkyGpuParams *) gpu->d_params, gpu->d_state));
      return SKY_OK;
    }
  SKY_LAUNCH (clipPartitionKernel, blocks, kHistThreads, 0, s, gpu->d_image, n, chunk,
              gpu->d_block_coarse, gpu->d_coarse_cursor, gathered, gpu->d_offs, gpu->d_cursor,
              gpu->d_bsum, gpu->d_bsum2, gpu->d_gsum, gpu->d_gsum2, gpu->d_state);
  SKY_LAUNCH (clipScatterKernel, blocks, kHistThreads, kHistSmem, s, gathered, gpu->d_state,
              gpu->d_cursor, values);
  SKY_LAUNCH (clipSumsKernel, (unsigned) sum_blocks, kSumThreads, 0, s, values, gpu->d_state, 1,
              gpu->d_bsum, gpu->d_bsum2);
  SKY_LAUNCH (clipGroupSumsKernel, kGroups, kGroup, 0, s, gpu->d_bsum, gpu->d_bsum2, gpu->d_gsum,
              gpu->d_gsum2, gpu->d_state, 1);
  if ((ret = launch_loop (gpu, n, values, 1)) != SKY_OK)
    return ret;
  return SKY_OK;
}
