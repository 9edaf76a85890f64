/* 2D and 1D convolution with zero fill, in float and in double. */
#include "sky-cpu.h"

#include <stdlib.h>
#include <string.h>

/* A kernel counts as rank 1 when its outer-product factors reproduce every
 * element to this fraction of its largest: the lesson's Gaussian, built
 * through a square root, is rank 1 to about 1e-16. */
#define SEPARABLE_TOLERANCE 1e-12

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
