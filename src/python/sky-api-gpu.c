/* SPDX-License-Identifier: GPL-3.0-or-later */
/* libskysift's device runs (sky-api.h) in a build with CUDA: one
 * process-wide context for device arrays, apart from the runner's (which
 * reads host images and may finish on the CPU, which a device array
 * cannot allow). */
#include "sky-api-private.h"

#include "sky-gpu.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Held from a device run until the caller has copied its buffers out
 * (sky_api_gpu_release): the next run overwrites them. */
static pthread_mutex_t device_lock = PTHREAD_MUTEX_INITIALIZER;
static SkyGpu *device_context;
/* sky_api_gpu_find_device's result, reused from call to call under
 * device_lock (its buffers too). */
static SkyResult device_result;

int
sky_api_gpu_available (char *why, size_t why_size)
{
  return sky_gpu_available (why, why_size);
}

/* The steps on the process's device context (made on first use), after
 * what stream holds where the pixels are on the device (flags hold
 * SKY_GPU_PIXELS_ON_DEVICE). device_lock is taken, and stays held when
 * the run succeeds. */
static int
locked_run (const SkyImage *image, const SkyParams *p, unsigned flags, void *stream,
            SkyResult *res, SkyGpuTimes *times)
{
  int ret = SKY_OK;

  pthread_mutex_lock (&device_lock);
  if (device_context == NULL)
    ret = sky_gpu_new (&device_context);
  if (ret == SKY_OK && (flags & SKY_GPU_PIXELS_ON_DEVICE))
    ret = sky_gpu_wait_for_stream (device_context, stream);
  if (ret == SKY_OK)
    ret = sky_gpu_run_on (device_context, image, p, flags, res, times);
  if (ret != SKY_OK)
    pthread_mutex_unlock (&device_lock);
  return ret;
}

/* The steps on the device into a new run. Pixels on the device: the run's
 * buffers stay there, so device_lock stays held until the caller has
 * copied them (sky_api_gpu_release). Pixels on the host: the run borrows
 * the image and the lock is let go. */
static int
run_on_device (const SkyImage *image, int device_pixels, void *stream,
               const SkyApiParams *params, SkyApiRun **out)
{
  SkyParams p;
  SkyResult *res;
  SkyGpuTimes *times;
  int ret;

  *out = NULL;
  if ((ret = sky_api_core_params (params, &p)) != SKY_OK)
    return ret;
  if ((ret = sky_api_run_new_device (image->nx, image->ny, &p, out, &res, &times)) != SKY_OK)
    return ret;
  if (!device_pixels)
    sky_api_run_set_image (*out, image);
  ret = locked_run (image, &p, device_pixels ? SKY_GPU_PIXELS_ON_DEVICE : 0, stream, res,
                    times);
  if (ret != SKY_OK)
    {
      sky_api_run_free (*out);
      *out = NULL;
      return ret;
    }
  if (device_pixels)
    sky_api_run_set_packed (*out, sky_gpu_packed_catalogue (device_context));
  else
    pthread_mutex_unlock (&device_lock);
  return SKY_OK;
}

/* An image over a caller's device pixels, for sky_gpu_run_on. */
static SkyImage
device_image (const float *d_pixels, int64_t nx, int64_t ny)
{
  SkyImage img = { 0 };

  img.nx = nx;
  img.ny = ny;
  img.pixels = (float *) d_pixels;
  return img;
}

int
sky_api_gpu_run_device (const float *d_pixels, int64_t nx, int64_t ny,
                        const SkyApiParams *params, void *stream, SkyApiRun **out,
                        SkyApiResult *result)
{
  const SkyImage img = device_image (d_pixels, nx, ny);
  int ret;

  ret = run_on_device (&img, 1, stream, params, out);
  if (ret == SKY_OK && result != NULL)
    ret = sky_api_run_result (*out, result);
  return ret;
}

int
sky_api_gpu_find_device (const float *d_pixels, int64_t nx, int64_t ny,
                         const SkyApiParams *params, void *stream, int32_t flags,
                         SkyApiDeviceFind *out)
{
  const unsigned gpu_flags = SKY_GPU_PIXELS_ON_DEVICE | SKY_GPU_PACKED_ONLY
                             | ((flags & SKY_API_TIMES) ? 0 : SKY_GPU_NO_TIMES);
  const SkyImage img = device_image (d_pixels, nx, ny);
  SkyGpuTimes times;
  SkyParams p;
  int ret;

  /* out is written under device_lock alone: a binding may keep one for
   * every thread, read before sky_api_gpu_release. */
  if ((ret = sky_api_core_params (params, &p)) != SKY_OK)
    return ret;
  if ((ret = locked_run (&img, &p, gpu_flags, stream, &device_result, &times)) != SKY_OK)
    return ret;
  out->median = device_result.stats.median;
  out->sigma = device_result.stats.sigma;
  out->mean = device_result.stats.mean;
  out->threshold_value = device_result.threshold_value;
  out->step_ms[0] = times.ms[SKY_STEP_CLIP];
  out->step_ms[1] = times.ms[SKY_STEP_SEGMENT];
  out->step_ms[2] = times.ms[SKY_STEP_LABEL];
  out->step_ms[3] = times.ms[SKY_STEP_MEASURE];
  out->kernels_ms = times.kernels;
  out->total_ms = times.total;
  out->n = device_result.stats.n;
  out->ninput = device_result.stats.ninput;
  out->nsources = device_result.nsources;
  out->iterations = device_result.stats.iterations;
  out->converged = device_result.stats.converged;
  out->flat = device_result.stats.flat;
  out->packed_catalogue = sky_gpu_packed_catalogue (device_context);
  return SKY_OK;
}

int
sky_api_gpu_run_image (const SkyApiImage *img, const SkyApiParams *params, SkyApiRun **out)
{
  return run_on_device (sky_api_image_core (img), 0, NULL, params, out);
}

int
sky_api_gpu_buffers (const void **d_mask, const void **d_labels)
{
  SkyGpuDeviceBuffers b;
  int ret;

  if (device_context == NULL)
    return sky_fail (SKY_ERR_ARGUMENT, "no device run yet");
  if ((ret = sky_gpu_device_buffers (device_context, &b)) != SKY_OK)
    return ret;
  *d_mask = b.mask;
  *d_labels = b.labels;
  return SKY_OK;
}

void
sky_api_gpu_release (void)
{
  pthread_mutex_unlock (&device_lock);
}
