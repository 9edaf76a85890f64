/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-raster.h: the image view drawn on the CPU, pixel for pixel what
 * resources/shaders/image.frag draws on the GPU.
 *
 * Where OpenGL is a software rasteriser (llvmpipe under Xvfb, a machine with
 * no GPU driver) the shader runs on the CPU anyway, on the main thread, and
 * the window must then read the result back: a frame cost 50 to 90 ms on a
 * two-core machine. Drawn here instead, on worker threads, the main thread
 * only shows a finished picture. Plain C, no GTK.
 */
#ifndef SKY_RASTER_H
#define SKY_RASTER_H

#include "sky-colormap.h"
#include "sky-display-stats.h"

/* Overlay bits, as the shader's u_overlay. */
enum {
  SKY_OVERLAY_MASK = 1,
  SKY_OVERLAY_LABELS = 2,
  SKY_OVERLAY_OUTLINES = 4,
};

typedef struct SkyRasterParams {
  int width, height;        /* output, device pixels */
  double fb_zoom;           /* device pixels per image pixel */
  double cx, cy;            /* image point at the output's centre */
  int flip_x;               /* mirror left-right */
  int lod;                  /* pyramid level to sample */
  double lo, hi;            /* display limits */
  SkyStretch stretch;
  const float *eq;          /* SKY_EQ_SIZE entries, for SKY_STRETCH_HISTEQ */
  const uint8_t *cmap;      /* SKY_CMAP_SIZE RGBA entries */
  int overlay;              /* SKY_OVERLAY_* bits */
  int32_t selected;         /* label drawn brighter, 0 for none */
  const uint8_t *mask;      /* nx * ny, or NULL */
  const int32_t *labels;    /* nx * ny, or NULL */
  uint8_t background[3];
  uint8_t blank[3];
} SkyRasterParams;

/* Draws the view of pyr (level 0 is the image) into rgba (R, G, B, A bytes,
 * opaque, stride bytes a row, row 0 at the top) on nthreads threads. */
void sky_raster_render (const SkyPyramid *pyr, const SkyRasterParams *params,
                        uint8_t *rgba, size_t stride, int nthreads);

#endif /* SKY_RASTER_H */
