/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Seed-and-flood islands, as Aegean defines them: the connected pixels
 * above the flood level that hold at least one pixel above the seed level.
 *
 * That is the connected components of the flood mask, kept where their
 * brightest pixel passes the seed level and their area min_area. Each part
 * is a per-pixel map, the labelling, or a per-island reduction (peak, area,
 * box, first pixel: sums, maxima and minima, which tiles combine), so a
 * tiled run gives the same islands as the whole image. */
#include "sky-cpu.h"
#include "sky-cpu-renumber.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define ROWS_PER_TASK 64

typedef struct {
  const SkySnrSource *src;
  int64_t nx, ny;
  float flood;
  uint8_t *mask;
  int32_t *labels;
  int64_t n;               /* provisional islands */
  int nbands;
  SkyIslands *band;        /* per band: its share of every island */
  atomic_int failed;
} Flood;

static void
mask_task (void *ctx, int task)
{
  Flood *f = ctx;
  int64_t r0, r1;
  float *row = malloc ((size_t) (3 * f->nx) * sizeof *row);

  if (row == NULL)
    {
      atomic_store (&f->failed, 1);
      return;
    }
  sky_row_band (task, ROWS_PER_TASK, f->ny, &r0, &r1);
  /* NaN (blank, or no rms) compares false: never an island pixel. */
  for (int64_t y = r0; y < r1; y++)
    {
      uint8_t *mask = f->mask + y * f->nx;
      sky_snr_row (f->src, y, 0, f->nx, row + f->nx, row);
      for (int64_t x = 0; x < f->nx; x++)
        mask[x] = row[x] > f->flood;
    }
  free (row);
}

void
sky_islands_clear (SkyIslands *is)
{
  free (is->peak);
  free (is->area);
  free (is->box);
  free (is->first);
  memset (is, 0, sizeof *is);
}

static int
islands_alloc (SkyIslands *is, int64_t n)
{
  size_t count = (size_t) (n + 1);

  memset (is, 0, sizeof *is);
  is->peak = malloc (count * sizeof *is->peak);
  is->area = calloc (count, sizeof *is->area);
  is->box = malloc (4 * count * sizeof *is->box);
  is->first = malloc (count * sizeof *is->first);
  if (!is->peak || !is->area || !is->box || !is->first)
    {
      sky_islands_clear (is);
      return sky_fail (SKY_ERR_MEMORY, "no memory for %lld islands", (long long) n);
    }
  for (size_t k = 0; k < count; k++)
    {
      is->peak[k] = -INFINITY;
      is->box[4 * k] = is->box[4 * k + 2] = INT32_MAX;
      is->box[4 * k + 1] = is->box[4 * k + 3] = -1;
      is->first[k] = INT64_MAX;
    }
  is->n = n;
  return SKY_OK;
}

/* Island k (1-based) of b into a: the reduction tiles and bands share. */
static void
islands_merge (SkyIslands *a, int64_t ka, const SkyIslands *b, int64_t kb)
{
  const int32_t *bb = b->box + 4 * kb;
  int32_t *ab = a->box + 4 * ka;

  if (b->area[kb] == 0)
    return;
  a->area[ka] += b->area[kb];
  a->peak[ka] = b->peak[kb] > a->peak[ka] ? b->peak[kb] : a->peak[ka];
  ab[0] = bb[0] < ab[0] ? bb[0] : ab[0];
  ab[1] = bb[1] > ab[1] ? bb[1] : ab[1];
  ab[2] = bb[2] < ab[2] ? bb[2] : ab[2];
  ab[3] = bb[3] > ab[3] ? bb[3] : ab[3];
  a->first[ka] = b->first[kb] < a->first[ka] ? b->first[kb] : a->first[ka];
}

static void
reduce_task (void *ctx, int band)
{
  Flood *f = ctx;
  SkyIslands *is = &f->band[band];
  int64_t r0 = f->ny * band / f->nbands, r1 = f->ny * (band + 1) / f->nbands;
  float *row = malloc ((size_t) (3 * f->nx) * sizeof *row);

  if (row == NULL)
    {
      atomic_store (&f->failed, 1);
      return;
    }
  for (int64_t y = r0; y < r1; y++)
    for (int64_t x = 0, run_end = 0; x < f->nx; x++)
      {
        int64_t i = y * f->nx + x;
        int32_t l = f->labels[i];
        int32_t *b;
        if (l == 0)
          continue;
        /* The snr of each run of island pixels: a few in a hundred pixels
         * at the flood level, where it is made rather than stored. */
        if (x >= run_end)
          {
            for (run_end = x + 1; run_end < f->nx && f->labels[i + run_end - x] != 0; run_end++)
              ;
            sky_snr_row (f->src, y, x, run_end, row + f->nx, row + x);
          }
        b = is->box + 4 * l;
        if (is->area[l]++ == 0)
          is->first[l] = i;
        is->peak[l] = row[x] > is->peak[l] ? row[x] : is->peak[l];
        b[0] = (int32_t) x < b[0] ? (int32_t) x : b[0];
        b[1] = (int32_t) x > b[1] ? (int32_t) x : b[1];
        b[2] = (int32_t) y < b[2] ? (int32_t) y : b[2];
        b[3] = (int32_t) y;
      }
  free (row);
}

int
sky_cpu_flood (const float *snr, int64_t nx, int64_t ny, double seed_sigma, double flood_sigma,
               int64_t min_area, int connectivity, int nthreads, uint8_t *mask,
               int32_t *labels, int64_t *nislands, SkyIslands *out)
{
  SkySnrSource src = { nx, snr, NULL, NULL };

  return sky_cpu_flood_source (&src, nx, ny, seed_sigma, flood_sigma, min_area, connectivity,
                               nthreads, mask, labels, nislands, out);
}

int
sky_cpu_flood_source (const SkySnrSource *src, int64_t nx, int64_t ny, double seed_sigma,
                      double flood_sigma, int64_t min_area, int connectivity, int nthreads,
                      uint8_t *mask, int32_t *labels, int64_t *nislands, SkyIslands *out)
{
  Flood f = { 0 };
  SkyIslands all = { 0 }, kept_islands = { 0 };
  int64_t n = 0, kept = 0;
  int32_t *relabel = NULL;
  int ret;

  *nislands = 0;
  if (out != NULL)
    memset (out, 0, sizeof *out);
  f.src = src;
  atomic_init (&f.failed, 0);
  f.nx = nx;
  f.ny = ny;
  f.flood = (float) flood_sigma;
  f.mask = mask;
  f.labels = labels;
  sky_parallel_for (sky_row_bands (ny, ROWS_PER_TASK), nthreads, mask_task, &f);
  if (atomic_load (&f.failed))
    return sky_fail (SKY_ERR_MEMORY, "no memory for the flood mask's rows");
  ret = sky_cpu_label (mask, nx, ny, connectivity, nthreads, labels, &n);
  if (ret != SKY_OK || n == 0)
    return ret;

  /* One band per thread, each with the whole table: islands are few beside
   * the pixels, and the bands merge in a pass over the table. */
  f.n = n;
  f.nbands = nthreads > 0 ? nthreads : sky_default_threads ();
  f.nbands = f.nbands > ny ? (int) ny : f.nbands;
  f.band = calloc ((size_t) f.nbands, sizeof *f.band);
  relabel = calloc ((size_t) (n + 1), sizeof *relabel);
  if (f.band == NULL || relabel == NULL)
    {
      ret = sky_fail (SKY_ERR_MEMORY, "no memory for %lld islands", (long long) n);
      goto exit;
    }
  for (int b = 0; b < f.nbands && ret == SKY_OK; b++)
    ret = islands_alloc (&f.band[b], n);
  if (ret != SKY_OK)
    goto exit;
  sky_parallel_for (f.nbands, nthreads, reduce_task, &f);
  if (atomic_load (&f.failed))
    {
      ret = sky_fail (SKY_ERR_MEMORY, "no memory for the islands' rows");
      goto exit;
    }
  all = f.band[0];
  memset (&f.band[0], 0, sizeof f.band[0]);
  for (int b = 1; b < f.nbands; b++)
    for (int64_t k = 1; k <= n; k++)
      islands_merge (&all, k, &f.band[b], k);

  /* Keeping a subset in label order keeps the raster order of first
   * pixels, so the kept labels stay numbered as scipy.ndimage.label would
   * number the kept islands alone. */
  for (int64_t k = 1; k <= n; k++)
    if (all.peak[k] > seed_sigma && all.area[k] >= min_area)
      relabel[k] = (int32_t) ++kept;
  if (kept != n)
    sky_cpu_renumber (labels, mask, nx, ny, relabel, nthreads);
  *nislands = kept;
  if (out != NULL)
    {
      ret = islands_alloc (&kept_islands, kept);
      if (ret != SKY_OK)
        goto exit;
      for (int64_t k = 1; k <= n; k++)
        if (relabel[k] != 0)
          islands_merge (&kept_islands, relabel[k], &all, k);
      *out = kept_islands;
    }

exit:
  for (int b = 0; f.band != NULL && b < f.nbands; b++)
    sky_islands_clear (&f.band[b]);
  free (f.band);
  sky_islands_clear (&all);
  free (relabel);
  return ret;
}
