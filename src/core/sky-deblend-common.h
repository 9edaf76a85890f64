/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-deblend-common.h: what the CPU's deblending (src/cpu/sky-cpu-deblend.c)
 * and the device's (src/gpu/sky-gpu-deblend*.cu*) share, written once for
 * host and device: their parameters, read off SkyParams in one place, and
 * the max-heap whose order the watershed pops its pixels in (the CPU's and
 * the device's serial fallback), so that ties between equal values fall
 * the same way on both. */
#ifndef SKY_DEBLEND_COMMON_H
#define SKY_DEBLEND_COMMON_H

#include <stdint.h>

#include "sky-core.h"

/* The deblending's parameters (SkyParams says what each means). */
typedef struct SkyDeblendParams {
  double flood;            /* flood_sigma: the islands' level, in rms */
  double prominence;       /* deblend_sigma: a part's peak rises this much above its level */
  double mincont;          /* deblend_mincont: a part's share of its island's flux */
  int64_t min_area;        /* a part's pixels at least */
  int nthresh;             /* deblend_nthresh: the levels */
  int connectivity;        /* 4 or 8 */
} SkyDeblendParams;

static inline SkyDeblendParams
sky_deblend_params (const SkyParams *params)
{
  SkyDeblendParams d;

  d.flood = params->flood_sigma;
  d.prominence = params->deblend_sigma;
  d.mincont = params->deblend_mincont;
  d.min_area = params->min_area;
  d.nthresh = params->deblend_nthresh;
  d.connectivity = params->connectivity;
  return d;
}

/* Adds index j (keyed on val[j]) to heap[0 .. *n - 1]; heap has room. */
static inline SKY_HOST_DEVICE void
sky_value_heap_push (int32_t *heap, int64_t *n, const float *val, int32_t j)
{
  int64_t i = (*n)++;

  while (i > 0 && val[heap[(i - 1) / 2]] < val[j])
    {
      heap[i] = heap[(i - 1) / 2];
      i = (i - 1) / 2;
    }
  heap[i] = j;
}

/* Removes and returns the index of the largest value; *n > 0. */
static inline SKY_HOST_DEVICE int32_t
sky_value_heap_pop (int32_t *heap, int64_t *n, const float *val)
{
  int32_t top = heap[0], last = heap[--(*n)];
  int64_t i = 0;

  for (;;)
    {
      int64_t c = 2 * i + 1;
      if (c >= *n)
        break;
      if (c + 1 < *n && val[heap[c + 1]] > val[heap[c]])
        c++;
      if (!(val[heap[c]] > val[last]))
        break;
      heap[i] = heap[c];
      i = c;
    }
  heap[i] = last;
  return top;
}

#endif /* SKY_DEBLEND_COMMON_H */
