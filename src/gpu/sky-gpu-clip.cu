/* Kappa-sigma clipping on the device, by the CPU's method (sky-cpu-clip.c).
 *
 * Every pass keeps the pixels strictly inside an interval nested in the
 * last, so the survivors are the non-blank pixels inside (L, H), the
 * intersection of all the intervals so far. The pixels are bucketed once by
 * the top 15 bits of an order-preserving key:
 *
 *   histogram  each block counts its chunk in shared memory (32-bit
 *              counters, 128 KiB), keeps that count and adds it to the
 *              global one;
 *   scan       one block turns the counts into bucket offsets;
 *   scatter    each block reserves its share of every bucket with one
 *              atomic per bucket, then places its pixels with shared-memory
 *              atomics: the values end up grouped by bucket;
 *   sums       per-bucket sums of (x - shift) and its square in double,
 *              reduced per warp before the atomics, and per group of 256
 *              buckets, so that any run of whole buckets sums in a few
 *              hundred loads.
 *
 * The clipping loop is then one block on one multiprocessor with no host
 * round trip: each pass finds its median by a radix select inside the one
 * bucket that holds it (histograms of the low key bits, cached while the
 * median stays in the same bucket), and the moments and survivor count of
 * the next interval from the two buckets its bounds fall in plus the
 * precomputed sums of the buckets between. The median is an exact order
 * statistic, and the sums are double, so the statistics, iteration count
 * and survivor count are the CPU's. */
#include "sky-gpu-private.h"

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <math.h>

namespace {

constexpr int kBuckets = SKY_CLIP_BUCKETS;
constexpr int kLowBits = 32 - SKY_CLIP_BUCKET_BITS;  /* 17 key bits inside a bucket */
constexpr int kGroup = SKY_CLIP_GROUP;
constexpr int kGroups = SKY_CLIP_GROUPS;
constexpr int kSel1Bins = 1 << (kLowBits - 8);       /* key bits 16..8 */
constexpr int kSel2Bins = 256;                       /* key bits 7..0 */
constexpr int kHistThreads = 1024;
constexpr int kScanThreads = 1024;
constexpr int kScanItems = kBuckets / kScanThreads;
constexpr int kSumThreads = 256;
constexpr int kSumItems = 8;                         /* values per lane */
constexpr int kLoopThreads = 1024;
constexpr int kLoopWarps = kLoopThreads / 32;
constexpr size_t kHistSmem = kBuckets * sizeof (uint32_t);

/* Order-preserving map of a float to uint32, as on the CPU: negative floats
 * have all bits flipped, others the sign bit set; -0 sorts just below +0. */
__device__ __forceinline__ uint32_t
float_key (float v)
{
  uint32_t u = __float_as_uint (v);
  return u ^ ((uint32_t) ((int32_t) u >> 31) | 0x80000000u);
}

__device__ __forceinline__ float
key_float (uint32_t k)
{
  return __uint_as_float ((k & 0x80000000u) ? (k ^ 0x80000000u) : ~k);
}

__device__ __forceinline__ uint32_t
bucket_of (float v)
{
  return float_key (v) >> kLowBits;
}

/* ------------------------------------------------------------ histogram */

__device__ __forceinline__ void
count_value (uint32_t *s_hist, float v)
{
  if (!isnan (v))
    atomicAdd (&s_hist[bucket_of (v)], 1u);
}

/* Each block counts the non-blank pixels of its chunk: chunk is a multiple
 * of 4, so every chunk starts 16-byte aligned. */
__global__ void __launch_bounds__ (kHistThreads)
clipHistogramKernel (const float *__restrict__ image, int64_t n, int64_t chunk,
                     uint32_t *__restrict__ block_hist, uint32_t *__restrict__ counts)
{
  extern __shared__ uint32_t s_hist[];
  const int64_t start = (int64_t) blockIdx.x * chunk;
  const int64_t end = min (n, start + chunk);

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
}

/* ----------------------------------------------------------------- scan */

/* One block: bucket offsets, the scatter's cursors, the count of non-blank
 * pixels and the shift, the value of smallest magnitude in the bucket of
 * the overall median (close to it, so sums of x - shift lose nothing to an
 * offset; the CPU uses the median itself, which changes only rounding). */
__global__ void __launch_bounds__ (kScanThreads)
clipScanKernel (const uint32_t *__restrict__ counts, uint32_t *__restrict__ offs,
                uint32_t *__restrict__ cursor, SkyGpuState *__restrict__ st)
{
  typedef cub::BlockScan<uint32_t, kScanThreads> Scan;
  __shared__ typename Scan::TempStorage tmp;
  const int base = threadIdx.x * kScanItems;
  uint32_t c[kScanItems], sum = 0, run, total;

#pragma unroll
  for (int j = 0; j < kScanItems; j++)
    {
      c[j] = counts[base + j];
      sum += c[j];
    }
  Scan (tmp).ExclusiveSum (sum, run, total);

  const uint32_t median_pos = total > 0 ? (total - 1) / 2 : 0;
#pragma unroll
  for (int j = 0; j < kScanItems; j++)
    {
      offs[base + j] = run;
      cursor[base + j] = run;
      if (c[j] != 0 && run <= median_pos && median_pos < run + c[j])
        {
          uint32_t b = (uint32_t) (base + j);
          uint32_t key = (b << kLowBits) | ((b & (1u << (SKY_CLIP_BUCKET_BITS - 1))) ? 0u
                                                                  : (1u << kLowBits) - 1);
          st->shift = (double) key_float (key);
        }
      run += c[j];
    }
  if (threadIdx.x == kScanThreads - 1)
    offs[kBuckets] = total;
  if (threadIdx.x == 0)
    {
      st->ninput = total;
      st->empty = total == 0;
      if (total == 0)
        st->shift = 0;
    }
}

/* -------------------------------------------------------------- scatter */

/* Each block takes its share of every bucket (one global atomic per bucket
 * it has pixels in) and then places its pixels with shared atomics. Order
 * inside a bucket is arbitrary; nothing downstream depends on it. */
__global__ void __launch_bounds__ (kHistThreads)
clipScatterKernel (const float *__restrict__ image, int64_t n, int64_t chunk,
                   const uint32_t *__restrict__ block_hist, uint32_t *__restrict__ cursor,
                   float *__restrict__ values)
{
  extern __shared__ uint32_t s_pos[];
  const int64_t start = (int64_t) blockIdx.x * chunk;
  const int64_t end = min (n, start + chunk);

  for (int b = threadIdx.x; b < kBuckets; b += blockDim.x)
    {
      uint32_t c = block_hist[(size_t) blockIdx.x * kBuckets + b];
      s_pos[b] = c != 0 ? atomicAdd (&cursor[b], c) : 0;
    }
  __syncthreads ();
  if (start >= end)
    return;

  const int64_t nvec = (end - start) / 4;
  const float4 *v4 = reinterpret_cast<const float4 *> (image + start);
  for (int64_t i = threadIdx.x; i < nvec; i += blockDim.x)
    {
      float4 a = __ldg (v4 + i);
      float v[4] = { a.x, a.y, a.z, a.w };
#pragma unroll
      for (int k = 0; k < 4; k++)
        if (!isnan (v[k]))
          values[atomicAdd (&s_pos[bucket_of (v[k])], 1u)] = v[k];
    }
  for (int64_t j = start + nvec * 4 + threadIdx.x; j < end; j += blockDim.x)
    {
      float v = image[j];
      if (!isnan (v))
        values[atomicAdd (&s_pos[bucket_of (v)], 1u)] = v;
    }
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
 * so a warp's 256 values are mostly one bucket: then one warp reduction and
 * one pair of atomics; else each lane flushes its own runs. */
__global__ void __launch_bounds__ (kSumThreads)
clipSumsKernel (const float *__restrict__ values, const SkyGpuState *__restrict__ st,
                double *__restrict__ bsum, double *__restrict__ bsum2)
{
  const int64_t nv = st->ninput;
  const double shift = st->shift;
  const int lane = threadIdx.x & 31;
  const int64_t warp = ((int64_t) blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  const int64_t base = warp * 32 * kSumItems;

  if (base >= nv)
    return;
  const int64_t last = min (base + 32 * kSumItems, nv) - 1;
  const uint32_t first_b = bucket_of (values[base]), last_b = bucket_of (values[last]);

  if (first_b == last_b)
    {
      double s = 0, s2 = 0;
#pragma unroll
      for (int i = 0; i < kSumItems; i++)
        {
          int64_t idx = base + i * 32 + lane;
          if (idx < nv)
            {
              double d = (double) values[idx] - shift;
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

  /* A lane's values (base + i * 32 + lane) rise with i, so their buckets
   * never decrease: each run of one bucket is flushed once. */
  uint32_t cur = 0xffffffffu;
  double s = 0, s2 = 0;
  for (int i = 0; i < kSumItems; i++)
    {
      int64_t idx = base + i * 32 + lane;
      if (idx >= nv)
        break;
      float v = values[idx];
      uint32_t b = bucket_of (v);
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
      double d = (double) v - shift;
      s += d;
      s2 += d * d;
    }
  if (cur != 0xffffffffu)
    {
      atomicAdd (&bsum[cur], s);
      atomicAdd (&bsum2[cur], s2);
    }
}

/* One block per group of kGroup buckets. */
__global__ void __launch_bounds__ (kGroup)
clipGroupSumsKernel (const double *__restrict__ bsum, const double *__restrict__ bsum2,
                     double *__restrict__ gsum, double *__restrict__ gsum2)
{
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

struct LoopShared {
  uint32_t gcum[kGroups + 1];  /* sorted position of each group's first value */
  uint32_t hist1[kSel1Bins];   /* key bits 16..8 of hist1_bucket */
  uint32_t hist2[kSel2Bins];   /* key bits 7..0 of (hist2_bucket, hist2_prefix) */
  uint32_t hist1_bucket, hist2_bucket, hist2_prefix;
  double red_d[kLoopWarps][2];
  unsigned long long red_u[kLoopWarps][2];
  double res_d[2];
  unsigned long long res_u[2];
  uint32_t found_group, found_bucket, bin, rank_in_bin;
};

/* Sums two doubles and two counts over the block; every thread gets them. */
__device__ void
block_sum (double &a, double &b, unsigned long long &c, unsigned long long &d, LoopShared &sh)
{
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;

#pragma unroll
  for (int o = 16; o > 0; o >>= 1)
    {
      a += __shfl_down_sync (0xffffffffu, a, o);
      b += __shfl_down_sync (0xffffffffu, b, o);
      c += __shfl_down_sync (0xffffffffu, c, o);
      d += __shfl_down_sync (0xffffffffu, d, o);
    }
  if (lane == 0)
    {
      sh.red_d[warp][0] = a;
      sh.red_d[warp][1] = b;
      sh.red_u[warp][0] = c;
      sh.red_u[warp][1] = d;
    }
  __syncthreads ();
  if (warp == 0)
    {
      a = sh.red_d[lane][0];
      b = sh.red_d[lane][1];
      c = sh.red_u[lane][0];
      d = sh.red_u[lane][1];
#pragma unroll
      for (int o = 16; o > 0; o >>= 1)
        {
          a += __shfl_down_sync (0xffffffffu, a, o);
          b += __shfl_down_sync (0xffffffffu, b, o);
          c += __shfl_down_sync (0xffffffffu, c, o);
          d += __shfl_down_sync (0xffffffffu, d, o);
        }
      if (lane == 0)
        {
          sh.res_d[0] = a;
          sh.res_d[1] = b;
          sh.res_u[0] = c;
          sh.res_u[1] = d;
        }
    }
  __syncthreads ();
  a = sh.res_d[0];
  b = sh.res_d[1];
  c = sh.res_u[0];
  d = sh.res_u[1];
  __syncthreads ();
}

/* The bucket that holds sorted position r (0 <= r < number of values). */
__device__ uint32_t
bucket_of_position (uint32_t r, const uint32_t *__restrict__ offs, LoopShared &sh)
{
  if (threadIdx.x < kGroups && sh.gcum[threadIdx.x] <= r && r < sh.gcum[threadIdx.x + 1])
    sh.found_group = threadIdx.x;
  __syncthreads ();
  const uint32_t g = sh.found_group;
  if (threadIdx.x < kGroup)
    {
      uint32_t b = g * kGroup + threadIdx.x;
      if (offs[b] <= r && r < offs[b + 1])
        sh.found_bucket = b;
    }
  __syncthreads ();
  const uint32_t b = sh.found_bucket;
  __syncthreads ();
  return b;
}

/* The bin of a histogram that holds rank k, and k's rank inside it; warp 0
 * scans, everyone gets the answer. */
template <int NBINS>
__device__ void
find_bin (const uint32_t *hist, uint32_t k, LoopShared &sh, uint32_t *bin, uint32_t *rank)
{
  if (threadIdx.x < 32)
    {
      constexpr int per = NBINS / 32;
      const int lane = threadIdx.x;
      uint32_t local = 0, incl;
#pragma unroll
      for (int j = 0; j < per; j++)
        local += hist[lane * per + j];
      incl = local;
#pragma unroll
      for (int o = 1; o < 32; o <<= 1)
        {
          uint32_t t = __shfl_up_sync (0xffffffffu, incl, o);
          if (lane >= o)
            incl += t;
        }
      uint32_t c = incl - local;
      if (c <= k && k < incl)
        for (int j = 0; j < per; j++)
          {
            uint32_t h = hist[lane * per + j];
            if (k < c + h)
              {
                sh.bin = lane * per + j;
                sh.rank_in_bin = k - c;
                break;
              }
            c += h;
          }
    }
  __syncthreads ();
  *bin = sh.bin;
  *rank = sh.rank_in_bin;
  __syncthreads ();
}

/* The key of rank k among the values of bucket b: a radix select over the
 * 17 key bits below the bucket's, 9 then 8. Each histogram is kept while
 * later calls ask the same bucket (and prefix): the median moves little
 * from one pass to the next. */
__device__ uint32_t
select_key (const float *__restrict__ values, const uint32_t *__restrict__ offs, uint32_t b,
            uint32_t k, LoopShared &sh)
{
  const uint32_t start = offs[b], count = offs[b + 1] - start;
  uint32_t d1, k1, d2, k2;

  if (sh.hist1_bucket != b)
    {
      for (int i = threadIdx.x; i < kSel1Bins; i += blockDim.x)
        sh.hist1[i] = 0;
      __syncthreads ();
      for (uint32_t i = threadIdx.x; i < count; i += blockDim.x)
        atomicAdd (&sh.hist1[(float_key (values[start + i]) >> 8) & (kSel1Bins - 1)], 1u);
      __syncthreads ();
      if (threadIdx.x == 0)
        sh.hist1_bucket = b;
    }
  find_bin<kSel1Bins> (sh.hist1, k, sh, &d1, &k1);

  if (sh.hist2_bucket != b || sh.hist2_prefix != d1)
    {
      for (int i = threadIdx.x; i < kSel2Bins; i += blockDim.x)
        sh.hist2[i] = 0;
      __syncthreads ();
      for (uint32_t i = threadIdx.x; i < count; i += blockDim.x)
        {
          uint32_t key = float_key (values[start + i]);
          if (((key >> 8) & (kSel1Bins - 1)) == d1)
            atomicAdd (&sh.hist2[key & (kSel2Bins - 1)], 1u);
        }
      __syncthreads ();
      if (threadIdx.x == 0)
        {
          sh.hist2_bucket = b;
          sh.hist2_prefix = d1;
        }
    }
  find_bin<kSel2Bins> (sh.hist2, k1, sh, &d2, &k2);
  return (b << kLowBits) | (d1 << 8) | d2;
}

/* The non-blank values strictly inside (L, H): how many, the sorted
 * position of the first, and their sums of d = x - shift and d * d. Only
 * the buckets of L and H are read value by value; the buckets between come
 * whole from their sums (a value in a bucket above L's is above L, even
 * when (float) L rounded, and likewise below H). */
struct Interval {
  uint32_t n, first;
  double s, s2;
};

__device__ Interval
interval_of (const float *__restrict__ values, const uint32_t *__restrict__ offs,
             const double *__restrict__ bsum, const double *__restrict__ bsum2,
             const double *__restrict__ gsum, const double *__restrict__ gsum2, double L,
             double H, double shift, LoopShared &sh)
{
  const bool has_l = L != -INFINITY, has_h = H != INFINITY;
  const uint32_t bl = has_l ? bucket_of (__double2float_rn (L)) : 0;
  const uint32_t bh = has_h ? bucket_of (__double2float_rn (H)) : kBuckets - 1;
  uint32_t start_l = 0, count_l = 0, start_h = 0, count_h = 0, lo, hi;
  double s = 0, s2 = 0;
  unsigned long long n_in = 0, above_l = 0;

  if (has_l)
    {
      start_l = offs[bl];
      count_l = offs[bl + 1] - start_l;
    }
  if (has_h && !(has_l && bh == bl))
    {
      start_h = offs[bh];
      count_h = offs[bh + 1] - start_h;
    }
  for (uint32_t i = threadIdx.x; i < count_l + count_h; i += blockDim.x)
    {
      double v = i < count_l ? values[start_l + i] : values[start_h + (i - count_l)];
      if (i < count_l && v > L)
        above_l++;
      if (v > L && v < H)
        {
          double d = v - shift;
          n_in++;
          s += d;
          s2 += d * d;
        }
    }

  /* Whole buckets lo .. hi - 1: partial groups at the ends bucket by
   * bucket, whole groups between from the group sums. */
  lo = has_l ? bl + 1 : 0;
  hi = has_h ? bh : kBuckets;
  if (has_l && has_h && bh == bl)
    hi = lo;
  if (lo < hi)
    {
      const uint32_t g0 = (lo + kGroup - 1) / kGroup, g1 = hi / kGroup;
      if (g0 < g1)
        {
          const uint32_t head = g0 * kGroup - lo, groups = g1 - g0, tail = hi - g1 * kGroup;
          for (uint32_t i = threadIdx.x; i < head + groups + tail; i += blockDim.x)
            {
              if (i < head)
                {
                  s += bsum[lo + i];
                  s2 += bsum2[lo + i];
                }
              else if (i < head + groups)
                {
                  s += gsum[g0 + (i - head)];
                  s2 += gsum2[g0 + (i - head)];
                }
              else
                {
                  s += bsum[g1 * kGroup + (i - head - groups)];
                  s2 += bsum2[g1 * kGroup + (i - head - groups)];
                }
            }
        }
      else
        for (uint32_t i = lo + threadIdx.x; i < hi; i += blockDim.x)
          {
            s += bsum[i];
            s2 += bsum2[i];
          }
    }
  block_sum (s, s2, n_in, above_l, sh);

  Interval out;
  out.n = (uint32_t) n_in + (lo < hi ? offs[hi] - offs[lo] : 0);
  out.first = has_l ? offs[bl + 1] - (uint32_t) above_l : 0;
  out.s = s;
  out.s2 = s2;
  return out;
}

/* The whole clipping loop in one block. Every thread runs the same scalar
 * logic on the same broadcast values, so control flow stays uniform. */
__global__ void __launch_bounds__ (kLoopThreads, 1)
clipLoopKernel (const float *__restrict__ values, const uint32_t *__restrict__ offs,
                const double *__restrict__ bsum, const double *__restrict__ bsum2,
                const double *__restrict__ gsum, const double *__restrict__ gsum2,
                const SkyGpuParams *__restrict__ params, SkyGpuState *__restrict__ st)
{
  __shared__ LoopShared sh;
  const double kappa = params->clip_kappa;
  const int max_iter = params->max_iter;
  const double shift = st->shift;
  double L = -INFINITY, H = INFINITY, median = NAN, mean = NAN, sigma = NAN;
  int iterations = 0, converged = 0, flat = 0;
  Interval cur;

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

  for (int g = threadIdx.x; g <= kGroups; g += blockDim.x)
    sh.gcum[g] = offs[g * kGroup];
  if (threadIdx.x == 0)
    sh.hist1_bucket = sh.hist2_bucket = sh.hist2_prefix = 0xffffffffu;
  __syncthreads ();

  cur = interval_of (values, offs, bsum, bsum2, gsum, gsum2, L, H, shift, sh);
  for (;;)
    {
      const uint32_t r = cur.first + (cur.n - 1) / 2;
      const uint32_t b = bucket_of_position (r, offs, sh);
      double med = key_float (select_key (values, offs, b, r - offs[b], sh));
      if (cur.n % 2 == 0)
        {
          const uint32_t r2 = r + 1;
          const uint32_t b2 = r2 < offs[b + 1] ? b : bucket_of_position (r2, offs, sh);
          med = 0.5 * (med + (double) key_float (select_key (values, offs, b2, r2 - offs[b2], sh)));
        }

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
      Interval next = interval_of (values, offs, bsum, bsum2, gsum, gsum2, L2, H2, shift, sh);

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
      /* sky_threshold_value (), then sky-cpu-segment.c's float_floor (). */
      if (!flat && cur.n > 0)
        t = params->relative ? median + params->threshold * sigma : params->threshold * sigma;
      st->threshold_value = t;
      st->has_bound = !isnan (t);
      if (!isnan (t))
        {
          float f = __double2float_rn (t);
          if ((double) f > t)
            f = nextafterf (f, -INFINITY);
          st->bound = f;
        }
      else
        st->bound = 0;
    }
}

} /* namespace */

void
sky_gpu_clip_geometry (const SkyGpu *gpu, int64_t n, int *blocks, int64_t *chunk)
{
  /* At least 32768 pixels a block, so that clearing and flushing the
   * block's 128 KiB histogram stays small beside counting; at most one
   * block per multiprocessor (the histogram fills its shared memory). */
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
  return SKY_OK;
}

int
sky_gpu_clip_enqueue (SkyGpu *gpu, int64_t n)
{
  cudaStream_t s = gpu->stream;
  const int blocks = gpu->clip_blocks;
  const int64_t chunk = gpu->clip_chunk;
  float *values = reinterpret_cast<float *> (gpu->d_work);
  const int64_t sum_blocks = (n + kSumThreads * kSumItems - 1) / (kSumThreads * kSumItems);

  SKY_CUDA (cudaMemsetAsync (gpu->d_counts, 0, kBuckets * sizeof (uint32_t), s));
  SKY_CUDA (cudaMemsetAsync (gpu->d_bsum, 0, kBuckets * sizeof (double), s));
  SKY_CUDA (cudaMemsetAsync (gpu->d_bsum2, 0, kBuckets * sizeof (double), s));
  SKY_LAUNCH (clipHistogramKernel, blocks, kHistThreads, kHistSmem, s, gpu->d_image, n, chunk,
              gpu->d_block_hist, gpu->d_counts);
  SKY_LAUNCH (clipScanKernel, 1, kScanThreads, 0, s, gpu->d_counts, gpu->d_offs, gpu->d_cursor,
              gpu->d_state);
  SKY_LAUNCH (clipScatterKernel, blocks, kHistThreads, kHistSmem, s, gpu->d_image, n, chunk,
              gpu->d_block_hist, gpu->d_cursor, values);
  SKY_LAUNCH (clipSumsKernel, (unsigned) sum_blocks, kSumThreads, 0, s, values, gpu->d_state,
              gpu->d_bsum, gpu->d_bsum2);
  SKY_LAUNCH (clipGroupSumsKernel, kGroups, kGroup, 0, s, gpu->d_bsum, gpu->d_bsum2, gpu->d_gsum,
              gpu->d_gsum2);
  SKY_LAUNCH (clipLoopKernel, 1, kLoopThreads, 0, s, values, gpu->d_offs, gpu->d_bsum,
              gpu->d_bsum2, gpu->d_gsum, gpu->d_gsum2, gpu->d_params, gpu->d_state);
  return SKY_OK;
}
