/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The four steps in a row, each timed on its own. */
#include "sky-cpu.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int
sky_cpu_run (const SkyImage *img, const SkyParams *params, SkyResult *res)
{
  return sky_cpu_run_detect (img, img, params, res);
}

int
sky_cpu_run_detect (const SkyImage *img, const SkyImage *detect, const SkyParams *params,
                    SkyResult *res)
{
  int64_t npixels = img->nx * img->ny;
  double t0, t1;
  int ret;

  /* A rerun on the same image (a moved threshold, a benchmark repeat) keeps
   * the mask and label buffers: their pages are already mapped. */
  if (res->mask == NULL || res->labels == NULL || res->nx != img->nx || res->ny != img->ny)
    {
      sky_result_clear (res);
      res->mask = sky_alloc_large ((size_t) npixels);
      res->labels = sky_alloc_large ((size_t) npixels * sizeof *res->labels);
    }
  else
    {
      uint8_t *mask = res->mask;
      int32_t *labels = res->labels;
      sky_catalogue_clear (&res->catalogue);
      memset (res, 0, sizeof *res);
      res->mask = mask;
      res->labels = labels;
    }
  res->nx = img->nx;
  res->ny = img->ny;
  if (res->mask == NULL || res->labels == NULL)
    {
      sky_result_clear (res);
      return sky_fail (SKY_ERR_MEMORY, "no memory for the mask and labels of %lld pixels",
                       (long long) npixels);
    }

  if (detect->nx != img->nx || detect->ny != img->ny)
    return sky_fail (SKY_ERR_ARGUMENT, "the detection image is %lld x %lld, the image %lld x %lld",
                     (long long) detect->nx, (long long) detect->ny, (long long) img->nx,
                     (long long) img->ny);

  t0 = sky_now_ms ();
  ret = sky_cpu_clip (detect, params, &res->stats);
  t1 = sky_now_ms ();
  res->times.ms[SKY_STEP_CLIP] = t1 - t0;
  if (ret != SKY_OK)
    goto exit;
  res->threshold_value = sky_threshold_value (params, &res->stats);

  t0 = sky_now_ms ();
  ret = sky_cpu_segment (detect, res->threshold_value, params->nthreads, res->mask);
  t1 = sky_now_ms ();
  res->times.ms[SKY_STEP_SEGMENT] = t1 - t0;
  if (ret != SKY_OK)
    goto exit;

  t0 = sky_now_ms ();
  ret = sky_cpu_label (res->mask, img->nx, img->ny, params->connectivity, params->nthreads,
                       res->labels, &res->nsources);
  t1 = sky_now_ms ();
  res->times.ms[SKY_STEP_LABEL] = t1 - t0;
  if (ret != SKY_OK)
    goto exit;

  t0 = sky_now_ms ();
  ret = sky_cpu_measure (img, res->labels, res->nsources, params->nthreads, &res->catalogue);
  t1 = sky_now_ms ();
  res->times.ms[SKY_STEP_MEASURE] = t1 - t0;
  for (int step = 0; step < SKY_STEP_COUNT; step++)
    res->times.total += res->times.ms[step];

exit:
  if (ret != SKY_OK)
    sky_result_clear (res);
  return ret;
}
