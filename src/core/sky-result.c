/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Ownership of images, catalogues and results: each has one clear function. */
#include "sky-core.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

int
sky_image_alloc (SkyImage *img, int64_t nx, int64_t ny)
{
  memset (img, 0, sizeof *img);
  if (nx <= 0 || ny <= 0 || nx > INT32_MAX || ny > INT32_MAX
      || (uint64_t) nx * (uint64_t) ny > SIZE_MAX / sizeof (float))
    return sky_fail (SKY_ERR_SIZE, "cannot make a %lld x %lld image",
                     (long long) nx, (long long) ny);
  img->pixels = sky_alloc_large ((size_t) (nx * ny) * sizeof (float));
  if (img->pixels == NULL)
    return sky_fail (SKY_ERR_MEMORY, "no memory for a %lld x %lld image",
                     (long long) nx, (long long) ny);
  memset (img->pixels, 0, (size_t) (nx * ny) * sizeof (float));
  img->nx = nx;
  img->ny = ny;
  img->hdu = 1;
  img->nplanes = 1;
  img->bitpix = -32;
  return SKY_OK;
}

void
sky_image_count_blanks (SkyImage *img)
{
  int64_t n = img->nx * img->ny, nblank = 0;

  for (int64_t i = 0; i < n; i++)
    nblank += isnan (img->pixels[i]);
  img->nblank = nblank;
}

void
sky_image_clear (SkyImage *img)
{
  free (img->pixels);
  free (img->path);
  free (img->header);
  memset (img, 0, sizeof *img);
}

/* A catalogue's columns, for what is done to every one alike: the offset
 * of its pointer in SkyCatalogue and the size of one element. */
typedef struct {
  size_t offset, size;
} Column;

#define COLUMN(field) { offsetof (SkyCatalogue, field), sizeof *((SkyCatalogue *) 0)->field }

/* Every method's columns, then the local method's own. */
static const Column shared_columns[] = {
  COLUMN (x), COLUMN (y), COLUMN (sum), COLUMN (npix), COLUMN (peak), COLUMN (peak_x),
  COLUMN (peak_y), COLUMN (xmin), COLUMN (xmax), COLUMN (ymin), COLUMN (ymax),
};
static const Column local_columns[] = {
  COLUMN (background), COLUMN (rms), COLUMN (sum_err), COLUMN (peak_err), COLUMN (x_win),
  COLUMN (y_win), COLUMN (flags),
};

/* Through memcpy: the fields are double *, float * and so on, not void *. */
static void *
column_get (const SkyCatalogue *cat, const Column *column)
{
  void *p;
  memcpy (&p, (const char *) cat + column->offset, sizeof p);
  return p;
}

static void
column_set (SkyCatalogue *cat, const Column *column, void *p)
{
  memcpy ((char *) cat + column->offset, &p, sizeof p);
}

/* Zeroed columns of count elements: 1, or 0 where one could not be had
 * (those that could are set, for the clear function to free). */
static int
columns_alloc (SkyCatalogue *cat, const Column *columns, size_t ncolumns, size_t count)
{
  int ok = 1;

  for (size_t i = 0; i < ncolumns; i++)
    {
      void *p = calloc (count, columns[i].size);
      column_set (cat, &columns[i], p);
      ok = ok && p != NULL;
    }
  return ok;
}

static void
columns_free (SkyCatalogue *cat, const Column *columns, size_t ncolumns)
{
  for (size_t i = 0; i < ncolumns; i++)
    free (column_get (cat, &columns[i]));
}

#define N_COLUMNS(a) (sizeof (a) / sizeof (a)[0])

int
sky_catalogue_alloc (SkyCatalogue *cat, int64_t n)
{
  size_t count = n > 0 ? (size_t) n : 1;

  memset (cat, 0, sizeof *cat);
  if (!columns_alloc (cat, shared_columns, N_COLUMNS (shared_columns), count))
    {
      sky_catalogue_clear (cat);
      return sky_fail (SKY_ERR_MEMORY, "no memory for a catalogue of %lld sources",
                       (long long) n);
    }
  cat->n = n;
  return SKY_OK;
}

void
sky_catalogue_clear (SkyCatalogue *cat)
{
  columns_free (cat, shared_columns, N_COLUMNS (shared_columns));
  columns_free (cat, local_columns, N_COLUMNS (local_columns));
  memset (cat, 0, sizeof *cat);
}

/* An insertion into a short sorted list: k is tiny beside the sources. */
int
sky_catalogue_top_sums (const SkyCatalogue *cat, int64_t *idx, int k)
{
  int n = 0;

  for (int64_t i = 0; i < cat->n; i++)
    {
      int pos;

      if (n < k)
        n++;
      else if (!(cat->sum[i] > cat->sum[idx[k - 1]]))
        continue;
      pos = n - 1;
      while (pos > 0 && cat->sum[i] > cat->sum[idx[pos - 1]])
        {
          idx[pos] = idx[pos - 1];
          pos--;
        }
      idx[pos] = i;
    }
  return n;
}

void
sky_result_clear (SkyResult *res)
{
  free (res->mask);
  free (res->labels);
  free (res->background);
  free (res->rms);
  sky_catalogue_clear (&res->catalogue);
  memset (res, 0, sizeof *res);
}

int
sky_catalogue_alloc_local (SkyCatalogue *cat)
{
  size_t count = cat->n > 0 ? (size_t) cat->n : 1;

  if (!columns_alloc (cat, local_columns, N_COLUMNS (local_columns), count))
    return sky_fail (SKY_ERR_MEMORY, "no memory for the measures of %lld sources",
                     (long long) cat->n);
  return SKY_OK;
}
