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

struct SkyBandJoin {
  int64_t nx, nbands, nadded;
  int connect8;
  int64_t *parent;      /* union-find over every band's labels, 1-based */
  int64_t nprovisional, parent_size;
  int64_t *base;        /* per band: its labels' offset among all bands' */
  int64_t *above;       /* the last band's last row, as provisional ids */
  int32_t *final;       /* [provisional]: the label in the whole image */
};

typedef struct {
  const SkyPixelSource *src;
  const SkyParams *params;
  int64_t nx, ny, tile_rows;
  double threshold;
  float *pixels;        /* one band of rows */
  uint8_t *mask;
  int32_t *labels;
  SkyBandJoin *join;
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
grow_parent (SkyBandJoin *j, int64_t need)
{
  int64_t size = j->parent_size > 0 ? j->parent_size : 1024;
  int64_t *grown;

  if (need <= j->parent_size)
    return SKY_OK;
  while (size < need)
    size *= 2;
  grown = realloc (j->parent, (size_t) size * sizeof *grown);
  if (grown == NULL)
    return sky_fail (SKY_ERR_MEMORY, "label: no memory for %lld provisional labels",
                     (long long) need);
  j->parent = grown;
  j->parent_size = size;
  return SKY_OK;
}

int
sky_band_join_new (int64_t nx, int64_t nbands, int connectivity, SkyBandJoin **out)
{
  SkyBandJoin *j = calloc (1, sizeof *j);

  *out = NULL;
  if (j == NULL)
    return sky_fail (SKY_ERR_MEMORY, "label: out of memory");
  j->nx = nx;
  j->nbands = nbands;
  j->connect8 = connectivity == 8;
  j->above = calloc ((size_t) nx, sizeof *j->above);
  j->base = calloc ((size_t) nbands + 1, sizeof *j->base);
  if (j->above == NULL || j->base == NULL || grow_parent (j, 1) != SKY_OK)
    {
      sky_band_join_free (j);
      return sky_fail (SKY_ERR_MEMORY, "label: out of memory");
    }
  j->parent[0] = 0;
  *out = j;
  return SKY_OK;
}

void
sky_band_join_free (SkyBandJoin *j)
{
  if (j == NULL)
    return;
  free (j->parent);
  free (j->base);
  free (j->above);
  free (j->final);
  free (j);
}

int
sky_band_join_add (SkyBandJoin *j, const int32_t *first, const int32_t *last, int64_t n)
{
  const int64_t nx = j->nx, base = j->nprovisional;
  int ret;

  if (j->nadded >= j->nbands)
    return sky_fail (SKY_ERR_ARGUMENT, "label: more bands than the %lld announced",
                     (long long) j->nbands);
  if ((ret = grow_parent (j, base + n + 1)) != SKY_OK)
    return ret;
  j->base[j->nadded] = base;
  for (int64_t i = 1; i <= n; i++)
    j->parent[base + i] = base + i;
  if (j->nadded > 0)
    for (int64_t x = 0; x < nx; x++)
      {
        int64_t id;
        if (first[x] == 0)
          continue;
        id = base + first[x];
        if (j->above[x] != 0)
          join (j->parent, id, j->above[x]);
        if (j->connect8 && x > 0 && j->above[x - 1] != 0)
          join (j->parent, id, j->above[x - 1]);
        if (j->connect8 && x + 1 < nx && j->above[x + 1] != 0)
          join (j->parent, id, j->above[x + 1]);
      }
  for (int64_t x = 0; x < nx; x++)
    j->above[x] = last[x] != 0 ? base + last[x] : 0;
  j->nprovisional = base + n;
  j->nadded++;
  j->base[j->nadded] = j->nprovisional;
  return SKY_OK;
}

int
sky_band_join_finish (SkyBandJoin *j, int64_t *nsources)
{
  int64_t count = 0;

  free (j->final);
  j->final = malloc ((size_t) (j->nprovisional + 1) * sizeof *j->final);
  if (j->final == NULL)
    return sky_fail (SKY_ERR_MEMORY, "label: out of memory");
  j->final[0] = 0;
  for (int64_t id = 1; id <= j->nprovisional; id++)
    {
      int64_t root = find_root (j->parent, id);
      if (root != id)
        j->final[id] = j->final[root]; /* root < id: numbered already */
      else if (count == INT32_MAX)
        return sky_fail (SKY_ERR_SIZE, "label: more than %d sources", INT32_MAX);
      else
        j->final[id] = (int32_t) ++count;
    }
  *nsources = count;
  return SKY_OK;
}

int64_t
sky_band_join_base (const SkyBandJoin *j, int64_t band)
{
  return j->base[band];
}

int64_t
sky_band_join_count (const SkyBandJoin *j)
{
  return j->nprovisional;
}

const int32_t *
sky_band_join_final (const SkyBandJoin *j)
{
  return j->final;
}

/* Labels every band and joins it to the band above (sky_band_join_add),
 * then numbers the sets. */
static int
label_bands (Tiles *t, int64_t *nsources, int64_t *ninf, SkyStepTimes *times)
{
  int64_t nx = t->nx, nbands = (t->ny + t->tile_rows - 1) / t->tile_rows;
  int ret = sky_band_join_new (nx, nbands, t->params->connectivity, &t->join);
  double t0;

  for (int64_t b = 0; b < nbands && ret == SKY_OK; b++)
    {
      int64_t y0 = b * t->tile_rows, y1 = y0 + t->tile_rows < t->ny ? y0 + t->tile_rows : t->ny;
      int64_t n = 0;

      ret = label_band (t, y0, y1, &n, ninf, &times->ms[SKY_STEP_SEGMENT],
                        &times->ms[SKY_STEP_LABEL]);
      if (ret != SKY_OK)
        break;
      t0 = sky_now_ms ();
      ret = sky_band_join_add (t->join, t->labels, t->labels + (y1 - y0 - 1) * nx, n);
      times->ms[SKY_STEP_LABEL] += sky_now_ms () - t0;
    }
  if (ret != SKY_OK)
    return ret;
  t0 = sky_now_ms ();
  ret = sky_band_join_finish (t->join, nsources);
  times->ms[SKY_STEP_LABEL] += sky_now_ms () - t0;
  return ret;
}

/* Reads and labels every band again (the same labels: the same mask and
 * labeller), and measures its rows with the final labels. */
static int
measure_bands (Tiles *t, int64_t nsources, SkyCatalogue *cat, SkyStepTimes *times)
{
  int64_t nx = t->nx, nbands = (t->ny + t->tile_rows - 1) / t->tile_rows;
  const int32_t *final = sky_band_join_final (t->join);
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
      int64_t n = 0, base = sky_band_join_base (t->join, b);

      ret = label_band (t, y0, y1, &n, NULL, &unused, &unused);
      if (ret == SKY_OK
          && sky_band_join_base (t->join, b) + n != sky_band_join_base (t->join, b + 1))
        ret = sky_fail (SKY_ERR_IO, "measure: rows %lld to %lld changed between two reads",
                        (long long) y0, (long long) y1 - 1);
      for (int64_t y = y0; y < y1 && ret == SKY_OK; y++)
        {
          const int32_t *local = t->labels + (y - y0) * nx;
          int any = 0;
          for (int64_t x = 0; x < nx; x++)
            {
              row[x] = local[x] != 0 ? final[base + local[x]] : 0;
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
  sky_band_join_free (t.join);
  if (ret != SKY_OK)
    sky_result_clear (res);
  return ret;
}
