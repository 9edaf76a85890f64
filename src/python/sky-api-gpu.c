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

int
sky_api_gpu_available (char *why, size_t why_size)
{
  return sky_gpu_available (why, why_size);
}

int
sky_api_gpu_run_device (const float *d_pixels, int64_t nx, int64_t ny,
                        const SkyApiParams *params, void *stream, SkyApiRun **out,
                        SkyApiResult *result)
{
  SkyImage img = { 0 };
  SkyParams p;
  SkyResult *res;
  SkyGpuTimes *times;
  int ret;

  *out = NULL;
  if ((ret = sky_api_core_params (params, &p)) != SKY_OK)
    return ret;
  if ((ret = sky_api_run_new_device (nx, ny, &p, out, &res, &times)) != SKY_OK)
    return ret;
  img.nx = nx;
  img.ny = ny;
  img.pixels = (float *) d_pixels;
  pthread_mutex_lock (&device_lock);
  if (device_context == NULL)
    ret = sky_gpu_new (&device_context);
  if (ret == SKY_OK)
    ret = sky_gpu_wait_for_stream (device_context, stream);
  if (ret == SKY_OK)
    ret = sky_gpu_run_on (device_context, &img, &p, SKY_GPU_PIXELS_ON_DEVICE, res, times);
  if (ret != SKY_OK)
    {
      pthread_mutex_unlock (&device_lock);
      sky_api_run_free (*out);
      *out = NULL;
      return ret;
    }
  sky_api_run_set_packed (*out, sky_gpu_packed_catalogue (device_context));
  return result != NULL ? sky_api_run_result (*out, result) : SKY_OK;
}

int
sky_api_gpu_run_image (const SkyApiImage *img, const SkyApiParams *params, SkyApiRun **out)
{
  const SkyImage *image = sky_api_image_core (img);
  SkyParams p;
  SkyResult *res;
  SkyGpuTimes *times;
  int ret;

  *out = NULL;
  if ((ret = sky_api_core_params (params, &p)) != SKY_OK)
    return ret;
  if ((ret = sky_api_run_new_device (image->nx, image->ny, &p, out, &res, &times)) != SKY_OK)
    return ret;
  sky_api_run_set_image (*out, image);
  pthread_mutex_lock (&device_lock);
  if (device_context == NULL)
    ret = sky_gpu_new (&device_context);
  if (ret == SKY_OK)
    ret = sky_gpu_run_on (device_context, image, &p, 0, res, times);
  pthread_mutex_unlock (&device_lock);
  if (ret != SKY_OK)
    {
      sky_api_run_free (*out);
      *out = NULL;
    }
  return ret;
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
