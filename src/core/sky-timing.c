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
  best->total = 0;
  for (int step = 0; step < SKY_STEP_COUNT; step++)
    {
      best->ms[step] = min_time (best->ms[step], t->ms[step]);
      best->total += best->ms[step];
    }
}
