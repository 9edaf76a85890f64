/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Source measurement on the device: per label the pixel count, the sum and
 * the intensity-weighted centroid (sums in double), the peak (the first in
 * raster order on ties, as the CPU) and the bounding box.
 *
 * Pre-reduction before any global atomic: a thread owns 16 consecutive
 * pixels in raster order and reduces each run of source pixels among them
 * (a run lies in one row, so it is one source) to one record; the records
 * of a block (4096 pixels) meet in shared memory, where those of one label
 * are merged, so a source costs one set of atomics per block it touches
 * rather than one per pixel. Threads without a source pixel leave after
 * one 16-byte mask load. */
#include "sky-gpu-detect-private.h"

#include <limits.h>

namespace {

constexpr int kPixels = 16;               /* per thread, in raster order */
constexpr int kThreads = 256;
constexpr int kRecords = 512;             /* runs a block keeps in shared memory */

typedef SkyMeasureAcc Acc;

__host__ __device__ inline Acc
acc_layout (unsigned char *base, int64_t cap)
{
  return sky_measure_acc (base, cap);
}

/* The peak as one orderable word: the value's key above, and the pixel
 * index inverted below, so that the largest word is the largest value and,
 * among equal values, the first pixel in raster order. */
__device__ __forceinline__ unsigned long long
peak_word (float v, uint32_t p)
{
  return (unsigned long long) sky_float_key (v) << 32 | (0xffffffffu - p);
}

/* Clears the accumulators; only for a second measure with a grown buffer
 * (the label step's last kernel clears them otherwise). */
__global__ void __launch_bounds__ (kThreads)
measureInitKernel (const SkyGpuState *__restrict__ st, unsigned char *__restrict__ base,
                   int64_t cap)
{
  sky_grid_wait ();
  const int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
  const int64_t n = st->nsources;

  if (n > cap || i >= n)
    return;
  sky_measure_acc_clear (acc_layout (base, cap), i);
}

/* One run's or one record's partial measurements. */
struct Part {
  int label;
  unsigned npix;
  double sum, sx, sy;
  unsigned long long peak;
  int x0, x1, y0, y1;
};

__device__ __forceinline__ void
add_to_source (const Acc &a, const Part &r)
{
  const int i = r.label - 1;

  atomicAdd (&a.npix[i], (unsigned long long) r.npix);
  atomicAdd (&a.sum[i], r.sum);
  atomicAdd (&a.sx[i], r.sx);
  atomicAdd (&a.sy[i], r.sy);
  atomicMax (&a.peak[i], r.peak);
  atomicMin (&a.x0[i], r.x0);
  atomicMax (&a.x1[i], r.x1);
  atomicMin (&a.y0[i], r.y0);
  atomicMax (&a.y1[i], r.y1);
}

/* Index: the type of a pixel index, int up to 2^31 - 1 pixels, long long
 * beyond; the peak's tie-break packs the index in 32 bits (peak_word),
 * which holds up to 2^32 - 1 pixels. kLabelsTouch: after deblending, two
 * sources may share a run of the mask, so a run also ends where the label
 * changes; the lesson's labels are the mask's own components, where a run
 * never holds two labels, and its kernel skips that comparison (8% of the
 * kernel's time at 16384^2). */
template <typename Index, bool kLabelsTouch>
__global__ void __launch_bounds__ (kThreads)
measureKernel (const float *__restrict__ image, const uint8_t *__restrict__ mask,
               const int *__restrict__ labels, Index n, int nx,
               const SkyGpuState *__restrict__ st, unsigned char *__restrict__ base, int64_t cap)
{
  __shared__ int s_count;
  __shared__ int s_label[kRecords];
  __shared__ unsigned s_npix[kRecords];
  __shared__ double s_sum[kRecords], s_sx[kRecords], s_sy[kRecords];
  __shared__ unsigned long long s_peak[kRecords];
  __shared__ int s_x0[kRecords], s_x1[kRecords], s_y0[kRecords], s_y1[kRecords];

  sky_grid_wait ();
  if (st->nsources > cap)
    return;
  const Acc a = acc_layout (base, cap);
  const Index p0 = ((Index) blockIdx.x * kThreads + threadIdx.x) * kPixels;
  uint32_t bits = 0;

  if (threadIdx.x == 0)
    s_count = 0;
  if (p0 < n)
    {
      const uint4 m = *reinterpret_cast<const uint4 *> (mask + p0);
      const uint32_t w[4] = { m.x, m.y, m.z, m.w };
#pragma unroll
      for (int k = 0; k < kPixels; k++)
        bits |= ((w[k >> 2] >> (8 * (k & 3))) & 0xffu ? 1u : 0u) << k;
    }
  if (!__syncthreads_or (bits != 0))
    return;

  if (bits != 0)
    {
      int lab[kPixels];
      float val[kPixels];
      const int4 *l4 = reinterpret_cast<const int4 *> (labels + p0);
      const float4 *v4 = reinterpret_cast<const float4 *> (image + p0);
#pragma unroll
      for (int q = 0; q < 4; q++)
        {
          const int4 l = l4[q];
          const float4 v = v4[q];
          lab[4 * q] = l.x; lab[4 * q + 1] = l.y; lab[4 * q + 2] = l.z; lab[4 * q + 3] = l.w;
          val[4 * q] = v.x; val[4 * q + 1] = v.y; val[4 * q + 2] = v.z; val[4 * q + 3] = v.w;
        }
      int x = (int) (p0 % nx), y = (int) (p0 / nx);
      Part r = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 };
      bool open = false;
#pragma unroll
      for (int k = 0; k <= kPixels; k++)
        {
          /* A run ends at a non-source pixel, a new row, the last pixel, or
           * (after deblending, where touching sources share a run of the
           * mask) another label. */
          const bool fg = k < kPixels && (bits & (1u << k));
          bool ends = !fg || x == 0;
          if constexpr (kLabelsTouch)
            ends = ends || lab[k] != r.label;
          if (open && ends)
            {
              const int slot = atomicAdd (&s_count, 1);
              if (slot < kRecords)
                {
                  s_label[slot] = r.label;
                  s_npix[slot] = r.npix;
                  s_sum[slot] = r.sum;
                  s_sx[slot] = r.sx;
                  s_sy[slot] = r.sy;
                  s_peak[slot] = r.peak;
                  s_x0[slot] = r.x0;
                  s_x1[slot] = r.x1;
                  s_y0[slot] = r.y0;
                  s_y1[slot] = r.y1;
                }
              else
                add_to_source (a, r);
              open = false;
            }
          if (fg)
            {
              const double v = val[k];
              const unsigned long long pw = peak_word (val[k], (uint32_t) (p0 + k));
              if (!open)
                {
                  r.label = lab[k];
                  r.npix = 0;
                  r.sum = r.sx = r.sy = 0;
                  r.peak = 0;
                  r.x0 = x;
                  r.y0 = r.y1 = y;
                  open = true;
                }
              r.npix++;
              r.sum += v;
              r.sx += v * x;
              r.sy += v * y;
              r.peak = pw > r.peak ? pw : r.peak;
              r.x1 = x;
            }
          if (++x == nx)
            {
              x = 0;
              y++;
            }
        }
    }
  __syncthreads ();

  /* The first record of each label gathers the others and is the only one
   * that touches global memory. */
  const int nrec = min (s_count, kRecords);
  for (int r = threadIdx.x; r < nrec; r += kThreads)
    {
      const int label = s_label[r];
      bool first = true;
      for (int q = 0; q < r && first; q++)
        first = s_label[q] != label;
      if (!first)
        continue;
      Part t = { label, s_npix[r], s_sum[r], s_sx[r], s_sy[r], s_peak[r],
                 s_x0[r], s_x1[r], s_y0[r], s_y1[r] };
      for (int q = r + 1; q < nrec; q++)
        if (s_label[q] == label)
          {
            t.npix += s_npix[q];
            t.sum += s_sum[q];
            t.sx += s_sx[q];
            t.sy += s_sy[q];
            t.peak = s_peak[q] > t.peak ? s_peak[q] : t.peak;
            t.x0 = min (t.x0, s_x0[q]);
            t.x1 = max (t.x1, s_x1[q]);
            t.y0 = min (t.y0, s_y0[q]);
            t.y1 = max (t.y1, s_y1[q]);
          }
      add_to_source (a, t);
    }
}

/* The catalogue, packed with a stride of nsources so that one copy brings
 * it home; and whether the sources overflowed the buffer. */
__global__ void __launch_bounds__ (kThreads)
measureFinalizeKernel (SkyGpuState *__restrict__ st, unsigned char *__restrict__ base,
                       int64_t cap, int nx)
{
  sky_grid_wait ();
  const int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
  const int64_t n = st->nsources;

  if (i == 0)
    st->overflow = n > cap;
  if (n > cap || i >= n)
    return;
  const Acc a = acc_layout (base, cap);
  unsigned char *cat = base + cap * SKY_MEASURE_ACC_BYTES;
  double *x = reinterpret_cast<double *> (cat), *y = x + n, *sum = y + n;
  long long *npix = reinterpret_cast<long long *> (sum + n);
  float *peak = reinterpret_cast<float *> (npix + n);
  int *peak_x = reinterpret_cast<int *> (peak + n), *peak_y = peak_x + n;
  int *xmin = peak_y + n, *xmax = xmin + n, *ymin = xmax + n, *ymax = ymin + n;
  const unsigned long long pw = a.peak[i];
  const uint32_t pp = 0xffffffffu - (uint32_t) pw;

  x[i] = a.sx[i] / a.sum[i];
  y[i] = a.sy[i] / a.sum[i];
  sum[i] = a.sum[i];
  npix[i] = (long long) a.npix[i];
  peak[i] = sky_key_float ((uint32_t) (pw >> 32));
  peak_x[i] = (int) (pp % (uint32_t) nx);
  peak_y[i] = (int) (pp / (uint32_t) nx);
  xmin[i] = a.x0[i];
  xmax[i] = a.x1[i];
  ymin[i] = a.y0[i];
  ymax[i] = a.y1[i];
}

} /* namespace */

template <bool kLabelsTouch>
static int
measure_enqueue (SkyGpu *gpu, const float *image, int64_t nx, int64_t ny, int clear)
{
  cudaStream_t s = gpu->stream;
  const int64_t cap = gpu->meas_cap;
  const unsigned cap_blocks = (unsigned) ((cap + kThreads - 1) / kThreads);
  const unsigned blocks = (unsigned) ((nx * ny + kThreads * kPixels - 1) / (kThreads * kPixels));
  if (clear)
    SKY_LAUNCH (measureInitKernel, cap_blocks, kThreads, 0, s, gpu->d_state, gpu->d_meas, cap);
  if (nx * ny <= INT32_MAX)
    SKY_LAUNCH ((measureKernel<int, kLabelsTouch>), blocks, kThreads, 0, s, image, gpu->d_mask,
                gpu->d_labels, (int) (nx * ny), (int) nx, gpu->d_state, gpu->d_meas, cap);
  else
    SKY_LAUNCH ((measureKernel<long long, kLabelsTouch>), blocks, kThreads, 0, s, image,
                gpu->d_mask, gpu->d_labels, (long long) (nx * ny), (int) nx, gpu->d_state,
                gpu->d_meas, cap);
  SKY_LAUNCH (measureFinalizeKernel, cap_blocks, kThreads, 0, s, gpu->d_state, gpu->d_meas, cap,
              (int) nx);
  return SKY_OK;
}

int
sky_gpu_measure_enqueue (SkyGpu *gpu, int64_t nx, int64_t ny, int clear)
{
  return measure_enqueue<false> (gpu, gpu->d_image, nx, ny, clear);
}

int
sky_gpu_measure_image_enqueue (SkyGpu *gpu, const float *image, int64_t nx, int64_t ny,
                               int clear)
{
  return measure_enqueue<true> (gpu, image, nx, ny, clear);
}
