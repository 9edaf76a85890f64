/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Pipeline parameters: the lesson's semantics as defaults, made explicit. */
#include "sky-core.h"

#include <math.h>

void
sky_params_init (SkyParams *params)
{
  params->clip_kappa = 3.0;
  params->max_iter = 0;
  params->threshold = 5.0;
  params->relative = 0;
  params->connectivity = 4;
  params->nthreads = 0;
  params->seed_sigma = 4.6;
  params->flood_sigma = 2.5;
  params->min_area = 1;
  params->deblend_nthresh = 32;
  params->deblend_mincont = 0.005;
  params->deblend_sigma = 5.0;
  params->bkg_box = 64;
  params->bkg_filter = 3;
}

int
sky_params_check (const SkyParams *params)
{
  if (!(isfinite (params->clip_kappa) && params->clip_kappa > 0))
    return sky_fail (SKY_ERR_ARGUMENT, "clipping kappa must be a positive number (got %g)",
                     params->clip_kappa);
  if (params->max_iter < 0)
    return sky_fail (SKY_ERR_ARGUMENT, "the iteration cap must be 0 (none) or positive (got %d)",
                     params->max_iter);
  if (!isfinite (params->threshold))
    return sky_fail (SKY_ERR_ARGUMENT, "threshold must be a finite number of sigma (got %g)",
                     params->threshold);
  if (params->connectivity != 4 && params->connectivity != 8)
    return sky_fail (SKY_ERR_ARGUMENT, "connectivity must be 4 or 8 (got %d)",
                     params->connectivity);
  if (params->nthreads < 0)
    return sky_fail (SKY_ERR_ARGUMENT, "thread count must be 0 (all cores) or positive (got %d)",
                     params->nthreads);
  if (!(isfinite (params->flood_sigma) && params->flood_sigma > 0))
    return sky_fail (SKY_ERR_ARGUMENT, "the flood level must be a positive number of rms (got %g)",
                     params->flood_sigma);
  if (!(isfinite (params->seed_sigma) && params->seed_sigma >= params->flood_sigma))
    return sky_fail (SKY_ERR_ARGUMENT,
                     "the seed level must be a number of rms at least the flood level %g (got %g)",
                     params->flood_sigma, params->seed_sigma);
  if (params->min_area < 1)
    return sky_fail (SKY_ERR_ARGUMENT, "the minimum area must be at least 1 pixel (got %lld)",
                     (long long) params->min_area);
  if (params->deblend_nthresh < 0 || params->deblend_nthresh > 1024)
    return sky_fail (SKY_ERR_ARGUMENT, "deblending levels must be 0 to 1024 (got %d)",
                     params->deblend_nthresh);
  if (!(params->deblend_mincont >= 0 && params->deblend_mincont <= 1))
    return sky_fail (SKY_ERR_ARGUMENT,
                     "the deblending contrast must be a fraction from 0 to 1 (got %g)",
                     params->deblend_mincont);
  if (!(isfinite (params->deblend_sigma) && params->deblend_sigma >= 0))
    return sky_fail (SKY_ERR_ARGUMENT,
                     "the deblending height must be 0 or a positive number of rms (got %g)",
                     params->deblend_sigma);
  /* A box of at most 2^28 pixels keeps every histogram sum exact in double. */
  if (params->bkg_box < 1 || params->bkg_box > 16384)
    return sky_fail (SKY_ERR_ARGUMENT, "background box must be 1 to 16384 pixels (got %d)",
                     params->bkg_box);
  if (params->bkg_filter < 1 || params->bkg_filter > 1023 || params->bkg_filter % 2 == 0)
    return sky_fail (SKY_ERR_ARGUMENT,
                     "background filter must be an odd number of boxes, 1 to 1023 (got %d)",
                     params->bkg_filter);
  return SKY_OK;
}

double
sky_threshold_value (const SkyParams *params, const SkyClipStats *stats)
{
  if (stats->flat || stats->n == 0)
    return NAN;
  if (params->relative)
    return stats->median + params->threshold * stats->sigma;
  return params->threshold * stats->sigma;
}
