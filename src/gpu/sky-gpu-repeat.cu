/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The GPU's figures as a benchmark takes them (cupyx.profiler.benchmark's
 * way): from page-locked memory, after a warm-up run that loads the
 * modules and sizes the buffers, the best of several runs; then what a
 * display needs, brought home once and timed on its own. Shared by the
 * CLI, the app and every other front end, so that their figures mean the
 * same thing. */
#include "sky-gpu-private.h"

#include <math.h>
#include <string.h>

static int
is_page_locked (const void *p)
{
  cudaPointerAttributes attr;

  if (cudaPointerGetAttributes (&attr, p) != cudaSuccess)
    {
      cudaGetLastError ();
      return 0;
    }
  return attr.type == cudaMemoryTypeHost;
}

/* Page-locks [p, p + size) for the caller's DMA unless it already is:
 * 1 when the caller must unlock it (sky_gpu_unlock_host), 0 when there
 * is nothing to undo (already locked, or locking failed: the copy then
 * goes through the driver's staging, slower but right). */
int
sky_gpu_lock_host (void *p, size_t size)
{
  if (p == NULL || size == 0 || is_page_locked (p))
    return 0;
  if (cudaHostRegister (p, size, cudaHostRegisterDefault) != cudaSuccess)
    {
      cudaGetLastError ();
      return 0;
    }
  return 1;
}

void
sky_gpu_unlock_host (void *p, int locked)
{
  if (locked && cudaHostUnregister (p) != cudaSuccess)
    cudaGetLastError ();
}

/* The mask and labels of the context's last run, into res (allocated
 * here where missing), by DMA into page-locked pages; ms gets the copy's
 * time from events. */
static int
fetch_outputs (SkyGpu *gpu, const SkyImage *img, unsigned flags, SkyResult *res, double *ms)
{
  const size_t n = (size_t) (img->nx * img->ny);
  cudaStream_t s = gpu->stream;
  int lock_mask = 0, lock_labels = 0, ret = SKY_OK;
  float elapsed = 0;

  *ms = -1;
  if ((flags & SKY_GPU_WANT_MASK) && res->mask == NULL)
    res->mask = (uint8_t *) sky_alloc_large (n);
  if ((flags & SKY_GPU_WANT_LABELS) && res->labels == NULL)
    res->labels = (int32_t *) sky_alloc_large (n * sizeof (int32_t));
  if (((flags & SKY_GPU_WANT_MASK) && res->mask == NULL)
      || ((flags & SKY_GPU_WANT_LABELS) && res->labels == NULL))
    return sky_fail (SKY_ERR_MEMORY, "no host memory for the mask and labels of %zu pixels", n);
  if (flags & SKY_GPU_WANT_MASK)
    lock_mask = sky_gpu_lock_host (res->mask, n);
  if (flags & SKY_GPU_WANT_LABELS)
    lock_labels = sky_gpu_lock_host (res->labels, n * sizeof (int32_t));

#define FETCH_CUDA(call)                                                        \
  do                                                                            \
    {                                                                           \
      cudaError_t fetch_err_ = (call);                                          \
      if (fetch_err_ != cudaSuccess)                                            \
        {                                                                       \
          ret = sky_gpu_cuda_fail (fetch_err_, #call, __FILE__, __LINE__);     \
          goto exit;                                                            \
        }                                                                       \
    }                                                                           \
  while (0)
  FETCH_CUDA (cudaEventRecord (gpu->ev[SKY_GPU_EV_BODY_START], s));
  if (flags & SKY_GPU_WANT_MASK)
    FETCH_CUDA (cudaMemcpyAsync (res->mask, gpu->d_mask, n, cudaMemcpyDeviceToHost, s));
  if (flags & SKY_GPU_WANT_LABELS)
    FETCH_CUDA (cudaMemcpyAsync (res->labels, gpu->d_labels, n * sizeof (int32_t),
                                 cudaMemcpyDeviceToHost, s));
  FETCH_CUDA (cudaEventRecord (gpu->ev[SKY_GPU_EV_BODY_END], s));
  FETCH_CUDA (cudaEventSynchronize (gpu->ev[SKY_GPU_EV_BODY_END]));
  FETCH_CUDA (cudaEventElapsedTime (&elapsed, gpu->ev[SKY_GPU_EV_BODY_START],
                                    gpu->ev[SKY_GPU_EV_BODY_END]));
#undef FETCH_CUDA
  *ms = elapsed;

exit:
  sky_gpu_unlock_host (res->mask, lock_mask);
  sky_gpu_unlock_host (res->labels, lock_labels);
  return ret;
}

int
sky_gpu_run_best (SkyGpu *gpu, const SkyImage *img, const SkyParams *params, unsigned flags,
                  int repeat, SkyResult *res, SkyGpuTimes *best)
{
  SkyGpuTimes t;
  const unsigned run_flags = flags & (SKY_GPU_IMAGE_LOADED | SKY_GPU_PIXELS_ON_DEVICE);
  int locked = 0, ret = SKY_OK;

  memset (best, 0, sizeof *best);
  best->outputs = -1;
  if ((img->pixels == NULL && !(run_flags & SKY_GPU_IMAGE_LOADED)) || img->nx <= 0
      || img->ny <= 0)
    return sky_gpu_run_on (gpu, img, params, flags, res, best);
  if (!run_flags)
    locked = sky_gpu_lock_host (img->pixels, (size_t) (img->nx * img->ny) * sizeof (float));
  if (repeat < 1)
    repeat = 1;
  /* The warm-up: untimed, as a benchmark's first call is. */
  ret = sky_gpu_run_on (gpu, img, params, run_flags, res, &t);
  for (int r = 0; r < repeat && ret == SKY_OK; r++)
    {
      ret = sky_gpu_run_on (gpu, img, params, run_flags, res, &t);
      if (ret != SKY_OK)
        break;
      if (r == 0)
        *best = t;
      else
        sky_gpu_times_min (best, &t);
    }
  best->runs = repeat;
  best->outputs = -1;
  if (ret == SKY_OK && (flags & (SKY_GPU_WANT_MASK | SKY_GPU_WANT_LABELS)))
    ret = fetch_outputs (gpu, img, flags, res, &best->outputs);
  sky_gpu_unlock_host (img->pixels, locked);
  if (ret != SKY_OK)
    sky_catalogue_clear (&res->catalogue);
  return ret;
}

int
sky_gpu_local_maps_best (SkyGpu *gpu, const SkyImage *img, const SkyParams *params, int repeat,
                         float *background, float *rms, SkyGpuTimes *times)
{
  SkyGpuMapsTimes t = {}, best = {};
  int ret = SKY_OK;
  int locked = sky_gpu_lock_host (img->pixels, (size_t) (img->nx * img->ny) * sizeof (float));

  memset (times, 0, sizeof *times);
  for (int r = -1; r < repeat && ret == SKY_OK; r++)
    {
      ret = sky_gpu_local_maps_host (gpu, img, params, NULL, NULL, NULL, NULL, &t);
      if (r == 0 || (r > 0 && t.kernel_ms < best.kernel_ms))
        best.kernel_ms = t.kernel_ms;
      if (r == 0 || (r > 0 && t.upload_ms < best.upload_ms))
        best.upload_ms = t.upload_ms;
    }
  if (ret == SKY_OK)
    ret = sky_gpu_local_maps_host (gpu, img, params, background, rms, NULL, NULL, &t);
  sky_gpu_unlock_host (img->pixels, locked);
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

int
sky_gpu_run_local_best (SkyGpu *gpu, const SkyImage *img, const SkyParams *params,
                        const SkyGpuDetectInput *in, int repeat, SkyResult *res,
                        SkyGpuTimes *times)
{
  SkyGpuTimes t;
  int ret = SKY_OK;

  for (int r = -1; ret == SKY_OK && r < (repeat > 0 ? repeat : 1); r++)
    {
      ret = sky_gpu_run_local_on (gpu, img, params, in, SKY_GPU_WANT_MASK | SKY_GPU_WANT_LABELS,
                                  res, &t);
      if (ret != SKY_OK || r < 0)
        continue;
      if (r == 0)
        *times = t;
      else
        sky_gpu_times_min (times, &t);
      times->runs = r + 1;
    }
  times->outputs = -1;
  return ret;
}
