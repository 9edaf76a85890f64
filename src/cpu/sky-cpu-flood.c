/* Seed-and-flood islands, as Aegean defines them: the connected pixels
 * above the flood level that hold at least one pixel above the seed level.
 *
 * That is the connected components of the flood mask, kept where their
 * brightest pixel passes the seed level and their area min_area. Each part
 * is a per-pixel map, the labelling, or a per-island reduction, so a tiled
 * run (labels joined across tile borders, then the same reductions) gives
 * the same islands as the whole image. */
#include "sky-cpu.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ROWS_PER_TASK 64

typedef struct {
  const float *snr;
  int64_t nx, ny;
  float flood;
  uint8_t *mask;
  int32_t *labels;
  const int32_t *relabel;  /* old label -> kept label, 0 for dropped */
} Flood;

static int
ntasks_of (int64_t ny)
{
  return (int) ((ny + ROWS_PER_TASK - 1) / ROWS_PER_TASK);
}

static void
mask_task (void *ctx, int task)
{
  Flood *f = ctx;
  int64_t r0 = (int64_t) task * ROWS_PER_TASK;
  int64_t r1 = r0 + ROWS_PER_TASK < f->ny ? r0 + ROWS_PER_TASK : f->ny;

  /* NaN (blank, or no rms) compares false: never an island pixel. */
  for (int64_t i = r0 * f->nx; i < r1 * f->nx; i++)
    f->mask[i] = f->snr[i] > f->flood;
}

static void
relabel_task (void *ctx, int task)
{
  Flood *f = ctx;
  int64_t r0 = (int64_t) task * ROWS_PER_TASK;
  int64_t r1 = r0 + ROWS_PER_TASK < f->ny ? r0 + ROWS_PER_TASK : f->ny;

  for (int64_t i = r0 * f->nx; i < r1 * f->nx; i++)
    if (f->labels[i] != 0)
      {
        f->labels[i] = f->relabel[f->labels[i]];
        f->mask[i] = f->labels[i] != 0;
      }
}

int
sky_cpu_flood (const float *snr, int64_t nx, int64_t ny, double seed_sigma, double flood_sigma,
               int64_t min_area, int connectivity, int nthreads, uint8_t *mask,
               int32_t *labels, int64_t *nislands)
{
  Flood f = { snr, nx, ny, (float) flood_sigma, mask, labels, NULL };
  int64_t n = 0, kept = 0, npixels = nx * ny;
  float *peak = NULL;
  int64_t *area = NULL;
  int32_t *relabel = NULL;
  int ret;

  *nislands = 0;
  sky_parallel_for (ntasks_of (ny), nthreads, mask_task, &f);
  ret = sky_cpu_label (mask, nx, ny, connectivity, nthreads, labels, &n);
  if (ret != SKY_OK || n == 0)
    return ret;

  peak = malloc ((size_t) (n + 1) * sizeof *peak);
  area = calloc ((size_t) (n + 1), sizeof *area);
  relabel = calloc ((size_t) (n + 1), sizeof *relabel);
  if (peak == NULL || area == NULL || relabel == NULL)
    {
      ret = sky_fail (SKY_ERR_MEMORY, "no memory for %lld islands", (long long) n);
      goto exit;
    }
  for (int64_t k = 0; k <= n; k++)
    peak[k] = -INFINITY;
  for (int64_t i = 0; i < npixels; i++)
    {
      int32_t l = labels[i];
      if (l == 0)
        continue;
      area[l]++;
      peak[l] = snr[i] > peak[l] ? snr[i] : peak[l];
    }
  /* Keeping a subset in label order keeps the raster order of first
   * pixels, so the kept labels stay numbered as scipy.ndimage.label would
   * number the kept islands alone. */
  for (int64_t k = 1; k <= n; k++)
    if (peak[k] > seed_sigma && area[k] >= min_area)
      relabel[k] = (int32_t) ++kept;
  f.relabel = relabel;
  if (kept != n)
    sky_parallel_for (ntasks_of (ny), nthreads, relabel_task, &f);
  *nislands = kept;

exit:
  free (peak);
  free (area);
  free (relabel);
  return ret;
}
