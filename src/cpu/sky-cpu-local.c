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

int
sky_cpu_run_local (const SkyImage *img, const SkyParams *params, const SkyKernel *filter,
                   float *background, float *rms, SkyResult *res)
{
  int64_t npixels = img->nx * img->ny;
  int ntasks = (int) ((img->ny + ROWS_PER_TASK - 1) / ROWS_PER_TASK);
  SkyImage residual = { 0 }, filtered = { 0 };
  SkyIslands islands = { 0 };
  Maps m = { 0 };
  float *snr = NULL;
  uint8_t *deblended = NULL;
  double t0, scale = 1.0;
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
  if (background == NULL)
    {
      t0 = sky_now_ms ();
      res->background = background = sky_alloc_large ((size_t) npixels * sizeof *background);
      res->rms = rms = sky_alloc_large ((size_t) npixels * sizeof *rms);
      if (background == NULL || rms == NULL)
        {
          ret = sky_fail (SKY_ERR_MEMORY, "no memory for the background maps of %lld pixels",
                          (long long) npixels);
          goto exit;
        }
      ret = sky_cpu_background (img, params, params->nthreads, background, rms);
      res->times.background = sky_now_ms () - t0;
      if (ret != SKY_OK)
        goto exit;
    }

  t0 = sky_now_ms ();
  /* Every pixel of these is written before it is read: no clearing. */
  residual.nx = img->nx;
  residual.ny = img->ny;
  residual.nblank = img->nblank;
  residual.pixels = sky_alloc_large ((size_t) npixels * sizeof *residual.pixels);
  snr = sky_alloc_large ((size_t) npixels * sizeof *snr);
  res->mask = sky_alloc_large ((size_t) npixels);
  res->labels = sky_alloc_large ((size_t) npixels * sizeof *res->labels);
  if (residual.pixels == NULL || snr == NULL || res->mask == NULL || res->labels == NULL)
    {
      ret = sky_fail (SKY_ERR_MEMORY, "no memory for the local method on %lld pixels",
                      (long long) npixels);
      goto exit;
    }
  m.img = img;
  m.background = background;
  m.rms = rms;
  m.residual = residual.pixels;
  m.snr = snr;
  m.detect = residual.pixels;
  if (filter == NULL)
    sky_parallel_for (ntasks, params->nthreads, residual_snr_task, &m);
  else
    {
      sky_parallel_for (ntasks, params->nthreads, residual_task, &m);
      ret = sky_cpu_smooth (&residual, filter, params->nthreads, &filtered);
      if (ret != SKY_OK)
        goto exit;
      m.detect = filtered.pixels;
      ret = filtered_noise_scale (&m, params, ntasks, &scale);
      if (ret != SKY_OK)
        goto exit;
      m.scale = scale;
      sky_parallel_for (ntasks, params->nthreads, snr_task, &m);
      sky_image_clear (&filtered);
    }
  res->noise_scale = scale;
  res->times.segment = sky_now_ms () - t0;

  t0 = sky_now_ms ();
  ret = sky_cpu_flood (snr, img->nx, img->ny, params->seed_sigma, params->flood_sigma,
                       params->min_area, params->connectivity, params->nthreads, res->mask,
                       res->labels, &res->nislands, &islands);
  res->times.label = sky_now_ms () - t0;
  if (ret != SKY_OK)
    goto exit;

  t0 = sky_now_ms ();
  res->nsources = res->nislands;
  ret = sky_cpu_deblend (snr, img->nx, img->ny, params, &islands, res->labels, &res->nsources,
                         &res->ndeblended, &deblended);
  sky_islands_clear (&islands);
  res->times.deblend = sky_now_ms () - t0;
  if (ret != SKY_OK)
    goto exit;

  t0 = sky_now_ms ();
  ret = sky_cpu_measure (&residual, res->labels, res->nsources, params->nthreads,
                         &res->catalogue);
  if (ret == SKY_OK)
    ret = sky_cpu_measure_local (img, residual.pixels, background, rms, snr, res->labels, params->seed_sigma,
                                 0, deblended, &res->catalogue, params->nthreads);
  res->times.measure = sky_now_ms () - t0;
  res->times.total = res->times.background + res->times.segment + res->times.label
                     + res->times.deblend + res->times.measure;

exit:
  sky_islands_clear (&islands);
  free (snr);
  free (deblended);
  sky_image_clear (&residual);
  sky_image_clear (&filtered);
  if (ret != SKY_OK)
    sky_result_clear (res);
  return ret;
}
