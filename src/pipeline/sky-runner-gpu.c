/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The runner's default GPU: src/gpu with one process-wide context, made on
 * first use and used by one run at a time. */
#include "sky-runner.h"
#include "sky-gpu.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

static pthread_mutex_t gpu_lock = PTHREAD_MUTEX_INITIALIZER;
static SkyGpu *gpu_context;

static pthread_once_t probe_once = PTHREAD_ONCE_INIT;
static int probe_status;
static char probe_what[512];

static void
probe_device (void)
{
  probe_status = sky_gpu_available (probe_what, sizeof probe_what);
  if (probe_status != SKY_OK && probe_what[0] == '\0')
    snprintf (probe_what, sizeof probe_what, "%s", sky_last_error ());
}

static int
default_available (void *data, char *why, size_t why_size)
{
  (void) data;
  pthread_once (&probe_once, probe_device);
  if (why != NULL && why_size > 0)
    snprintf (why, why_size, "%s", probe_what);
  return probe_status;
}

static int
default_run (void *data, const SkyImage *img, const SkyParams *params, int keep, int repeat,
             SkyResult *res, SkyGpuTimes *times)
{
  int ret = SKY_OK;

  (void) data;
  (void) keep;
  pthread_mutex_lock (&gpu_lock);
  if (gpu_context == NULL)
    ret = sky_gpu_new (&gpu_context);
  if (ret == SKY_OK)
    ret = sky_gpu_run_best (gpu_context, img, params, SKY_GPU_WANT_MASK | SKY_GPU_WANT_LABELS,
                            repeat, res, times);
  pthread_mutex_unlock (&gpu_lock);
  return ret;
}

static int
default_compare (void *data, const SkyImage *img, const SkyResult *ref, const SkyResult *res,
                 char *what, size_t what_size)
{
  (void) data;
  return sky_result_compare (img, ref, res, what, what_size);
}

/* As sky_gpu_run_best times the lesson's steps: the image page-locked for
 * the call, one untimed warm-up, the best of repeat runs bringing nothing
 * home, then the maps of one more run brought home, timed apart. */
static int
default_local_maps (void *data, const SkyImage *img, const SkyParams *params, int repeat,
                    float *background, float *rms, SkyGpuTimes *times)
{
  SkyGpuMapsTimes t, best = { 0 };
  int ret = SKY_OK, locked;

  (void) data;
  memset (times, 0, sizeof *times);
  pthread_mutex_lock (&gpu_lock);
  if (gpu_context == NULL)
    ret = sky_gpu_new (&gpu_context);
  locked = sky_gpu_lock_host (img->pixels, (size_t) (img->nx * img->ny) * sizeof (float));
  for (int r = -1; r < repeat && ret == SKY_OK; r++)
    {
      ret = sky_gpu_local_maps_host (gpu_context, img, params, NULL, NULL, NULL, NULL, &t);
      if (r == 0 || (r > 0 && t.kernel_ms < best.kernel_ms))
        best.kernel_ms = t.kernel_ms;
      if (r == 0 || (r > 0 && t.upload_ms < best.upload_ms))
        best.upload_ms = t.upload_ms;
    }
  if (ret == SKY_OK)
    ret = sky_gpu_local_maps_host (gpu_context, img, params, background, rms, NULL, NULL, &t);
  sky_gpu_unlock_host (img->pixels, locked);
  pthread_mutex_unlock (&gpu_lock);
  if (ret != SKY_OK)
    return ret;
  times->upload = best.upload_ms;
  times->ms[SKY_STEP_BACKGROUND] = best.kernel_ms;
  times->kernels = best.kernel_ms;
  times->download = t.download_ms;
  times->total = best.upload_ms + best.kernel_ms + t.download_ms;
  times->runs = repeat;
  times->outputs = -1;
  return SKY_OK;
}

/* The local method: one warm-up run, then the best of repeat (each
 * figure's own best, as sky_gpu_run_best takes them); the last run's
 * results, with its mask and labels. */
static int
default_run_local (void *data, const SkyImage *img, const SkyParams *params,
                   const float *background, const float *rms, const float *snr, int repeat,
                   SkyResult *res, SkyGpuTimes *times)
{
  SkyGpuDetectInput in = { background, rms, snr };
  SkyGpuTimes t;
  int ret = SKY_OK;

  (void) data;
  pthread_mutex_lock (&gpu_lock);
  if (gpu_context == NULL)
    ret = sky_gpu_new (&gpu_context);
  for (int r = -1; ret == SKY_OK && r < (repeat > 0 ? repeat : 1); r++)
    {
      ret = sky_gpu_run_local_on (gpu_context, img, params, background != NULL ? &in : NULL,
                                  SKY_GPU_WANT_MASK | SKY_GPU_WANT_LABELS, res, &t);
      if (ret != SKY_OK || r < 0)
        continue;
      if (r == 0)
        *times = t;
      else
        sky_gpu_times_min (times, &t);
      times->runs = r + 1;
    }
  times->outputs = -1;
  pthread_mutex_unlock (&gpu_lock);
  return ret;
}

static const SkyGpuBackend default_backend = {
  default_available, default_run, default_compare, NULL, default_local_maps, default_run_local,
};

const SkyGpuBackend *
sky_gpu_backend_default (void)
{
  return &default_backend;
}
