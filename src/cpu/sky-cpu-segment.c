/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Segmentation: the pixels above the threshold. */
#include "sky-cpu.h"

#include <math.h>
#include <string.h>

typedef struct {
  const float *pixels;
  uint8_t *mask;
  int64_t n;
  int ntasks;
  float bound;
} Segment;

static void
segment_task (void *ctx, int task)
{
  const Segment *s = ctx;
  int64_t start = s->n * task / s->ntasks, end = s->n * (task + 1) / s->ntasks;
  const float bound = s->bound;
  const float *restrict pixels = s->pixels;
  uint8_t *restrict mask = s->mask;

  /* A float comparison vectorises (restrict: a byte store could otherwise
   * alias the pixels); NaN compares false, so blanks stay 0. */
  for (int64_t i = start; i < end; i++)
    mask[i] = pixels[i] > bound;
}

int
sky_cpu_segment (const SkyImage *img, double threshold_value, int nthreads, uint8_t *mask)
{
  Segment s = { img->pixels, mask, img->nx * img->ny, 1, 0 };

  if (isnan (threshold_value))
    {
      memset (mask, 0, (size_t) s.n);
      return SKY_OK;
    }
  s.bound = sky_threshold_bound (threshold_value);
  s.ntasks = nthreads <= 0 ? sky_default_threads () : nthreads;
  if (s.n < (1 << 18))
    s.ntasks = 1;
  sky_parallel_for (s.ntasks, s.ntasks, segment_task, &s);
  return SKY_OK;
}
