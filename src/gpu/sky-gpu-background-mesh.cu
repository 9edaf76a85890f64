/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The mesh finished on the device as sky_background_mesh_finish does it on
 * the CPU, to the bit: unusable boxes filled with the mean of the usable
 * boxes nearest to them (sky-cpu-background-fill.c), the median filter
 * (the same quickselect, so that the same element is picked whatever the
 * values, NaN included), and the second derivatives of the natural cubic
 * splines down the columns. The mesh is small (a box a thread). */
#include "sky-gpu-background.cuh"

namespace {

constexpr int kThreads = 128;
constexpr int kLocalWindow = 25; /* windows up to 5 x 5 in each thread's own array */

__device__ __forceinline__ int
usable (float v)
{
  return (double) v > -1e30;
}

/* Each row of boxes: how many columns left and right of each box the
 * nearest usable box in the row lies (-1: none that side). A warp a row,
 * 32 columns at a time: the last usable column so far is a running
 * maximum (a scan by shuffles), the next one from the right a running
 * minimum. */
__global__ void __launch_bounds__ (kThreads)
rowDistanceKernel (const float *__restrict__ back, int64_t nbx, int64_t nby,
                   int32_t *__restrict__ left, int32_t *__restrict__ right)
{
  sky_grid_wait ();
  const unsigned full = 0xffffffffu;
  const int64_t y = ((int64_t) blockIdx.x * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x & 31;

  if (y >= nby)
    return; /* the whole warp: y is the warp's */
  const float *row = back + y * nbx;
  int carry = -1;
  for (int64_t x0 = 0; x0 < nbx; x0 += 32)
    {
      const int64_t x = x0 + lane;
      int v = x < nbx && usable (row[x]) ? (int) x : -1;
      for (int o = 1; o < 32; o <<= 1)
        {
          const int u = __shfl_up_sync (full, v, o);
          if (lane >= o)
            v = u > v ? u : v;
        }
      v = carry > v ? carry : v;
      if (x < nbx)
        left[y * nbx + x] = v < 0 ? -1 : (int32_t) (x - v);
      carry = __shfl_sync (full, v, 31);
    }
  carry = INT32_MAX;
  for (int64_t x0 = (nbx - 1) / 32 * 32; x0 >= 0; x0 -= 32)
    {
      const int64_t x = x0 + lane;
      int v = x < nbx && usable (row[x]) ? (int) x : INT32_MAX;
      for (int o = 1; o < 32; o <<= 1)
        {
          const int u = __shfl_down_sync (full, v, o);
          if (lane + o < 32)
            v = u < v ? u : v;
        }
      v = carry < v ? carry : v;
      if (x < nbx)
        right[y * nbx + x] = v == INT32_MAX ? -1 : (int32_t) (v - x);
      carry = __shfl_sync (full, v, 0);
    }
}

/* sky_background_fill_bad: the least squared distance to a usable box by
 * rows of growing distance, then the usable boxes on that circle summed
 * row by row, left before right, as the CPU sums them. */
__global__ void __launch_bounds__ (kThreads)
fillKernel (const float *__restrict__ back, const float *__restrict__ rms, int64_t nbx,
            int64_t nby, const int32_t *__restrict__ left, const int32_t *__restrict__ right,
            float *__restrict__ back_out, float *__restrict__ rms_out)
{
  sky_grid_wait ();
  const int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;

  if (i >= nbx * nby)
    return;
  const int64_t py = i / nbx, px = i - py * nbx;
  back_out[i] = back[i];
  rms_out[i] = rms[i];
  if (usable (back[i]))
    return;

  int64_t r2 = -1;
  for (int64_t dy = 0; dy < nby && (r2 < 0 || dy * dy <= r2); dy++)
    for (int side = 0; side < (dy == 0 ? 1 : 2); side++)
      {
        const int64_t y = side == 0 ? py - dy : py + dy;
        if (y < 0 || y >= nby)
          continue;
        const int32_t l = left[y * nbx + px], r = right[y * nbx + px];
        const int64_t h = l < 0 ? r : (r < 0 ? l : (l < r ? l : r));
        if (h < 0)
          continue;
        if (r2 < 0 || dy * dy + h * h < r2)
          r2 = dy * dy + h * h;
      }
  if (r2 < 0)
    {
      /* No usable box in the whole mesh. */
      back_out[i] = 0.0f;
      rms_out[i] = 1.0f;
      return;
    }
  float val = 0.0f, sval = 0.0f;
  int64_t nmin = 0;
  for (int64_t dy = -sky_isqrt64 (r2); dy * dy <= r2; dy++)
    {
      const int64_t dx = sky_isqrt64 (r2 - dy * dy), y = py + dy;
      if (dx * dx != r2 - dy * dy || y < 0 || y >= nby)
        continue;
      for (int side = 0; side < (dx == 0 ? 1 : 2); side++)
        {
          const int64_t x = side == 0 ? px - dx : px + dx;
          if (x < 0 || x >= nbx || !usable (back[y * nbx + x]))
            continue;
          val += back[y * nbx + x];
          sval += rms[y * nbx + x];
          nmin++;
        }
    }
  back_out[i] = nmin ? val / (float) nmin : 0.0f;
  rms_out[i] = nmin ? sval / (float) nmin : 1.0f;
}

/* The median filter over filter x filter boxes, the window shrinking
 * symmetrically at the edges (filter_task in sky-cpu-background.c). */
__global__ void __launch_bounds__ (kThreads)
filterKernel (const float *__restrict__ back, const float *__restrict__ rms, int64_t nbx,
              int64_t nby, int filter, float *__restrict__ scratch, int64_t window,
              float *__restrict__ back_out, float *__restrict__ rms_out)
{
  sky_grid_wait ();
  const int64_t i = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
  float own[2 * kLocalWindow];

  if (i >= nbx * nby)
    return;
  const int64_t py = i / nbx, px = i - py * nbx, half = filter / 2;
  int64_t hx = half, hy = half, n = 0;
  if (hx > px) hx = px;
  if (hx > nbx - 1 - px) hx = nbx - 1 - px;
  if (hy > py) hy = py;
  if (hy > nby - 1 - py) hy = nby - 1 - py;
  const int64_t count = (2 * hx + 1) * (2 * hy + 1);
  float *bwin = count <= kLocalWindow ? own : scratch + i * 2 * window;
  float *swin = bwin + (count <= kLocalWindow ? kLocalWindow : window);

  for (int64_t y = py - hy; y <= py + hy; y++)
    for (int64_t x = px - hx; x <= px + hx; x++)
      {
        bwin[n] = back[y * nbx + x];
        swin[n++] = rms[y * nbx + x];
      }
  const float med = sky_select_kth (bwin, n, n / 2);
  if (fabs (med - back[i]) >= 0.0)
    {
      back_out[i] = med;
      rms_out[i] = sky_select_kth (swin, n, n / 2);
    }
  else
    {
      back_out[i] = back[i];
      rms_out[i] = rms[i];
    }
}

/* Second derivatives of the natural cubic spline down column x of a map
 * (spline_columns in sky-cpu-background.c); threads 0..nbx-1 do the
 * background, nbx..2nbx-1 the rms. The recurrence keeps its terms in
 * shared memory (element y of a thread at y * blockDim.x + thread) where
 * the columns are short enough (in_shared), else in u_all (t and u of
 * each map, 4 * nbx * nby floats). */
__global__ void __launch_bounds__ (kThreads)
columnSplineKernel (const float *__restrict__ back, const float *__restrict__ rms,
                    int64_t nbx, int64_t nby, float *__restrict__ dback,
                    float *__restrict__ drms, float *__restrict__ u_all, int in_shared)
{
  extern __shared__ float s_terms[];
  sky_grid_wait ();
  const int64_t t = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;

  if (t >= 2 * nbx)
    return;
  const int which = t >= nbx;
  const int64_t x = t - which * nbx;
  const float *map = which ? rms : back;
  float *dmap = which ? drms : dback;
  const int64_t stride = in_shared ? blockDim.x : 2 * nbx;
  float *tt = in_shared ? s_terms + threadIdx.x : u_all + t;
  float *u = in_shared ? s_terms + blockDim.x * nby + threadIdx.x : u_all + 2 * nbx * nby + t;

  dmap[x] = 0.0f;
  if (nby < 2)
    return;
  float tprev = 0.0f, uprev = 0.0f, mprev = map[x], mcur = map[nbx + x];
  tt[0] = 0.0f;
  u[0] = 0.0f;
#pragma unroll 4
  for (int64_t y = 1; y < nby - 1; y++)
    {
      const float mnext = map[(y + 1) * nbx + x];
      float t1 = -1.0f / (tprev + 4.0f);
      tt[y * stride] = t1;
      tprev = t1;
      t1 *= uprev - 6.0f * (mnext + mprev - 2.0f * mcur);
      u[y * stride] = t1;
      uprev = t1;
      mprev = mcur;
      mcur = mnext;
    }
  dmap[(nby - 1) * nbx + x] = 0.0f;
  float dnext = 0.0f;
  for (int64_t y = nby - 2; y >= 1; y--)
    {
      dnext = (float) ((tt[y * stride] * dnext + u[y * stride]) / 6.0);
      dmap[y * nbx + x] = dnext;
    }
}

unsigned
blocks_for (int64_t n)
{
  return (unsigned) ((n + kThreads - 1) / kThreads);
}

} /* namespace */

int
sky_gpu_background_mesh_enqueue (SkyGpu *gpu, const SkyGpuLocal *L, const SkyBkgGeometry *g)
{
  SKY_LAUNCH (rowDistanceKernel, blocks_for (32 * g->nby), kThreads, 0, gpu->stream,
              (const float *) L->d_raw_back, g->nbx, g->nby, L->d_left, L->d_right);
  SKY_LAUNCH (fillKernel, blocks_for (g->nb), kThreads, 0, gpu->stream,
              (const float *) L->d_raw_back, (const float *) L->d_raw_rms, g->nbx, g->nby,
              (const int32_t *) L->d_left, (const int32_t *) L->d_right, L->d_fill_back,
              L->d_fill_rms);
  SKY_LAUNCH (filterKernel, blocks_for (g->nb), kThreads, 0, gpu->stream,
              (const float *) L->d_fill_back, (const float *) L->d_fill_rms, g->nbx, g->nby,
              g->filter, L->d_filter_scratch, L->filter_window, L->d_back, L->d_rmsm);
  /* 32 threads a block: 8 bytes a row of boxes each in 48 KiB of shared
   * memory holds columns of up to 192 boxes. */
  const int spline_threads = 32;
  const size_t spline_smem = (size_t) (2 * g->nby * spline_threads) * sizeof (float);
  const int in_shared = spline_smem <= 48 * 1024;
  SKY_LAUNCH (columnSplineKernel,
              (unsigned) ((2 * g->nbx + spline_threads - 1) / spline_threads), spline_threads,
              in_shared ? spline_smem : 0, gpu->stream, (const float *) L->d_back,
              (const float *) L->d_rmsm, g->nbx, g->nby, L->d_dback, L->d_drms, L->d_col_u,
              in_shared);
  return SKY_OK;
}

/* Floats of the largest median window on this mesh: the window never
 * passes the mesh's size, and small ones live in each thread's registers. */
int64_t
sky_gpu_background_filter_window (const SkyBkgGeometry *g)
{
  const int64_t wx = g->filter < g->nbx ? g->filter : g->nbx;
  const int64_t wy = g->filter < g->nby ? g->filter : g->nby;
  return wx * wy <= kLocalWindow ? 0 : wx * wy;
}
