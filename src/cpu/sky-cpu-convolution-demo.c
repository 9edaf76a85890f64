/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The CPU's part of the lesson's convolution demo (sky-core.h). */
#include "sky-cpu.h"

#include <math.h>
#include <stdlib.h>

/* One 2D convolution repeat times: the best time in *ms. */
static int
time_2d (SkyConvolutionDemo *d, SkyConvolvePath path, int repeat, int nthreads, void *out,
         double *ms, SkyConvolvePath *used)
{
  *ms = INFINITY;
  for (int r = 0; r < repeat; r++)
    {
      double t0 = sky_now_ms (), t;
      int ret = d->f64 ? sky_cpu_convolve2d_f64 (d->deltas, d->n, d->n, &d->kernel, d->mode,
                                                 path, nthreads, out, used)
                       : sky_cpu_convolve2d_f32 (d->deltas, d->n, d->n, &d->kernel, d->mode,
                                                 path, nthreads, out, used);
      if (ret != SKY_OK)
        return ret;
      t = sky_now_ms () - t0;
      *ms = t < *ms ? t : *ms;
    }
  return SKY_OK;
}

static int
convolve_1d (SkyConvolutionDemo *d, int nthreads, void *out)
{
  return d->f64 ? sky_cpu_convolve1d_f64 (d->deltas, d->n * d->n, d->diag, d->ndiag, nthreads,
                                          out)
                : sky_cpu_convolve1d_f32 (d->deltas, d->n * d->n, d->diag, d->ndiag, nthreads,
                                          out);
}

int
sky_cpu_convolution_demo (SkyConvolutionDemo *d, SkyConvolvePath path, int repeat, int nthreads)
{
  SkyConvolvePath first = path == SKY_CONVOLVE_DIRECT ? SKY_CONVOLVE_AUTO : path;
  void *one_thread;
  int ret;

  d->cpu_path = SKY_CONVOLVE_AUTO;
  d->cpu_1d_ms = INFINITY;
  if ((ret = time_2d (d, first, repeat, nthreads, d->cpu_2d, &d->cpu_2d_ms, &d->cpu_path))
        != SKY_OK
      || (ret = time_2d (d, SKY_CONVOLVE_DIRECT, repeat, nthreads, d->cpu_2d_direct,
                         &d->cpu_2d_direct_ms, NULL)) != SKY_OK)
    return ret;
  for (int r = 0; r < repeat; r++)
    {
      double t0 = sky_now_ms (), t;
      if ((ret = convolve_1d (d, nthreads, d->cpu_1d)) != SKY_OK)
        return ret;
      t = sky_now_ms () - t0;
      d->cpu_1d_ms = t < d->cpu_1d_ms ? t : d->cpu_1d_ms;
    }
  d->agree_2d = sky_allclose (d->cpu_2d, d->cpu_2d_direct, d->out_nx * d->out_ny, d->f64, NULL,
                              &d->diff_2d);

  /* The threads' 1D result against the same sum taken on one thread. */
  one_thread = malloc ((size_t) d->n1d * (d->f64 ? sizeof (double) : sizeof (float)));
  if (one_thread == NULL)
    return sky_fail (SKY_ERR_MEMORY, "convolve: out of memory");
  ret = convolve_1d (d, 1, one_thread);
  if (ret == SKY_OK)
    d->agree_1d = sky_allclose (d->cpu_1d, one_thread, d->n1d, d->f64, NULL, &d->diff_1d);
  free (one_thread);
  return ret;
}
