/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The lesson's convolution demo (sky-core.h): its inputs, numpy.allclose,
 * and the check of a GPU's outputs against the CPU's. The backends' runs
 * live with the backends: sky-cpu-convolution-demo.c and
 * sky-gpu-convolution-demo.c. */
#include "sky-core.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int
sky_allclose (const void *a, const void *b, int64_t n, int f64, int64_t *first_far,
              double *max_abs_diff)
{
  int64_t far = -1;
  double max_diff = 0;

  for (int64_t i = 0; i < n; i++)
    {
      double x = f64 ? ((const double *) a)[i] : ((const float *) a)[i];
      double y = f64 ? ((const double *) b)[i] : ((const float *) b)[i];
      double d = fabs (x - y);
      max_diff = d > max_diff ? d : max_diff;   /* a NaN difference is passed over */
      /* As numpy.isclose: infinities are close only to themselves. */
      int close = x == y
                  || (isfinite (x) && isfinite (y)
                      && d <= SKY_ALLCLOSE_ATOL + SKY_ALLCLOSE_RTOL * fabs (y));
      if (far < 0 && !close)
        far = i;
    }
  if (first_far != NULL)
    *first_far = far;
  if (max_abs_diff != NULL)
    *max_abs_diff = max_diff;
  return far < 0;
}

int
sky_convolution_demo_init (SkyConvolutionDemo *d, const SkyKernel *k, SkyConvolveMode mode,
                           int f64, int with_gpu)
{
  const int64_t n = SKY_CONVOLUTION_DEMO_N;
  size_t elem = f64 ? sizeof (double) : sizeof (float), nout;
  int swapped, ret;

  memset (d, 0, sizeof *d);
  d->f64 = f64;
  d->mode = mode;
  d->n = n;
  if ((ret = sky_kernel_from_values (&d->kernel, k->nx, k->ny, k->values)) != SKY_OK
      || (ret = sky_convolve_geometry (n, n, k, mode, &d->out_nx, &d->out_ny, &d->x0, &d->y0,
                                       &swapped)) != SKY_OK)
    return ret;
  d->ndiag = k->nx < k->ny ? k->nx : k->ny;
  d->n1d = n * n + d->ndiag - 1;
  nout = (size_t) (d->out_nx * d->out_ny);
  d->deltas = calloc ((size_t) (n * n), elem);
  d->diag = malloc ((size_t) d->ndiag * elem);
  d->cpu_2d = malloc (nout * elem);
  d->cpu_2d_direct = malloc (nout * elem);
  d->cpu_1d = malloc ((size_t) d->n1d * elem);
  if (with_gpu)
    {
      d->gpu_2d = malloc (nout * elem);
      d->gpu_1d = malloc ((size_t) d->n1d * elem);
    }
  if (!d->deltas || !d->diag || !d->cpu_2d || !d->cpu_2d_direct || !d->cpu_1d
      || (with_gpu && (!d->gpu_2d || !d->gpu_1d)))
    return sky_fail (SKY_ERR_MEMORY, "convolve: out of memory");
  for (int64_t y = SKY_CONVOLUTION_DEMO_FIRST; y < n; y += SKY_CONVOLUTION_DEMO_STEP)
    for (int64_t x = SKY_CONVOLUTION_DEMO_FIRST; x < n; x += SKY_CONVOLUTION_DEMO_STEP)
      {
        if (f64)
          ((double *) d->deltas)[y * n + x] = 1.0;
        else
          ((float *) d->deltas)[y * n + x] = 1.0f;
      }
  for (int i = 0; i < d->ndiag; i++)
    {
      double v = k->values[(size_t) i * k->nx + i];
      if (f64)
        ((double *) d->diag)[i] = v;
      else
        ((float *) d->diag)[i] = (float) v;
    }
  return SKY_OK;
}

void
sky_convolution_demo_check_gpu (SkyConvolutionDemo *d)
{
  d->gpu_ran = 1;
  d->gpu_agree_2d = sky_allclose (d->gpu_2d, d->cpu_2d, d->out_nx * d->out_ny, d->f64, NULL,
                                  &d->gpu_diff_2d);
  d->gpu_agree_1d = sky_allclose (d->gpu_1d, d->cpu_1d, d->n1d, d->f64, NULL, &d->gpu_diff_1d);
}

int
sky_convolution_demo_agree (const SkyConvolutionDemo *d)
{
  return d->agree_2d && d->agree_1d && (!d->gpu_ran || (d->gpu_agree_2d && d->gpu_agree_1d));
}

void
sky_convolution_demo_clear (SkyConvolutionDemo *d)
{
  sky_kernel_clear (&d->kernel);
  free (d->deltas);
  free (d->diag);
  free (d->cpu_2d);
  free (d->cpu_2d_direct);
  free (d->cpu_1d);
  free (d->gpu_2d);
  free (d->gpu_1d);
  memset (d, 0, sizeof *d);
}
