/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Convolution kernels and the geometry of a convolution's output. */
#include "sky-core.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_KERNEL 4097

static int
kernel_alloc (SkyKernel *k, int nx, int ny)
{
  memset (k, 0, sizeof *k);
  if (nx <= 0 || ny <= 0 || nx > MAX_KERNEL || ny > MAX_KERNEL)
    return sky_fail (SKY_ERR_ARGUMENT, "a %d x %d kernel is not possible (1 to %d a side)", nx,
                     ny, MAX_KERNEL);
  k->values = calloc ((size_t) nx * ny, sizeof *k->values);
  if (k->values == NULL)
    return sky_fail (SKY_ERR_MEMORY, "no memory for a %d x %d kernel", nx, ny);
  k->nx = nx;
  k->ny = ny;
  return SKY_OK;
}

void
sky_kernel_clear (SkyKernel *k)
{
  free (k->values);
  memset (k, 0, sizeof *k);
}

int
sky_kernel_from_values (SkyKernel *k, int nx, int ny, const double *values)
{
  int ret = kernel_alloc (k, nx, ny);

  if (ret == SKY_OK)
    memcpy (k->values, values, (size_t) nx * ny * sizeof *values);
  return ret;
}

int
sky_kernel_lesson (SkyKernel *k)
{
  int ret = kernel_alloc (k, 15, 15);

  if (ret != SKY_OK)
    return ret;
  /* As the lesson computes it: dst = sqrt(x*x + y*y), exp(-dst^2 / 2). */
  for (int i = 0; i < 15; i++)
    for (int j = 0; j < 15; j++)
      {
        double x = -2.0 + 4.0 * j / 14.0, y = -2.0 + 4.0 * i / 14.0;
        double dst = sqrt (x * x + y * y);
        k->values[i * 15 + j] = exp (-(dst * dst) / 2.0);
      }
  return SKY_OK;
}

static void
normalise (SkyKernel *k)
{
  double sum = 0;

  for (int i = 0; i < k->nx * k->ny; i++)
    sum += k->values[i];
  for (int i = 0; i < k->nx * k->ny; i++)
    k->values[i] /= sum;
}

int
sky_kernel_gaussian (SkyKernel *k, double sigma, int size)
{
  int ret, half;

  memset (k, 0, sizeof *k);
  if (!(sigma > 0 && sigma < 1000))
    return sky_fail (SKY_ERR_ARGUMENT, "a Gaussian kernel needs a sigma between 0 and 1000 "
                     "pixels (got %g)", sigma);
  if (size == 0)
    size = 2 * (int) ceil (4 * sigma) + 1;
  if (size < 0 || size % 2 == 0)
    return sky_fail (SKY_ERR_ARGUMENT, "a Gaussian kernel's size must be odd (got %d)", size);
  if ((ret = kernel_alloc (k, size, size)) != SKY_OK)
    return ret;
  half = size / 2;
  for (int i = 0; i < size; i++)
    for (int j = 0; j < size; j++)
      {
        double x = j - half, y = i - half;
        k->values[i * size + j] = exp (-(x * x + y * y) / (2 * sigma * sigma));
      }
  normalise (k);
  return SKY_OK;
}

int
sky_kernel_box (SkyKernel *k, int size)
{
  int ret = kernel_alloc (k, size, size);

  if (ret != SKY_OK)
    return ret;
  for (int i = 0; i < size * size; i++)
    k->values[i] = 1.0 / ((double) size * size);
  return SKY_OK;
}

int
sky_kernel_parse (SkyKernel *k, const char *spec)
{
  char *end, *end_size;

  memset (k, 0, sizeof *k);
  if (strcmp (spec, "lesson") == 0)
    return sky_kernel_lesson (k);
  if (strncmp (spec, "gauss:", 6) == 0)
    {
      double sigma = strtod (spec + 6, &end);
      if (end != spec + 6 && *end == '\0')
        return sky_kernel_gaussian (k, sigma, 0);
      if (end != spec + 6 && *end == ':')
        {
          long size = strtol (end + 1, &end_size, 10);
          if (end_size != end + 1 && *end_size == '\0' && size > 0 && size <= MAX_KERNEL)
            return sky_kernel_gaussian (k, sigma, (int) size);
        }
    }
  if (strncmp (spec, "box:", 4) == 0)
    {
      long size = strtol (spec + 4, &end, 10);
      if (end != spec + 4 && *end == '\0' && size > 0 && size <= MAX_KERNEL)
        return sky_kernel_box (k, (int) size);
    }
  return sky_fail (SKY_ERR_ARGUMENT, "kernel '%s': expected lesson, gauss:SIGMA[:SIZE] or "
                   "box:SIZE", spec);
}

int
sky_kernel_separate (const SkyKernel *k, double tolerance, double *col, double *row)
{
  int n = k->nx * k->ny, pivot = 0;
  double peak = 0;

  for (int i = 0; i < n; i++)
    if (fabs (k->values[i]) > peak)
      {
        peak = fabs (k->values[i]);
        pivot = i;
      }
  if (peak == 0)
    return 0;

  /* Through the largest element: col is its column, row its row scaled so
   * that col * row reproduces it; then every element must agree. */
  int pr = pivot / k->nx, pc = pivot % k->nx;
  for (int i = 0; i < k->ny; i++)
    col[i] = k->values[i * k->nx + pc];
  for (int j = 0; j < k->nx; j++)
    row[j] = k->values[pr * k->nx + j] / k->values[pivot];
  for (int i = 0; i < k->ny; i++)
    for (int j = 0; j < k->nx; j++)
      if (fabs (col[i] * row[j] - k->values[i * k->nx + j]) > tolerance * peak)
        return 0;
  return 1;
}

int
sky_convolve_mode_parse (const char *text, SkyConvolveMode *mode)
{
  if (strcmp (text, "full") == 0)
    *mode = SKY_CONVOLVE_FULL;
  else if (strcmp (text, "same") == 0)
    *mode = SKY_CONVOLVE_SAME;
  else if (strcmp (text, "valid") == 0)
    *mode = SKY_CONVOLVE_VALID;
  else
    return sky_fail (SKY_ERR_ARGUMENT, "mode '%s': expected full, same or valid", text);
  return SKY_OK;
}

const char *
sky_convolve_mode_name (SkyConvolveMode mode)
{
  return mode == SKY_CONVOLVE_FULL ? "full" : mode == SKY_CONVOLVE_SAME ? "same" : "valid";
}

const char *
sky_convolve_path_name (SkyConvolvePath path)
{
  return path == SKY_CONVOLVE_SEPARABLE ? "separable"
         : path == SKY_CONVOLVE_DIRECT  ? "direct"
                                        : "auto";
}

int
sky_convolve_geometry (int64_t nx, int64_t ny, const SkyKernel *k, SkyConvolveMode mode,
                       int64_t *out_nx, int64_t *out_ny, int64_t *x0, int64_t *y0,
                       int *swapped)
{
  *swapped = 0;
  switch (mode)
    {
    case SKY_CONVOLVE_FULL:
      *out_nx = nx + k->nx - 1;
      *out_ny = ny + k->ny - 1;
      *x0 = *y0 = 0;
      return SKY_OK;
    case SKY_CONVOLVE_SAME:
      *out_nx = nx;
      *out_ny = ny;
      *x0 = (k->nx - 1) / 2;
      *y0 = (k->ny - 1) / 2;
      return SKY_OK;
    case SKY_CONVOLVE_VALID:
      if (nx >= k->nx && ny >= k->ny)
        {
          *out_nx = nx - k->nx + 1;
          *out_ny = ny - k->ny + 1;
          *x0 = k->nx - 1;
          *y0 = k->ny - 1;
          return SKY_OK;
        }
      if (k->nx >= nx && k->ny >= ny)
        {
          *swapped = 1;
          *out_nx = k->nx - nx + 1;
          *out_ny = k->ny - ny + 1;
          *x0 = nx - 1;
          *y0 = ny - 1;
          return SKY_OK;
        }
      return sky_fail (SKY_ERR_ARGUMENT, "valid mode: neither the %lld x %lld input nor the "
                       "%d x %d kernel contains the other", (long long) nx, (long long) ny,
                       k->nx, k->ny);
    }
  return sky_fail (SKY_ERR_ARGUMENT, "unknown convolution mode %d", (int) mode);
}
