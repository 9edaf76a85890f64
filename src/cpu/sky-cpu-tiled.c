/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The lesson's four steps on an image read a band of rows at a time, for a
 * field whose pixels, mask and labels do not fit in memory together. Every
 * number is the whole-image run's: the clip's sums are made in the same
 * order (sky_cpu_clip_source), the labels of the bands are joined along
 * their edges and numbered in raster order of first pixels, and the
 * measurement makes its sums in sky_cpu_measure's order
 * (sky_measure_stream_*). */
#include "sky-cpu.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  const SkyPixelSource *src;
  const SkyParams *params;
  int64_t nx, ny, tile_rows;
  double threshold;
  float *pixels;        /* one band of rows */
  uint8_t *mask;
  int32_t *labels;
  int64_t *parent;      /* union-find over every band's labels, 1-based */
  int64_t nprovisional, parent_size;
  int64_t *base;        /* per band: its labels' offset among all bands' */
  int32_t *final;       /* [provisional]: the label in the whole image */
} Tiles;

/* Reads the band of rows [y0, y1), cuts its mask and labels it alone.
 * The times go to the step that asked (segment: read and mask). */
static int
label_band (Tiles *t, int64_t y0, int64_t y1, int64_t *nlabels, int64_t *ninf,
            double *segment_ms, double *label_ms)
{
  SkyImage band = { 0 };
  double t0 = sky_now_ms (), t1;
  int ret = t->src->read (t->src->ctx, y0 * t->nx, (y1 - y0) * t->nx, t->params->nthreads,
                         t->pixels, ninf);

  if (ret != SKY_OK)
    return ret;
  band.nx = t->nx;
  band.ny = y1 - y0;
  band.pixels = t->pixels;
  ret = sky_cpu_segment (&band, t->threshold, t->params->nthreads, t->mask);
  t1 = sky_now_ms ();
  *segment_ms += t1 - t0;
  if (ret == SKY_OK)
    ret = sky_cpu_label (t->mask, t->nx, y1 - y0, t->params->connectivity,
                         t->params->nthreads, t->labels, nlabels);
  *label_ms += sky_now_ms () - t1;
  return ret;
}

static int64_t
find_root (int64_t *parent, int64_t a)
{
  while (parent[a] != a)
    {
      parent[a] = parent[parent[a]];
      a = parent[a];
    }
  return a;
}

/* The smaller id is the root: a set's root is then its first label in
 * band order and, within the first band it touches, in raster order. */
static void
join (int64_t *parent, int64_t a, int64_t b)
{
  a = find_root (parent, a);
  b = find_root (parent, b);
  if (a < b)
    parent[b] = a;
  else if (b < a)
    parent[a] = b;
}

static int
grow_parent (Tiles *t, int64_t need)
{
  int64_t size = t->parent_size > 0 ? t->parent_size : 1024;
  int64_t *grown;

  if (need <= t->parent_size)
    return SKY_OK;
  while (size < need)
    size *= 2;
  grown = realloc (t->parent, (size_t) size * sizeof *grown);
  if (grown == NULL)
    return sky_fail (SKY_ERR_MEMORY, "label: no memory for %lld provisional labels",
                     (long long) need);
  t->parent = grown;
  t->parent_size = size;
  return SKY_OK;
}

/* Labels every band, joins each band's first row to the last row of the
 * band above, then numbers the sets: roots in increasing id order. */
static int
label_bands (Tiles *t, int64_t *nsources, int64_t *ninf, SkyStepTimes *times)
{
  int64_t nx = t->nx, nbands = (t->ny + t->tile_rows - 1) / t->tile_rows, count = 0;
  int64_t *above = calloc ((size_t) nx, sizeof *above);
  int connect8 = t->params->connectivity == 8;
  int ret = SKY_OK;
  double t0;

  t->base = calloc ((size_t) nbands, sizeof *t->base);
  if (above == NULL || t->base == NULL || grow_parent (t, 1) != SKY_OK)
    {
      free (above);
      return sky_fail (SKY_ERR_MEMORY, "label: out of memory");
    }
  t->parent[0] = 0;
  for (int64_t b = 0; b < nbands && ret == SKY_OK; b++)
    {
      int64_t y0 = b * t->tile_rows, y1 = y0 + t->tile_rows < t->ny ? y0 + t->tile_rows : t->ny;
      int64_t n = 0, base = t->nprovisional;
      const int32_t *first, *last;

      ret = label_band (t, y0, y1, &n, ninf, &times->ms[SKY_STEP_SEGMENT],
                        &times->ms[SKY_STEP_LABEL]);
      if (ret != SKY_OK || (ret = grow_parent (t, base + n + 1)) != SKY_OK)
        break;
      t0 = sky_now_ms ();
      t->base[b] = base;
      for (int64_t i = 1; i <= n; i++)
        t->parent[base + i] = base + i;
      first = t->labels;
      last = t->labels + (y1 - y0 - 1) * nx;
      if (b > 0)
        for (int64_t x = 0; x < nx; x++)
          {
            int64_t id;
            if (first[x] == 0)
              continue;
            id = base + first[x];
            if (above[x] != 0)
              join (t->parent, id, above[x]);
            if (connect8 && x > 0 && above[x - 1] != 0)
              join (t->parent, id, above[x - 1]);
            if (connect8 && x + 1 < nx && above[x + 1] != 0)
              join (t->parent, id, above[x + 1]);
          }
      for (int64_t x = 0; x < nx; x++)
        above[x] = last[x] != 0 ? base + last[x] : 0;
      t->nprovisional = base + n;
      times->ms[SKY_STEP_LABEL] += sky_now_ms () - t0;
    }
  free (above);
  if (ret != SKY_OK)
    return ret;

  t0 = sky_now_ms ();
  t->final = malloc ((size_t) (t->nprovisional + 1) * sizeof *t->final);
  if (t->final == NULL)
    return sky_fail (SKY_ERR_MEMORY, "label: out of memory");
  t->final[0] = 0;
  for (int64_t id = 1; id <= t->nprovisional; id++)
    {
      int64_t root = find_root (t->parent, id);
      if (root != id)
        t->final[id] = t->final[root]; /* root < id: numbered already */
      else if (count == INT32_MAX)
        return sky_fail (SKY_ERR_SIZE, "label: more than %d sources", INT32_MAX);
      else
        t->final[id] = (int32_t) ++count;
    }
  *nsources = count;
  times->ms[SKY_STEP_LABEL] += sky_now_ms () - t0;
  return SKY_OK;
}

/* Reads and labels every band again (the same labels: the same mask and
 * labeller), and measures its rows with the final labels. */
static int
measure_bands (Tiles *t, int64_t nsources, SkyCatalogue *cat, SkyStepTimes *times)
{
  int64_t nx = t->nx, nbands = (t->ny + t->tile_rows - 1) / t->tile_rows;
  int32_t *row = malloc ((size_t) nx * sizeof *row);
  SkyMeasureStream *stream = NULL;
  double t0 = sky_now_ms (), unused = 0;
  int ret;

  if (row == NULL)
    return sky_fail (SKY_ERR_MEMORY, "measure: out of memory");
  ret = sky_measure_stream_new (nx, t->ny, nsources, t->params->nthreads, cat, &stream);
  for (int64_t b = 0; b < nbands && ret == SKY_OK; b++)
    {
      int64_t y0 = b * t->tile_rows, y1 = y0 + t->tile_rows < t->ny ? y0 + t->tile_rows : t->ny;
      int64_t n = 0;

      ret = label_band (t, y0, y1, &n, NULL, &unused, &unused);
      if (ret == SKY_OK && t->base[b] + n != (b + 1 < nbands ? t->base[b + 1] : t->nprovisional))
        ret = sky_fail (SKY_ERR_IO, "measure: rows %lld to %lld changed between two reads",
                        (long long) y0, (long long) y1 - 1);
      for (int64_t y = y0; y < y1 && ret == SKY_OK; y++)
        {
          const int32_t *local = t->labels + (y - y0) * nx;
          int any = 0;
          for (int64_t x = 0; x < nx; x++)
            {
              row[x] = local[x] != 0 ? t->final[t->base[b] + local[x]] : 0;
              any |= local[x] != 0;
            }
          if (any)
            sky_measure_stream_row (stream, y, t->pixels + (y - y0) * nx, row);
        }
    }
  if (ret == SKY_OK)
    sky_measure_stream_finish (stream);
  else
    {
      sky_measure_stream_free (stream);
      sky_catalogue_clear (cat);
    }
  free (row);
  times->ms[SKY_STEP_MEASURE] = sky_now_ms () - t0;
  return ret;
}

int
sky_cpu_run_tiled (const SkyPixelSource *src, const SkyParams *params, int64_t tile_rows,
                   SkyResult *res, int64_t *ninf)
{
  Tiles t = { 0 };
  int64_t nx = src->nx, ny = src->ny, ninf_read = 0;
  double t0;
  int ret;

  sky_result_clear (res);
  memset (res, 0, sizeof *res);
  res->nx = nx;
  res->ny = ny;
  if (tile_rows < 1)
    tile_rows = 1;
  if (tile_rows > ny)
    tile_rows = ny;
  t.src = src;
  t.params = params;
  t.nx = nx;
  t.ny = ny;
  t.tile_rows = tile_rows;
  t.pixels = sky_alloc_large ((size_t) (tile_rows * nx) * sizeof *t.pixels);
  t.mask = sky_alloc_large ((size_t) (tile_rows * nx));
  t.labels = sky_alloc_large ((size_t) (tile_rows * nx) * sizeof *t.labels);
  if (t.pixels == NULL || t.mask == NULL || t.labels == NULL)
    {
      ret = sky_fail (SKY_ERR_MEMORY, "no memory for a band of %lld x %lld pixels",
                      (long long) nx, (long long) tile_rows);
      goto exit;
    }

  t0 = sky_now_ms ();
  ret = sky_cpu_clip_source (src, params, &res->stats);
  res->times.ms[SKY_STEP_CLIP] = sky_now_ms () - t0;
  if (ret != SKY_OK)
    goto exit;
  res->threshold_value = sky_threshold_value (params, &res->stats);
  t.threshold = res->threshold_value;

  if ((ret = label_bands (&t, &res->nsources, &ninf_read, &res->times)) != SKY_OK
      || (ret = measure_bands (&t, res->nsources, &res->catalogue, &res->times)) != SKY_OK)
    goto exit;
  for (int step = 0; step < SKY_STEP_COUNT; step++)
    res->times.total += res->times.ms[step];
  if (ninf != NULL)
    *ninf = ninf_read;

exit:
  free (t.pixels);
  free (t.mask);
  free (t.labels);
  free (t.parent);
  free (t.base);
  free (t.final);
  if (ret != SKY_OK)
    sky_result_clear (res);
  return ret;
}
