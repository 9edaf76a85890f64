/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The local method's maps on the GPU (sky_gpu_local_maps: mesh, filter,
 * spline, residual, snr), timed with CUDA events around the kernels alone
 * (the image already on the device), the median of ROUNDS runs after one
 * untimed warm-up; then the maps of the last run brought home and compared
 * with the CPU's bit for bit. Prints one JSON object on stdout.
 *
 * Built with the CUDA backend (bench/meson.build); bench/gpu-maps-bench.py
 * runs it beside the same maps written with CuPy and prints the ratio:
 *   bench-gpu-maps IMAGE.fits [ROUNDS [BOX [FILTER]]]
 */
#include "sky-core.h"
#include "sky-cpu.h"
#include "sky-gpu.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int
compare_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x > y ? 1 : (x < y ? -1 : 0);
}

/* Values that differ in their bits, both NaN counted the same. */
static int64_t
differences (const float *a, const float *b, int64_t n)
{
  int64_t bad = 0;

  for (int64_t i = 0; i < n; i++)
    bad += memcmp (&a[i], &b[i], 4) != 0 && !(isnan (a[i]) && isnan (b[i]));
  return bad;
}

int
main (int argc, char **argv)
{
  SkyImage img;
  SkyParams p;
  SkyGpu *gpu = NULL;
  SkyGpuMapsTimes t;
  int rounds = argc > 2 ? atoi (argv[2]) : 20;
  double *ms;
  char why[512];
  int ret = 1;

  if (argc < 2 || rounds < 1)
    {
      fprintf (stderr, "usage: bench-gpu-maps IMAGE.fits [ROUNDS [BOX [FILTER]]]\n");
      return 2;
    }
  sky_params_init (&p);
  if (argc > 3)
    p.bkg_box = atoi (argv[3]);
  if (argc > 4)
    p.bkg_filter = atoi (argv[4]);
  if (sky_image_load (argv[1], NULL, &img) != SKY_OK)
    {
      fprintf (stderr, "bench-gpu-maps: %s: %s\n", argv[1], sky_last_error ());
      return 1;
    }
  if (sky_gpu_available (why, sizeof why) != SKY_OK || sky_gpu_new (&gpu) != SKY_OK)
    {
      fprintf (stderr, "bench-gpu-maps: no GPU: %s\n", why);
      sky_image_clear (&img);
      return 1;
    }
  const int64_t n = img.nx * img.ny;
  float *g[4], *c[4];
  ms = calloc ((size_t) rounds, sizeof *ms);
  for (int m = 0; m < 4; m++)
    {
      g[m] = malloc ((size_t) n * sizeof (float));
      c[m] = malloc ((size_t) n * sizeof (float));
    }
  sky_gpu_pin (&img);
  /* warm-up: allocations, the module's load, the interval starts */
  if (sky_gpu_local_maps_host (gpu, &img, &p, NULL, NULL, NULL, NULL, &t) != SKY_OK)
    goto fail;
  for (int r = 0; r < rounds; r++)
    {
      if (sky_gpu_local_maps_host (gpu, &img, &p, r == rounds - 1 ? g[0] : NULL,
                                   r == rounds - 1 ? g[1] : NULL, r == rounds - 1 ? g[2] : NULL,
                                   r == rounds - 1 ? g[3] : NULL, &t) != SKY_OK)
        goto fail;
      ms[r] = t.kernel_ms;
    }
  qsort (ms, (size_t) rounds, sizeof *ms, compare_double);

  /* The CPU's maps, as test-gpu-background makes them. */
  {
    double t0 = sky_now_ms ();
    if (sky_cpu_background (&img, &p, 0, c[0], c[1]) != SKY_OK)
      goto fail;
    for (int64_t i = 0; i < n; i++)
      {
        c[2][i] = img.pixels[i] - c[0][i];
        c[3][i] = c[1][i] > 0 ? c[2][i] / c[1][i] : NAN;
      }
    double cpu_ms = sky_now_ms () - t0;
    int64_t bad[4];
    for (int m = 0; m < 4; m++)
      bad[m] = differences (c[m], g[m], n);
    printf ("{\"image\": \"%s\", \"nx\": %lld, \"ny\": %lld, \"box\": %d, \"filter\": %d, "
            "\"rounds\": %d, \"gpu_maps_ms_median\": %.5f, \"gpu_maps_ms_min\": %.5f, "
            "\"gpu_maps_ms_max\": %.5f, \"cpu_maps_ms_once\": %.2f, "
            "\"differences\": {\"background\": %lld, \"rms\": %lld, \"residual\": %lld, "
            "\"snr\": %lld}, \"device\": \"%s\"}\n",
            argv[1], (long long) img.nx, (long long) img.ny, p.bkg_box, p.bkg_filter, rounds,
            rounds % 2 ? ms[rounds / 2] : (ms[rounds / 2 - 1] + ms[rounds / 2]) / 2, ms[0],
            ms[rounds - 1], cpu_ms, (long long) bad[0], (long long) bad[1], (long long) bad[2],
            (long long) bad[3], why);
    ret = bad[0] || bad[1] || bad[2] || bad[3];
  }
  goto exit;

fail:
  fprintf (stderr, "bench-gpu-maps: %s\n", sky_last_error ());
exit:
  sky_gpu_unpin (&img);
  for (int m = 0; m < 4; m++)
    {
      free (g[m]);
      free (c[m]);
    }
  free (ms);
  sky_gpu_free (gpu);
  sky_image_clear (&img);
  return ret;
}
