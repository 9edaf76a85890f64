/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Each box's background and rms on the device, as sky-cpu-background.c
 * computes them (SEP's arithmetic), to the bit.
 *
 * 1. sums: the box's usable pixels, then those within 2 sigma of their
 *    mean, summed in double in the CPU's order. The CPU sums a row in four
 *    lanes (x mod 4 over the row's first w - w % 4 pixels) and the rest in
 *    a fifth, each lane down the rows in order, and adds them as
 *    tail + ((lane0 + lane2) + (lane1 + lane3)). Floating-point sums depend
 *    on their order, so each lane is one thread here, walking its pixels in
 *    that order; lane 0 also walks the tail. The four threads of a box are
 *    neighbours in a warp and meet by shuffles.
 * 2. histogram and mode: a block a box counts its pixels into shared bins
 *    (counts do not depend on order), makes prefix counts, and runs
 *    SExtractor's clipped mode, every thread doing the scalar arithmetic
 *    itself, the bins' moments and the median walk's end (the CPU's
 *    bisection's answer) counted by the block as exact integers. */
#include "sky-gpu-background.cuh"

namespace {

constexpr int kSumThreads = 32;      /* 8 boxes a block: small images still fill every SM */
constexpr int kModeThreads = 128; /* the mode kernel's block unless switched */
constexpr int kHistBatch = 8;     /* a mode thread's pixels loaded at once */

struct LaneSums {
  double s, q;
  int64_t n;
};

/* The pixels p with lcut <= p <= hcut of lane `lane` (0..3) of a box, or
 * of its tail (lane 4): sum, sum of squares in double, count. */
/* Without a branch, as the CPU's vector lanes do it: a pixel outside the
 * cuts adds +0.0, which leaves a sum unchanged (a sum that starts at +0.0
 * is never -0.0 in round-to-nearest). */
__device__ __forceinline__ void
lane_add (LaneSums &a, float p, float lcut, float hcut)
{
  const bool in = p >= lcut && p <= hcut;
  const double d = (double) (in ? p : 0.0f);
  a.s = a.s + d;
  a.q = a.q + d * d;
  a.n += in;
}

/* One pass over a box's pixels (lane 0..3: x = lane + 4k of each row's
 * first w - w % 4 pixels; lane 0 also sums the rest, the tail, apart).
 * The lane's pixels of a row are loaded kBatch at a time, kDepth batches
 * (rows, in boxes of 64) before the first of them is added: the additions
 * stay in the CPU's order, and a lane's chain of sums waits on one load's
 * latency every kDepth batches, not every batch. Where the boxes are few
 * (2048^2: 1,024 boxes, a warp a multiprocessor) that latency is the
 * kernel's time: a batch at a time ahead took the maps 0.218 ms, four
 * 0.202 (eight: 0.204, and 217 registers slow 8192^2). EXACT, where a
 * row's lane pixels are whole batches (m % kBatch == 0: boxes of 64, 128,
 * ...), drops the per-pixel bounds test. */
constexpr int kBatch = 16;
constexpr int kDepth = 4;

template <bool EXACT>
__device__ __forceinline__ void
load_batch (const float *row, int64_t x, int64_t m, int64_t j, float (&v)[kBatch])
{
#pragma unroll
  for (int k = 0; k < kBatch; k++)
    v[k] = EXACT || j * kBatch + k < m ? __ldg (row + x + 4 * k) : 0.0f;
}

template <bool EXACT>
__device__ __forceinline__ void
add_batch (LaneSums &a, const float (&v)[kBatch], int64_t m, int64_t j, float lcut, float hcut)
{
#pragma unroll
  for (int k = 0; k < kBatch; k++)
    if (EXACT || j * kBatch + k < m)
      lane_add (a, v[k], lcut, hcut);
}

/* The batches of a lane in order: row ly, batch lj of the row. */
struct BatchWalk {
  int64_t ly, lj, nbatch;

  __device__ __forceinline__ void
  step ()
  {
    if (++lj == nbatch)
      {
        lj = 0;
        ly++;
      }
  }
};

template <bool EXACT>
__device__ __forceinline__ void
lane_pass (const float *base, int64_t nx, int64_t h, int64_t m, int lane, float lcut,
           float hcut, LaneSums &mine)
{
  const int64_t nbatch = (m + kBatch - 1) / kBatch;
  BatchWalk walk = { 0, 0, nbatch };

  while (walk.ly < h)
    {
      float v[kDepth][kBatch];
      int64_t lj[kDepth];
#pragma unroll
      for (int d = 0; d < kDepth; d++)
        {
          lj[d] = walk.ly < h ? walk.lj : -1;
          if (walk.ly < h)
            load_batch<EXACT> (base + walk.ly * nx, lane + 4 * kBatch * walk.lj, m, walk.lj, v[d]);
          walk.step ();
        }
#pragma unroll
      for (int d = 0; d < kDepth; d++)
        if (lj[d] >= 0)
          add_batch<EXACT> (mine, v[d], m, lj[d], lcut, hcut);
    }
}

__device__ void
box_pass (const float *__restrict__ image, int64_t nx, int64_t x0, int64_t y0, int64_t w,
          int64_t h, int lane, float lcut, float hcut, LaneSums &mine, LaneSums &tail)
{
  const int64_t w4 = w / 4 * 4, m = w4 / 4;  /* each lane's pixels in a row */
  const float *base = image + y0 * nx + x0;

  mine = LaneSums { 0.0, 0.0, 0 };
  tail = LaneSums { 0.0, 0.0, 0 };
  if (m > 0)
    {
      if (m % kBatch == 0)
        lane_pass<true> (base, nx, h, m, lane, lcut, hcut, mine);
      else
        lane_pass<false> (base, nx, h, m, lane, lcut, hcut, mine);
    }
  if (lane == 0 && w4 < w)
    for (int64_t y = 0; y < h; y++)
      for (int64_t x = w4; x < w; x++)
        lane_add (tail, __ldg (base + y * nx + x), lcut, hcut);
}

/* The four lanes' totals as the CPU adds them (every lane of the box gets
 * them). The box's four threads are lanes 4k .. 4k + 3 of the warp. */
__device__ __forceinline__ int64_t
box_total (const LaneSums &mine, const LaneSums &tail, double *sum, double *sum2)
{
  const unsigned full = 0xffffffffu;
  const int base = (threadIdx.x & 31) & ~3;
  double s[4], q[4];
  int64_t n = 0;

  for (int l = 0; l < 4; l++)
    {
      s[l] = __shfl_sync (full, mine.s, base + l);
      q[l] = __shfl_sync (full, mine.q, base + l);
      n += __shfl_sync (full, (long long) mine.n, base + l);
    }
  double ts = __shfl_sync (full, tail.s, base), tq = __shfl_sync (full, tail.q, base);
  n += __shfl_sync (full, (long long) tail.n, base);
  *sum = ts + ((s[0] + s[2]) + (s[1] + s[3]));
  *sum2 = tq + ((q[0] + q[2]) + (q[1] + q[3]));
  return n;
}

/* Threads 4 * box + lane; boxes in raster order. Writes each box's
 * histogram geometry, nlevels 0 for a box under half usable. */
__global__ void __launch_bounds__ (kSumThreads)
boxSumsKernel (const float *__restrict__ image, int64_t nx, int64_t ny, int box, int64_t nbx,
               int64_t nb, float *__restrict__ qzero_out, float *__restrict__ qscale_out,
               float *__restrict__ mean_out, int32_t *__restrict__ nlevels_out)
{
  sky_grid_wait ();
  const int64_t t = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
  const int64_t b = t / 4;
  const int lane = (int) (t & 3);
  /* Whole warps stay in the shuffles: a box past the end works on box 0's
   * pixels and writes nothing. */
  const int64_t bb = b < nb ? b : 0;
  const int64_t by = bb / nbx, bx = bb - by * nbx;
  const int64_t x0 = bx * box, y0 = by * box;
  const int64_t w = x0 + box <= nx ? box : nx - x0;
  const int64_t h = y0 + box <= ny ? box : ny - y0;
  LaneSums mine, tail;
  double sum, sum2, mean, var, sigma;
  int64_t n;

  /* SEP's usable pixel: p > -1e30, that is -1e30 < p <= +inf. */
  box_pass (image, nx, x0, y0, w, h, lane, nextafterf (-1e30f, 0.0f), INFINITY, mine, tail);
  n = box_total (mine, tail, &sum, &sum2);

  const int usable = !((float) n < (float) ((double) (w * h) * 0.5));
  float lcut = 0.0f, hcut = 0.0f;
  if (usable)
    {
      mean = sum / (double) n;
      var = sum2 / (double) n - mean * mean;
      sigma = var > 0.0 ? sqrt (var) : 0.0;
      lcut = (float) (mean - 2.0 * sigma);
      hcut = (float) (mean + 2.0 * sigma);
    }
  /* The second pass runs in every warp (the shuffles need all lanes); an
   * unusable box's result is not used. */
  box_pass (image, nx, x0, y0, w, h, lane, lcut, hcut, mine, tail);
  n = box_total (mine, tail, &sum, &sum2);
  if (b >= nb || lane != 0)
    return;
  if (!usable)
    {
      nlevels_out[b] = 0;
      return;
    }
  mean = sum / (double) n;
  var = sum2 / (double) n - mean * mean;
  sigma = var > 0.0 ? sqrt (var) : 0.0;

  /* As the CPU: step = sqrt (2 / pi) * 5 / 4 bins per pixel. */
  const double step = sqrt (2.0 / M_PI) * 5 / 4;
  const double levels = step * (double) n + 1;
  const int nlevels = levels > SKY_BKG_MAX_LEVELS ? SKY_BKG_MAX_LEVELS : sky_x86_d2i (levels);
  qscale_out[b] = (float) (sigma > 0.0 ? 2 * 5 * sigma / nlevels : 1.0);
  qzero_out[b] = (float) (mean - 5 * sigma);
  mean_out[b] = (float) mean;
  nlevels_out[b] = nlevels;
}

/* A block's sums of three int64 per thread, every thread getting the
 * totals; slots alternate between calls, so one barrier a call suffices. */
template <int WARPS>
__device__ __forceinline__ void
block_sum3 (long long (&v)[3], long long (*slots)[3][WARPS], int parity)
{
  const unsigned full = 0xffffffffu;

  for (int o = 16; o > 0; o >>= 1)
    for (int j = 0; j < 3; j++)
      v[j] += __shfl_down_sync (full, v[j], o);
  if ((threadIdx.x & 31) == 0)
    for (int j = 0; j < 3; j++)
      slots[parity][j][threadIdx.x / 32] = v[j];
  __syncthreads ();
  for (int j = 0; j < 3; j++)
    {
      v[j] = 0;
      for (int k = 0; k < WARPS; k++)
        v[j] += slots[parity][j][k];
    }
}

/* The prefix counts: pixels in bins below k (0 <= k <= nlevels). */
struct Prefix {
  const int32_t *p;
  int nlevels;

  __device__ __forceinline__ int64_t
  below (int k) const
  {
    return k <= 0 ? 0 : (k >= nlevels ? p[nlevels] : p[k]);
  }
};

/* sky-cpu-background.c's median_walk_end: the end of SExtractor's median
 * walk over bins lcut..hcut found by bisection. */
__device__ int64_t
median_walk_end (const Prefix &P, int lcut, int hcut, int64_t *lowsum, int64_t *highsum)
{
  const int64_t ends = P.below (lcut) + P.below (sky_wrap_add (hcut, 1));
  int64_t lo = 0, hi = sky_wrap_add (sky_wrap_add (hcut, -lcut), 1);

  while (lo < hi)
    {
      int64_t i = lo + (hi - lo + 1) / 2;
      int k = sky_wrap_add (lcut, (int) i);
      if (P.below (sky_wrap_add (k, -1)) + P.below (k) < ends)
        lo = i;
      else
        hi = i - 1;
    }
  *lowsum = P.below (sky_wrap_add (lcut, (int) lo)) - P.below (lcut);
  *highsum = P.below (sky_wrap_add (hcut, 1)) - P.below (sky_wrap_add (lcut, (int) lo));
  return lo;
}

/* The count of bin k (0 .. nlevels, the last the spare bin) from the
 * prefix counts; 0 outside. */
__device__ __forceinline__ int32_t
bin_count (const int32_t *prefix, int nlevels, int32_t spare, int k)
{
  if (k < 0 || k > nlevels)
    return 0;
  return k == nlevels ? spare : prefix[k + 1] - prefix[k];
}

/* A block a box: histogram, prefix counts, SExtractor's mode. THREADS
 * (a multiple of 32) changes only how the integer work is shared out, not
 * a result: counts and moments are exact, the scalar arithmetic is every
 * thread's own. Blocks of 128 or 256 threads are held to 40 registers, so
 * that 12 blocks of 128 fit a multiprocessor (48 registers allowed 10;
 * shared memory allows 13). */
template <int THREADS>
__global__ void __launch_bounds__ (THREADS, THREADS >= 128 ? 1536 / THREADS : 1)
boxModeKernel (const float *__restrict__ image, int64_t nx, int64_t ny, int box, int64_t nbx,
               const float *__restrict__ qzero_in, const float *__restrict__ qscale_in,
               const float *__restrict__ mean_in, const int32_t *__restrict__ nlevels_in,
               float *__restrict__ back_out, float *__restrict__ rms_out)
{
  /* The counts, then in place the prefix counts (the spare bin's count
   * kept aside): one array, so that more boxes share a multiprocessor. */
  __shared__ int32_t histo[SKY_BKG_MAX_LEVELS + 1];
  int32_t *const prefix = histo;
  __shared__ int32_t chunk_sums[THREADS / 32];
  __shared__ long long slots[2][3][(THREADS / 32)];

  sky_grid_wait ();
  const int64_t b = blockIdx.x;
  const int nlevels = nlevels_in[b];

  if (nlevels == 0)
    {
      if (threadIdx.x == 0)
        back_out[b] = rms_out[b] = -1e30f;
      return;
    }

  const int64_t by = b / nbx, bx = b - by * nbx;
  const int64_t x0 = bx * box, y0 = by * box;
  const int64_t w = x0 + box <= nx ? box : nx - x0;
  const int64_t h = y0 + box <= ny ? box : ny - y0;
  const float qzero = qzero_in[b], qscale = qscale_in[b];
  const float cste = (float) (0.499999 - (double) (qzero / qscale));
  const float top = (float) nlevels;

  for (int i = threadIdx.x; i <= nlevels; i += THREADS)
    histo[i] = 0;
  __syncthreads ();
  /* SEP's bin: (int) (p / qscale + cste) in float, truncated; outside
   * every bin (and NaN) to the spare bin nlevels. */
  {
    /* rows of up to THREADS pixels: several rows at a time; a thread's
     * pixels of kHistBatch rows loaded before any is binned, so that their
     * loads wait together (a count does not depend on the order) */
    const int64_t rows_at_once = w < THREADS ? THREADS / w : 1;
    const int64_t ty = threadIdx.x / (w < THREADS ? w : THREADS);
    const int64_t tx = threadIdx.x - ty * (w < THREADS ? w : THREADS);
    if (ty < rows_at_once)
      for (int64_t x = tx; x < w; x += THREADS)
        for (int64_t y = ty; y < h; y += rows_at_once * kHistBatch)
          {
            const float *pixel = image + (y0 + y) * nx + x0 + x;
            float v[kHistBatch];
#pragma unroll
            for (int j = 0; j < kHistBatch; j++)
              v[j] = y + j * rows_at_once < h ? __ldg (pixel + j * rows_at_once * nx) : 0.0f;
#pragma unroll
            for (int j = 0; j < kHistBatch; j++)
              if (y + j * rows_at_once < h)
                {
                  const float f = v[j] / qscale + cste;
                  const int bin = (f > -1.0f && f < top) ? sky_x86_f2i (f) : nlevels;
                  atomicAdd (&histo[bin], 1);
                }
          }
  }
  __syncthreads ();

  /* prefix[k] = pixels in bins 0 .. k - 1, k = 0 .. nlevels: each warp a
   * stretch of bins, 32 consecutive bins at a time (a bin a lane, so that
   * the lanes read 32 banks, where a stretch a thread put a warp's lanes
   * in one or two), scanned with shuffles; then the stretches' totals
   * added. Integer sums: the same counts in any order. */
  const int32_t spare = histo[nlevels];
  {
    constexpr int kWarps = THREADS / 32;
    const int lane = threadIdx.x & 31, warp = threadIdx.x / 32;
    const int stretch = (nlevels + 32 * kWarps - 1) / (32 * kWarps) * 32;
    const int k0 = warp * stretch, k1 = k0 + stretch < nlevels ? k0 + stretch : nlevels;
    int32_t run = 0;
    /* a stretch's rounds are independent but for run: unrolled, their
     * loads and shuffles overlap */
#pragma unroll 4
    for (int base = k0; base < k1; base += 32)
      {
        const int k = base + lane;
        const int32_t v = k < k1 ? histo[k] : 0;
        int32_t x = v;
        for (int o = 1; o < 32; o <<= 1)
          {
            const int32_t u = __shfl_up_sync (0xffffffffu, x, o);
            if (lane >= o)
              x += u;
          }
        if (k < k1)
          prefix[k] = run + x - v;   /* exclusive, within the stretch */
        run += __shfl_sync (0xffffffffu, x, 31);
      }
    if (lane == 0)
      chunk_sums[warp] = run;
    __syncthreads ();
    int32_t offset = 0, total = 0;
    for (int w = 0; w < kWarps; w++)
      {
        offset += w < warp ? chunk_sums[w] : 0;
        total += chunk_sums[w];
      }
    /* (every thread has its stretch's offset before any prefix count
     * changes: the last count sits at the end of the same array) */
    __syncthreads ();
    for (int k = k0 + lane; offset != 0 && k < k1; k += 32)
      prefix[k] += offset;
    if (threadIdx.x == 0)
      prefix[nlevels] = total;
    __syncthreads ();
  }

  /* sky_background_histogram_mode, operation for operation. */
  const Prefix P = { prefix, nlevels };
  const int topbin = nlevels - 1;
  int parity = 0;
  SkyBackgroundClip clip = sky_background_clip_start (topbin, (double) mean_in[b]);

  while (sky_background_clip_next_pass (&clip))
    {
      int64_t lowsum = 0, highsum = 0, sum = 0;
      int hi = clip.hcut;
      double med = 0.0;

      if (clip.hcut >= clip.lcut)
        {
          const int lcut = clip.lcut, hcut = clip.hcut;
          /* The median walk's end (median_walk_end) is the largest i in
           * 0 .. hcut - lcut + 1 with i = 0 or P(k - 1) + P(k) < ends, k =
           * lcut + i. P never decreases, so that test holds for the
           * first i and fails for the rest: the end is the number of i
           * for which it holds, counted by the block beside the moments
           * (no bisection's chain of steps). Where the cuts lie outside
           * the prefix counts (never, in practice: 0 <= lcut and hcut <
           * nlevels) the bisection runs as before. */
          const bool counted = lcut >= 0 && hcut < nlevels;
          long long v[3] = { 0, 0, 0 };  /* moment 1, moment 2, the walk's end */
          /* moments over the bins lcut..hcut that exist: exact integers
           * (a count times a bin: 32-bit operands, a 64-bit product).
           * Counted, the walk's test at k + 1 reads the same two prefix
           * counts as bin k's moments, and the bins are the same: one
           * pass over them. */
          if (counted)
            {
              const long long ends = (long long) prefix[lcut] + prefix[hcut + 1];
              for (int k = lcut + (int) threadIdx.x; k <= hcut; k += THREADS)
                {
                  const int32_t below = prefix[k], through = prefix[k + 1];
                  const long long ck = (long long) (through - below) * k;
                  v[0] += ck;
                  v[1] += ck * k;
                  v[2] += (long long) below + through < ends;
                }
            }
          else
            {
              const int k0 = lcut > 0 ? lcut : 0, k1 = hcut < topbin ? hcut : topbin;
              for (int k = k0 + (int) threadIdx.x; k <= k1; k += THREADS)
                {
                  const long long ck = (long long) (prefix[k + 1] - prefix[k]) * k;
                  v[0] += ck;
                  v[1] += ck * k;
                }
            }
          block_sum3<THREADS / 32> (v, slots, parity);
          parity ^= 1;
          int64_t end;
          if (counted)
            {
              end = v[2];
              lowsum = P.below (lcut + (int) end) - P.below (lcut);
              highsum = P.below (hcut + 1) - P.below (lcut + (int) end);
            }
          else
            end = median_walk_end (P, lcut, hcut, &lowsum, &highsum);
          hi = sky_wrap_add (sky_wrap_add (lcut, (int) end), -1);
          sum = P.below (sky_wrap_add (hcut, 1)) - P.below (lcut);
          clip.mea = (double) v[0];
          clip.sig = (double) v[1];
        }
      if (hi >= 0)
        {
          const int lo = clip.hcut >= clip.lcut ? sky_wrap_add (hi, 1) : clip.lcut;
          const int32_t hlo = bin_count (prefix, nlevels, spare, lo);
          const int32_t hhi = bin_count (prefix, nlevels, spare, hi);
          const int32_t peak = hlo > hhi ? hlo : hhi;
          med = sky_background_histogram_median (hi, lowsum, highsum, peak);
        }
      sky_background_clip_end_pass (&clip, med, sum);
    }

  if (threadIdx.x != 0)
    return;
  sky_background_clip_estimate (&clip, qzero, qscale, &back_out[b], &rms_out[b]);
}

} /* namespace */

/* The mode kernel wants shared memory rather than L1: its blocks are many
 * and short, so as many as fit should share a multiprocessor. */
int
sky_gpu_background_boxes_prepare (SkyGpu *gpu)
{
  (void) gpu;
  SKY_CUDA (cudaFuncSetAttribute (boxModeKernel<256>,
                                  cudaFuncAttributePreferredSharedMemoryCarveout,
                                  (int) cudaSharedmemCarveoutMaxShared));
  SKY_CUDA (cudaFuncSetAttribute (boxModeKernel<kModeThreads>,
                                  cudaFuncAttributePreferredSharedMemoryCarveout,
                                  (int) cudaSharedmemCarveoutMaxShared));
  SKY_CUDA (cudaFuncSetAttribute (boxModeKernel<32>,
                                  cudaFuncAttributePreferredSharedMemoryCarveout,
                                  (int) cudaSharedmemCarveoutMaxShared));
  return SKY_OK;
}

int
sky_gpu_background_boxes_enqueue (SkyGpu *gpu, const SkyGpuLocal *L, const SkyBkgGeometry *g,
                                  const float *d_image)
{
  const int64_t threads = g->nb * 4;
  const int64_t blocks = (threads + kSumThreads - 1) / kSumThreads;

  if (blocks > 0x7fffffff || g->nb > 0x7fffffff)
    return sky_fail (SKY_ERR_SIZE, "too many background boxes for the GPU (%lld)",
                     (long long) g->nb);
  SKY_LAUNCH (boxSumsKernel, (unsigned) blocks, kSumThreads, 0, gpu->stream, d_image, g->nx,
              g->ny, g->box, g->nbx, g->nb, L->d_qzero, L->d_qscale, L->d_boxmean,
              L->d_nlevels);
  /* 128 threads a box: on an H100 as fast as 256 where the boxes are few
   * (2048^2, 1,024 boxes: the maps 0.355 ms either way) and faster than a
   * warp a box where they are many (8192^2, 16,384 boxes: 1.62 against
   * 1.88 ms), where 256 threads are slower still (1.95 ms); all in one call
   * (bench/results/gpu-local-speed-h100-2026-11-24.md).
   * SKYSIFT_GPU_MODE_THREADS=32, 128 or 256 chooses (tests, comparisons). */
  const int mode_threads
      = gpu->switches.mode_threads == 32 || gpu->switches.mode_threads == 256
            ? gpu->switches.mode_threads
            : kModeThreads;
  const auto boxModeChosen = mode_threads == 32    ? boxModeKernel<32>
                             : mode_threads == 256 ? boxModeKernel<256>
                                                   : boxModeKernel<kModeThreads>;
  SKY_LAUNCH (boxModeChosen, (unsigned) g->nb, mode_threads, 0, gpu->stream, d_image, g->nx, g->ny,
              g->box, g->nbx, (const float *) L->d_qzero, (const float *) L->d_qscale,
              (const float *) L->d_boxmean, (const int32_t *) L->d_nlevels, L->d_raw_back,
              L->d_raw_rms);
  return SKY_OK;
}
