/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-gpu-clip-loop.cuh: the clipping loop as device code, for the loop's
 * kernel (sky-gpu-clip-loop.cu) and the full path's (sky-gpu-clip-full.cu).
 *
 * One block on one multiprocessor runs the passes with no host round trip:
 * the median by a radix select inside its bucket (histograms of the low
 * key bits, kept while the median stays there), the next interval's count
 * and moments from its two edge buckets value by value, the whole buckets
 * between from their sums (kept while they stay the same), and the central
 * band whole. Every warp repeats the pass's scalar logic. At every pass the
 * loop checks that its median and bounds lie in gathered buckets and that
 * its interval holds the whole central band; if not, it sets
 * st->fallback and the full path runs. */
#ifndef SKY_GPU_CLIP_LOOP_CUH
#define SKY_GPU_CLIP_LOOP_CUH

#include "sky-gpu-clip-keys.cuh"

#include <stdio.h>

namespace {

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

/* Sums each of four doubles and two counts over the warp into lane 0. */
__device__ __forceinline__ void
warp_sum6 (double &a, double &b, double &e, double &f, unsigned long long &c,
           unsigned long long &d)
{
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
}

/* Sums four doubles and two counts over the block; every thread gets them.
 * One barrier: each warp adds up the warps' partial sums itself, and the
 * next call writes the other buffer. */
__device__ __forceinline__ void
block_sum (double &a, double &b, double &e, double &f, unsigned long long &c,
           unsigned long long &d, LoopShared &sh, LoopCache &lc)
{
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, p = lc.parity;

  warp_sum6 (a, b, e, f, c, d);
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
  warp_sum6 (a, b, e, f, c, d);
  a = __shfl_sync (0xffffffffu, a, 0);
  b = __shfl_sync (0xffffffffu, b, 0);
  e = __shfl_sync (0xffffffffu, e, 0);
  f = __shfl_sync (0xffffffffu, f, 0);
  c = __shfl_sync (0xffffffffu, c, 0);
  d = __shfl_sync (0xffffffffu, d, 0);
  lc.parity ^= 1;
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

/* Rebuilds hist (NBINS counts) from the count values at values[start..],
 * count_value adding each value's bin, then makes it its prefix sums;
 * barriers before (every warp has read the old one) and after. */
template <int NBINS, typename F>
__device__ __forceinline__ void
count_bucket (uint32_t *hist, const float *__restrict__ values, uint32_t start, uint32_t count,
              F count_value)
{
  __syncthreads ();
  for (int i = threadIdx.x; i < NBINS; i += blockDim.x)
    hist[i] = 0;
  __syncthreads ();
  for_values (values, start, count, count_value);
  __syncthreads ();
  prefix_bins<NBINS> (hist);
  __syncthreads ();
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
      count_bucket<kSel1Bins> (sh.hist1, values, start, count, [&] (float v) {
        atomicAdd (&sh.hist1[(sky_float_key (v) >> 8) & (kSel1Bins - 1)], 1u);
      });
      lc.hist1_bucket = b;
      lc.hist2_bucket = kNone;
      lc.builds += 1;
    }
  find_bin<kSel1Bins> (sh.hist1, k, &d1, &k1);

  if (lc.hist2_bucket != b || lc.hist2_prefix != d1)
    {
      count_bucket<kSel2Bins> (sh.hist2, values, start, count, [&] (float v) {
        const uint32_t key = sky_float_key (v);
        if (((key >> 8) & (kSel1Bins - 1)) == d1)
          atomicAdd (&sh.hist2[key & (kSel2Bins - 1)], 1u);
      });
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
                             : bucket_at (r, s_offs);
      uint32_t at;
      lc.med_bucket = b;
      if (!gathered_at (plan, s_offs, b, &at))
        SKY_PLAN_MISSED ();
      double med = sky_key_float (select_key (values, at, s_offs[b + 1] - s_offs[b], b,
                                          r - s_offs[b], sh, lc));
      if (cur.n % 2 == 0)
        {
          const uint32_t r2 = r + 1;
          const uint32_t b2 = r2 < s_offs[b + 1] ? b : bucket_at (r2, s_offs);
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
      /* sky_threshold_value (), then sky_threshold_bound (). */
      if (!flat && cur.n > 0)
        t = params->relative ? median + params->threshold * sigma : params->threshold * sigma;
      st->threshold_value = t;
      st->has_bound = !isnan (t);
      st->bound = isnan (t) ? 0 : sky_threshold_bound (t);
    }
}

} /* namespace */

#endif /* SKY_GPU_CLIP_LOOP_CUH */
