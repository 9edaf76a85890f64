/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Source measurement in one pass over the source pixels.
 *
 * Each thread takes a band of rows. Labels are numbered in raster order of
 * a source's first pixel, so the sources that start inside a band have a
 * contiguous range of labels no other band starts: the band accumulates
 * those straight into the catalogue. Any other source it meets started above
 * it and so crosses its first row; there are at most nx of them, kept in a
 * small table and added to the catalogue after all bands are done. */
#include "sky-cpu.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  int32_t label;       /* 0: free slot */
  int64_t npix;
  double sum, sum_x, sum_y;
  float peak;
  int32_t peak_x, peak_y;
  int32_t xmin, xmax, ymin, ymax;
} Partial;

typedef struct {
  int64_t nx, ny;
  SkyRowValues row;
  void *row_ctx;
  int64_t buf_floats;
  const int32_t *labels;
  SkyCatalogue *cat;
  double *sum_x, *sum_y;  /* per source, divided by sum at the end */
  int nbands;
  int32_t *band_max;      /* per band: largest label in it */
  Partial **foreign;      /* per band: sources that started above it */
  int64_t foreign_size;   /* slots per table, a power of two */
  atomic_int failed;
} Measure;

static void
band_rows (const Measure *m, int band, int64_t *r0, int64_t *r1)
{
  *r0 = m->ny * band / m->nbands;
  *r1 = m->ny * (band + 1) / m->nbands;
}

static void
max_label_task (void *ctx, int band)
{
  Measure *m = ctx;
  int64_t r0, r1, nx = m->nx;
  int32_t best = 0;

  band_rows (m, band, &r0, &r1);
  for (int64_t i = r0 * nx; i < r1 * nx; i++)
    best = m->labels[i] > best ? m->labels[i] : best;
  m->band_max[band] = best;
}

static Partial *
foreign_slot (Measure *m, int band, int32_t label)
{
  Partial *table = m->foreign[band];
  uint64_t mask = (uint64_t) m->foreign_size - 1;
  uint64_t h = ((uint64_t) label * 0x9E3779B97F4A7C15ull) >> 20;

  for (;; h++)
    {
      Partial *p = &table[h & mask];
      if (p->label == label)
        return p;
      if (p->label == 0)
        {
          p->label = label;
          p->peak = -INFINITY;
          p->xmin = p->ymin = INT32_MAX;
          p->xmax = p->ymax = -1;
          return p;
        }
    }
}

static void
add_to_partial (Partial *p, double v, float value, int32_t x, int32_t y)
{
  p->npix++;
  p->sum += v;
  p->sum_x += v * x;
  p->sum_y += v * y;
  if (value > p->peak)
    {
      p->peak = value;
      p->peak_x = x;
      p->peak_y = y;
    }
  p->xmin = x < p->xmin ? x : p->xmin;
  p->xmax = x > p->xmax ? x : p->xmax;
  p->ymin = y < p->ymin ? y : p->ymin;
  p->ymax = y > p->ymax ? y : p->ymax;
}

/* A pixel of a source that starts in this band: straight into the
 * catalogue's row i (label - 1). */
static inline void
add_to_own_source (Measure *m, int64_t i, double v, float value, int64_t x, int64_t y)
{
  SkyCatalogue *cat = m->cat;

  cat->npix[i]++;
  cat->sum[i] += v;
  m->sum_x[i] += v * x;
  m->sum_y[i] += v * y;
  /* Strictly greater keeps the first peak in raster order. */
  if (value > cat->peak[i])
    {
      cat->peak[i] = value;
      cat->peak_x[i] = (int32_t) x;
      cat->peak_y[i] = (int32_t) y;
    }
  cat->xmin[i] = x < cat->xmin[i] ? (int32_t) x : cat->xmin[i];
  cat->xmax[i] = x > cat->xmax[i] ? (int32_t) x : cat->xmax[i];
  cat->ymin[i] = y < cat->ymin[i] ? (int32_t) y : cat->ymin[i];
  cat->ymax[i] = y > cat->ymax[i] ? (int32_t) y : cat->ymax[i];
}

static void
measure_task (void *ctx, int band)
{
  Measure *m = ctx;
  int64_t r0, r1, nx = m->nx;
  int32_t first_own = 1;
  float *buf = NULL;

  band_rows (m, band, &r0, &r1);
  for (int b = 0; b < band; b++)
    first_own = m->band_max[b] >= first_own ? m->band_max[b] + 1 : first_own;
  if (m->buf_floats > 0 && (buf = malloc ((size_t) m->buf_floats * sizeof *buf)) == NULL)
    {
      atomic_store (&m->failed, 1);
      return;
    }

  for (int64_t y = r0; y < r1; y++)
    {
      const int32_t *row = m->labels + y * nx;
      const float *pix = NULL;
      for (int64_t x = 0; x < nx; x++)
        {
          int32_t label = row[x];

          if (label == 0)
            continue;
          if (pix == NULL)
            pix = m->row (m->row_ctx, y, buf);
          float value = pix[x];
          double v = value;
          if (label < first_own)
            {
              add_to_partial (foreign_slot (m, band, label), v, value, (int32_t) x, (int32_t) y);
              continue;
            }
          add_to_own_source (m, label - 1, v, value, x, y);
        }
    }
  free (buf);
}

/* Adds a band's share of a source that started above it. Bands are merged
 * in row order, so on equal peaks the one seen first stays. */
static void
merge_partial (Measure *m, const Partial *p)
{
  SkyCatalogue *cat = m->cat;
  int64_t i = p->label - 1;

  cat->npix[i] += p->npix;
  cat->sum[i] += p->sum;
  m->sum_x[i] += p->sum_x;
  m->sum_y[i] += p->sum_y;
  if (p->peak > cat->peak[i])
    {
      cat->peak[i] = p->peak;
      cat->peak_x[i] = p->peak_x;
      cat->peak_y[i] = p->peak_y;
    }
  cat->xmin[i] = p->xmin < cat->xmin[i] ? p->xmin : cat->xmin[i];
  cat->xmax[i] = p->xmax > cat->xmax[i] ? p->xmax : cat->xmax[i];
  cat->ymin[i] = p->ymin < cat->ymin[i] ? p->ymin : cat->ymin[i];
  cat->ymax[i] = p->ymax > cat->ymax[i] ? p->ymax : cat->ymax[i];
}

static const float *
image_row (void *ctx, int64_t y, float *buf)
{
  const SkyImage *img = ctx;

  (void) buf;
  return img->pixels + y * img->nx;
}

int
sky_cpu_measure (const SkyImage *img, const int32_t *labels, int64_t nlabels, int nthreads,
                 SkyCatalogue *cat)
{
  return sky_cpu_measure_rows (img->nx, img->ny, image_row, (void *) img, 0, labels, nlabels,
                               nthreads, cat);
}

int
sky_cpu_measure_rows (int64_t nx, int64_t ny, SkyRowValues row, void *row_ctx,
                      int64_t buf_floats, const int32_t *labels, int64_t nlabels, int nthreads,
                      SkyCatalogue *cat)
{
  Measure m = { .nx = nx, .ny = ny, .row = row, .row_ctx = row_ctx, .buf_floats = buf_floats,
                .labels = labels, .cat = cat, .nbands = 1 };
  int ret = sky_catalogue_alloc (cat, nlabels);

  if (ret != SKY_OK)
    return ret;
  atomic_init (&m.failed, 0);
  m.nbands = nthreads <= 0 ? sky_default_threads () : nthreads;
  if (m.nbands > ny)
    m.nbands = (int) ny;
  if (nx * ny < (1 << 18))
    m.nbands = 1;
  m.foreign_size = 16;
  while (m.foreign_size < 2 * nx + 2)
    m.foreign_size *= 2;

  m.sum_x = calloc ((size_t) (nlabels > 0 ? nlabels : 1), sizeof *m.sum_x);
  m.sum_y = calloc ((size_t) (nlabels > 0 ? nlabels : 1), sizeof *m.sum_y);
  m.band_max = calloc ((size_t) m.nbands, sizeof *m.band_max);
  m.foreign = calloc ((size_t) m.nbands, sizeof *m.foreign);
  if (!m.sum_x || !m.sum_y || !m.band_max || !m.foreign)
    {
      ret = sky_fail (SKY_ERR_MEMORY, "measure: out of memory");
      goto exit;
    }
  for (int b = 1; b < m.nbands; b++)
    if ((m.foreign[b] = calloc ((size_t) m.foreign_size, sizeof (Partial))) == NULL)
      {
        ret = sky_fail (SKY_ERR_MEMORY, "measure: out of memory");
        goto exit;
      }

  for (int64_t i = 0; i < nlabels; i++)
    {
      cat->peak[i] = -INFINITY;
      cat->xmin[i] = cat->ymin[i] = INT32_MAX;
      cat->xmax[i] = cat->ymax[i] = -1;
    }

  if (m.nbands > 1)
    sky_parallel_for (m.nbands, m.nbands, max_label_task, &m);
  sky_parallel_for (m.nbands, m.nbands, measure_task, &m);
  if (atomic_load (&m.failed))
    {
      ret = sky_fail (SKY_ERR_MEMORY, "measure: out of memory");
      goto exit;
    }
  for (int b = 1; b < m.nbands; b++)
    for (int64_t s = 0; s < m.foreign_size; s++)
      if (m.foreign[b][s].label != 0)
        merge_partial (&m, &m.foreign[b][s]);

  for (int64_t i = 0; i < nlabels; i++)
    {
      cat->x[i] = m.sum_x[i] / cat->sum[i];
      cat->y[i] = m.sum_y[i] / cat->sum[i];
    }

exit:
  if (m.foreign != NULL)
    for (int b = 0; b < m.nbands; b++)
      free (m.foreign[b]);
  free (m.foreign);
  free (m.band_max);
  free (m.sum_x);
  free (m.sum_y);
  if (ret != SKY_OK)
    sky_catalogue_clear (cat);
  return ret;
}

/* ----------------------------------------------------------- row by row */

/* sky_cpu_measure over rows given one at a time in raster order. The rows
 * are cut into the bands sky_cpu_measure_rows would give its threads, and
 * every sum is made in the order it makes them: a band adds the sources
 * that start in it straight into the catalogue and the others into a
 * table, which is added at the band's end (the bands are merged in row
 * order there too, after all of them; per source the order is the same). */
struct SkyMeasureStream {
  Measure m;
  int band;
  int64_t band_end;       /* first row of the next band */
  int32_t first_own;      /* the current band's first own label */
  int32_t largest;        /* largest label in the rows so far */
};

static void
stream_merge_foreign (SkyMeasureStream *s)
{
  Measure *m = &s->m;

  for (int64_t slot = 0; slot < m->foreign_size; slot++)
    if (m->foreign[0][slot].label != 0)
      merge_partial (m, &m->foreign[0][slot]);
  memset (m->foreign[0], 0, (size_t) m->foreign_size * sizeof (Partial));
}

int
sky_measure_stream_new (int64_t nx, int64_t ny, int64_t nlabels, int nthreads,
                        SkyCatalogue *cat, SkyMeasureStream **out)
{
  SkyMeasureStream *s = calloc (1, sizeof *s);
  Measure *m;
  int ret;

  *out = NULL;
  if (s == NULL)
    return sky_fail (SKY_ERR_MEMORY, "measure: out of memory");
  m = &s->m;
  if ((ret = sky_catalogue_alloc (cat, nlabels)) != SKY_OK)
    {
      free (s);
      return ret;
    }
  m->nx = nx;
  m->ny = ny;
  m->cat = cat;
  /* The bands sky_cpu_measure_rows would make. */
  m->nbands = nthreads <= 0 ? sky_default_threads () : nthreads;
  if (m->nbands > ny)
    m->nbands = (int) ny;
  if (nx * ny < (1 << 18))
    m->nbands = 1;
  m->foreign_size = 16;
  while (m->foreign_size < 2 * nx + 2)
    m->foreign_size *= 2;
  m->sum_x = calloc ((size_t) (nlabels > 0 ? nlabels : 1), sizeof *m->sum_x);
  m->sum_y = calloc ((size_t) (nlabels > 0 ? nlabels : 1), sizeof *m->sum_y);
  m->foreign = calloc (1, sizeof *m->foreign);
  if (m->foreign != NULL)
    m->foreign[0] = calloc ((size_t) m->foreign_size, sizeof (Partial));
  if (!m->sum_x || !m->sum_y || !m->foreign || !m->foreign[0])
    {
      sky_measure_stream_free (s);
      sky_catalogue_clear (cat);
      return sky_fail (SKY_ERR_MEMORY, "measure: out of memory");
    }
  for (int64_t i = 0; i < nlabels; i++)
    {
      cat->peak[i] = -INFINITY;
      cat->xmin[i] = cat->ymin[i] = INT32_MAX;
      cat->xmax[i] = cat->ymax[i] = -1;
    }
  s->band = 0;
  s->band_end = ny / m->nbands;
  s->first_own = 1;
  *out = s;
  return SKY_OK;
}

void
sky_measure_stream_row (SkyMeasureStream *s, int64_t y, const float *values,
                        const int32_t *labels)
{
  Measure *m = &s->m;
  int64_t nx = m->nx;

  while (y >= s->band_end)
    {
      /* A new band: what started above it is foreign to it. */
      stream_merge_foreign (s);
      s->band++;
      s->band_end = m->ny * (s->band + 1) / m->nbands;
      s->first_own = s->largest + 1;
    }
  for (int64_t x = 0; x < nx; x++)
    {
      int32_t label = labels[x];
      if (label == 0)
        continue;
      s->largest = label > s->largest ? label : s->largest;
      float value = values[x];
      double v = value;
      if (label < s->first_own)
        {
          add_to_partial (foreign_slot (m, 0, label), v, value, (int32_t) x, (int32_t) y);
          continue;
        }
      add_to_own_source (m, label - 1, v, value, x, y);
    }
}

void
sky_measure_stream_finish (SkyMeasureStream *s)
{
  Measure *m = &s->m;
  SkyCatalogue *cat = m->cat;

  stream_merge_foreign (s);
  for (int64_t i = 0; i < cat->n; i++)
    {
      cat->x[i] = m->sum_x[i] / cat->sum[i];
      cat->y[i] = m->sum_y[i] / cat->sum[i];
    }
  sky_measure_stream_free (s);
}

void
sky_measure_stream_free (SkyMeasureStream *s)
{
  if (s == NULL)
    return;
  if (s->m.foreign != NULL)
    free (s->m.foreign[0]);
  free (s->m.foreign);
  free (s->m.sum_x);
  free (s->m.sum_y);
  free (s);
}
