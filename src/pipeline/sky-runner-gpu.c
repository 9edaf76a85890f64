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

/* The local method's maps, timed as the lesson's steps are
 * (sky_gpu_local_maps_best). */
static int
default_local_maps (void *data, const SkyImage *img, const SkyParams *params, int repeat,
                    float *background, float *rms, SkyGpuTimes *times)
{
  int ret = SKY_OK;

  (void) data;
  memset (times, 0, sizeof *times);
  pthread_mutex_lock (&gpu_lock);
  if (gpu_context == NULL)
    ret = sky_gpu_new (&gpu_context);
  if (ret == SKY_OK)
    ret = sky_gpu_local_maps_best (gpu_context, img, params, repeat, background, rms, times);
  pthread_mutex_unlock (&gpu_lock);
  return ret;
}

/* The local method: a warm-up run, then the best of repeat
 * (sky_gpu_run_local_best), with the last run's mask and labels. */
static int
default_run_local (void *data, const SkyImage *img, const SkyParams *params,
                   const float *background, const float *rms, const float *snr, int repeat,
                   SkyResult *res, SkyGpuTimes *times)
{
  SkyGpuDetectInput in = { background, rms, snr };
  int ret = SKY_OK;

  (void) data;
  pthread_mutex_lock (&gpu_lock);
  if (gpu_context == NULL)
    ret = sky_gpu_new (&gpu_context);
  if (ret == SKY_OK)
    ret = sky_gpu_run_local_best (gpu_context, img, params, background != NULL ? &in : NULL,
                                  repeat, res, times);
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
