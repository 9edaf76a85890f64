/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The GPU's part of the lesson's convolution demo (sky-core.h). */
#include "sky-gpu.h"

#include <math.h>

static int
demo_runs (SkyGpu *gpu, SkyConvolutionDemo *d, SkyConvolvePath path, int repeat)
{
  SkyGpuConvolveTimes t;

  d->gpu_ran = 0;
  d->gpu_2d_ms = d->gpu_2d_total_ms = d->gpu_1d_ms = d->gpu_1d_total_ms = INFINITY;
  for (int r = 0; r <= repeat; r++)
    {
      int ret = d->f64 ? sky_gpu_convolve2d_f64 (gpu, d->deltas, d->n, d->n, &d->kernel,
                                                 d->mode, path, d->gpu_2d, &t)
                       : sky_gpu_convolve2d_f32 (gpu, d->deltas, d->n, d->n, &d->kernel,
                                                 d->mode, path, d->gpu_2d, &t);
      if (ret != SKY_OK)
        return ret;
      if (r > 0 || repeat == 0)
        {
          if (t.kernel_ms < d->gpu_2d_ms)
            d->gpu_2d_ms = t.kernel_ms;
          if (t.total_ms < d->gpu_2d_total_ms)
            {
              d->gpu_2d_total_ms = t.total_ms;
              d->gpu_2d_upload_ms = t.upload_ms;
              d->gpu_2d_download_ms = t.download_ms;
            }
        }
      d->gpu_path = t.path;
      ret = d->f64 ? sky_gpu_convolve1d_f64 (gpu, d->deltas, d->n * d->n, d->diag, d->ndiag,
                                             d->gpu_1d, &t)
                   : sky_gpu_convolve1d_f32 (gpu, d->deltas, d->n * d->n, d->diag, d->ndiag,
                                             d->gpu_1d, &t);
      if (ret != SKY_OK)
        return ret;
      if (r > 0)
        {
          d->gpu_1d_ms = t.kernel_ms < d->gpu_1d_ms ? t.kernel_ms : d->gpu_1d_ms;
          d->gpu_1d_total_ms = t.total_ms < d->gpu_1d_total_ms ? t.total_ms : d->gpu_1d_total_ms;
        }
    }
  sky_convolution_demo_check_gpu (d);
  return SKY_OK;
}

/* Every transfer from and into page-locked memory, as the pipeline's are:
 * the input, the kernel's diagonal and both outputs are locked for the
 * demo's duration (the first warm-up run pays nothing for it either). */
int
sky_gpu_convolution_demo (SkyGpu *gpu, SkyConvolutionDemo *d, SkyConvolvePath path, int repeat)
{
  const size_t elem = d->f64 ? sizeof (double) : sizeof (float);
  void *const bufs[4] = { d->deltas, d->diag, d->gpu_2d, d->gpu_1d };
  const size_t sizes[4] = { (size_t) (d->n * d->n) * elem, (size_t) d->ndiag * elem,
                            (size_t) (d->out_nx * d->out_ny) * elem, (size_t) d->n1d * elem };
  int locked[4], ret;

  for (int i = 0; i < 4; i++)
    locked[i] = sky_gpu_lock_host (bufs[i], sizes[i]);
  ret = demo_runs (gpu, d, path, repeat);
  for (int i = 0; i < 4; i++)
    sky_gpu_unlock_host (bufs[i], locked[i]);
  return ret;
}
