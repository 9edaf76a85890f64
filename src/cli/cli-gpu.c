/* SPDX-License-Identifier: GPL-3.0-or-later */
/* skysift-cli find on the GPU: the repeats, the comparison with the CPU's
 * result, and the tables that put the two side by side. */
#include "cli-gpu.h"
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int
cli_gpu_load_direct (const char *path, const SkyLoadOptions *opts, int nthreads, SkyGpu **gpu,
                     SkyImage *img, double *load_ms, CliGpuLoad *t)
{
  const char *reader = getenv ("SKYSIFT_FITS_READER");
  const char *how = getenv ("SKYSIFT_GPU_LOAD");
  SkyPlaneFile *f = NULL;
  struct stat st;
  double t0;
  int ret;

  *gpu = NULL;
  *load_ms = 0;
  memset (img, 0, sizeof *img);
  memset (t, 0, sizeof *t);
  if ((reader != NULL && strcmp (reader, "cfitsio") == 0)
      || (how != NULL && strcmp (how, "host") == 0) || stat (path, &st) != 0
      || !S_ISREG (st.st_mode))
    return 1;
  if ((how == NULL || strcmp (how, "device") != 0) && st.st_size < CLI_GPU_DIRECT_MIN_BYTES)
    return 1;
  if (sky_gpu_new (gpu) != SKY_OK)
    return 1; /* the usual path says what the device lacks */
  /* The ring of page-locked slots is made with the device's start, sized
   * by the file's bytes; the load is the header, the image's buffers on
   * the device and the pixels' way there. */
  t0 = sky_now_ms ();
  if (sky_gpu_load_prepare (*gpu, (int64_t) st.st_size, nthreads) != SKY_OK)
    {
      sky_gpu_free (*gpu);
      *gpu = NULL;
      return 1;
    }
  t->prepare_ms = sky_now_ms () - t0;
  t0 = sky_now_ms ();
  if (sky_plane_file_open (path, opts, img, &f) != SKY_OK)
    {
      /* Compressed, or anything else the usual load will name. */
      sky_gpu_free (*gpu);
      *gpu = NULL;
      return 1;
    }
  ret = sky_gpu_load_plane (*gpu, f, img, nthreads, 0, &t->times);
  sky_plane_file_close (f);
  *load_ms = sky_now_ms () - t0;
  if (ret != SKY_OK)
    {
      /* The usual way takes over and says what failed as it always does:
       * the file's fault as an error, the device's (its memory, a fault)
       * as a warning before the CPU finishes. */
      sky_image_clear (img);
      sky_gpu_free (*gpu);
      *gpu = NULL;
      return 1;
    }
  return 0;
}

int
cli_gpu_find (SkyGpu *loaded, const SkyImage *img, const SkyParams *params, int repeat,
              const SkyResult *cpu, CliGpuRun *run)
{
  SkyGpu *gpu = loaded;
  SkyGpuTimes t;
  const unsigned flags = loaded != NULL ? SKY_GPU_IMAGE_LOADED : 0;
  int ret = CLI_EXIT_FAILURE;

  memset (run, 0, sizeof *run);
  if (gpu == NULL && sky_gpu_new (&gpu) != SKY_OK)
    {
      cli_error ("GPU: %s", sky_last_error ());
      return CLI_EXIT_FAILURE;
    }
  /* Uploads then DMA from the image's own pages; without the lock they go
   * through a pinned staging copy, which costs host time, not device time.
   * A loaded image is on the device already. */
  run->loaded = loaded != NULL;
  run->pinned = loaded == NULL && sky_gpu_pin (img) == SKY_OK;

  /* One warm-up run, then the best of the repeats: the app's way too. */
  if (sky_gpu_run_best (gpu, img, params, flags, repeat, &run->res, &run->times) != SKY_OK)
    {
      cli_error ("%s: GPU: %s", img->path ? img->path : "image", sky_last_error ());
      goto exit;
    }
  if (cpu != NULL)
    {
      /* One more run bringing the label image home, for the comparison. */
      if (sky_gpu_run_on (gpu, img, params, flags | SKY_GPU_WANT_LABELS | SKY_GPU_WANT_MASK,
                          &run->res, &t) != SKY_OK)
        {
          cli_error ("%s: GPU: %s", img->path ? img->path : "image", sky_last_error ());
          goto exit;
        }
      run->failed_checks = sky_result_compare (img, cpu, &run->res, run->compare,
                                            sizeof run->compare);
    }
  for (int step = 0; step < SKY_STEP_COUNT; step++)
    run->res.times.ms[step] = run->times.ms[step];
  run->res.times.total = run->times.kernels;
  run->device_bytes = sky_gpu_device_bytes (gpu);
  ret = 0;

exit:
  if (run->pinned)
    sky_gpu_unpin (img);
  if (gpu != loaded)
    sky_gpu_free (gpu);
  return ret;
}

static double
image_mib (const SkyImage *img)
{
  return (double) (img->nx * img->ny) * sizeof (float) / 1048576.0;
}

void
cli_gpu_print_times (const CliGpuRun *run, const SkyImage *img, int repeat)
{
  const SkyGpuTimes *t = &run->times;

  const SkyStep *steps;
  int nsteps = sky_method_steps (run->res.method, &steps);

  if (run->loaded)
    printf ("gpu (ms, best of %d after a warm-up run): image read to the device with the load",
            repeat);
  else
    printf ("gpu (ms, best of %d after a warm-up run): upload %.3f (%s)", repeat, t->upload,
            run->pinned ? "pinned" : "via pinned staging");
  for (int k = 0; k < nsteps; k++)
    printf (", %s %.3f", sky_step_name (steps[k]), t->ms[steps[k]]);
  printf (", four steps %.3f, download %.3f, total %.3f\n", t->kernels, t->download, t->total);
  printf ("gpu memory %.1f MiB on the device, %.2f x the float32 image\n",
          run->device_bytes / 1048576.0, run->device_bytes / 1048576.0 / image_mib (img));
}

/* v with decimals places and a suffix, or "-" for NaN. */
static void
cell (char *buf, size_t size, double v, int decimals, const char *suffix)
{
  if (isnan (v))
    snprintf (buf, size, "-");
  else
    snprintf (buf, size, "%.*f%s", decimals, v, suffix);
}

/* One step: CPU, GPU kernels, GPU with the transfers the step needs, and
 * the two speedups. */
static void
row (const char *name, double cpu, double kernels, double with_transfers)
{
  char c[32], k[32], w[32], sk[32], sw[32];

  cell (c, sizeof c, cpu, 3, "");
  cell (k, sizeof k, kernels, 3, "");
  cell (w, sizeof w, with_transfers, 3, "");
  cell (sk, sizeof sk, kernels > 0 ? cpu / kernels : NAN, 0, "x");
  cell (sw, sizeof sw, with_transfers > 0 ? cpu / with_transfers : NAN, 0, "x");
  printf ("  %-11s %11s %11s %11s %9s %9s\n", name, c, k, w, sk, sw);
}

void
cli_gpu_print_table (const CliGpuRun *run, const SkyResult *cpu, const SkyImage *img, int repeat)
{
  const SkyGpuTimes *t = &run->times;
  const SkyStepTimes *c = &cpu->times;
  const SkyStep *steps;
  int nsteps = sky_method_steps (cpu->method, &steps);

  printf ("cpu and gpu, ms, best of %d (gpu from device events after a warm-up run; the upload,\n"
          "from %s memory, counts with clip and the download of the statistics and catalogue\n"
          "with measure)\n",
          repeat, run->pinned ? "page-locked" : "staged pinned");
  printf ("  %-11s %11s %11s %11s %9s %9s\n", "step", "cpu", "gpu kernels", "gpu+xfer",
          "speedup", "w/ xfer");
  for (int k = 0; k < nsteps; k++)
    {
      double with_transfers = t->ms[steps[k]];

      if (k == 0)
        with_transfers += t->upload;
      if (k == nsteps - 1)
        with_transfers += t->download;
      row (sky_step_name (steps[k]), c->ms[steps[k]], t->ms[steps[k]], with_transfers);
    }
  row ("four steps", c->total, t->kernels, t->total);
  printf ("  upload %.3f ms, download %.3f ms; gpu memory %.1f MiB, %.2f x the float32 image\n",
          t->upload, t->download, run->device_bytes / 1048576.0,
          run->device_bytes / 1048576.0 / image_mib (img));
  if (run->failed_checks == 0)
    printf ("results    agree: statistics, %lld sources, %scatalogue\n",
            (long long) cpu->nsources, run->nbands > 0 ? "" : "label image, ");
  else
    printf ("results    DIFFER (%d failed checks): %s\n", run->failed_checks, run->compare);
}

void
cli_gpu_clear (CliGpuRun *run)
{
  sky_result_clear (&run->res);
}
