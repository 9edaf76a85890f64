/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-gpu-clip-keys.cuh: what the clip's phase files (sky-gpu-clip-*.cu)
 * share: the bucket geometry and the launch shapes, each named with its
 * reason; the map of a value to its bucket and of a sorted position to its
 * bucket; the plan as the kernels read it; the loops over a block's chunk;
 * the reservation of places in buckets; and the per-bucket sums, which the
 * gathered values and the full path's values both take. Device code, in
 * an unnamed namespace: each phase file compiles its own copy. */
#ifndef SKY_GPU_CLIP_KEYS_CUH
#define SKY_GPU_CLIP_KEYS_CUH

#include "sky-gpu-private.h"

#include <math.h>

namespace {

/* Buckets: the top 15 bits of a value's order-preserving key. 32768
 * 32-bit counters fill 128 KiB of a multiprocessor's shared memory, and
 * spread a sky's values thinly enough that a pass reads few of them. */
constexpr int kBuckets = SKY_CLIP_BUCKETS;
constexpr int kLowBits = 32 - SKY_CLIP_BUCKET_BITS;  /* 17 key bits inside a bucket */
/* Groups of 256 buckets: an interval's whole buckets come from at most
 * 2 x 255 bucket sums and 128 group sums (one load a thread). */
constexpr int kGroup = SKY_CLIP_GROUP;
constexpr int kGroups = SKY_CLIP_GROUPS;
/* The full path partitions by the top 8 key bits first: 256 coarse
 * buckets of 128 buckets each, few enough that its writes form streams
 * that fill whole L2 lines. */
constexpr int kCoarseShift = 24;
constexpr int kCoarse = 256;
constexpr int kFinePerCoarse = kBuckets / kCoarse;   /* 128 */
/* The loop's radix select inside a bucket: key bits 16..8, then 7..0. */
constexpr int kSel1Bins = 1 << (kLowBits - 8);
constexpr int kSel2Bins = 256;
/* The passes over the image (histogram, gather, partition, scatter): one
 * block of 1024 threads per multiprocessor, which the 128 KiB histogram
 * fills. */
constexpr int kHistThreads = 1024;
/* The scan and the plan: one block; the scan gives each of its 32 warps
 * 1024 buckets. */
constexpr int kPlanThreads = 1024;
/* The bucket sums: a warp sums 1024 values, eight 16-byte loads a lane. */
constexpr int kSumThreads = 256;
constexpr int kSumItems = 8;
/* The loop's largest block (its shared reductions are sized for it). */
constexpr int kLoopThreads = 1024;
constexpr int kLoopWarps = kLoopThreads / 32;
constexpr size_t kHistSmem = kBuckets * sizeof (uint32_t);
constexpr size_t kScanSmem = (kBuckets + 1) * sizeof (uint32_t);
/* The bucket offsets in shared memory, padded to 16-byte loads. */
constexpr size_t kLoopSmem = ((kBuckets + 1) * sizeof (uint32_t) + 15) / 16 * 16;
constexpr uint32_t kNone = 0xffffffffu;  /* no bucket: blank, or not gathered */

__device__ __forceinline__ uint32_t
bucket_of (float v)
{
  return sky_float_key (v) >> kLowBits;
}

/* The bucket that holds sorted position r (0 <= r < number of values): a
 * binary search in the offsets. Every thread that runs it on the same data
 * gets the same answer, so the loop needs no barrier after it. */
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

__device__ __forceinline__ double
warp_sum (double v)
{
#pragma unroll
  for (int o = 16; o > 0; o >>= 1)
    v += __shfl_down_sync (0xffffffffu, v, o);
  return v;
}

/* A lane's value j of its 4 * N in v, in rising order (v[j / 4]'s
 * component j % 4); j is a constant once the loop over j is unrolled. */
template <int N>
__device__ __forceinline__ float
lane_value (const float4 (&v)[N], int j)
{
  const float4 &q = v[j / 4];
  switch (j % 4)
    {
    case 0: return q.x;
    case 1: return q.y;
    case 2: return q.z;
    default: return q.w;
    }
}

/* x's d = x - shift into a lane's sums of d and d * d (in double, as the
 * CPU sums them). */
__device__ __forceinline__ void
add_deviation (double &s, double &s2, float x, double shift)
{
  const double d = (double) x - shift;
  s += d;
  s2 += d * d;
}

/* A bucket's share of the sums of d and d * d. */
__device__ __forceinline__ void
add_bucket_sums (double *__restrict__ bsum, double *__restrict__ bsum2, uint32_t b, double s,
                 double s2)
{
  atomicAdd (&bsum[b], s);
  atomicAdd (&bsum2[b], s2);
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

  double s = 0, s2 = 0;
  if (first_b == last_b)
    {
#pragma unroll
      for (int j = 0; j < 4 * kSumItems; j++)
        if (!isnan (lane_value (v, j)))
          add_deviation (s, s2, lane_value (v, j), shift);
      s = warp_sum (s);
      s2 = warp_sum (s2);
      if (lane == 0)
        add_bucket_sums (bsum, bsum2, first_b, s, s2);
      return;
    }

  uint32_t cur = 0xffffffffu;
#pragma unroll
  for (int j = 0; j < 4 * kSumItems; j++)
    {
      const float x = lane_value (v, j);
      if (isnan (x))
        continue;
      const uint32_t b = bucket_of (x);
      if (b != cur)
        {
          if (cur != 0xffffffffu)
            add_bucket_sums (bsum, bsum2, cur, s, s2);
          cur = b;
          s = s2 = 0;
        }
      add_deviation (s, s2, x, shift);
    }
  if (cur != 0xffffffffu)
    add_bucket_sums (bsum, bsum2, cur, s, s2);
}

} /* namespace */

#endif /* SKY_GPU_CLIP_KEYS_CUH */
