/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The local method: background-subtracted detection against an rms map,
 * seed-and-flood islands, deblending, and measurement on the
 * background-subtracted image. */
#include "sky-cpu.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ROWS_PER_TASK 64

typedef struct {
  const SkyImage *img;
  const float *background, *rms;
  float *residual, *snr;
  const float *detect;     /* residual, or its matched-filtered copy */
  double scale;            /* snr = detect / (rms * scale) */
} Maps;

static void
residual_task (void *ctx, int task)
{
  Maps *m = ctx;
  int64_t nx = m->img->nx, r0 = (int64_t) task * ROWS_PER_TASK;
  int64_t r1 = r0 + ROWS_PER_TASK < m->img->ny ? r0 + ROWS_PER_TASK : m->img->ny;

  for (int64_t i = r0 * nx; i < r1 * nx; i++)
    m->residual[i] = m->img->pixels[i] - m->background[i];
}

/* The residual and its snr in one pass, where there is no filter. */
static void
residual_snr_task (void *ctx, int task)
{
  Maps *m = ctx;
  int64_t nx = m->img->nx, r0 = (int64_t) task * ROWS_PER_TASK;
  int64_t r1 = r0 + ROWS_PER_TASK < m->img->ny ? r0 + ROWS_PER_TASK : m->img->ny;

  for (int64_t i = r0 * nx; i < r1 * nx; i++)
    {
      float r = m->img->pixels[i] - m->background[i];
      m->residual[i] = r;
      m->snr[i] = m->rms[i] > 0 ? r / m->rms[i] : NAN;
    }
}

static void
snr_task (void *ctx, int task)
{
  Maps *m = ctx;
  int64_t nx = m->img->nx, r0 = (int64_t) task * ROWS_PER_TASK;
  int64_t r1 = r0 + ROWS_PER_TASK < m->img->ny ? r0 + ROWS_PER_TASK : m->img->ny;
  float inv = (float) (1.0 / m->scale);

  /* No rms (0, NaN) gives NaN: such pixels never join an island. */
  for (int64_t i = r0 * nx; i < r1 * nx; i++)
    m->snr[i] = m->rms[i] > 0 ? m->detect[i] / m->rms[i] * inv : NAN;
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
  free (ls->residual.pixels);
  free (ls->snr);
  sky_islands_clear (&ls->islands);
  free (ls->deblended);
  memset (ls, 0, sizeof *ls);
}

int
sky_cpu_local_background (const SkyImage *img, const SkyParams *params, SkyResult *res)
{
  size_t n = (size_t) (img->nx * img->ny);

  if (res->background != NULL && res->rms != NULL)
    return SKY_OK; /* given */
  free (res->background);
  free (res->rms);
  res->background = sky_alloc_large (n * sizeof *res->background);
  res->rms = sky_alloc_large (n * sizeof *res->rms);
  if (res->background == NULL || res->rms == NULL)
    return sky_fail (SKY_ERR_MEMORY, "no memory for the background maps of %lld pixels",
                     (long long) n);
  return sky_cpu_background (img, params, params->nthreads, res->background, res->rms);
}

int
sky_cpu_local_detect (const SkyImage *img, const SkyParams *params, const SkyKernel *filter,
                      SkyResult *res, SkyLocalState *ls)
{
  int64_t npixels = img->nx * img->ny;
  int ntasks = (int) ((img->ny + ROWS_PER_TASK - 1) / ROWS_PER_TASK);
  SkyImage filtered = { 0 };
  Maps m = { 0 };
  double scale = 1.0;
  int ret = SKY_OK;

  /* Every pixel of these is written before it is read: no clearing. */
  free (ls->residual.pixels);
  free (ls->snr);
  ls->residual = (SkyImage) { .nx = img->nx, .ny = img->ny, .nblank = img->nblank };
  ls->residual.pixels = sky_alloc_large ((size_t) npixels * sizeof (float));
  ls->snr = sky_alloc_large ((size_t) npixels * sizeof *ls->snr);
  if (ls->residual.pixels == NULL || ls->snr == NULL)
    return sky_fail (SKY_ERR_MEMORY, "no memory for the detection image of %lld pixels",
                     (long long) npixels);
  m.img = img;
  m.background = res->background;
  m.rms = res->rms;
  m.residual = ls->residual.pixels;
  m.snr = ls->snr;
  m.detect = ls->residual.pixels;
  m.scale = 1.0;
  if (filter == NULL)
    sky_parallel_for (ntasks, params->nthreads, residual_snr_task, &m);
  else
    {
      sky_parallel_for (ntasks, params->nthreads, residual_task, &m);
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
    }
  res->noise_scale = scale;
  return ret;
}

int
sky_cpu_local_flood (const SkyImage *img, const SkyParams *params, SkyResult *res,
                     SkyLocalState *ls)
{
  sky_islands_clear (&ls->islands);
  return sky_cpu_flood (ls->snr, img->nx, img->ny, params->seed_sigma, params->flood_sigma,
                        params->min_area, params->connectivity, params->nthreads, res->mask,
                        res->labels, &res->nislands, &ls->islands);
}

int
sky_cpu_local_deblend (const SkyImage *img, const SkyParams *params, SkyResult *res,
                       SkyLocalState *ls)
{
  free (ls->deblended);
  ls->deblended = NULL;
  res->nsources = res->nislands;
  return sky_cpu_deblend (ls->snr, img->nx, img->ny, params, &ls->islands, res->labels,
                          &res->nsources, &res->ndeblended, &ls->deblended);
}

int
sky_cpu_local_measure (const SkyImage *img, const SkyParams *params, SkyResult *res,
                       const SkyLocalState *ls)
{
  int ret;

  sky_catalogue_clear (&res->catalogue);
  ret = sky_cpu_measure (&ls->residual, res->labels, res->nsources, params->nthreads,
                         &res->catalogue);
  if (ret == SKY_OK)
    ret = sky_cpu_measure_local (img, ls->residual.pixels, res->background, res->rms, ls->snr,
                                 res->labels, params->seed_sigma, 0, ls->deblended,
                                 &res->catalogue, params->nthreads);
  return ret;
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
  ret = sky_cpu_local_background (img, params, res);
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
