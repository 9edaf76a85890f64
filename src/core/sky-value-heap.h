/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-value-heap.h: a max-heap of indices keyed on float values, written
 * once for host and device: the deblending's watershed pops its pixels in
 * this heap's order on the CPU (src/cpu/sky-cpu-deblend.c) and in the GPU's
 * serial fallback (src/gpu/sky-gpu-deblend-serial.cuh), so that ties between
 * equal values fall the same way on both. */
#ifndef SKY_VALUE_HEAP_H
#define SKY_VALUE_HEAP_H

#include <stdint.h>

#include "sky-core.h"

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

#endif /* SKY_VALUE_HEAP_H */
