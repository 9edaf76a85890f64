/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The GPU bridge of a build without the GPU backend: it only says why. */
#include "sky-pipeline-gpu.h"

#define NO_GPU_REASON \
  "This build of skysift has no GPU backend: it was built without CUDA " \
  "(nvcc or the CUDA runtime library was not found, or meson -Dcuda=disabled)."

gboolean
sky_pipeline_gpu_available (char **reason)
{
  if (reason)
    *reason = g_strdup (NO_GPU_REASON);
  return FALSE;
}

char *
sky_pipeline_gpu_describe (void)
{
  return g_strdup (NO_GPU_REASON);
}

static gboolean
no_gpu (GError **error)
{
  g_set_error_literal (error, SKY_UI_ERROR, SKY_UI_ERROR_UNAVAILABLE, NO_GPU_REASON);
  return FALSE;
}

const SkyGpuBackend *
sky_pipeline_gpu_backend (void)
{
  return NULL;
}

gboolean
sky_pipeline_gpu_convolution_demo (SkyConvolutionDemo *d, int repeat, guint64 *device_output,
                                   GError **error)
{
  (void) d;
  (void) repeat;
  *device_output = 0;
  return no_gpu (error);
}
