/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The local method's measures on the device, as sky-cpu-local.c and
 * sky-cpu-measure-local.c make them: the common measures (sky-gpu-measure.cu)
 * on the residual, image - background; then, a block per source, the maps
 * at the peak, sum_err, the flags, the core's area (a breadth-first walk
 * from the peak) and SExtractor's windowed centroid, each in the CPU's
 * order of operations (this file is built without FMA contraction) but for
 * the sums the block adds across its threads, so the doubles differ from
 * the CPU's only by the last bits of exp (the device's and the C
 * library's) and of sums added in another order, which docs/contract.md
 * allows. */
#include "sky-gpu-detect-private.h"

#include <math.h>

namespace {

constexpr int kThreads = 256;
constexpr int kSourceThreads = 256;   /* a block a source, unless switched */
constexpr int kWindowBatch = 4;       /* window pixels a thread loads before it adds them */
constexpr int kWindowIterations = 16;
constexpr double kCoreLevel = 0.7;
constexpr int kColumns = 512;   /* the window's columns and rows whose weights are kept */

typedef unsigned long long u64;

__global__ void __launch_bounds__ (kThreads)
residualKernel (const float *__restrict__ image, const float *__restrict__ background, int64_t n,
                float *__restrict__ residual)
{
  sky_grid_wait ();
  for (int64_t i = (int64_t) blockIdx.x * kThreads + threadIdx.x; i < n;
       i += (int64_t) gridDim.x * kThreads)
    residual[i] = image[i] - background[i];
}

/* The packed catalogue of sky-gpu-measure.cu, stride n. */
struct Packed {
  const long long *npix;
  const float *peak;
  const int *peak_x, *peak_y, *xmin, *xmax, *ymin, *ymax;
};

__device__ __forceinline__ Packed
packed (const unsigned char *cat, int64_t n)
{
  Packed p;
  const double *x = reinterpret_cast<const double *> (cat), *y = x + n, *sum = y + n;
  p.npix = reinterpret_cast<const long long *> (sum + n);
  p.peak = reinterpret_cast<const float *> (p.npix + n);
  p.peak_x = reinterpret_cast<const int *> (p.peak + n);
  p.peak_y = p.peak_x + n;
  p.xmin = p.peak_y + n;
  p.xmax = p.xmin + n;
  p.ymin = p.xmax + n;
  p.ymax = p.ymin + n;
  return p;
}

/* Each source's pixel count, for the offsets of its walk's queue. */
__global__ void __launch_bounds__ (kThreads)
sourceNeedKernel (const SkyGpuState *__restrict__ st, const unsigned char *__restrict__ cat,
                  int64_t cap, u64 *__restrict__ need, u64 *__restrict__ count)
{
  sky_grid_wait ();
  const int64_t n = __ldcg (&st->nsources);
  const int64_t tid = (int64_t) blockIdx.x * kThreads + threadIdx.x;

  if (tid == 0)
    *count = n > cap ? 0 : (u64) n;
  if (n > cap)
    return;
  const Packed p = packed (cat, n);
  for (int64_t k = tid; k < n; k += (int64_t) gridDim.x * kThreads)
    need[k] = (u64) p.npix[k];
}

/* b = q w + r for a pixel's offset b >= 0 in rows of w: in 32 bits where
 * both fit (a 64-bit division costs several times a 32-bit one, and the
 * queue's walk divides once a pixel; the box's and the window's loops
 * step instead, BoxWalk). */
__device__ __forceinline__ void
split_offset (int64_t b, int64_t w, int64_t *q, int64_t *r)
{
  if ((uint64_t) b <= 0xffffffffu && (uint64_t) w <= 0xffffffffu)
    *q = (int64_t) ((uint32_t) b / (uint32_t) w);
  else
    *q = b / w;
  *r = b - *q * w;
}

/* A thread's walk over a box w pixels wide: pixels b = y w + x, THREADS
 * apart, from b = threadIdx.x. The step is split into rows and columns
 * once, instead of a division of each pixel's offset. */
template <int THREADS>
struct BoxWalk {
  int64_t w, step_rows, step_cols;

  __device__ explicit BoxWalk (int64_t width)
      : w (width), step_rows (THREADS / width), step_cols (THREADS % width)
  {
  }
  __device__ void start (int64_t &x, int64_t &y) const
  {
    x = threadIdx.x % w;
    y = threadIdx.x / w;
  }
  __device__ void advance (int64_t &x, int64_t &y) const
  {
    x += step_cols;
    y += step_rows;
    if (x >= w)
      {
        x -= w;
        y++;
      }
  }
};

__device__ __forceinline__ bool
is_blank (const float *pixels, int64_t nx, int64_t ny, int64_t x, int64_t y)
{
  return x >= 0 && y >= 0 && x < nx && y < ny && isnan (pixels[y * nx + x]);
}

/* Sums of three doubles over the block (any order: docs/contract.md lets
 * the sums of sum_err and of the windowed centroid differ in their last
 * bits), returned to every thread. */
struct Sums {
  double a, b, c;
};

template <int THREADS>
__device__ Sums
block_sums (Sums v, double (*sh)[3])
{
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (int o = 16; o > 0; o >>= 1)
    {
      v.a += __shfl_down_sync (0xffffffffu, v.a, o);
      v.b += __shfl_down_sync (0xffffffffu, v.b, o);
      v.c += __shfl_down_sync (0xffffffffu, v.c, o);
    }
  if (lane == 0)
    {
      sh[warp][0] = v.a;
      sh[warp][1] = v.b;
      sh[warp][2] = v.c;
    }
  __syncthreads ();
  Sums r = { 0, 0, 0 };
  for (int w = 0; w < THREADS / 32; w++)
    {
      r.a += sh[w][0];
      r.b += sh[w][1];
      r.c += sh[w][2];
    }
  __syncthreads ();
  return r;
}

/* Marks pixel i in the byte map seen; true where this call set it. */
__device__ __forceinline__ bool
claim (uint8_t *seen, int64_t i)
{
  unsigned int *word = reinterpret_cast<unsigned int *> (seen + (i & ~(int64_t) 3));
  const unsigned int bit = 1u << (8 * (i & 3));
  return (atomicOr (word, bit) & bit) == 0;
}

__device__ __forceinline__ void
unclaim (uint8_t *seen, int64_t i)
{
  unsigned int *word = reinterpret_cast<unsigned int *> (seen + (i & ~(int64_t) 3));
  atomicAnd (word, ~(0xffu << (8 * (i & 3))));
}

/* The pixels of source k above kCoreLevel of its peak that connect to the
 * peak (4-connected), found breadth first by the block, a level of the
 * walk at a time; seen is cleared after, as the CPU clears its own. Only
 * the count reaches the catalogue, so the walk's order does not matter. */
template <int THREADS>
__device__ int64_t
core_area (const float *residual, const int32_t *labels, int64_t nx, int64_t ny, int32_t label,
           int64_t px, int64_t py, float peak, int64_t *queue, uint8_t *seen, int64_t *sh_tail)
{
  const float level = (float) (kCoreLevel * peak);
  const int dx[4] = { 1, -1, 0, 0 }, dy[4] = { 0, 0, 1, -1 };
  int64_t head = 0, tail = 1;

  if (threadIdx.x == 0)
    {
      queue[0] = py * nx + px;
      claim (seen, py * nx + px);
      *sh_tail = 1;
    }
  __syncthreads ();
  while (head < tail)
    {
      for (int64_t q = head + threadIdx.x; q < tail; q += THREADS)
        {
          int64_t bx, by;
          split_offset (queue[q], nx, &by, &bx);
          for (int d = 0; d < 4; d++)
            {
              const int64_t x = bx + dx[d], y = by + dy[d];
              if (x < 0 || y < 0 || x >= nx || y >= ny)
                continue;
              const int64_t i = y * nx + x;
              if (__ldcg (labels + i) != label || !(residual[i] > level) || __ldcg (seen + i)
                  || !claim (seen, i))
                continue;
              queue[atomicAdd (reinterpret_cast<unsigned long long *> (sh_tail), 1ull)] = i;
            }
        }
      __syncthreads ();
      head = tail;
      tail = *sh_tail;
      __syncthreads ();
    }
  for (int64_t q = threadIdx.x; q < tail; q += THREADS)
    unclaim (seen, queue[q]);
  __syncthreads ();
  return tail;
}

/* The same count where the source's box fits kCoreWords words of bits a
 * row padded to 32 pixels: which of its pixels may join (the source's
 * label, above the level) as a bitmap in shared memory, built a word at a
 * time by a warp's ballot, and the core grown from the peak a step at a
 * time over the whole box, each step reading one bitmap and writing the
 * other, until a step adds nothing. A step costs a few shared-memory words
 * a thread where the queue's walk waits on global memory; both take as
 * many steps as the core is wide. */
constexpr int kCoreWords = 2048;

template <int WORDS>
__device__ __forceinline__ bool
core_fits_bits (int64_t bw, int64_t bh)
{
  return (bw + 31) / 32 * bh <= WORDS;
}

template <int THREADS, int WORDS>
__device__ int64_t
core_area_bits (const float *residual, const int32_t *labels, int64_t nx, int32_t label,
                int64_t bx0, int64_t by0, int64_t bw, int64_t bh, int64_t px, int64_t py,
                float peak, uint32_t (*bits)[WORDS], double (*sh)[3])
{
  const float level = (float) (kCoreLevel * peak);
  const int stride = (int) ((bw + 31) / 32), rows = (int) bh, words = stride * rows;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  uint32_t *const may = bits[0];
  uint32_t *grown = bits[1], *next = bits[2];

  for (int wi = warp; wi < words; wi += THREADS / 32)
    {
      const int row = wi / stride, x = (wi - row * stride) * 32 + lane;
      bool in = false;
      if (x < bw)
        {
          const int64_t i = (by0 + row) * nx + bx0 + x;
          in = __ldcg (labels + i) == label && residual[i] > level;
        }
      const uint32_t word = __ballot_sync (0xffffffffu, in);
      if (lane == 0)
        {
          may[wi] = word;
          grown[wi] = 0;
        }
    }
  __syncthreads ();
  if (threadIdx.x == 0)
    {
      /* the peak counts whatever its value, as the queue's first pixel */
      const int c = (int) (px - bx0);
      grown[(py - by0) * stride + c / 32] |= 1u << (c % 32);
    }
  __syncthreads ();
  for (;;)
    {
      int changed = 0;
      for (int wi = threadIdx.x; wi < words; wi += THREADS)
        {
          const int row = wi / stride, col = wi - row * stride;
          const uint32_t g = grown[wi];
          uint32_t near = g << 1 | g >> 1;
          if (col > 0)
            near |= grown[wi - 1] >> 31;
          if (col + 1 < stride)
            near |= grown[wi + 1] << 31;
          if (row > 0)
            near |= grown[wi - stride];
          if (row + 1 < rows)
            near |= grown[wi + stride];
          const uint32_t now = g | (near & may[wi]);
          next[wi] = now;
          changed |= now != g;
        }
      if (!__syncthreads_or (changed))
        break;
      uint32_t *const t = grown;
      grown = next;
      next = t;
    }
  int count = 0;
  for (int wi = threadIdx.x; wi < words; wi += THREADS)
    count += __popc (grown[wi]);
  return (int64_t) block_sums<THREADS> (Sums { (double) count, 0, 0 }, sh).a;
}

/* SExtractor's windowed centroid, as the CPU iterates it, by the block:
 * the weights of the window's columns and rows in shared memory where it
 * fits them (else made per pixel: the same values), the sums over the
 * window's pixels added across the block. */
template <int THREADS, int COLUMNS>
__device__ void
windowed_centroid (const float *residual, const int32_t *labels, int64_t nx, int64_t ny,
                   int32_t label, const Packed &p, int64_t k, double sigma, double *xw, double *yw,
                   double *wxs, double *wys, double (*sh)[3])
{
  double x = p.peak_x[k], y = p.peak_y[k];
  const double r = 4 * sigma, inv2s2 = 1 / (2 * sigma * sigma);
  bool settled = false;

  for (int it = 0; it < kWindowIterations; it++)
    {
      int64_t x0 = (int64_t) floor (x - r), x1 = (int64_t) ceil (x + r);
      int64_t y0 = (int64_t) floor (y - r), y1 = (int64_t) ceil (y + r);
      double dx, dy;

      x0 = x0 < 0 ? 0 : x0;
      x1 = x1 > nx - 1 ? nx - 1 : x1;
      y0 = y0 < 0 ? 0 : y0;
      y1 = y1 > ny - 1 ? ny - 1 : y1;
      const int64_t w = x1 - x0 + 1, h = y1 - y0 + 1;
      const bool cached = w <= COLUMNS && h <= COLUMNS;
      for (int64_t c = threadIdx.x; cached && c < w; c += THREADS)
        wxs[c] = exp (-(x0 + c - x) * (x0 + c - x) * inv2s2);
      for (int64_t c = threadIdx.x; cached && c < h; c += THREADS)
        wys[c] = exp (-(y0 + c - y) * (y0 + c - y) * inv2s2);
      __syncthreads ();
      Sums s = { 0, 0, 0 };
      /* A batch of pixels' loads in flight before the first is used: the
       * window of a large source is most of this kernel's time. */
      const BoxWalk<THREADS> walk (w);
      int64_t bx, by;
      walk.start (bx, by);
      while (by < h)
        {
          float v[kWindowBatch];
          int32_t li[kWindowBatch];
          int64_t cx = bx, cy = by;   /* the batch's pixels again, as they are added */
#pragma unroll
          for (int u = 0; u < kWindowBatch; u++)
            {
              v[u] = NAN;
              li[u] = 0;
              if (by < h)
                {
                  const int64_t i = (y0 + by) * nx + x0 + bx;
                  v[u] = residual[i];
                  li[u] = __ldcg (labels + i);
                }
              walk.advance (bx, by);
            }
#pragma unroll
          for (int u = 0; u < kWindowBatch; u++, walk.advance (cx, cy))
            {
              if (cy >= h || (li[u] != label && li[u] != 0) || isnan (v[u]))
                continue;
              const int64_t px = x0 + cx, py = y0 + cy;
              const double ddx = px - x, ddy = py - y;
              const double wx = cached ? wxs[px - x0] : exp (-(px - x) * (px - x) * inv2s2);
              const double wy = cached ? wys[py - y0] : exp (-(py - y) * (py - y) * inv2s2);
              const double wt = wx * wy * v[u];
              s.a += wt;
              s.b += wt * ddx;
              s.c += wt * ddy;
            }
        }
      s = block_sums<THREADS> (s, sh);
      if (!(s.a > 0))
        break;
      dx = 2 * s.b / s.a;
      dy = 2 * s.c / s.a;
      x += dx;
      y += dy;
      if (x < p.xmin[k] || x > p.xmax[k] || y < p.ymin[k] || y > p.ymax[k])
        break;
      if (dx * dx + dy * dy < 1e-8 || it == kWindowIterations - 1)
        {
          settled = true;
          break;
        }
    }
  if (threadIdx.x == 0)
    {
      *xw = settled ? x : p.peak_x[k];
      *yw = settled ? y : p.peak_y[k];
    }
}

/* A block a source: every source (boxes 0), or only those whose box is
 * at most kSmallBox a side (1), or only the larger ones (2). */
constexpr int kSmallBox = 10;
constexpr int kSmallThreads = 32;   /* a warp a small source */
constexpr int kSmallCoreWords = 16; /* a box of 10 rows: 10 words */
constexpr int kSmallColumns = 64;

/* At most 64 registers a thread (1024 / THREADS blocks a multiprocessor):
 * left to itself the compiler takes 80 to 120, and then half as many
 * blocks of 512 fit, so 2048^2's 201 sources go to blocks of 256 (the
 * measure step 0.159 -> 0.185 ms; with the bound 0.142, and 8192^2 0.55
 * against 0.60 ms bounding the blocks of 512 alone). */
template <int THREADS, int CORE_WORDS = kCoreWords, int COLUMNS = kColumns>
__global__ void __launch_bounds__ (THREADS, 1024 / THREADS)
measureLocalKernel (const SkyGpuState *__restrict__ st, const unsigned char *__restrict__ cat,
                    int64_t cap, SkyGpuDetectMaps m, const float *__restrict__ residual,
                    const int32_t *__restrict__ labels, int64_t nx, int64_t ny,
                    SkyGpuDetectParams lp, const uint8_t *__restrict__ deblended,
                    const u64 *__restrict__ offset, int32_t *__restrict__ scratch,
                    uint8_t *__restrict__ seen, unsigned char *__restrict__ out,
                    int queue_walk, int64_t above, int64_t most, int boxes)
{
  sky_grid_wait ();
  __shared__ double sh[THREADS / 32][3];
  __shared__ double wxs[COLUMNS], wys[COLUMNS];
  __shared__ unsigned int sh_flags;
  __shared__ int64_t sh_tail;
  __shared__ uint32_t core_bits[3][CORE_WORDS];
  const int64_t n = __ldcg (&st->nsources);

  /* the other block size's kernel measures this many sources */
  if (n > cap || n <= above || n > most)
    return;
  const Packed p = packed (cat, n);
  double *sum_err = reinterpret_cast<double *> (out), *peak_err = sum_err + n;
  double *x_win = peak_err + n, *y_win = x_win + n;
  float *bkg_out = reinterpret_cast<float *> (y_win + n), *rms_out = bkg_out + n;
  uint32_t *flags_out = reinterpret_cast<uint32_t *> (rms_out + n);

  for (int64_t k = blockIdx.x; k < n; k += gridDim.x)
    {
      const int32_t label = (int32_t) (k + 1);
      if (p.npix[k] <= 0)
        continue;  /* every label has pixels; this keeps a broken one in bounds */
      const int64_t bx0 = p.xmin[k], by0 = p.ymin[k], bw = p.xmax[k] - bx0 + 1;
      const int64_t bh = p.ymax[k] - by0 + 1;
      if (boxes != 0
          && (boxes == 1) != (bw <= kSmallBox && bh <= kSmallBox))
        continue;   /* the other kernel's source */
      double var = 0, sigma;
      uint32_t flags = 0;

      if (threadIdx.x == 0)
        {
          const float peak_rms = sky_gpu_rms_at (m, p.peak_x[k], p.peak_y[k], nx);
          bkg_out[k] = sky_gpu_background_at (m, p.peak_x[k], p.peak_y[k], nx);
          rms_out[k] = peak_rms;
          peak_err[k] = peak_rms;
          sh_flags = 0;
        }
      const BoxWalk<THREADS> walk (bw);
      int64_t bx, by;
      for (walk.start (bx, by); by < bh; walk.advance (bx, by))
        {
          const int64_t x = bx0 + bx, y = by0 + by;
          const int64_t i = y * nx + x;
          if (__ldcg (labels + i) != label)
            continue;
          const float rms = sky_gpu_rms_at (m, x, y, nx);
          uint32_t f = 0;
          if (isfinite (rms))
            var += (double) rms * rms;
          if (x == 0 || y == 0 || x == nx - 1 || y == ny - 1)
            f |= SKY_FLAG_EDGE;
          if (lp.has_blank
              && (is_blank (m.image, nx, ny, x - 1, y) || is_blank (m.image, nx, ny, x + 1, y)
                  || is_blank (m.image, nx, ny, x, y - 1) || is_blank (m.image, nx, ny, x, y + 1)))
            f |= SKY_FLAG_BLANK;
          if (f != 0)
            {
              const float snr = m.snr != NULL ? m.snr[i]
                                : rms > 0 ? (m.image[i] - sky_gpu_background_at (m, x, y, nx)) / rms
                                          : NAN;
              if (snr > lp.seed_sigma)
                f |= SKY_FLAG_TRUNCATED;
            }
          flags |= f;
        }
      __syncthreads ();
      if (flags != 0)
        atomicOr (&sh_flags, flags);
      const Sums total = block_sums<THREADS> (Sums { var, 0, 0 }, sh);
      if (threadIdx.x == 0)
        {
          flags = sh_flags;
          if (__ldcg (deblended + k + 1))
            flags |= SKY_FLAG_DEBLENDED;
          flags_out[k] = flags;
          sum_err[k] = sqrt (total.a);
        }
      /* The window's sigma from the core's area, as a Gaussian's. */
      int64_t *queue = reinterpret_cast<int64_t *> (scratch + 2 * offset[k]);
      const int64_t core
          = !queue_walk && core_fits_bits<CORE_WORDS> (bw, bh)
                ? core_area_bits<THREADS, CORE_WORDS> (residual, labels, nx, label, bx0, by0, bw,
                                                       bh, p.peak_x[k], p.peak_y[k], p.peak[k],
                                                       core_bits, sh)
                : core_area<THREADS> (residual, labels, nx, ny, label, p.peak_x[k], p.peak_y[k],
                                      p.peak[k], queue, seen, &sh_tail);
      sigma = sqrt (core / lp.core_denominator);
      sigma = sigma > 0.5 ? sigma : 0.5;
      windowed_centroid<THREADS, COLUMNS> (residual, labels, nx, ny, label, p, k, sigma,
                                           &x_win[k], &y_win[k], wxs, wys, sh);
      __syncthreads ();
    }
}

} /* namespace */

int
sky_gpu_measure_local_enqueue (const SkyGpuLocalStep *step)
{
  SkyGpu *gpu = step->gpu;
  SkyGpuDetect *L = gpu->detect;
  const int64_t cap = gpu->meas_cap;
  const unsigned char *cat = gpu->d_meas + cap * SKY_MEASURE_ACC_BYTES;
  const float *residual = step->maps->residual;
  int ret;

  if (residual == NULL)
    {
      if (step->maps->background == NULL)
        return sky_fail (SKY_ERR_ARGUMENT, "local measures: neither a residual nor a background");
      SKY_LAUNCH (residualKernel, sky_gpu_detect_grid (gpu, step->n, kThreads), kThreads, 0,
                  gpu->stream, step->maps->image, step->maps->background, step->n, L->d_residual);
      residual = L->d_residual;
    }
  if ((ret = sky_gpu_measure_image_enqueue (gpu, residual, step->nx, step->ny, 1)) != SKY_OK)
    return ret;
  SKY_LAUNCH (sourceNeedKernel, sky_gpu_detect_grid (gpu, cap, kThreads), kThreads, 0, gpu->stream,
              gpu->d_state, cat, cap, L->d_src_need, L->d_total + 3);
  if ((ret = sky_gpu_scan_enqueue (gpu, L->d_src_need, L->d_src_offset, cap, L->d_total + 3,
                                   L->d_total + 4)) != SKY_OK)
    return ret;
  /* A source's window is one block's work, and the largest source's is
   * the kernel's time where the sources are no more than the blocks of 512
   * threads the device holds at once: 512 threads a source there (an H100,
   * 2048^2, 201 sources: the step 0.229 -> 0.190 ms), 256 where they are
   * more (8192^2, 3,210 sources: 1.70 ms with 512 against 1.17 with 256;
   * 2MASS K, 721 x 720 with 23,213 sources: 3.09 against 1.50 ms). The
   * sources are counted on the device only, so both kernels are launched
   * and the one whose share the count is not returns at once.
   * SKYSIFT_GPU_MEASURE_THREADS=256, 512 or 1024 chooses (tests, tuning). */
  const unsigned grid = sky_gpu_detect_grid (gpu, cap, 1);
  const int64_t every = INT64_MAX;
  const int threads = gpu->switches.measure_threads;
  /* Where the sources are more than the blocks of 512 the device holds at
   * once, those whose box is at most kSmallBox a side take a warp each, on
   * a second stream beside the others' blocks of 256: such a block, with
   * 33 KB of shared memory, measures six sources a multiprocessor at a
   * time, and a small source's time is the latency of its passes, not
   * their work (2MASS K, 23,213 sources: 1.51 -> 0.43 ms; 8192^2, 3,210:
   * 0.78 -> 0.74 ms). Boxes up to 16 a side measured no better; a warp a
   * source of up to 32 a side slower (1.09 ms at 8192^2), and so where the
   * sources are few, the largest one's block is the step's time anyway.
   * SKYSIFT_GPU_MEASURE_SMALL=one, or a block size chosen, leaves them to
   * the others' blocks. */
  const int apart = gpu->switches.measure_small_own && threads == 0;
  const auto launch = [&] (auto kernel, unsigned blocks, int block, cudaStream_t stream,
                           int64_t above, int64_t most, int boxes) -> int {
    SKY_LAUNCH (kernel, blocks, block, 0, stream, gpu->d_state, cat, cap, *step->maps, residual,
                gpu->d_labels, step->nx, step->ny, *step->params, L->d_deblended,
                L->d_src_offset, L->d_scratch, L->d_seen, L->d_cat, gpu->switches.core_queue,
                above, most, boxes);
    return SKY_OK;
  };
  if (threads == 512)
    return launch (measureLocalKernel<512>, grid, 512, gpu->stream, -1, every, 0);
  if (threads == 1024)
    return launch (measureLocalKernel<1024>, grid, 1024, gpu->stream, -1, every, 0);
  if (threads == kSourceThreads)
    return launch (measureLocalKernel<kSourceThreads>, grid, kSourceThreads, gpu->stream, -1,
                   every, 0);
  const auto small = measureLocalKernel<kSmallThreads, kSmallCoreWords, kSmallColumns>;
  if (L->wide_measure_most == 0
      && ((ret = sky_gpu_resident_blocks (gpu, measureLocalKernel<512>, 512, 0,
                                          &L->wide_measure_most)) != SKY_OK
          || (ret = sky_gpu_resident_blocks (gpu, small, kSmallThreads, 0,
                                             &L->small_measure_blocks)) != SKY_OK))
    return ret;
  if (apart && (ret = sky_gpu_detect_fork (gpu)) != SKY_OK)
    return ret;
  if ((ret = launch (measureLocalKernel<512>, grid, 512, gpu->stream, -1, L->wide_measure_most,
                     0)) != SKY_OK
      || (ret = launch (measureLocalKernel<kSourceThreads>, grid, kSourceThreads, gpu->stream,
                        L->wide_measure_most, every, apart ? 2 : 0)) != SKY_OK)
    return ret;
  if (!apart)
    return SKY_OK;
  if ((ret = launch (small, L->small_measure_blocks, kSmallThreads, L->side, L->wide_measure_most,
                     every, 1)) != SKY_OK)
    return ret;
  return sky_gpu_detect_join (gpu);
}
