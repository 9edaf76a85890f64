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
