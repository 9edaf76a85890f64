/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The local method's detection on the device (flood, deblend, measure)
 * from the CPU's maps, timed with CUDA events: one warm-up run, then the
 * median of --repeat runs (20 unless told) of each step and of the three
 * together; the CPU's same steps timed beside (median of 3), and the two
 * catalogues compared as docs/contract.md says. --dump DIR writes the
 * image and the maps as raw float32 (image.f32, background.f32, rms.f32)
 * for bench/gpu-local-cupy.py, which times what a CuPy user writes for the
 * same detection in the same run.
 *
 * Usage: bench-gpu-local IMAGE.fits [--repeat N] [--dump DIR] [--json FILE] */
#include "sky-cpu.h"
#include "sky-gpu.h"
#include "bench-median.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int
dump (const char *dir, const char *name, const float *v, int64_t n)
{
  char path[4096];
  FILE *f;

  snprintf (path, sizeof path, "%s/%s", dir, name);
  if ((f = fopen (path, "wb")) == NULL || fwrite (v, sizeof *v, (size_t) n, f) != (size_t) n)
    {
      fprintf (stderr, "bench-gpu-local: cannot write %s\n", path);
      if (f)
        fclose (f);
      return 1;
    }
  return fclose (f) != 0;
}

/* The CPU's steps, the flood, deblend and measure timed; the maps whole. */
static int64_t largest_island;

static int
cpu_local (const SkyImage *img, const SkyParams *params, SkyResult *res, double ms[5])
{
  int64_t n = img->nx * img->ny;
  SkyLocalState ls = { 0 };
  float *bkg, *rms;
  double t0;
  int ret;

  memset (res, 0, sizeof *res);
  res->method = SKY_METHOD_LOCAL;
  res->nx = img->nx;
  res->ny = img->ny;
  res->threshold_value = NAN;
  res->noise_scale = 1.0;
  res->mask = sky_alloc_large ((size_t) n);
  res->labels = sky_alloc_large ((size_t) n * 4);
  bkg = sky_alloc_large ((size_t) n * 4);
  rms = sky_alloc_large ((size_t) n * 4);
  if (!res->mask || !res->labels || !bkg || !rms)
    return SKY_ERR_MEMORY;
  /* The CPU's own run interpolates the maps where it reads them; the
   * whole maps (for the GPU and the CuPy script) are made apart, untimed. */
  t0 = sky_now_ms ();
  ret = sky_cpu_local_background (img, params, res, &ls);
  ms[0] = sky_now_ms () - t0;
  if (ret == SKY_OK)
    ret = sky_cpu_background_rows (ls.mesh, 0, img->ny, params->nthreads, bkg, rms);
  res->background = bkg;
  res->rms = rms;
  t0 = sky_now_ms ();
  if (ret == SKY_OK)
    ret = sky_cpu_local_detect (img, params, NULL, res, &ls);
  ms[1] = sky_now_ms () - t0;
  t0 = sky_now_ms ();
  if (ret == SKY_OK)
    ret = sky_cpu_local_flood (img, params, res, &ls);
  ms[2] = sky_now_ms () - t0;
  t0 = sky_now_ms ();
  if (ret == SKY_OK)
    ret = sky_cpu_local_deblend (img, params, res, &ls);
  ms[3] = sky_now_ms () - t0;
  /* Where the device's one-thread-an-island deblending spends its time:
   * the largest island. */
  for (int64_t k = 1; ret == SKY_OK && k <= ls.islands.n; k++)
    if (ls.islands.area[k] > largest_island)
      largest_island = ls.islands.area[k];
  t0 = sky_now_ms ();
  if (ret == SKY_OK)
    ret = sky_cpu_local_measure (img, params, res, &ls);
  ms[4] = sky_now_ms () - t0;
  sky_local_state_clear (&ls);
  return ret;
}

int
main (int argc, char **argv)
{
  const char *path = NULL, *dir = NULL, *json = NULL;
  int repeat = 20, ret;
  const SkyStep steps[5] = { SKY_STEP_BACKGROUND, SKY_STEP_DETECT, SKY_STEP_FLOOD,
                             SKY_STEP_DEBLEND, SKY_STEP_MEASURE };
  SkyImage img;
  SkyParams params;
  SkyResult cpu, gpu_res = { 0 };
  SkyGpu *gpu = NULL;
  SkyGpuTimes t;
  SkyGpuDetectInput in;
  static double gpu_ms[2][7][1000];
  double cpu_ms[5][3], cpu_med[5], gpu_med[2][7];
  char diff[2][2048];

  for (int i = 1; i < argc; i++)
    {
      if (strcmp (argv[i], "--repeat") == 0 && i + 1 < argc)
        repeat = atoi (argv[++i]);
      else if (strcmp (argv[i], "--dump") == 0 && i + 1 < argc)
        dir = argv[++i];
      else if (strcmp (argv[i], "--json") == 0 && i + 1 < argc)
        json = argv[++i];
      else
        path = argv[i];
    }
  if (path == NULL || repeat < 1 || repeat > 1000)
    {
      fprintf (stderr, "usage: bench-gpu-local IMAGE.fits [--repeat 1..1000] [--dump DIR] "
                       "[--json FILE]\n");
      return 2;
    }
  if (sky_image_load (path, NULL, &img) != SKY_OK)
    {
      fprintf (stderr, "bench-gpu-local: %s\n", sky_last_error ());
      return 1;
    }
  sky_params_init (&params);
  for (int r = 0; r < 3; r++)
    {
      double ms[5];
      if (r > 0)
        sky_result_clear (&cpu);
      if ((ret = cpu_local (&img, &params, &cpu, ms)) != SKY_OK)
        {
          fprintf (stderr, "bench-gpu-local: CPU: %s\n", sky_last_error ());
          return 1;
        }
      for (int s = 0; s < 5; s++)
        cpu_ms[s][r] = ms[s];
    }
  for (int s = 0; s < 5; s++)
    cpu_med[s] = sky_bench_median (cpu_ms[s], 3);
  if (dir != NULL
      && (dump (dir, "image.f32", img.pixels, img.nx * img.ny)
          || dump (dir, "background.f32", cpu.background, img.nx * img.ny)
          || dump (dir, "rms.f32", cpu.rms, img.nx * img.ny)))
    return 1;

  if (sky_gpu_new (&gpu) != SKY_OK)
    {
      fprintf (stderr, "bench-gpu-local: %s\n", sky_last_error ());
      return 1;
    }
  in.background = cpu.background;
  in.rms = cpu.rms;
  in.snr = NULL;
  /* The maps on the device (every step), then from the CPU's maps (the
   * detection alone), each with its warm-up. */
  for (int mode = 0; mode < 2; mode++)
    {
      for (int r = -1; r < repeat; r++)
        {
          if (sky_gpu_run_local_on (gpu, &img, &params, mode ? &in : NULL,
                                    SKY_GPU_WANT_MASK | SKY_GPU_WANT_LABELS, &gpu_res, &t)
              != SKY_OK)
            {
              fprintf (stderr, "bench-gpu-local: GPU: %s\n", sky_last_error ());
              return 1;
            }
          if (r < 0)
            continue;
          for (int s = 0; s < 5; s++)
            gpu_ms[mode][s][r] = t.ms[steps[s]];
          gpu_ms[mode][5][r] = t.kernels;
          gpu_ms[mode][6][r] = t.ms[SKY_STEP_FLOOD] + t.ms[SKY_STEP_DEBLEND]
                               + t.ms[SKY_STEP_MEASURE];
        }
      for (int s = 0; s < 7; s++)
        gpu_med[mode][s] = sky_bench_median (gpu_ms[mode][s], repeat);
      sky_result_compare (&img, &cpu, &gpu_res, diff[mode], sizeof diff[mode]);
      if (strcmp (diff[mode], "agree") == 0
          && memcmp (cpu.mask, gpu_res.mask, (size_t) (img.nx * img.ny)))
        snprintf (diff[mode], sizeof diff[mode], "mask differs");
    }

  printf ("image %s: %lld x %lld, %lld islands, %lld split, %lld sources\n", path,
          (long long) img.nx, (long long) img.ny, (long long) cpu.nislands,
          (long long) cpu.ndeblended, (long long) cpu.nsources);
  printf ("largest island %lld pixels\n", (long long) largest_island);
  printf ("GPU vs CPU, every step on the GPU: %s\nGPU vs CPU, from the CPU's maps: %s\n", diff[0],
          diff[1]);
  printf ("| step | CPU ms (median of 3) | GPU ms, every step on it | GPU ms, from the CPU's "
          "maps |\n| --- | --- | --- | --- |\n");
  for (int s = 0; s < 5; s++)
    printf ("| %s | %.3f | %.4f | %.4f |\n", sky_step_name (steps[s]), cpu_med[s],
            gpu_med[0][s], gpu_med[1][s]);
  printf ("| flood + deblend + measure | %.3f | %.4f | %.4f |\n",
          cpu_med[2] + cpu_med[3] + cpu_med[4], gpu_med[0][6], gpu_med[1][6]);
  printf ("| every step | %.3f | %.4f | |\n", cpu_med[0] + cpu_med[1] + cpu_med[2] + cpu_med[3]
          + cpu_med[4], gpu_med[0][5]);
  printf ("(GPU: CUDA events, median of %d after a warm-up run)\n", repeat);
  if (json != NULL)
    {
      FILE *f = fopen (json, "w");
      if (f != NULL)
        {
          fprintf (f, "{\"image\": \"%s\", \"nx\": %lld, \"ny\": %lld, \"nislands\": %lld, "
                      "\"nsplit\": %lld, \"nsources\": %lld, \"agree\": \"%s\", "
                      "\"agree_from_cpu_maps\": \"%s\", \"repeat\": %d",
                   path, (long long) img.nx, (long long) img.ny, (long long) cpu.nislands,
                   (long long) cpu.ndeblended, (long long) cpu.nsources, diff[0], diff[1], repeat);
          for (int s = 0; s < 5; s++)
            fprintf (f, ", \"%s\": {\"cpu_ms\": %.6f, \"gpu_ms\": %.6f, "
                        "\"gpu_from_cpu_maps_ms\": %.6f}",
                     sky_step_name (steps[s]), cpu_med[s], gpu_med[0][s], gpu_med[1][s]);
          fprintf (f, ", \"gpu_all_steps_ms\": %.6f, \"gpu_detection_ms\": %.6f}\n",
                   gpu_med[0][5], gpu_med[0][6]);
          fclose (f);
        }
    }
  ret = strcmp (diff[0], "agree") == 0 && strcmp (diff[1], "agree") == 0 ? 0 : 3;
  sky_result_clear (&cpu);
  sky_result_clear (&gpu_res);
  sky_gpu_free (gpu);
  sky_image_clear (&img);
  return ret;
}
