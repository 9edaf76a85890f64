/* SPDX-License-Identifier: GPL-3.0-or-later */
/* 2D and 1D convolution with zero fill, in float and in double. */
#include "sky-cpu.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The convolution loops are pure multiply-adds: on x86-64 they are built
 * twice, for the baseline and for AVX2 with FMA, and the loader picks one
 * for the processor it runs on (GCC's function multi-versioning). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11
#define SKY_VECTOR_CLONES __attribute__ ((target_clones ("arch=x86-64-v3", "default")))
#else
#define SKY_VECTOR_CLONES
#endif

#define T float
#define SUFFIX f32
#include "sky-cpu-convolve-impl.h"
#undef T
#undef SUFFIX

#define T double
#define SUFFIX f64
#include "sky-cpu-convolve-impl.h"
#undef T
#undef SUFFIX

int
sky_cpu_convolve2d_f32 (const float *in, int64_t nx, int64_t ny, const SkyKernel *kernel,
                        SkyConvolveMode mode, SkyConvolvePath path, int nthreads, float *out,
                        SkyConvolvePath *used)
{
  return convolve2d_f32 (in, nx, ny, kernel, mode, path, nthreads, out, used);
}

int
sky_cpu_convolve2d_f64 (const double *in, int64_t nx, int64_t ny, const SkyKernel *kernel,
                        SkyConvolveMode mode, SkyConvolvePath path, int nthreads, double *out,
                        SkyConvolvePath *used)
{
  return convolve2d_f64 (in, nx, ny, kernel, mode, path, nthreads, out, used);
}

int
sky_cpu_convolve1d_f32 (const float *a, int64_t n, const float *v, int64_t m, int nthreads,
                        float *out)
{
  return convolve1d_f32 (a, n, v, m, nthreads, out);
}

int
sky_cpu_convolve1d_f64 (const double *a, int64_t n, const double *v, int64_t m, int nthreads,
                        double *out)
{
  return convolve1d_f64 (a, n, v, m, nthreads, out);
}

int
sky_cpu_smooth (const SkyImage *img, const SkyKernel *k, int nthreads, SkyImage *out)
{
  SkyKernel unit = { 0 };
  double sum = 0;
  int64_t n = img->nx * img->ny;
  float *filled = NULL;
  int ret;

  memset (out, 0, sizeof *out);
  for (int i = 0; i < k->nx * k->ny; i++)
    sum += k->values[i];
  if (!(fabs (sum) > 0))
    return sky_fail (SKY_ERR_ARGUMENT, "a smoothing kernel must not sum to zero");
  ret = sky_kernel_from_values (&unit, k->nx, k->ny, k->values);
  if (ret != SKY_OK)
    return ret;
  for (int i = 0; i < unit.nx * unit.ny; i++)
    unit.values[i] /= sum;

  ret = sky_image_alloc (out, img->nx, img->ny);
  filled = ret == SKY_OK ? sky_alloc_large ((size_t) n * sizeof *filled) : NULL;
  if (ret == SKY_OK && filled == NULL)
    ret = sky_fail (SKY_ERR_MEMORY, "no memory to smooth a %lld x %lld image",
                    (long long) img->nx, (long long) img->ny);
  if (ret == SKY_OK)
    {
      for (int64_t i = 0; i < n; i++)
        filled[i] = isnan (img->pixels[i]) ? 0.0f : img->pixels[i];
      ret = sky_cpu_convolve2d_f32 (filled, img->nx, img->ny, &unit, SKY_CONVOLVE_SAME,
                                    SKY_CONVOLVE_AUTO, nthreads, out->pixels, NULL);
    }
  if (ret == SKY_OK)
    {
      for (int64_t i = 0; i < n; i++)
        if (isnan (img->pixels[i]))
          out->pixels[i] = NAN;
      out->nblank = img->nblank;
    }
  free (filled);
  sky_kernel_clear (&unit);
  if (ret != SKY_OK)
    sky_image_clear (out);
  return ret;
}
