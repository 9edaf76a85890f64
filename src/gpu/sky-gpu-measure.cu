/* Source measurement on the device: per label the pixel count, the sum and
 * the intensity-weighted centroid (sums in double), the peak (the first in
 * raster order on ties, as the CPU) and the bounding box.
 *
 * Pre-reduction before any global atomic: a warp holds 32 consecutive
 * pixels of one row, where a source is a run, and reduces each run to its
 * first lane (a segmented shuffle reduction); the runs of a 32 x 32 block
 * then meet in shared memory, where the records of one label are merged,
 * so a source costs one set of atomics per block it touches rather than
 * one per pixel. Blocks without a source pixel leave after one mask load. */
#include "sky-gpu-private.h"

#include <limits.h>

namespace {

constexpr int kSide = 32;                 /* measure blocks are 32 x 32 pixels */
constexpr int kRecords = kSide * 16;      /* runs per warp are at most 16 */
constexpr int kThreads = 256;

/* The accumulators of capacity sources, then the packed catalogue. */
struct Acc {
  double *sum, *sx, *sy;
  unsigned long long *npix, *peak;
  int *x0, *x1, *y0, *y1;
};

__host__ __device__ inline Acc
acc_layout (unsigned char *base, int64_t cap)
{
  Acc a;
  a.sum = reinterpret_cast<double *> (base);
  a.sx = a.sum + cap;
  a.sy = a.sx + cap;
  a.npix = reinterpret_cast<unsigned long long *> (a.sy + cap);
  a.peak = a.npix + cap;
  a.x0 = reinterpret_cast<int *> (a.peak + cap);
  a.x1 = a.x0 + cap;
  a.y0 = a.x1 + cap;
  a.y1 = a.y0 + cap;
  return a;
}

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

/* The peak as one orderable word: the value's key above, and the pixel
 * index inverted below, so that the largest word is the largest value and,
 * among equal values, the first pixel in raster order. */
__device__ __forceinline__ unsigned long long
peak_word (float v, uint32_t p)
{
  return (unsigned long long) float_key (v) << 32 | (0xffffffffu - p);
}

__global__ void __launch_bounds__ (kThreads)
measureInitKernel (SkyGpuState *__restrict__ st, unsigned char *__restrict__ base, int64_t cap)
{
  const int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
  const int64_t n = st->nsources;

  if (i == 0)
    st->overflow = n > cap;
  if (n > cap || i >= n)
    return;
  Acc a = acc_layout (base, cap);
  a.sum[i] = a.sx[i] = a.sy[i] = 0;
  a.npix[i] = 0;
  a.peak[i] = 0;
  a.x0[i] = a.y0[i] = INT_MAX;
  a.x1[i] = a.y1[i] = -1;
}

__global__ void __launch_bounds__ (kSide * kSide)
measureKernel (const float *__restrict__ image, const uint8_t *__restrict__ mask,
               const int *__restrict__ labels, int nx, int ny,
               const SkyGpuState *__restrict__ st, unsigned char *__restrict__ base, int64_t cap)
{
  __shared__ int s_count;
  __shared__ int s_label[kRecords];
  __shared__ unsigned s_npix[kRecords];
  __shared__ double s_sum[kRecords], s_sx[kRecords], s_sy[kRecords];
  __shared__ unsigned long long s_peak[kRecords];
  __shared__ int s_x0[kRecords], s_x1[kRecords], s_y0[kRecords], s_y1[kRecords];

  if (st->nsources > cap)
    return;
  const int lane = threadIdx.x;
  const int x = blockIdx.x * kSide + lane, y = blockIdx.y * kSide + threadIdx.y;
  const bool inside = x < nx && y < ny;
  const int p = inside ? y * nx + x : 0;
  const bool fg = inside && mask[p];

  if (threadIdx.x == 0 && threadIdx.y == 0)
    s_count = 0;
  if (!__syncthreads_or (fg))
    return;

  if (__ballot_sync (0xffffffffu, fg) != 0)
    {
      const int label = fg ? labels[p] : 0;
      const float value = fg ? image[p] : 0.0f;
      const double v = value;
      const int prev = __shfl_up_sync (0xffffffffu, label, 1);
      const bool head = fg && (lane == 0 || prev != label);
      const uint32_t boundary = __ballot_sync (0xffffffffu, !fg || head);
      const uint32_t after = boundary & ~((2u << lane) - 1u);
      const int end = after ? __ffs (after) - 2 : 31;

      unsigned npix = fg;
      double sum = fg ? v : 0.0, sx = fg ? v * x : 0.0, sy = fg ? v * y : 0.0;
      unsigned long long peak = fg ? peak_word (value, (uint32_t) p) : 0ull;
      int x0 = fg ? x : INT_MAX, x1 = fg ? x : -1, y0 = fg ? y : INT_MAX, y1 = fg ? y : -1;

      /* After the step of offset o, lane i holds lanes i .. min (i + 2o - 1,
       * end): the head ends with its whole run. */
#pragma unroll
      for (int o = 1; o < 32; o <<= 1)
        {
          const unsigned n_o = __shfl_down_sync (0xffffffffu, npix, o);
          const double sum_o = __shfl_down_sync (0xffffffffu, sum, o);
          const double sx_o = __shfl_down_sync (0xffffffffu, sx, o);
          const double sy_o = __shfl_down_sync (0xffffffffu, sy, o);
          const unsigned long long peak_o = __shfl_down_sync (0xffffffffu, peak, o);
          const int x1_o = __shfl_down_sync (0xffffffffu, x1, o);
          const int y0_o = __shfl_down_sync (0xffffffffu, y0, o);
          const int y1_o = __shfl_down_sync (0xffffffffu, y1, o);
          if (lane + o <= end)
            {
              npix += n_o;
              sum += sum_o;
              sx += sx_o;
              sy += sy_o;
              peak = peak_o > peak ? peak_o : peak;
              x1 = max (x1, x1_o);
              y0 = min (y0, y0_o);
              y1 = max (y1, y1_o);
            }
        }
      if (head)
        {
          /* A run lies in one row: its xmin is the head's own x. */
          const int r = atomicAdd (&s_count, 1);
          s_label[r] = label;
          s_npix[r] = npix;
          s_sum[r] = sum;
          s_sx[r] = sx;
          s_sy[r] = sy;
          s_peak[r] = peak;
          s_x0[r] = x0;
          s_x1[r] = x1;
          s_y0[r] = y0;
          s_y1[r] = y1;
        }
    }
  __syncthreads ();

  /* The first record of each label gathers the others and is the only one
   * that touches global memory. */
  const int nrec = s_count, tid = threadIdx.y * kSide + threadIdx.x;
  Acc a = acc_layout (base, cap);
  for (int r = tid; r < nrec; r += kSide * kSide)
    {
      const int label = s_label[r];
      bool first = true;
      for (int q = 0; q < r && first; q++)
        first = s_label[q] != label;
      if (!first)
        continue;
      unsigned long long npix = s_npix[r], peak = s_peak[r];
      double sum = s_sum[r], sx = s_sx[r], sy = s_sy[r];
      int x0 = s_x0[r], x1 = s_x1[r], y0 = s_y0[r], y1 = s_y1[r];
      for (int q = r + 1; q < nrec; q++)
        if (s_label[q] == label)
          {
            npix += s_npix[q];
            sum += s_sum[q];
            sx += s_sx[q];
            sy += s_sy[q];
            peak = s_peak[q] > peak ? s_peak[q] : peak;
            x0 = min (x0, s_x0[q]);
            x1 = max (x1, s_x1[q]);
            y0 = min (y0, s_y0[q]);
            y1 = max (y1, s_y1[q]);
          }
      const int i = label - 1;
      atomicAdd (&a.npix[i], npix);
      atomicAdd (&a.sum[i], sum);
      atomicAdd (&a.sx[i], sx);
      atomicAdd (&a.sy[i], sy);
      atomicMax (&a.peak[i], peak);
      atomicMin (&a.x0[i], x0);
      atomicMax (&a.x1[i], x1);
      atomicMin (&a.y0[i], y0);
      atomicMax (&a.y1[i], y1);
    }
}

/* The catalogue, packed with a stride of nsources so that one copy brings
 * it home. */
__global__ void __launch_bounds__ (kThreads)
measureFinalizeKernel (const SkyGpuState *__restrict__ st, unsigned char *__restrict__ base,
                       int64_t cap, int nx)
{
  const int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
  const int64_t n = st->nsources;

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
  peak[i] = key_float ((uint32_t) (pw >> 32));
  peak_x[i] = (int) (pp % (uint32_t) nx);
  peak_y[i] = (int) (pp / (uint32_t) nx);
  xmin[i] = a.x0[i];
  xmax[i] = a.x1[i];
  ymin[i] = a.y0[i];
  ymax[i] = a.y1[i];
}

} /* namespace */

int
sky_gpu_measure_enqueue (SkyGpu *gpu, int64_t nx, int64_t ny)
{
  cudaStream_t s = gpu->stream;
  const int64_t cap = gpu->meas_cap;
  const unsigned cap_blocks = (unsigned) ((cap + kThreads - 1) / kThreads);
  const dim3 block (kSide, kSide), grid ((unsigned) ((nx + kSide - 1) / kSide),
                                         (unsigned) ((ny + kSide - 1) / kSide));

  SKY_LAUNCH (measureInitKernel, cap_blocks, kThreads, 0, s, gpu->d_state, gpu->d_meas, cap);
  SKY_LAUNCH (measureKernel, grid, block, 0, s, gpu->d_image, gpu->d_mask, gpu->d_labels, (int) nx,
              (int) ny, gpu->d_state, gpu->d_meas, cap);
  SKY_LAUNCH (measureFinalizeKernel, cap_blocks, kThreads, 0, s, gpu->d_state, gpu->d_meas, cap,
              (int) nx);
  return SKY_OK;
}
