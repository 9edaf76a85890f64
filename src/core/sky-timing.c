/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Wall-clock timing of the pipeline steps. */
#include "sky-core.h"

#include <time.h>

double
sky_now_ms (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static double
min_time (double a, double b)
{
  return b < a ? b : a;
}

void
sky_step_times_min (SkyStepTimes *best, const SkyStepTimes *t)
{
  best->clip = min_time (best->clip, t->clip);
  best->segment = min_time (best->segment, t->segment);
  best->label = min_time (best->label, t->label);
  best->measure = min_time (best->measure, t->measure);
  best->total = best->clip + best->segment + best->label + best->measure;
}
