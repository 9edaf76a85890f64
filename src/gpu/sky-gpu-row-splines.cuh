/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-gpu-row-splines.cuh: the background and rms of one pixel from its
 * row's spline (the nodes and column weights that sky-gpu-background-maps.cu
 * makes), as row_eval in sky-cpu-background-spline.c makes them. The full
 * maps' kernel and the detection's readers call the same function in files
 * built with the same flags (-fmad=false), so a value made where it is read
 * has the bits of the map's. C++ (nvcc) only. */
#ifndef SKY_GPU_ROW_SPLINES_CUH
#define SKY_GPU_ROW_SPLINES_CUH

#include "sky-gpu-private.h"

/* Each pixel row's nodes (back value, back derivative, rms value, rms
 * derivative, nbx floats each) and each column's interval and weights. */
typedef struct SkyGpuRowSplines {
  const float *nodes;
  const int32_t *kcol;
  const float *dx, *cdx, *ax, *bx;
  int64_t nbx;
} SkyGpuRowSplines;

/* One map's value in interval k of a row: value and deriv are that map's
 * nbx nodes and derivatives of the row. */
static __device__ __forceinline__ float
sky_gpu_row_spline_eval (const float *value, const float *deriv, int64_t k, float dx, float cdx,
                         float ax, float bx)
{
  return cdx * (value[k] + ax * deriv[k]) + dx * (value[k + 1] + bx * deriv[k + 1]);
}

/* The background (which 0) or rms (which 1) at pixel (x, y). */
static __device__ __forceinline__ float
sky_gpu_row_spline_at (const SkyGpuRowSplines &s, int64_t x, int64_t y, int which)
{
  const float *row = s.nodes + 4 * s.nbx * y + 2 * s.nbx * which;

  if (s.nbx < 2)
    return row[0];
  return sky_gpu_row_spline_eval (row, row + s.nbx, s.kcol[x], s.dx[x], s.cdx[x], s.ax[x],
                                  s.bx[x]);
}

/* sky_gpu_local_maps for the detection: the residual and snr maps written,
 * the background and rms left to *splines (their full maps not written:
 * half the bytes). The splines stay valid until the context's next maps. */
int sky_gpu_local_maps_splines (SkyGpu *gpu, const float *d_image, int64_t nx, int64_t ny,
                                const SkyParams *params, SkyGpuLocalMaps *out,
                                SkyGpuRowSplines *splines);

#endif /* SKY_GPU_ROW_SPLINES_CUH */
