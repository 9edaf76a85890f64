/* SPDX-License-Identifier: GPL-3.0-or-later */
/* One band of rows of an image too large for the device, through the
 * lesson's segment, label and measure kernels, for a run in bands
 * (sky-gpu.h, "A band of rows"): the band goes up, is cut into its mask at
 * the whole image's threshold, labelled alone and measured per label; home
 * come its label count, its first and last rows of labels (for the join
 * with the bands beside it) and each label's sums, count, peak and box,
 * not yet divided, so that the caller can add up a source's pieces. */
#include "sky-gpu-private.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The free memory left beside a run, as sky_gpu_ensure_buffers leaves it. */
#define SKY_GPU_FREE_MARGIN ((size_t) 64 << 20)

size_t
sky_gpu_run_bytes (int64_t n)
{
  return sky_gpu_image_bytes (n)
         + (size_t) ((sky_gpu_initial_measure_capacity (n) + 255) / 256 * 256)
               * (SKY_MEASURE_ACC_BYTES + SKY_MEASURE_CAT_BYTES);
}

int
sky_gpu_room (SkyGpu *gpu, size_t limit, size_t *room)
{
  /* The context's image-sized and catalogue buffers count as free: a run
   * replaces them. */
  const size_t mine = gpu == NULL ? 0
                                  : (gpu->capacity > 0 ? sky_gpu_image_bytes (gpu->capacity) : 0)
                                        + (size_t) gpu->meas_cap
                                              * (SKY_MEASURE_ACC_BYTES + SKY_MEASURE_CAT_BYTES);
  const size_t held = gpu == NULL ? 0 : sky_gpu_device_bytes (gpu) - mine;
  size_t free_bytes, total_bytes;

  *room = 0;
  SKY_CUDA (cudaSetDevice (gpu == NULL ? 0 : gpu->device));
  SKY_CUDA (cudaMemGetInfo (&free_bytes, &total_bytes));
  free_bytes += mine;
  *room = free_bytes > SKY_GPU_FREE_MARGIN ? free_bytes - SKY_GPU_FREE_MARGIN : 0;
  if (limit > 0 && (limit > held ? limit - held : 0) < *room)
    *room = limit > held ? limit - held : 0;
  return SKY_OK;
}

int64_t
sky_gpu_band_rows (int64_t nx, int64_t ny, size_t room)
{
  int64_t lo = 0, hi = ny;

  /* Pixel indices of a band stay 32-bit (the peak's tie-break packs one). */
  if (hi > INT32_MAX / nx)
    hi = INT32_MAX / nx;
  while (lo < hi)
    {
      const int64_t mid = lo + (hi - lo + 1) / 2;
      if (sky_gpu_run_bytes (nx * mid) <= room)
        lo = mid;
      else
        hi = mid - 1;
    }
  return lo;
}

void
sky_gpu_band_clear (SkyGpuBand *band)
{
  free (band->first_row);
  free (band->last_row);
  free (band->sum);
  free (band->sx);
  free (band->sy);
  free (band->npix);
  free (band->peak);
  free (band->peak_x);
  free (band->peak_y);
  free (band->xmin);
  free (band->xmax);
  free (band->ymin);
  free (band->ymax);
  memset (band, 0, sizeof *band);
}

static int
band_reserve (SkyGpuBand *band, int64_t nx, int64_t n)
{
  if (band->nx != nx)
    {
      free (band->first_row);
      free (band->last_row);
      band->first_row = (int32_t *) malloc ((size_t) nx * sizeof (int32_t));
      band->last_row = (int32_t *) malloc ((size_t) nx * sizeof (int32_t));
      band->nx = band->first_row != NULL && band->last_row != NULL ? nx : 0;
      if (band->nx == 0)
        return sky_fail (SKY_ERR_MEMORY, "no host memory for a band's rows of labels");
    }
  if (n <= band->capacity)
    return SKY_OK;
#define SKY_GROW(field)                                                                 \
  do                                                                                    \
    {                                                                                   \
      void *p_ = realloc (band->field, (size_t) n * sizeof *band->field);               \
      if (p_ == NULL)                                                                   \
        return sky_fail (SKY_ERR_MEMORY, "no host memory for a band's %lld sources",     \
                         (long long) n);                                                \
      band->field = (decltype (band->field)) p_;                                        \
    }                                                                                   \
  while (0)
  SKY_GROW (sum);
  SKY_GROW (sx);
  SKY_GROW (sy);
  SKY_GROW (npix);
  SKY_GROW (peak);
  SKY_GROW (peak_x);
  SKY_GROW (peak_y);
  SKY_GROW (xmin);
  SKY_GROW (xmax);
  SKY_GROW (ymin);
  SKY_GROW (ymax);
#undef SKY_GROW
  band->capacity = n;
  return SKY_OK;
}

int
sky_gpu_band_start (SkyGpu *gpu, const float *pixels, int64_t nx, int64_t rows,
                    double threshold_value, const SkyParams *params)
{
  const int64_t n = nx * rows;
  cudaStream_t s = gpu->stream;
  SkyGpuState *st = gpu->h_state;
  int ret;

  if (gpu->broken)
    return sky_fail (SKY_ERR_UNAVAILABLE, "the GPU context failed earlier: %s", gpu->broken_why);
  if (nx <= 0 || rows <= 0 || n > INT32_MAX)
    return sky_fail (SKY_ERR_SIZE, "a band of rows takes 1 to 2^31 - 1 pixels (got %lld x %lld)",
                     (long long) nx, (long long) rows);
  SKY_CUDA (cudaSetDevice (gpu->device));
  if ((ret = sky_gpu_ensure_buffers (gpu, n)) != SKY_OK
      || (ret = sky_gpu_ensure_measure (gpu, sky_gpu_initial_measure_capacity (n))) != SKY_OK)
    return ret;
  gpu->loaded_n = 0;   /* d_image holds a band now */
  gpu->band_n = n;
  gpu->band_nx = nx;
  gpu->band_rows = rows;

  gpu->h_params->clip_kappa = params->clip_kappa;
  gpu->h_params->threshold = params->threshold;
  gpu->h_params->max_iter = params->max_iter;
  gpu->h_params->relative = params->relative;
  gpu->h_params->connectivity = params->connectivity;
  gpu->h_params->full_clip = 0;
  gpu->h_params->loop_profile = 0;
  gpu->params_uploaded = 0;   /* the lesson's next run uploads its own */
  /* The state the clip would have left: the whole image's threshold as
   * the segment kernel reads it (sky_threshold_bound, as the clip loop). */
  memset (st, 0, sizeof *st);
  st->threshold_value = threshold_value;
  st->has_bound = !isnan (threshold_value);
  st->bound = isnan (threshold_value) ? 0.0f : sky_threshold_bound (threshold_value);

  SKY_CUDA (cudaEventRecord (gpu->ev[SKY_GPU_EV_START], s));
  SKY_CUDA (cudaMemcpyAsync (gpu->d_image, pixels, (size_t) n * 4, cudaMemcpyHostToDevice, s));
  SKY_CUDA (cudaMemcpyAsync (gpu->d_params, gpu->h_params, sizeof (SkyGpuParams),
                             cudaMemcpyHostToDevice, s));
  SKY_CUDA (cudaMemcpyAsync (gpu->d_state, gpu->h_state, sizeof (SkyGpuState),
                             cudaMemcpyHostToDevice, s));
  SKY_CUDA (cudaEventRecord (gpu->ev[SKY_GPU_EV_UPLOADED], s));
  if ((ret = sky_gpu_segment_enqueue (gpu, n)) != SKY_OK)
    return ret;
  SKY_CUDA (cudaEventRecord (gpu->ev[SKY_GPU_EV_STEP_END + SKY_STEP_SEGMENT], s));
  if ((ret = sky_gpu_label_enqueue (gpu, nx, rows)) != SKY_OK)
    return ret;
  SKY_CUDA (cudaEventRecord (gpu->ev[SKY_GPU_EV_STEP_END + SKY_STEP_LABEL], s));
  if ((ret = sky_gpu_measure_enqueue (gpu, nx, rows, 0)) != SKY_OK)
    return ret;
  SKY_CUDA (cudaEventRecord (gpu->ev[SKY_GPU_EV_STEP_END + SKY_STEP_MEASURE], s));
  SKY_CUDA (cudaMemcpyAsync (gpu->h_state, gpu->d_state, sizeof (SkyGpuState),
                             cudaMemcpyDeviceToHost, s));
  SKY_CUDA (cudaEventRecord (gpu->ev[SKY_GPU_EV_HEADER], s));
  return SKY_OK;
}

/* The accumulators of the band's n labels home, column after column
 * (they lie cap apart on the device). */
static int
download_sums (SkyGpu *gpu, int64_t n, cudaStream_t s)
{
  const size_t cap = (size_t) gpu->meas_cap;
  unsigned char *h;
  int ret;

  if ((ret = sky_gpu_ensure_host ((void **) &gpu->h_cat, &gpu->h_cat_bytes,
                                  (size_t) n * SKY_MEASURE_ACC_BYTES)) != SKY_OK)
    return ret;
  h = gpu->h_cat;
  if (n == 0)
    return SKY_OK;
  /* sum, sx, sy, npix, peak: five 8-byte columns; then the box's four
   * 4-byte columns. */
  SKY_CUDA (cudaMemcpy2DAsync (h, (size_t) n * 8, gpu->d_meas, cap * 8, (size_t) n * 8, 5,
                               cudaMemcpyDeviceToHost, s));
  SKY_CUDA (cudaMemcpy2DAsync (h + (size_t) n * 40, (size_t) n * 4, gpu->d_meas + cap * 40,
                               cap * 4, (size_t) n * 4, 4, cudaMemcpyDeviceToHost, s));
  return SKY_OK;
}

int
sky_gpu_band_finish (SkyGpu *gpu, int64_t y0, SkyGpuBand *band)
{
  const int64_t nx = gpu->band_nx, rows = gpu->band_rows;
  cudaStream_t s = gpu->stream;
  const SkyGpuState *st = gpu->h_state;
  int remeasured = 0, ret;
  int64_t n;

  SKY_CUDA (cudaEventSynchronize (gpu->ev[SKY_GPU_EV_HEADER]));
  n = st->nsources;
  if (st->overflow)
    {
      /* More labels than the buffer holds: grow it, measure again. */
      if ((ret = sky_gpu_ensure_measure (gpu, n)) != SKY_OK)
        return ret;
      SKY_CUDA (cudaEventRecord (gpu->ev[SKY_GPU_EV_REMEASURE], s));
      if ((ret = sky_gpu_measure_enqueue (gpu, nx, rows, 1)) != SKY_OK)
        return ret;
      SKY_CUDA (cudaEventRecord (gpu->ev[SKY_GPU_EV_STEP_END + SKY_STEP_MEASURE], s));
      remeasured = 1;
    }
  if ((ret = band_reserve (band, nx, n)) != SKY_OK)
    return ret;
  SKY_CUDA (cudaEventRecord (gpu->ev[SKY_GPU_EV_BODY_START], s));
  SKY_CUDA (cudaMemcpyAsync (band->first_row, gpu->d_labels, (size_t) nx * 4,
                             cudaMemcpyDeviceToHost, s));
  SKY_CUDA (cudaMemcpyAsync (band->last_row, gpu->d_labels + (rows - 1) * nx, (size_t) nx * 4,
                             cudaMemcpyDeviceToHost, s));
  if ((ret = download_sums (gpu, n, s)) != SKY_OK)
    return ret;
  SKY_CUDA (cudaEventRecord (gpu->ev[SKY_GPU_EV_BODY_END], s));
  SKY_CUDA (cudaEventSynchronize (gpu->ev[SKY_GPU_EV_BODY_END]));

  band->nlabels = n;
  band->upload_ms = sky_gpu_elapsed_ms (gpu, SKY_GPU_EV_START, SKY_GPU_EV_UPLOADED);
  band->segment_ms = sky_gpu_elapsed_ms (gpu, SKY_GPU_EV_UPLOADED,
                                         SKY_GPU_EV_STEP_END + SKY_STEP_SEGMENT);
  band->label_ms = sky_gpu_elapsed_ms (gpu, SKY_GPU_EV_STEP_END + SKY_STEP_SEGMENT,
                                       SKY_GPU_EV_STEP_END + SKY_STEP_LABEL);
  band->measure_ms = sky_gpu_elapsed_ms (gpu, remeasured ? SKY_GPU_EV_REMEASURE
                                                         : SKY_GPU_EV_STEP_END + SKY_STEP_LABEL,
                                         SKY_GPU_EV_STEP_END + SKY_STEP_MEASURE);
  band->download_ms = sky_gpu_elapsed_ms (gpu, SKY_GPU_EV_BODY_START, SKY_GPU_EV_BODY_END)
                      + (remeasured ? 0
                                    : sky_gpu_elapsed_ms (gpu, SKY_GPU_EV_STEP_END
                                                                   + SKY_STEP_MEASURE,
                                                          SKY_GPU_EV_HEADER));

  /* The columns in the whole image's rows: a band's row r is row y0 + r,
   * so its sum of value * row gains y0 * its sum. */
  const unsigned char *h = gpu->h_cat;
  const double *sum = (const double *) h, *sx = sum + n, *sy = sx + n;
  const unsigned long long *npix = (const unsigned long long *) (sy + n), *peak = npix + n;
  const int32_t *x0 = (const int32_t *) (peak + n), *x1 = x0 + n, *yb0 = x1 + n, *yb1 = yb0 + n;
  for (int64_t i = 0; i < n; i++)
    {
      const uint32_t p = 0xffffffffu - (uint32_t) peak[i];
      band->sum[i] = sum[i];
      band->sx[i] = sx[i];
      band->sy[i] = sy[i] + (double) y0 * sum[i];
      band->npix[i] = (int64_t) npix[i];
      band->peak[i] = sky_key_float ((uint32_t) (peak[i] >> 32));
      band->peak_x[i] = (int32_t) (p % (uint32_t) nx);
      band->peak_y[i] = (int32_t) (y0 + p / (uint32_t) nx);
      band->xmin[i] = x0[i];
      band->xmax[i] = x1[i];
      band->ymin[i] = (int32_t) (y0 + yb0[i]);
      band->ymax[i] = (int32_t) (y0 + yb1[i]);
    }
  return SKY_OK;
}

int
sky_gpu_band_failed (SkyGpu *gpu)
{
  cudaError_t err = cudaStreamSynchronize (gpu->stream);

  if (err != cudaSuccess)
    {
      gpu->broken = 1;
      snprintf (gpu->broken_why, sizeof gpu->broken_why, "%s", sky_last_error ());
    }
  return err == cudaSuccess ? SKY_OK : SKY_ERR_UNAVAILABLE;
}
