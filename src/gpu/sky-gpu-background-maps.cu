/* SPDX-License-Identifier: GPL-3.0-or-later */
/* From the finished mesh to the full maps on the device, as
 * sky-cpu-background-spline.c and sky-cpu-local.c make them, to the bit:
 * each column's interval and weights (the CPU accumulates the weight as a
 * float running sum from the interval's start, so each column here adds it
 * up the same way from there), each pixel row's nodes (the column splines
 * evaluated at the row, then the natural spline along the row through
 * them), and every pixel's background and rms, with image - background and
 * (image - background) / rms beside. */
#include "sky-gpu-background.cuh"

namespace {

constexpr int kThreads = 128;
constexpr int kPixelThreads = 256;
constexpr int kRowsPerThread = 8;

/* Column p's interval k (the last interval, nbx - 2 at most, that starts
 * at or before p) and its weights, as columns_init leaves them. */
__global__ void __launch_bounds__ (kThreads)
columnsKernel (const int64_t *__restrict__ start, int64_t nx, int64_t nbx, int box,
               int32_t *__restrict__ kcol, float *__restrict__ dx_out,
               float *__restrict__ cdx_out, float *__restrict__ ax_out,
               float *__restrict__ bx_out)
{
  sky_grid_wait ();
  const int64_t p = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;

  if (p >= nx)
    return;
  int64_t k = 0, hi = nbx - 1;
  while (hi - k > 1)
    {
      int64_t mid = (k + hi) / 2;
      if (start[mid] <= p)
        k = mid;
      else
        hi = mid;
    }
  const float xstep = (float) (1.0 / box);
  const float dx0 = (float) ((box + 1) % 2) * xstep / 2;
  float dx = k == 0 ? (xstep - 1) / 2 : dx0;
  for (int64_t q = start[k]; q < p; q++)
    dx += xstep;
  const float cdx = 1 - dx;
  kcol[p] = (int32_t) k;
  dx_out[p] = dx;
  cdx_out[p] = cdx;
  ax_out[p] = cdx * cdx - 1;
  bx_out[p] = dx * dx - 1;
}

/* Row y's nodes of one map (row_nodes in sky-cpu-background-spline.c):
 * threads 2y and 2y + 1 do the background and the rms. The recurrence
 * works in shared memory (element x of a thread's three arrays at
 * x * blockDim.x + thread) where the rows of boxes are short enough
 * (in_shared), else in u_all (3 * nbx floats a thread). */
__global__ void __launch_bounds__ (kThreads)
rowNodesKernel (const float *__restrict__ back, const float *__restrict__ dback,
                const float *__restrict__ rms, const float *__restrict__ drms, int64_t ny,
                int64_t nbx, int64_t nby, int box, float *__restrict__ nodes,
                float *__restrict__ u_all, int in_shared)
{
  extern __shared__ float s_row[];
  sky_grid_wait ();
  const int64_t t = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;

  if (t >= 2 * ny)
    return;
  const int64_t y = t / 2;
  const int which = (int) (t & 1);
  const float *values = which ? rms : back, *dvalues = which ? drms : dback;
  float *node_out = nodes + 4 * nbx * y + 2 * nbx * which, *dnode_out = node_out + nbx;

  if (nby < 2)
    {
      for (int64_t x = 0; x < nbx; x++)
        {
          node_out[x] = values[x];
          dnode_out[x] = dvalues[x];
        }
      return;
    }
  const int64_t stride = in_shared ? blockDim.x : 1;
  float *node = in_shared ? s_row + threadIdx.x : u_all + 3 * nbx * t;
  float *tt = node + nbx * stride, *u = tt + nbx * stride;
  const SkySplineRow r = sky_background_spline_row (y, box, nby);
  const float *blo = values + r.yl * nbx, *bhi = blo + nbx;
  const float *dblo = dvalues + r.yl * nbx, *dbhi = dblo + nbx;
#pragma unroll 4
  for (int64_t x = 0; x < nbx; x++)
    {
      const float v = r.lo * blo[x] + r.hi * bhi[x] + r.dlo * dblo[x] + r.dhi * dbhi[x];
      node[x * stride] = v;
      node_out[x] = v;
    }

  dnode_out[0] = 0.0f;
  if (nbx > 1)
    {
      float tprev = 0.0f, uprev = 0.0f;
      for (int64_t x = 1; x < nbx - 1; x++)
        {
          float t1 = -1.0f / (tprev + 4.0f);
          tt[x * stride] = t1;
          tprev = t1;
          t1 *= uprev - 6.0f * (node[(x + 1) * stride] + node[(x - 1) * stride]
                                - 2.0f * node[x * stride]);
          u[x * stride] = t1;
          uprev = t1;
        }
      dnode_out[nbx - 1] = 0.0f;
      float dnext = 0.0f;
      for (int64_t x = nbx - 2; x >= 1; x--)
        {
          dnext = (float) ((tt[x * stride] * dnext + u[x * stride]) / 6.0);
          dnode_out[x] = dnext;
        }
    }
}

/* Every pixel: background and rms from its row's nodes (row_eval), then
 * residual = image - background and snr = residual / rms, NaN where rms is
 * not positive (sky_snr_row). Columns across the grid's x, rows in steps.
 * FULL false writes only the residual and snr (the detection makes the
 * background and rms where it reads them, from the same nodes). */
template <bool FULL>
__global__ void __launch_bounds__ (kPixelThreads)
pixelsKernel (const float *__restrict__ image, int64_t nx, int64_t ny, int64_t nbx,
              const int32_t *__restrict__ kcol, const float *__restrict__ dxs,
              const float *__restrict__ cdxs, const float *__restrict__ axs,
              const float *__restrict__ bxs, const float *__restrict__ nodes,
              float *__restrict__ background, float *__restrict__ rms,
              float *__restrict__ residual, float *__restrict__ snr)
{
  sky_grid_wait ();
  const int64_t x = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;

  if (x >= nx)
    return;
  const int64_t k = nbx < 2 ? 0 : kcol[x];
  const float dx = nbx < 2 ? 0.0f : dxs[x], cdx = nbx < 2 ? 0.0f : cdxs[x];
  const float ax = nbx < 2 ? 0.0f : axs[x], bx = nbx < 2 ? 0.0f : bxs[x];
  const float nan = __int_as_float (0x7fc00000);

  for (int64_t y = blockIdx.y; y < ny; y += gridDim.y)
    {
      const float *row = nodes + 4 * nbx * y;
      float b, r;
      if (nbx < 2)
        {
          b = row[0];
          r = row[2 * nbx];
        }
      else
        {
          b = sky_gpu_row_spline_eval (row, row + nbx, k, dx, cdx, ax, bx);
          r = sky_gpu_row_spline_eval (row + 2 * nbx, row + 3 * nbx, k, dx, cdx, ax, bx);
        }
      const int64_t i = y * nx + x;
      const float res = __ldg (image + i) - b;
      if (FULL)
        {
          background[i] = b;
          rms[i] = r;
        }
      residual[i] = res;
      snr[i] = r > 0 ? res / r : nan;
    }
}

unsigned
blocks_for (int64_t n, int threads)
{
  return (unsigned) ((n + threads - 1) / threads);
}

} /* namespace */

/* columns_init's walk, integers only: the interval moves on half a box
 * past each inner node. */
void
sky_gpu_background_column_starts (int64_t nx, int box, int64_t nbx, int64_t *start)
{
  const int changepoint = box / 2;
  int64_t node = 0, xbox = 0, i = 0;

  for (int64_t k = 0; k <= nbx; k++)
    start[k] = 0;
  for (int64_t p = 0; p < nx; p++, i++)
    {
      if (i == changepoint && xbox > 0 && xbox < nbx - 1)
        start[++node] = p;
      if (i == box)
        {
          xbox++;
          i = 0;
        }
    }
  for (int64_t k = node + 1; k <= nbx; k++)
    start[k] = nx;
}

int
sky_gpu_background_maps_enqueue (SkyGpu *gpu, const SkyGpuLocal *L, const SkyBkgGeometry *g,
                                 const float *d_image, int full)
{
  const int64_t row_blocks = (g->ny + kRowsPerThread - 1) / kRowsPerThread;
  const dim3 grid (blocks_for (g->nx, kPixelThreads),
                   (unsigned) (row_blocks < 65535 ? row_blocks : 65535));

  if (g->nbx >= 2)
    SKY_LAUNCH (columnsKernel, blocks_for (g->nx, kThreads), kThreads, 0, gpu->stream,
                (const int64_t *) L->d_start, g->nx, g->nbx, g->box, L->d_kcol, L->d_dx,
                L->d_cdx, L->d_ax, L->d_bx);
  /* 32 threads a block: 12 bytes a box each in 48 KiB of shared memory
   * holds rows of up to 128 boxes. */
  const int node_threads = 32;
  const size_t node_smem = (size_t) (3 * g->nbx * node_threads) * sizeof (float);
  const int in_shared = node_smem <= 48 * 1024;
  SKY_LAUNCH (rowNodesKernel, blocks_for (2 * g->ny, node_threads), node_threads,
              in_shared ? node_smem : 0, gpu->stream, (const float *) L->d_back,
              (const float *) L->d_dback, (const float *) L->d_rmsm, (const float *) L->d_drms,
              g->ny, g->nbx, g->nby, g->box, L->d_nodes, L->d_row_u, in_shared);
  const auto pixelsKernelChosen = full ? pixelsKernel<true> : pixelsKernel<false>;
  SKY_LAUNCH (pixelsKernelChosen, grid, kPixelThreads, 0, gpu->stream, d_image, g->nx, g->ny,
              g->nbx, (const int32_t *) L->d_kcol, (const float *) L->d_dx,
              (const float *) L->d_cdx, (const float *) L->d_ax, (const float *) L->d_bx,
              (const float *) L->d_nodes, L->d_background, L->d_rms, L->d_residual, L->d_snr);
  return SKY_OK;
}
