/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-gpu-background.cuh: what the local method's map files share: the
 * context's buffers for the maps and each phase's launch; the arithmetic
 * that keeps each operation the CPU's is sky-background-math.h.
 *
 * Every file of the maps is compiled with -fmad=false: a multiply and an
 * add stay two roundings, as on the CPU (src/cpu is built with
 * -ffp-contract=off). Division and square root are IEEE (no fast math),
 * and denormals are kept, as on the CPU. */
#ifndef SKY_GPU_BACKGROUND_CUH
#define SKY_GPU_BACKGROUND_CUH

#include "sky-gpu-private.h"
#include "sky-background-math.h"
#include "sky-gpu-row-splines.cuh"

#include <math.h>

#define SKY_BKG_MAX_LEVELS 4096  /* histogram bins of a box at most (as the CPU) */

/* The maps' device memory, one allocation carved into these arrays, kept
 * while large enough. */
typedef struct SkyGpuLocal {
  void *d_arena;
  size_t arena_bytes;

  /* full-size maps, n floats each */
  float *d_background, *d_rms, *d_residual, *d_snr;

  /* the mesh, nb = nbx * nby boxes */
  float *d_qzero, *d_qscale, *d_boxmean;  /* each box's histogram geometry */
  int32_t *d_nlevels;                     /* 0: an unusable box */
  float *d_raw_back, *d_raw_rms;          /* each box's estimate, -1e30 unusable */
  float *d_fill_back, *d_fill_rms;        /* unusable boxes filled */
  float *d_back, *d_rmsm;                 /* median-filtered: the spline's nodes */
  int64_t mesh_nb;                        /* boxes of the last mesh made, 0: none */
  float *d_dback, *d_drms;                /* second derivatives down the columns */
  int32_t *d_left, *d_right;              /* columns to the nearest usable box in the row */
  float *d_filter_scratch;                /* windows too large for registers */
  int64_t filter_window;                  /* floats of a window at most */
  float *d_col_u;                         /* spline scratch, 2 nb floats per map */

  /* the columns of pixels: the interval each lies in and its weights */
  int64_t *d_start;                       /* nbx + 1 interval starts */
  int32_t *d_kcol;
  float *d_dx, *d_cdx, *d_ax, *d_bx;

  /* each pixel row's nodes: back value, back derivative, rms value, rms
   * derivative, nbx floats each (as the CPU's SkyBackgroundInterp) */
  float *d_nodes, *d_row_u;

  /* interval starts, computed on the host for one geometry */
  int64_t *h_start;
  int64_t start_nx, start_nbx;
  int start_box;
  size_t h_start_cap;
} SkyGpuLocal;

/* The mesh and map geometry of one call. */
typedef struct SkyBkgGeometry {
  int64_t nx, ny, n;
  int64_t nbx, nby, nb;
  int box, filter;
} SkyBkgGeometry;

/* Kernel attributes, set once when a context first makes maps. */
int sky_gpu_background_boxes_prepare (SkyGpu *gpu);

/* Phases, in order; each enqueues on gpu->stream. */
int sky_gpu_background_boxes_enqueue (SkyGpu *gpu, const SkyGpuLocal *L, const SkyBkgGeometry *g,
                                      const float *d_image);
int sky_gpu_background_mesh_enqueue (SkyGpu *gpu, const SkyGpuLocal *L, const SkyBkgGeometry *g);
/* Floats of scratch a median window needs beyond what a thread holds
 * itself (0: none). */
int64_t sky_gpu_background_filter_window (const SkyBkgGeometry *g);

/* The intervals of the spline along a row (as the CPU's columns_init):
 * start[k] is the first column of interval k, k = 0 .. nbx; nx past the
 * last. */
void sky_gpu_background_column_starts (int64_t nx, int box, int64_t nbx, int64_t *start);

/* full: the background and rms maps written too, else only the residual
 * and snr (the background and rms made where read, from the row splines). */
int sky_gpu_background_maps_enqueue (SkyGpu *gpu, const SkyGpuLocal *L, const SkyBkgGeometry *g,
                                     const float *d_image, int full);

#endif /* SKY_GPU_BACKGROUND_CUH */
