/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Ownership of images, catalogues and results: each has one clear function. */
#include "sky-core.h"

#include <math.h>
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

int
sky_catalogue_alloc (SkyCatalogue *cat, int64_t n)
{
  size_t count = n > 0 ? (size_t) n : 1;

  memset (cat, 0, sizeof *cat);
  cat->x = calloc (count, sizeof *cat->x);
  cat->y = calloc (count, sizeof *cat->y);
  cat->sum = calloc (count, sizeof *cat->sum);
  cat->npix = calloc (count, sizeof *cat->npix);
  cat->peak = calloc (count, sizeof *cat->peak);
  cat->peak_x = calloc (count, sizeof *cat->peak_x);
  cat->peak_y = calloc (count, sizeof *cat->peak_y);
  cat->xmin = calloc (count, sizeof *cat->xmin);
  cat->xmax = calloc (count, sizeof *cat->xmax);
  cat->ymin = calloc (count, sizeof *cat->ymin);
  cat->ymax = calloc (count, sizeof *cat->ymax);
  if (!cat->x || !cat->y || !cat->sum || !cat->npix || !cat->peak || !cat->peak_x
      || !cat->peak_y || !cat->xmin || !cat->xmax || !cat->ymin || !cat->ymax)
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
  free (cat->x);
  free (cat->y);
  free (cat->sum);
  free (cat->npix);
  free (cat->peak);
  free (cat->peak_x);
  free (cat->peak_y);
  free (cat->xmin);
  free (cat->xmax);
  free (cat->ymin);
  free (cat->ymax);
  free (cat->background);
  free (cat->rms);
  free (cat->sum_err);
  free (cat->peak_err);
  free (cat->x_win);
  free (cat->y_win);
  free (cat->flags);
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

  cat->background = calloc (count, sizeof *cat->background);
  cat->rms = calloc (count, sizeof *cat->rms);
  cat->sum_err = calloc (count, sizeof *cat->sum_err);
  cat->peak_err = calloc (count, sizeof *cat->peak_err);
  cat->x_win = calloc (count, sizeof *cat->x_win);
  cat->y_win = calloc (count, sizeof *cat->y_win);
  cat->flags = calloc (count, sizeof *cat->flags);
  if (!cat->background || !cat->rms || !cat->sum_err || !cat->peak_err || !cat->x_win
      || !cat->y_win || !cat->flags)
    return sky_fail (SKY_ERR_MEMORY, "no memory for the measures of %lld sources",
                     (long long) cat->n);
  return SKY_OK;
}
