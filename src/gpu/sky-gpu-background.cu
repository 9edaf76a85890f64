/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The local method's maps on the device: host interface (sky-gpu.h). The
 * phases run on the context's stream with no host round trip:
 *   boxes  each box's estimate (sky-gpu-background-boxes.cu)
 *   mesh   filled, median-filtered, column splines (sky-gpu-background-mesh.cu)
 *   maps   column weights, row nodes, every pixel (sky-gpu-background-maps.cu)
 * The buffers stay with the context (one allocation, kept while large
 * enough); the interval starts of a geometry are worked out on the host
 * once and kept. */
#include "sky-gpu-background.cuh"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

namespace {

/* Carves the arena: each array 256-byte aligned. With base NULL it only
 * counts. */
struct Carver {
  char *base;
  size_t used;

  template <typename T>
  T *
  take (int64_t count)
  {
    size_t at = (used + 255) / 256 * 256;
    used = at + (size_t) count * sizeof (T);
    return base ? reinterpret_cast<T *> (base + at) : nullptr;
  }
};

void
carve (SkyGpuLocal *L, const SkyBkgGeometry *g, Carver &c)
{
  const int64_t n = g->n, nb = g->nb, nbx = g->nbx;

  L->d_background = c.take<float> (n);
  L->d_rms = c.take<float> (n);
  L->d_residual = c.take<float> (n);
  L->d_snr = c.take<float> (n);
  L->d_qzero = c.take<float> (nb);
  L->d_qscale = c.take<float> (nb);
  L->d_boxmean = c.take<float> (nb);
  L->d_nlevels = c.take<int32_t> (nb);
  L->d_raw_back = c.take<float> (nb);
  L->d_raw_rms = c.take<float> (nb);
  L->d_fill_back = c.take<float> (nb);
  L->d_fill_rms = c.take<float> (nb);
  L->d_back = c.take<float> (nb);
  L->d_rmsm = c.take<float> (nb);
  L->d_dback = c.take<float> (nb);
  L->d_drms = c.take<float> (nb);
  L->d_left = c.take<int32_t> (nb);
  L->d_right = c.take<int32_t> (nb);
  L->filter_window = sky_gpu_background_filter_window (g);
  L->d_filter_scratch = c.take<float> (L->filter_window > 0 ? nb * 2 * L->filter_window : 1);
  L->d_col_u = c.take<float> (4 * nb);
  L->d_start = c.take<int64_t> (nbx + 1);
  L->d_kcol = c.take<int32_t> (g->nx);
  L->d_dx = c.take<float> (g->nx);
  L->d_cdx = c.take<float> (g->nx);
  L->d_ax = c.take<float> (g->nx);
  L->d_bx = c.take<float> (g->nx);
  L->d_nodes = c.take<float> (4 * nbx * g->ny);
  L->d_row_u = c.take<float> (nbx > 128 ? 6 * nbx * g->ny : 1);
}

int
geometry (int64_t nx, int64_t ny, const SkyParams *params, SkyBkgGeometry *g)
{
  int ret;

  if ((ret = sky_params_check (params)) != SKY_OK)
    return ret;
  if (nx < 1 || ny < 1)
    return sky_fail (SKY_ERR_SIZE, "background of an empty image (%lld x %lld)",
                     (long long) nx, (long long) ny);
  if (nx > INT32_MAX)
    return sky_fail (SKY_ERR_SIZE, "the GPU's background takes rows of up to %d pixels, not %lld",
                     INT32_MAX, (long long) nx);
  g->nx = nx;
  g->ny = ny;
  g->n = nx * ny;
  g->box = params->bkg_box;
  g->filter = params->bkg_filter;
  g->nbx = (nx - 1) / g->box + 1;
  g->nby = (ny - 1) / g->box + 1;
  g->nb = g->nbx * g->nby;
  return SKY_OK;
}

/* The arena for g, and the interval starts of g's geometry uploaded. */
int
ensure_local (SkyGpu *gpu, const SkyBkgGeometry *g)
{
  SkyGpuLocal *L = gpu->local;
  Carver count = { nullptr, 0 };
  int ret;

  if (L == NULL)
    {
      L = gpu->local = (SkyGpuLocal *) calloc (1, sizeof *L);
      if (L == NULL)
        return sky_fail (SKY_ERR_MEMORY, "out of memory for the GPU's background");
      if ((ret = sky_gpu_background_boxes_prepare (gpu)) != SKY_OK)
        return ret;
    }
  carve (L, g, count);
  if (count.used > L->arena_bytes)
    {
      size_t free_bytes, total_bytes;
      cudaFree (L->d_arena);
      L->d_arena = NULL;
      L->arena_bytes = 0;
      L->start_nx = 0;
      L->mesh_nb = 0;
      if ((ret = sky_gpu_check_memory_limit (gpu, count.used, "the background maps")) != SKY_OK)
        return ret;
      SKY_CUDA (cudaMemGetInfo (&free_bytes, &total_bytes));
      if (count.used + (64u << 20) > free_bytes)
        return sky_fail (SKY_ERR_MEMORY,
                         "the GPU needs %zu MiB for the background maps of %lld x %lld pixels "
                         "and has %zu MiB free of %zu MiB",
                         count.used >> 20, (long long) g->nx, (long long) g->ny,
                         free_bytes >> 20, total_bytes >> 20);
      SKY_CUDA (cudaMalloc (&L->d_arena, count.used));
      L->arena_bytes = count.used;
    }
  Carver c = { (char *) L->d_arena, 0 };
  carve (L, g, c);

  if (L->start_nx != g->nx || L->start_box != g->box || L->start_nbx != g->nbx)
    {
      const size_t bytes = (size_t) (g->nbx + 1) * sizeof (int64_t);
      if (bytes > L->h_start_cap)
        {
          cudaFreeHost (L->h_start);
          L->h_start = NULL;
          L->h_start_cap = 0;
          SKY_CUDA (cudaHostAlloc ((void **) &L->h_start, bytes, cudaHostAllocDefault));
          L->h_start_cap = bytes;
        }
      /* The stream may still read the previous starts. */
      SKY_CUDA (cudaStreamSynchronize (gpu->stream));
      sky_gpu_background_column_starts (g->nx, g->box, g->nbx, L->h_start);
      SKY_CUDA (cudaMemcpyAsync (L->d_start, L->h_start, bytes, cudaMemcpyHostToDevice,
                                 gpu->stream));
      L->start_nx = g->nx;
      L->start_box = g->box;
      L->start_nbx = g->nbx;
    }
  return SKY_OK;
}

} /* namespace */

void
sky_gpu_local_free (SkyGpu *gpu)
{
  if (gpu->local == NULL)
    return;
  cudaFree (gpu->local->d_arena);
  cudaFreeHost (gpu->local->h_start);
  free (gpu->local);
  gpu->local = NULL;
}

size_t
sky_gpu_local_bytes (const SkyGpu *gpu)
{
  return gpu->local != NULL ? gpu->local->arena_bytes : 0;
}

/* sky_gpu_local_maps, the background and rms maps written or (full 0)
 * left to the row splines. */
static int
local_maps (SkyGpu *gpu, const float *d_image, int64_t nx, int64_t ny, const SkyParams *params,
            int full, SkyGpuLocalMaps *out)
{
  SkyBkgGeometry g;
  int ret;

  memset (out, 0, sizeof *out);
  if (gpu->broken)
    return sky_fail (SKY_ERR_UNAVAILABLE, "%s", gpu->broken_why);
  if ((ret = geometry (nx, ny, params, &g)) != SKY_OK)
    return ret;
  SKY_CUDA (cudaSetDevice (gpu->device));
  if ((ret = ensure_local (gpu, &g)) != SKY_OK)
    return ret;
  const SkyGpuLocal *L = gpu->local;
  if ((ret = sky_gpu_background_boxes_enqueue (gpu, L, &g, d_image)) != SKY_OK
      || (ret = sky_gpu_background_mesh_enqueue (gpu, L, &g)) != SKY_OK
      || (ret = sky_gpu_background_maps_enqueue (gpu, L, &g, d_image, full)) != SKY_OK)
    return ret;
  gpu->local->mesh_nb = g.nb;
  out->nx = nx;
  out->ny = ny;
  out->background = full ? L->d_background : NULL;
  out->rms = full ? L->d_rms : NULL;
  out->residual = L->d_residual;
  out->snr = L->d_snr;
  out->nbx = g.nbx;
  out->nby = g.nby;
  out->box = g.box;
  out->mesh_background = L->d_back;
  out->mesh_rms = L->d_rmsm;
  return SKY_OK;
}

int
sky_gpu_local_maps (SkyGpu *gpu, const float *d_image, int64_t nx, int64_t ny,
                    const SkyParams *params, SkyGpuLocalMaps *out)
{
  return local_maps (gpu, d_image, nx, ny, params, 1, out);
}

int
sky_gpu_local_maps_splines (SkyGpu *gpu, const float *d_image, int64_t nx, int64_t ny,
                            const SkyParams *params, SkyGpuLocalMaps *out,
                            SkyGpuRowSplines *splines)
{
  int ret;

  memset (splines, 0, sizeof *splines);
  if ((ret = local_maps (gpu, d_image, nx, ny, params, 0, out)) != SKY_OK)
    return ret;
  const SkyGpuLocal *L = gpu->local;
  splines->nodes = L->d_nodes;
  splines->kcol = L->d_kcol;
  splines->dx = L->d_dx;
  splines->cdx = L->d_cdx;
  splines->ax = L->d_ax;
  splines->bx = L->d_bx;
  splines->nbx = out->nbx;
  return SKY_OK;
}

int
sky_gpu_local_mesh_download (SkyGpu *gpu, float *back, float *rms)
{
  const SkyGpuLocal *L = gpu->local;

  if (L == NULL || L->mesh_nb == 0)
    return sky_fail (SKY_ERR_ARGUMENT, "the GPU context has made no background mesh yet");
  if (back != NULL)
    SKY_CUDA (cudaMemcpyAsync (back, L->d_back, (size_t) L->mesh_nb * sizeof (float),
                               cudaMemcpyDeviceToHost, gpu->stream));
  if (rms != NULL)
    SKY_CUDA (cudaMemcpyAsync (rms, L->d_rmsm, (size_t) L->mesh_nb * sizeof (float),
                               cudaMemcpyDeviceToHost, gpu->stream));
  SKY_CUDA (cudaStreamSynchronize (gpu->stream));
  return SKY_OK;
}

/* Copies a device map home, or nothing where not wanted. */
static int
download (SkyGpu *gpu, float *host, const float *device, int64_t n)
{
  if (host == NULL)
    return SKY_OK;
  SKY_CUDA (cudaMemcpyAsync (host, device, (size_t) n * sizeof (float), cudaMemcpyDeviceToHost,
                             gpu->stream));
  return SKY_OK;
}

int
sky_gpu_local_maps_host (SkyGpu *gpu, const SkyImage *img, const SkyParams *params,
                         float *background, float *rms, float *residual, float *snr,
                         SkyGpuMapsTimes *times)
{
  const int64_t n = img->nx * img->ny;
  SkyGpuLocalMaps maps;
  float ms = 0;
  int ret, locked[4] = { 0, 0, 0, 0 };
  float *outs[4] = { background, rms, residual, snr };

  if (times != NULL)
    memset (times, 0, sizeof *times);
  if (gpu->broken)
    return sky_fail (SKY_ERR_UNAVAILABLE, "%s", gpu->broken_why);
  if (n < 1)
    return sky_fail (SKY_ERR_SIZE, "background of an empty image (%lld x %lld)",
                     (long long) img->nx, (long long) img->ny);
  SKY_CUDA (cudaSetDevice (gpu->device));
  if ((ret = sky_gpu_ensure_buffers (gpu, n)) != SKY_OK)
    return ret;
  /* The downloads go by DMA straight into the caller's pages. */
  for (int m = 0; m < 4; m++)
    if (outs[m] != NULL)
      locked[m] = sky_gpu_lock_host (outs[m], (size_t) n * sizeof (float));
  int image_locked = sky_gpu_lock_host (img->pixels, (size_t) n * sizeof (float));

  ret = SKY_OK;
  if (cudaEventRecord (gpu->ev[SKY_GPU_EV_START], gpu->stream) != cudaSuccess
      || cudaMemcpyAsync (gpu->d_image, img->pixels, (size_t) n * sizeof (float),
                          cudaMemcpyHostToDevice, gpu->stream) != cudaSuccess
      || cudaEventRecord (gpu->ev[SKY_GPU_EV_UPLOADED], gpu->stream) != cudaSuccess)
    ret = sky_gpu_cuda_fail (cudaGetLastError (), "upload of the image", __FILE__, __LINE__);
  if (ret == SKY_OK)
    ret = sky_gpu_local_maps (gpu, gpu->d_image, img->nx, img->ny, params, &maps);
  if (ret == SKY_OK)
    {
      if (cudaEventRecord (gpu->ev[SKY_GPU_EV_STEP_END + SKY_STEP_BACKGROUND], gpu->stream)
          != cudaSuccess)
        ret = sky_gpu_cuda_fail (cudaGetLastError (), "cudaEventRecord", __FILE__, __LINE__);
      const float *devs[4] = { maps.background, maps.rms, maps.residual, maps.snr };
      for (int m = 0; m < 4 && ret == SKY_OK; m++)
        ret = download (gpu, outs[m], devs[m], n);
      if (ret == SKY_OK && cudaEventRecord (gpu->ev[SKY_GPU_EV_BODY_END], gpu->stream)
                               != cudaSuccess)
        ret = sky_gpu_cuda_fail (cudaGetLastError (), "cudaEventRecord", __FILE__, __LINE__);
    }
  if (ret == SKY_OK)
    {
      cudaError_t err = cudaStreamSynchronize (gpu->stream);
      if (err != cudaSuccess)
        ret = sky_gpu_cuda_fail (err, "the background maps' kernels", __FILE__, __LINE__);
    }
  if (ret == SKY_OK && times != NULL)
    {
      cudaEventElapsedTime (&ms, gpu->ev[SKY_GPU_EV_START], gpu->ev[SKY_GPU_EV_UPLOADED]);
      times->upload_ms = ms;
      cudaEventElapsedTime (&ms, gpu->ev[SKY_GPU_EV_UPLOADED],
                            gpu->ev[SKY_GPU_EV_STEP_END + SKY_STEP_BACKGROUND]);
      times->kernel_ms = ms;
      cudaEventElapsedTime (&ms, gpu->ev[SKY_GPU_EV_STEP_END + SKY_STEP_BACKGROUND],
                            gpu->ev[SKY_GPU_EV_BODY_END]);
      times->download_ms = ms;
    }
  if (ret != SKY_OK)
    {
      /* A fault inside a kernel leaves the context unusable: say so from
       * now on (as sky_gpu_run_on does). */
      cudaError_t err = cudaStreamSynchronize (gpu->stream);
      if (err != cudaSuccess)
        {
          gpu->broken = 1;
          snprintf (gpu->broken_why, sizeof gpu->broken_why, "%s", sky_last_error ());
        }
    }
  sky_gpu_unlock_host (img->pixels, image_locked);
  for (int m = 0; m < 4; m++)
    if (outs[m] != NULL)
      sky_gpu_unlock_host (outs[m], locked[m]);
  return ret;
}
