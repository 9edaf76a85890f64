/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The local method: background-subtracted detection against an rms map,
 * seed-and-flood islands, deblending, and measurement on the
 * background-subtracted image. */
#include "sky-cpu.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define ROWS_PER_TASK 64

SkyLocalMaps
sky_local_maps (const SkyResult *res, const SkyLocalState *ls)
{
  SkyLocalMaps maps = { res->nx, res->background, res->rms, ls->interp };

  return maps;
}

void
sky_local_maps_window (const SkyLocalMaps *maps, int64_t x0, int64_t y0, int64_t x1,
                       int64_t y1, float *background, float *rms)
{
  int64_t w = x1 - x0;

  for (int64_t y = y0; y < y1; y++)
    {
      float *b = background != NULL ? background + (y - y0) * w : NULL;
      float *r = rms != NULL ? rms + (y - y0) * w : NULL;
      if (maps->background == NULL)
        {
          sky_background_interp_row (maps->interp, y, x0, x1, b, r);
          continue;
        }
      if (b != NULL)
        memcpy (b, maps->background + y * maps->nx + x0, (size_t) w * sizeof *b);
      if (r != NULL)
        memcpy (r, maps->rms + y * maps->nx + x0, (size_t) w * sizeof *r);
    }
}

void
sky_snr_row (const SkySnrSource *src, int64_t y, int64_t x0, int64_t x1, float *buf,
             float *out)
{
  int64_t w = x1 - x0;
  const float *pix, *bkg = buf, *rms = buf + w;

  if (src->snr != NULL)
    {
      memcpy (out, src->snr + y * src->nx + x0, (size_t) w * sizeof *out);
      return;
    }
  sky_local_maps_window (src->maps, x0, y, x1, y + 1, buf, buf + w);
  pix = src->img->pixels + y * src->nx + x0;
  for (int64_t x = 0; x < w; x++)
    {
      float r = pix[x] - bkg[x];
      out[x] = rms[x] > 0 ? r / rms[x] : NAN;
    }
}

typedef struct {
  const SkyImage *img;
  SkyLocalMaps maps;
  float *residual, *snr;
  const float *detect;     /* residual, or its matched-filtered copy */
  double scale;            /* snr = detect / (rms * scale) */
  atomic_int failed;
} Maps;

/* A task's rows of the maps, one row at a time: a row of background and
 * one of rms. */
static float *
row_buffers (Maps *m)
{
  float *buf = malloc ((size_t) (2 * m->img->nx) * sizeof *buf);

  if (buf == NULL)
    atomic_store (&m->failed, 1);
  return buf;
}

static void
residual_task (void *ctx, int task)
{
  Maps *m = ctx;
  int64_t nx = m->img->nx, r0, r1;
  float *bkg = row_buffers (m);

  if (bkg == NULL)
    return;
  sky_row_band (task, ROWS_PER_TASK, m->img->ny, &r0, &r1);
  for (int64_t y = r0; y < r1; y++)
    {
      const float *pix = m->img->pixels + y * nx;
      float *out = m->residual + y * nx;
      sky_local_maps_window (&m->maps, 0, y, nx, y + 1, bkg, NULL);
      for (int64_t x = 0; x < nx; x++)
        out[x] = pix[x] - bkg[x];
    }
  free (bkg);
}

static void
snr_task (void *ctx, int task)
{
  Maps *m = ctx;
  int64_t nx = m->img->nx, r0, r1;
  float inv = (float) (1.0 / m->scale);
  float *rms = row_buffers (m);

  if (rms == NULL)
    return;
  sky_row_band (task, ROWS_PER_TASK, m->img->ny, &r0, &r1);
  /* No rms (0, NaN) gives NaN: such pixels never join an island. */
  for (int64_t y = r0; y < r1; y++)
    {
      const float *detect = m->detect + y * nx;
      float *snr = m->snr + y * nx;
      sky_local_maps_window (&m->maps, 0, y, nx, y + 1, NULL, rms);
      for (int64_t x = 0; x < nx; x++)
        snr[x] = rms[x] > 0 ? detect[x] / rms[x] * inv : NAN;
    }
  free (rms);
}

/* The matched filter lowers the noise as well as the signal, by a factor
 * set by the kernel and the noise's own correlation (beam-correlated noise
 * is smoothed less than white noise). It is measured, not assumed: the
 * clipped sigma of filtered / rms, which is 1 for the unfiltered image
 * where the rms map is right. */
static int
filtered_noise_scale (Maps *m, const SkyParams *params, int ntasks, double *scale)
{
  SkyImage view = { 0 };
  SkyParams clip;
  SkyClipStats stats;
  int ret;

  m->scale = 1.0;
  sky_parallel_for (ntasks, params->nthreads, snr_task, m);
  view.nx = m->img->nx;
  view.ny = m->img->ny;
  view.pixels = m->snr;
  sky_params_init (&clip);
  clip.nthreads = params->nthreads;
  ret = sky_cpu_clip (&view, &clip, &stats);
  if (ret != SKY_OK)
    return ret;
  *scale = stats.flat || !(stats.sigma > 0) ? 1.0 : stats.sigma;
  return SKY_OK;
}

void
sky_local_state_clear (SkyLocalState *ls)
{
  if (ls->interp != NULL)
    sky_background_interp_clear (ls->interp);
  if (ls->mesh != NULL)
    sky_background_mesh_clear (ls->mesh);
  free (ls->interp);
  free (ls->mesh);
  free (ls->residual.pixels);
  free (ls->snr);
  sky_islands_clear (&ls->islands);
  free (ls->deblended);
  memset (ls, 0, sizeof *ls);
}

int
sky_cpu_local_background (const SkyImage *img, const SkyParams *params, SkyResult *res,
                          SkyLocalState *ls)
{
  int ret;

  if (res->background != NULL && res->rms != NULL)
    return SKY_OK; /* given */
  if (ls->interp != NULL)
    sky_background_interp_clear (ls->interp);
  if (ls->mesh != NULL)
    sky_background_mesh_clear (ls->mesh);
  if (ls->mesh == NULL)
    ls->mesh = calloc (1, sizeof *ls->mesh);
  if (ls->interp == NULL)
    ls->interp = calloc (1, sizeof *ls->interp);
  if (ls->mesh == NULL || ls->interp == NULL)
    return sky_fail (SKY_ERR_MEMORY, "no memory for the background mesh");
  ret = sky_cpu_background_mesh (img, params, params->nthreads, ls->mesh);
  if (ret == SKY_OK)
    ret = sky_background_interp_init (ls->interp, ls->mesh);
  if (ret != SKY_OK)
    {
      free (ls->mesh);
      free (ls->interp);
      ls->mesh = NULL;
      ls->interp = NULL;
    }
  return ret;
}

int
sky_cpu_local_detect (const SkyImage *img, const SkyParams *params, const SkyKernel *filter,
                      SkyResult *res, SkyLocalState *ls)
{
  int64_t npixels = img->nx * img->ny;
  int ntasks = sky_row_bands (img->ny, ROWS_PER_TASK);
  SkyImage filtered = { 0 };
  Maps m = { 0 };
  double scale = 1.0;
  int ret = SKY_OK;

  /* Every pixel of these is written before it is read: no clearing. */
  free (ls->residual.pixels);
  free (ls->snr);
  ls->residual = (SkyImage) { .nx = img->nx, .ny = img->ny, .nblank = img->nblank };
  ls->snr = NULL;
  res->noise_scale = 1.0;
  if (filter == NULL)
    return SKY_OK; /* the snr is made where it is read */
  ls->residual.pixels = sky_alloc_large ((size_t) npixels * sizeof (float));
  ls->snr = sky_alloc_large ((size_t) npixels * sizeof *ls->snr);
  if (ls->residual.pixels == NULL || ls->snr == NULL)
    return sky_fail (SKY_ERR_MEMORY, "no memory for the detection image of %lld pixels",
                     (long long) npixels);
  m.img = img;
  m.maps = sky_local_maps (res, ls);
  m.residual = ls->residual.pixels;
  m.snr = ls->snr;
  m.detect = ls->residual.pixels;
  m.scale = 1.0;
  atomic_init (&m.failed, 0);
  sky_parallel_for (ntasks, params->nthreads, residual_task, &m);
  ret = atomic_load (&m.failed) ? SKY_ERR_MEMORY : SKY_OK;
  if (ret == SKY_OK)
    ret = sky_cpu_smooth (&ls->residual, filter, params->nthreads, &filtered);
  if (ret == SKY_OK)
    {
      m.detect = filtered.pixels;
      ret = filtered_noise_scale (&m, params, ntasks, &scale);
    }
  if (ret == SKY_OK)
    {
      m.scale = scale;
      sky_parallel_for (ntasks, params->nthreads, snr_task, &m);
    }
  sky_image_clear (&filtered);
  if (atomic_load (&m.failed))
    return sky_fail (SKY_ERR_MEMORY, "no memory for the detection image's rows");
  res->noise_scale = scale;
  return ret;
}

int
sky_cpu_local_flood (const SkyImage *img, const SkyParams *params, SkyResult *res,
                     SkyLocalState *ls)
{
  SkyLocalMaps maps = sky_local_maps (res, ls);
  SkySnrSource src = { img->nx, ls->snr, img, &maps };

  sky_islands_clear (&ls->islands);
  return sky_cpu_flood_source (&src, img->nx, img->ny, params->seed_sigma, params->flood_sigma,
                               params->min_area, params->connectivity, params->nthreads,
                               res->mask, res->labels, &res->nislands, &ls->islands);
}

int
sky_cpu_local_deblend (const SkyImage *img, const SkyParams *params, SkyResult *res,
                       SkyLocalState *ls)
{
  SkyLocalMaps maps = sky_local_maps (res, ls);
  SkySnrSource src = { img->nx, ls->snr, img, &maps };

  free (ls->deblended);
  ls->deblended = NULL;
  res->nsources = res->nislands;
  return sky_cpu_deblend_source (&src, img->nx, img->ny, params, &ls->islands, res->labels,
                                 &res->nsources, &res->ndeblended, &ls->deblended);
}

typedef struct {
  const SkyImage *img;
  SkyLocalMaps maps;
  const int32_t *labels;
} ResidualRows;

/* A row of image - background where a source pixel asks for it, made on
 * the row's runs of source pixels only (the measure reads no other). */
static const float *
residual_row (void *ctx, int64_t y, float *buf)
{
  const ResidualRows *r = ctx;
  int64_t nx = r->img->nx;
  const float *pix = r->img->pixels + y * nx;
  const int32_t *labels = r->labels + y * nx;
  float *bkg = buf + nx;

  for (int64_t x = 0, end; x < nx; x = end)
    {
      if (labels[x] == 0)
        {
          end = x + 1;
          continue;
        }
      for (end = x + 1; end < nx && labels[end] != 0; end++)
        ;
      sky_local_maps_window (&r->maps, x, y, end, y + 1, bkg + x, NULL);
      for (int64_t p = x; p < end; p++)
        buf[p] = pix[p] - bkg[p];
    }
  return buf;
}

int
sky_cpu_local_measure (const SkyImage *img, const SkyParams *params, SkyResult *res,
                       const SkyLocalState *ls)
{
  int ret;

  ResidualRows rows = { img, sky_local_maps (res, ls), res->labels };
  int64_t buf_floats = 2 * img->nx;

  sky_catalogue_clear (&res->catalogue);
  ret = sky_cpu_measure_rows (img->nx, img->ny, residual_row, &rows, buf_floats, res->labels,
                              res->nsources, params->nthreads, &res->catalogue);
  if (ret == SKY_OK)
    ret = sky_cpu_measure_local (img, &rows.maps, ls->snr, res->labels, params->seed_sigma, 0,
                                 ls->deblended, &res->catalogue, params->nthreads);
  return ret;
}

/* The whole maps from the mesh, for the caller of sky_cpu_run_local (the
 * steps themselves interpolate where they need them). */
static int
whole_maps (const SkyParams *params, SkyResult *res, const SkyLocalState *ls)
{
  size_t n = (size_t) (res->nx * res->ny);

  res->background = sky_alloc_large (n * sizeof *res->background);
  res->rms = sky_alloc_large (n * sizeof *res->rms);
  if (res->background == NULL || res->rms == NULL)
    return sky_fail (SKY_ERR_MEMORY, "no memory for the background maps of %lld pixels",
                     (long long) n);
  return sky_cpu_background_rows (ls->mesh, 0, res->ny, params->nthreads, res->background,
                                  res->rms);
}

int
sky_cpu_run_local (const SkyImage *img, const SkyParams *params, const SkyKernel *filter,
                   float *background, float *rms, SkyResult *res)
{
  int64_t npixels = img->nx * img->ny;
  SkyLocalState ls = { 0 };
  double t0;
  int ret;

  sky_result_clear (res);
  res->method = SKY_METHOD_LOCAL;
  res->nx = img->nx;
  res->ny = img->ny;
  res->background = background;
  res->rms = rms;
  res->threshold_value = NAN;
  res->noise_scale = 1.0;
  if ((background == NULL) != (rms == NULL))
    {
      ret = sky_fail (SKY_ERR_ARGUMENT, "the local method takes both maps or neither");
      goto exit;
    }
  if ((ret = sky_params_check (params)) != SKY_OK)
    goto exit;
  res->mask = sky_alloc_large ((size_t) npixels);
  res->labels = sky_alloc_large ((size_t) npixels * sizeof *res->labels);
  if (res->mask == NULL || res->labels == NULL)
    {
      ret = sky_fail (SKY_ERR_MEMORY, "no memory for the local method on %lld pixels",
                      (long long) npixels);
      goto exit;
    }

  t0 = sky_now_ms ();
  ret = sky_cpu_local_background (img, params, res, &ls);
  if (ret == SKY_OK && background == NULL)
    ret = whole_maps (params, res, &ls);
  res->times.ms[SKY_STEP_BACKGROUND] = sky_now_ms () - t0;
  if (ret != SKY_OK)
    goto exit;
  t0 = sky_now_ms ();
  ret = sky_cpu_local_detect (img, params, filter, res, &ls);
  res->times.ms[SKY_STEP_DETECT] = sky_now_ms () - t0;
  if (ret != SKY_OK)
    goto exit;
  t0 = sky_now_ms ();
  ret = sky_cpu_local_flood (img, params, res, &ls);
  res->times.ms[SKY_STEP_FLOOD] = sky_now_ms () - t0;
  if (ret != SKY_OK)
    goto exit;
  t0 = sky_now_ms ();
  ret = sky_cpu_local_deblend (img, params, res, &ls);
  res->times.ms[SKY_STEP_DEBLEND] = sky_now_ms () - t0;
  if (ret != SKY_OK)
    goto exit;
  t0 = sky_now_ms ();
  ret = sky_cpu_local_measure (img, params, res, &ls);
  res->times.ms[SKY_STEP_MEASURE] = sky_now_ms () - t0;
  for (int step = 0; step < SKY_STEP_COUNT; step++)
    res->times.total += res->times.ms[step];

exit:
  sky_local_state_clear (&ls);
  if (ret != SKY_OK)
    sky_result_clear (res);
  return ret;
}
