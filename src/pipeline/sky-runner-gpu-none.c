/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The runner's GPU in a build without the GPU backend: it only says why. */
#include "sky-runner.h"

#include <stdio.h>

#define NO_GPU_REASON \
  "This build of skysift has no GPU backend: it was built without CUDA " \
  "(nvcc or the CUDA runtime library was not found, or meson -Dcuda=disabled)."

static int
none_available (void *data, char *why, size_t why_size)
{
  (void) data;
  if (why != NULL && why_size > 0)
    snprintf (why, why_size, "%s", NO_GPU_REASON);
  return SKY_ERR_UNAVAILABLE;
}

static int
none_run (void *data, const SkyImage *img, const SkyParams *params, int keep, int repeat,
          SkyResult *res, SkyGpuTimes *times)
{
  (void) data;
  (void) img;
  (void) params;
  (void) keep;
  (void) repeat;
  (void) res;
  (void) times;
  return sky_fail (SKY_ERR_UNAVAILABLE, "%s", NO_GPU_REASON);
}

static int
none_compare (void *data, const SkyImage *img, const SkyResult *ref, const SkyResult *res,
              char *what, size_t what_size)
{
  (void) data;
  (void) img;
  (void) ref;
  (void) res;
  if (what != NULL && what_size > 0)
    snprintf (what, what_size, "%s", NO_GPU_REASON);
  return 1;
}

static int
none_local_maps (void *data, const SkyImage *img, const SkyParams *params, int repeat,
                 float *background, float *rms, SkyGpuTimes *times)
{
  (void) data;
  (void) img;
  (void) params;
  (void) repeat;
  (void) background;
  (void) rms;
  (void) times;
  return sky_fail (SKY_ERR_UNAVAILABLE, "%s", NO_GPU_REASON);
}

static const SkyGpuBackend none_backend = {
  none_available, none_run, none_compare, NULL, none_local_maps, NULL,
};

const SkyGpuBackend *
sky_gpu_backend_default (void)
{
  return &none_backend;
}
