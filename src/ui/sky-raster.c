/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The image view on the CPU: the arithmetic of resources/shaders/image.frag
 * (keep them in step), one band of rows per thread. */
#include "sky-raster.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

/* Stretch and colour map folded into one table over the place between the
 * limits: finer than the colour map's 256 steps even where the log stretch
 * is steepest (its slope at 0 is 145). */
#define LUT_SIZE 16384

typedef struct {
  const SkyPyramid *pyr;
  const SkyRasterParams *p;
  uint8_t *rgba;
  size_t stride;
  int nbands;
  uint8_t (*lut)[3];
  int32_t *col;             /* image column of each output column, -1 outside */
  float *fcol;              /* and the place inside that pixel, 0..1 */
  int32_t *col0, *col1;     /* the columns its footprint covers, zoomed out */
  int span;                 /* image pixels across a screen pixel, rounded up */
} RasterJob;

static void
label_colour (int32_t l, float rgb[3])
{
  float h = (float) fmod (l * 0.618033988749895, 1.0);
  for (int k = 0; k < 3; k++)
    {
      static const float off[3] = { 0, 4, 2 };
      float v = fabsf (fmodf (h * 6 + off[k], 6) - 3) - 1;
      v = v < 0 ? 0 : v > 1 ? 1 : v;
      rgb[k] = 1 + (v - 1) * 0.9f;   /* mix (1, v, 0.9) */
    }
}

static void
mix (float c[3], const float k[3], float a)
{
  for (int i = 0; i < 3; i++)
    c[i] = c[i] * (1 - a) + k[i] * a;
}

static inline int32_t
label_at (const SkyRasterParams *p, const SkyPyramid *pyr, int64_t x, int64_t y)
{
  if (x < 0 || y < 0 || x >= pyr->nx[0] || y >= pyr->ny[0])
    return 0;
  return p->labels[y * pyr->nx[0] + x];
}

/* Zoomed out, a screen pixel covers several image pixels: the mask and
 * the labels show where any of them is a source, so that a source of a
 * few pixels does not vanish from the overview. */
static int
mask_in (const RasterJob *job, int64_t x0, int64_t x1, int64_t y0, int64_t y1)
{
  int64_t nx = job->pyr->nx[0];
  for (int64_t y = y0; y <= y1; y++)
    for (int64_t x = x0; x <= x1; x++)
      if (job->p->mask[y * nx + x])
        return 1;
  return 0;
}

static int32_t
label_in (const RasterJob *job, int64_t x0, int64_t x1, int64_t y0, int64_t y1)
{
  int64_t nx = job->pyr->nx[0];
  int32_t best = 0;
  for (int64_t y = y0; y <= y1; y++)
    for (int64_t x = x0; x <= x1; x++)
      {
        int32_t l = job->p->labels[y * nx + x];
        if (l == job->p->selected)
          return l;
        best = l > best ? l : best;
      }
  return best;
}

static void
raster_band (void *ctx, int band)
{
  RasterJob *job = ctx;
  const SkyRasterParams *p = job->p;
  const SkyPyramid *pyr = job->pyr;
  int y0 = p->height * band / job->nbands, y1 = p->height * (band + 1) / job->nbands;
  int nlevels = sky_pyramid_levels (pyr);
  int lod = MAX (p->lod < nlevels ? p->lod : nlevels - 1, pyr->first);
  int64_t nx = pyr->nx[0], ny = pyr->ny[0], lnx = pyr->nx[lod], lny = pyr->ny[lod];
  const float *level = pyr->pixels[lod];
  double scale = (LUT_SIZE - 1) / (p->hi - p->lo);
  float w = (float) (1.5 / p->fb_zoom);

  for (int y = y0; y < y1; y++)
    {
      uint8_t *out = job->rgba + (size_t) y * job->stride;
      double fy = p->height - y - 0.5 - p->height / 2.0;
      double py = p->cy + fy / p->fb_zoom;
      int64_t iy = (int64_t) floor (py);
      int64_t ly = iy >> lod;
      float fpy = (float) (py - floor (py));
      double half = MIN (0.5 / p->fb_zoom, 4.0);
      int64_t row0 = (int64_t) floor (py - half), row1 = (int64_t) floor (py + half);

      if (ly >= lny)
        ly = lny - 1;
      for (int x = 0; x < p->width; x++, out += 4)
        {
          int64_t ix = job->col[x];
          float c[3], v;

          if (ix < 0 || py < 0 || iy >= ny)
            {
              out[0] = p->background[0];
              out[1] = p->background[1];
              out[2] = p->background[2];
              out[3] = 255;
              continue;
            }
          {
            int64_t lx = ix >> lod;
            if (lx >= lnx)
              lx = lnx - 1;
            v = level[ly * lnx + lx];
          }
          if (isnan (v))
            for (int k = 0; k < 3; k++)
              c[k] = p->blank[k] / 255.0f;
          else
            {
              double t = (v - p->lo) * scale + 0.5;
              int i = t <= 0 ? 0 : t >= LUT_SIZE - 1 ? LUT_SIZE - 1 : (int) t;
              if (p->overlay == 0)
                {
                  out[0] = job->lut[i][0];
                  out[1] = job->lut[i][1];
                  out[2] = job->lut[i][2];
                  out[3] = 255;
                  continue;
                }
              for (int k = 0; k < 3; k++)
                c[k] = job->lut[i][k] / 255.0f;
            }

          if (job->span > 1)
            {
              row0 = row0 < 0 ? 0 : row0;
              row1 = row1 >= ny ? ny - 1 : row1;
            }
          if ((p->overlay & SKY_OVERLAY_MASK) && p->mask
              && (job->span > 1 ? mask_in (job, job->col0[x], job->col1[x], row0, row1)
                                : p->mask[iy * nx + ix]))
            {
              static const float tint[3] = { 0.0f, 0.75f, 1.0f };
              mix (c, tint, 0.5f);
            }
          if ((p->overlay & (SKY_OVERLAY_LABELS | SKY_OVERLAY_OUTLINES)) && p->labels)
            {
              int32_t l = job->span > 1 ? label_in (job, job->col0[x], job->col1[x], row0, row1)
                                        : p->labels[iy * nx + ix];
              if (l > 0)
                {
                  if (p->overlay & SKY_OVERLAY_LABELS)
                    {
                      float k[3];
                      label_colour (l, k);
                      mix (c, k, l == p->selected ? 0.8f : 0.55f);
                    }
                  if (p->overlay & SKY_OVERLAY_OUTLINES)
                    {
                      float fx = job->fcol[x];
                      int edge = (fx < w && label_at (p, pyr, ix - 1, iy) != l)
                                 || (fx > 1 - w && label_at (p, pyr, ix + 1, iy) != l)
                                 || (fpy < w && label_at (p, pyr, ix, iy - 1) != l)
                                 || (fpy > 1 - w && label_at (p, pyr, ix, iy + 1) != l);
                      if (edge)
                        {
                          c[0] = 1.0f;
                          c[1] = l == p->selected ? 0.15f : 0.8f;
                          c[2] = l == p->selected ? 0.1f : 0.0f;
                        }
                    }
                }
            }
          for (int k = 0; k < 3; k++)
            out[k] = (uint8_t) (c[k] * 255 + 0.5f);
          out[3] = 255;
        }
    }
}

void
sky_raster_render (const SkyPyramid *pyr, const SkyRasterParams *p, uint8_t *rgba, size_t stride,
                   int nthreads)
{
  RasterJob job = { pyr, p, rgba, stride, 0, NULL, NULL, NULL, NULL, NULL, 1 };

  job.lut = malloc (sizeof *job.lut * LUT_SIZE);
  job.col = malloc (sizeof *job.col * (size_t) p->width);
  job.fcol = malloc (sizeof *job.fcol * (size_t) p->width);
  job.col0 = malloc (sizeof *job.col0 * (size_t) p->width);
  job.col1 = malloc (sizeof *job.col1 * (size_t) p->width);
  if (job.lut == NULL || job.col == NULL || job.fcol == NULL || job.col0 == NULL
      || job.col1 == NULL)
    {
      for (int y = 0; y < p->height; y++)
        memset (rgba + (size_t) y * stride, 0, (size_t) p->width * 4);
      goto exit;
    }
  for (int i = 0; i < LUT_SIZE; i++)
    {
      double s = sky_stretch_apply (p->stretch, (double) i / (LUT_SIZE - 1), p->eq);
      int c = (int) (s * 255 + 0.5);
      memcpy (job.lut[i], p->cmap + 4 * c, 3);
    }
  for (int x = 0; x < p->width; x++)
    {
      double fx = x + 0.5 - p->width / 2.0;
      double px = p->cx + fx * (p->flip_x ? -1 : 1) / p->fb_zoom;
      double half = MIN (0.5 / p->fb_zoom, 4.0);
      job.col[x] = px < 0 || px >= pyr->nx[0] ? -1 : (int32_t) floor (px);
      job.fcol[x] = (float) (px - floor (px));
      job.col0[x] = (int32_t) MAX (floor (px - half), 0);
      job.col1[x] = (int32_t) MIN (floor (px + half), pyr->nx[0] - 1);
    }
  /* Footprints up to 8 pixels across: beyond that the overview is coarse
   * anyway, and the markers show every source. */
  job.span = p->fb_zoom >= 1 ? 1 : (int) MIN (ceil (1 / p->fb_zoom), 8);
  job.nbands = p->height < 64 ? 1 : 16;
  sky_parallel_for (job.nbands, nthreads, raster_band, &job);

exit:
  free (job.lut);
  free (job.col);
  free (job.fcol);
  free (job.col0);
  free (job.col1);
}
