/* SPDX-License-Identifier: GPL-3.0-or-later */
/* libskysift's device runs (sky-api.h) in a build without CUDA: each says
 * why there is no device. */
#include "sky-api.h"

#include "sky-core.h"

#include <stdio.h>

#define NO_CUDA "this libskysift was built without CUDA (nvcc and libcudart_static not found)"

int
sky_api_gpu_available (char *why, size_t why_size)
{
  if (why != NULL && why_size > 0)
    snprintf (why, why_size, "%s", NO_CUDA);
  return sky_fail (SKY_ERR_UNAVAILABLE, "%s", NO_CUDA);
}

int
sky_api_gpu_run_device (const float *d_pixels, int64_t nx, int64_t ny,
                        const SkyApiParams *params, void *stream, SkyApiRun **out,
                        SkyApiResult *result)
{
  (void) d_pixels, (void) nx, (void) ny, (void) params, (void) stream, (void) result;
  *out = NULL;
  return sky_fail (SKY_ERR_UNAVAILABLE, "%s", NO_CUDA);
}

int
sky_api_gpu_find_device (const float *d_pixels, int64_t nx, int64_t ny,
                         const SkyApiParams *params, void *stream, int32_t flags,
                         SkyApiDeviceFind *out)
{
  (void) d_pixels, (void) nx, (void) ny, (void) params, (void) stream, (void) flags, (void) out;
  return sky_fail (SKY_ERR_UNAVAILABLE, "%s", NO_CUDA);
}

int
sky_api_gpu_run_image (const SkyApiImage *img, const SkyApiParams *params, SkyApiRun **out)
{
  (void) img, (void) params;
  *out = NULL;
  return sky_fail (SKY_ERR_UNAVAILABLE, "%s", NO_CUDA);
}

int
sky_api_gpu_buffers (const void **d_mask, const void **d_labels)
{
  *d_mask = *d_labels = NULL;
  return sky_fail (SKY_ERR_UNAVAILABLE, "%s", NO_CUDA);
}

void
sky_api_gpu_release (void)
{
}
