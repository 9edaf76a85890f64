/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Renumbering a label image through a table, on threads. */
#include "sky-cpu-renumber.h"
#include "sky-core.h"

#define ROWS_PER_TASK 64

typedef struct {
  int32_t *labels;
  uint8_t *mask;
  int64_t nx, ny;
  const int32_t *table;
} Renumber;

static void
renumber_task (void *ctx, int task)
{
  Renumber *r = ctx;
  int64_t r0, r1, i0, i1;

  sky_row_band (task, ROWS_PER_TASK, r->ny, &r0, &r1);
  i0 = r0 * r->nx;
  i1 = r1 * r->nx;
  if (r->mask == NULL)
    {
      for (int64_t i = i0; i < i1; i++)
        if (r->labels[i] != 0)
          r->labels[i] = r->table[r->labels[i]];
      return;
    }
  for (int64_t i = i0; i < i1; i++)
    if (r->labels[i] != 0)
      {
        r->labels[i] = r->table[r->labels[i]];
        r->mask[i] = r->labels[i] != 0;
      }
}

void
sky_cpu_renumber (int32_t *labels, uint8_t *mask, int64_t nx, int64_t ny, const int32_t *table,
                  int nthreads)
{
  Renumber r = { labels, mask, nx, ny, table };

  sky_parallel_for (sky_row_bands (ny, ROWS_PER_TASK), nthreads, renumber_task, &r);
}
