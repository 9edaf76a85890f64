/* SPDX-License-Identifier: GPL-3.0-or-later */
/* GPU convolution parity: sky_gpu_convolve2d_* and sky_gpu_convolve1d_*
 * against the CPU backend's (sky-cpu.h), as numpy.allclose with rtol 1e-5
 * and atol 1e-8, in every mode and both element types, with kernels of rank
 * 1 (the separable path) and of higher rank (the direct path), on random
 * inputs of odd sizes drawn afresh each run (GTest's seed; `--seed` replays
 * one). Without a usable GPU every test skips and says why. */
#include "sky-cpu.h"
#include "sky-gpu.h"
#include "sky-test-gpu.h"

#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static SkyTestGpu device;
static SkyGpu *gpu;
static int checks_passed, checks_failed;

static gboolean
have_gpu (void)
{
  return sky_test_gpu_ready (&device);
}

/* allclose(got, want) (sky_allclose): the first element that is not, or -1. */
static int64_t
first_far (const void *got, const void *want, int64_t n, int f64, double *max_diff)
{
  int64_t bad;

  sky_allclose (got, want, n, f64, &bad, max_diff);
  return bad;
}

static void *
random_plane (int64_t n, int f64, int signed_values)
{
  void *p = g_malloc ((gsize) n * (f64 ? sizeof (double) : sizeof (float)));
  for (int64_t i = 0; i < n; i++)
    {
      double v = signed_values ? g_test_rand_double_range (-1, 1) : g_test_rand_double ();
      if (f64)
        ((double *) p)[i] = v;
      else
        ((float *) p)[i] = (float) v;
    }
  return p;
}

/* A kernel of kx x ky: rank 1 (outer product of two random vectors) or a
 * random one (rank above 1 for any size of at least 2 x 2). */
static void
random_kernel (SkyKernel *k, int kx, int ky, int rank1, int signed_values)
{
  double *v = g_new (double, kx * ky), *col = g_new (double, ky), *row = g_new (double, kx);
  for (int i = 0; i < ky; i++)
    col[i] = signed_values ? g_test_rand_double_range (-1, 1) : 0.1 + g_test_rand_double ();
  for (int j = 0; j < kx; j++)
    row[j] = signed_values ? g_test_rand_double_range (-1, 1) : 0.1 + g_test_rand_double ();
  for (int i = 0; i < ky; i++)
    for (int j = 0; j < kx; j++)
      v[i * kx + j] = rank1 ? col[i] * row[j]
                            : (signed_values ? g_test_rand_double_range (-1, 1)
                                             : 0.1 + g_test_rand_double ());
  g_assert_cmpint (sky_kernel_from_values (k, kx, ky, v), ==, SKY_OK);
  g_free (v);
  g_free (col);
  g_free (row);
}

static const char *const mode_names[] = { "full", "same", "valid" };

/* One 2D case: CPU (auto path) against GPU (auto path), and the GPU's path
 * checked to be the separable one exactly for rank-1 kernels. */
static void
check_2d (int64_t nx, int64_t ny, const SkyKernel *k, int rank1, SkyConvolveMode mode, int f64)
{
  int64_t onx, ony, x0, y0;
  int swapped;
  size_t es = f64 ? sizeof (double) : sizeof (float);
  char what[512] = "";

  if (sky_convolve_geometry (nx, ny, k, mode, &onx, &ony, &x0, &y0, &swapped) != SKY_OK)
    return; /* valid mode with no output: nothing to compare */
  /* float32 on positive values (no cancellation, so rtol 1e-5 holds for any
   * summation order); float64 signed */
  void *in = random_plane (nx * ny, f64, f64);
  void *want = g_malloc0 ((gsize) (onx * ony) * es + es), *got = g_malloc0 ((gsize) (onx * ony) * es + es);
  SkyGpuConvolveTimes t = { 0 };
  int rc = f64 ? sky_cpu_convolve2d_f64 (in, nx, ny, k, mode, SKY_CONVOLVE_AUTO, 0, want, NULL)
               : sky_cpu_convolve2d_f32 (in, nx, ny, k, mode, SKY_CONVOLVE_AUTO, 0, want, NULL);
  int rg = f64 ? sky_gpu_convolve2d_f64 (gpu, in, nx, ny, k, mode, SKY_CONVOLVE_AUTO, got, &t)
               : sky_gpu_convolve2d_f32 (gpu, in, nx, ny, k, mode, SKY_CONVOLVE_AUTO, got, &t);
  double diff;
  int64_t bad;

  if (rc != SKY_OK || rg != SKY_OK)
    g_snprintf (what, sizeof what, "status: CPU %d, GPU %d (%s)", rc, rg, sky_last_error ());
  else if ((bad = first_far (got, want, onx * ony, f64, &diff)) >= 0)
    g_snprintf (what, sizeof what, "not allclose at (%lld, %lld): GPU %.9g, CPU %.9g",
                (long long) (bad % onx), (long long) (bad / onx),
                f64 ? ((double *) got)[bad] : ((float *) got)[bad],
                f64 ? ((double *) want)[bad] : ((float *) want)[bad]);
  else if (t.path != (rank1 ? SKY_CONVOLVE_SEPARABLE : SKY_CONVOLVE_DIRECT)
           && k->nx * k->ny <= 1600)
    g_snprintf (what, sizeof what, "the GPU took the %s path",
                t.path == SKY_CONVOLVE_SEPARABLE ? "separable" : "direct");
  if (what[0] == '\0')
    checks_passed++;
  else
    {
      checks_failed++;
      g_test_message ("%lldx%lld, kernel %dx%d (%s), %s, %s: %s", (long long) nx, (long long) ny,
                      k->nx, k->ny, rank1 ? "rank 1" : "full rank", mode_names[mode],
                      f64 ? "f64" : "f32", what);
      g_test_fail ();
    }
  g_free (in);
  g_free (want);
  g_free (got);
}

static void
run_2d_cases (int rank1)
{
  static const int sizes[][2] = { { 1, 1 }, { 3, 5 }, { 37, 23 }, { 101, 67 }, { 257, 129 },
                                  { 513, 301 } };
  static const int ksizes[][2] = { { 1, 1 }, { 3, 3 }, { 5, 3 }, { 15, 15 }, { 7, 11 },
                                   { 31, 31 } };

  if (!have_gpu ())
    return;
  for (int f64 = 0; f64 <= 1; f64++)
    for (size_t s = 0; s < G_N_ELEMENTS (sizes); s++)
      for (size_t q = 0; q < G_N_ELEMENTS (ksizes); q++)
        {
          SkyKernel k = { 0 };
          int kx = ksizes[q][0], ky = ksizes[q][1];
          if (!rank1 && kx * ky < 4)
            continue;
          random_kernel (&k, kx, ky, rank1, f64);
          for (int mode = SKY_CONVOLVE_FULL; mode <= SKY_CONVOLVE_VALID; mode++)
            check_2d (sizes[s][0], sizes[s][1], &k, rank1, (SkyConvolveMode) mode, f64);
          sky_kernel_clear (&k);
        }
}

static void
test_separable (void)
{
  run_2d_cases (1);
}

static void
test_direct (void)
{
  run_2d_cases (0);
}

/* Valid mode where the kernel is the larger array (the roles swap), and a
 * kernel too large for the shared-memory tiles. */
static void
test_large_kernels (void)
{
  if (!have_gpu ())
    return;
  for (int f64 = 0; f64 <= 1; f64++)
    {
      SkyKernel k = { 0 };
      random_kernel (&k, 41, 37, 0, f64);
      for (int mode = SKY_CONVOLVE_FULL; mode <= SKY_CONVOLVE_VALID; mode++)
        {
          check_2d (9, 7, &k, 0, (SkyConvolveMode) mode, f64);
          check_2d (131, 77, &k, 0, (SkyConvolveMode) mode, f64);
        }
      sky_kernel_clear (&k);
      random_kernel (&k, 65, 61, 1, f64);
      for (int mode = SKY_CONVOLVE_FULL; mode <= SKY_CONVOLVE_VALID; mode++)
        check_2d (99, 135, &k, 1, (SkyConvolveMode) mode, f64);
      sky_kernel_clear (&k);
    }
}

/* The lesson's demo itself: deltas every 16 pixels, its Gaussian. */
static void
test_lesson (void)
{
  SkyKernel k = { 0 };

  if (!have_gpu ())
    return;
  g_assert_cmpint (sky_kernel_lesson (&k), ==, SKY_OK);
  for (int f64 = 0; f64 <= 1; f64++)
    for (int mode = SKY_CONVOLVE_FULL; mode <= SKY_CONVOLVE_VALID; mode++)
      check_2d (301, 157, &k, 1, (SkyConvolveMode) mode, f64);
  sky_kernel_clear (&k);
}

static void
test_1d (void)
{
  static const int64_t ns[] = { 1, 2, 15, 1023, 1025, 100003 };
  static const int64_t ms[] = { 1, 3, 15, 64, 5001 };

  if (!have_gpu ())
    return;
  for (int f64 = 0; f64 <= 1; f64++)
    for (size_t i = 0; i < G_N_ELEMENTS (ns); i++)
      for (size_t j = 0; j < G_N_ELEMENTS (ms); j++)
        {
          int64_t n = ns[i], m = ms[j], nout = n + m - 1;
          size_t es = f64 ? sizeof (double) : sizeof (float);
          void *a = random_plane (n, f64, f64), *v = random_plane (m, f64, f64);
          void *want = g_malloc (nout * es), *got = g_malloc (nout * es);
          int rc = f64 ? sky_cpu_convolve1d_f64 (a, n, v, m, 0, want)
                       : sky_cpu_convolve1d_f32 (a, n, v, m, 0, want);
          int rg = f64 ? sky_gpu_convolve1d_f64 (gpu, a, n, v, m, got, NULL)
                       : sky_gpu_convolve1d_f32 (gpu, a, n, v, m, got, NULL);
          double diff;
          int64_t bad = -1;
          if (rc == SKY_OK && rg == SKY_OK)
            bad = first_far (got, want, nout, f64, &diff);
          if (rc != SKY_OK || rg != SKY_OK || bad >= 0)
            {
              checks_failed++;
              g_test_message ("1D n %lld, m %lld, %s: status CPU %d, GPU %d; first far %lld",
                              (long long) n, (long long) m, f64 ? "f64" : "f32", rc, rg,
                              (long long) bad);
              g_test_fail ();
            }
          else
            checks_passed++;
          g_free (a);
          g_free (v);
          g_free (want);
          g_free (got);
        }
}

/* Outputs taller than a grid's y dimension holds in blocks: 65535 tiles of
 * 32 rows (2,097,120 rows) on the tiled paths, 65535 blocks of 8 rows
 * (524,280) on the global-memory one (a float64 kernel too large for the
 * tiles). */
static void
test_tall (void)
{
  SkyKernel k = { 0 };

  if (!have_gpu ())
    return;
  random_kernel (&k, 3, 3, 1, 0);
  check_2d (2, 65535LL * 32 + 33, &k, 1, SKY_CONVOLVE_SAME, 0);
  sky_kernel_clear (&k);
  random_kernel (&k, 41, 37, 0, 1);
  check_2d (1, 65535LL * 8 + 9, &k, 0, SKY_CONVOLVE_SAME, 1);
  sky_kernel_clear (&k);
}

int
main (int argc, char **argv)
{
  int ret;

  g_test_init (&argc, &argv, NULL);
  sky_test_gpu_open (&device);
  gpu = device.gpu;

  g_test_add_func ("/gpu-convolve/separable", test_separable);
  g_test_add_func ("/gpu-convolve/direct", test_direct);
  g_test_add_func ("/gpu-convolve/large-kernels", test_large_kernels);
  g_test_add_func ("/gpu-convolve/lesson", test_lesson);
  g_test_add_func ("/gpu-convolve/1d", test_1d);
  g_test_add_func ("/gpu-convolve/tall", test_tall);
  ret = g_test_run ();
  sky_test_gpu_close (&device, "GPU convolution parity checks", checks_passed, checks_failed);
  return ret;
}
