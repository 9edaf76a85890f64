/* SPDX-License-Identifier: GPL-3.0-or-later */
/* One run of the four steps on the device: upload, the steps back to back
 * on one stream with an event between each, then the results home. The
 * host waits twice: once for the header (statistics and source count, to
 * know how much catalogue to fetch) and once for the catalogue. */
#include "sky-gpu-private.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double
sky_gpu_elapsed_ms (const SkyGpu *gpu, int from, int to)
{
  float ms = 0;

  if (cudaEventElapsedTime (&ms, gpu->ev[from], gpu->ev[to]) != cudaSuccess)
    {
      cudaGetLastError ();
      return NAN;
    }
  return ms;
}

/* Where the image's pixels live: pinned host memory (the copy engine
 * reads it), the device's own memory (a caller's device array, CuPy's say),
 * or neither (pageable host memory, staged first). */
enum { PIXELS_PAGEABLE, PIXELS_PINNED, PIXELS_DEVICE };

static int
pixels_place (const void *p)
{
  cudaPointerAttributes attr;

  if (cudaPointerGetAttributes (&attr, p) != cudaSuccess)
    {
      cudaGetLastError ();
      return PIXELS_PAGEABLE;
    }
  return attr.type == cudaMemoryTypeHost     ? PIXELS_PINNED
         : attr.type == cudaMemoryTypeDevice ? PIXELS_DEVICE
                                             : PIXELS_PAGEABLE;
}

__device__ __forceinline__ float
blank_inf (float v)
{
  return isinf (v) ? NAN : v;
}

/* A device array's copy into the context's image where the steps cannot
 * read it in place (not 16-byte aligned), infinities made NaN on the way
 * as the FITS loader does for host images. One pass, like the copy it
 * replaces; four pixels a thread where both ends are 16-byte aligned, so
 * that the copy runs at the memory's pace. */
__global__ static void
copyBlankingInfKernel (float *dst, const float *src, int64_t n)
{
  const int64_t stride = (int64_t) gridDim.x * blockDim.x;
  int64_t first = blockIdx.x * (int64_t) blockDim.x + threadIdx.x;

  if ((((uintptr_t) dst | (uintptr_t) src) & 15) == 0)
    {
      const int64_t n4 = n / 4;
      const float4 *s4 = reinterpret_cast<const float4 *> (src);
      float4 *d4 = reinterpret_cast<float4 *> (dst);
      for (int64_t i = first; i < n4; i += stride)
        {
          float4 v = s4[i];
          d4[i] = make_float4 (blank_inf (v.x), blank_inf (v.y), blank_inf (v.z),
                               blank_inf (v.w));
        }
      first += n4 * 4;
    }
  for (int64_t i = first; i < n; i += stride)
    dst[i] = blank_inf (src[i]);
}

int
sky_gpu_ensure_host (void **buf, size_t *have, size_t need)
{
  if (need <= *have && *buf != NULL)
    return SKY_OK;
  cudaFreeHost (*buf);
  *buf = NULL;
  *have = 0;
  SKY_CUDA (cudaHostAlloc (buf, need > 0 ? need : 64, cudaHostAllocDefault));
  *have = need > 0 ? need : 64;
  return SKY_OK;
}

int
sky_gpu_reset_result (SkyResult *res, const SkyImage *img, unsigned flags)
{
  const int64_t n = img->nx * img->ny;
  const int same = res->nx == img->nx && res->ny == img->ny;
  uint8_t *mask = (flags & SKY_GPU_WANT_MASK) && same ? res->mask : NULL;
  int32_t *labels = (flags & SKY_GPU_WANT_LABELS) && same ? res->labels : NULL;

  if (mask != res->mask)
    free (res->mask);
  if (labels != res->labels)
    free (res->labels);
  sky_catalogue_clear (&res->catalogue);
  memset (res, 0, sizeof *res);
  res->nx = img->nx;
  res->ny = img->ny;
  if ((flags & SKY_GPU_WANT_MASK) && mask == NULL)
    mask = (uint8_t *) sky_alloc_large ((size_t) n);
  if ((flags & SKY_GPU_WANT_LABELS) && labels == NULL)
    labels = (int32_t *) sky_alloc_large ((size_t) n * sizeof *labels);
  res->mask = mask;
  res->labels = labels;
  if (((flags & SKY_GPU_WANT_MASK) && mask == NULL)
      || ((flags & SKY_GPU_WANT_LABELS) && labels == NULL))
    return sky_fail (SKY_ERR_MEMORY, "no host memory for the mask and labels of %lld pixels",
                     (long long) n);
  return SKY_OK;
}

int
sky_gpu_unpack_catalogue (const unsigned char *packed, int64_t n, SkyCatalogue *cat)
{
  int ret = sky_catalogue_alloc (cat, n);
  const double *x = (const double *) packed, *y = x + n, *sum = y + n;
  const int64_t *npix = (const int64_t *) (sum + n);
  const float *peak = (const float *) (npix + n);
  const int32_t *peak_x = (const int32_t *) (peak + n), *peak_y = peak_x + n;
  const int32_t *xmin = peak_y + n, *xmax = xmin + n, *ymin = xmax + n, *ymax = ymin + n;

  if (ret != SKY_OK || n == 0)
    return ret;
  memcpy (cat->x, x, (size_t) n * sizeof *x);
  memcpy (cat->y, y, (size_t) n * sizeof *y);
  memcpy (cat->sum, sum, (size_t) n * sizeof *sum);
  memcpy (cat->npix, npix, (size_t) n * sizeof *npix);
  memcpy (cat->peak, peak, (size_t) n * sizeof *peak);
  memcpy (cat->peak_x, peak_x, (size_t) n * sizeof *peak_x);
  memcpy (cat->peak_y, peak_y, (size_t) n * sizeof *peak_y);
  memcpy (cat->xmin, xmin, (size_t) n * sizeof *xmin);
  memcpy (cat->xmax, xmax, (size_t) n * sizeof *xmax);
  memcpy (cat->ymin, ymin, (size_t) n * sizeof *ymin);
  memcpy (cat->ymax, ymax, (size_t) n * sizeof *ymax);
  return SKY_OK;
}

/* Test hook: SKYSIFT_GPU_FAULT=clip|segment|label|measure makes the device
 * fail just before that step with a kernel that traps. That is a real
 * fault: the context is left unusable and every later CUDA call fails, as
 * after an Xid error or a lost device, so what callers do about it can be
 * tested on any GPU. */
static __global__ void
faultTrapKernel (void)
{
  asm volatile ("trap;");
}

static void
fault_point (SkyGpu *gpu, const char *step)
{
  if (strcmp (gpu->switches.fault, step) == 0)
    faultTrapKernel<<<1, 1, 0, gpu->stream>>> ();
}

/* The lesson method's steps on the device, in order: each enqueues its
 * kernels on the context's stream, reading what the one before left in
 * device memory. */
static int
enqueue_clip (SkyGpu *gpu, int64_t nx, int64_t ny)
{
  return sky_gpu_clip_enqueue (gpu, nx * ny);
}

static int
enqueue_segment (SkyGpu *gpu, int64_t nx, int64_t ny)
{
  return sky_gpu_segment_enqueue (gpu, nx * ny);
}

static int
enqueue_label (SkyGpu *gpu, int64_t nx, int64_t ny)
{
  return sky_gpu_label_enqueue (gpu, nx, ny);
}

static int
enqueue_measure (SkyGpu *gpu, int64_t nx, int64_t ny)
{
  return sky_gpu_measure_enqueue (gpu, nx, ny, 0);
}

static const struct {
  SkyStep step;
  int (*enqueue) (SkyGpu *gpu, int64_t nx, int64_t ny);
} lesson_steps[] = {
  { SKY_STEP_CLIP, enqueue_clip },
  { SKY_STEP_SEGMENT, enqueue_segment },
  { SKY_STEP_LABEL, enqueue_label },
  { SKY_STEP_MEASURE, enqueue_measure },
};

#define N_LESSON_STEPS ((int) (sizeof lesson_steps / sizeof lesson_steps[0]))

/* The run's times from its events: the steps' kernels (a second measure
 * from its own start, after the header's wait), the upload, the downloads
 * (the catalogue's or the pixels' second one where body) and the whole. */
static void
read_times (const SkyGpu *gpu, int remeasured, int body, SkyGpuTimes *t)
{
  const int ev_measured = SKY_GPU_EV_STEP_END + SKY_STEP_MEASURE;

  t->kernels = 0;
  for (int k = 0, from = SKY_GPU_EV_UPLOADED; k < N_LESSON_STEPS; k++)
    {
      int end = SKY_GPU_EV_STEP_END + lesson_steps[k].step;

      if (lesson_steps[k].step == SKY_STEP_MEASURE && remeasured)
        from = SKY_GPU_EV_REMEASURE;
      t->ms[lesson_steps[k].step] = sky_gpu_elapsed_ms (gpu, from, end);
      t->kernels += t->ms[lesson_steps[k].step];
      from = end;
    }
  t->upload = sky_gpu_elapsed_ms (gpu, SKY_GPU_EV_START, SKY_GPU_EV_UPLOADED);
  t->download = sky_gpu_elapsed_ms (gpu, ev_measured, SKY_GPU_EV_HEADER)
                + (body ? sky_gpu_elapsed_ms (gpu, SKY_GPU_EV_BODY_START, SKY_GPU_EV_BODY_END)
                        : 0);
  t->total = sky_gpu_elapsed_ms (gpu, SKY_GPU_EV_START,
                                 body ? SKY_GPU_EV_BODY_END : SKY_GPU_EV_HEADER);
}

static int
run_steps (SkyGpu *gpu, const SkyImage *img, const SkyParams *params, unsigned flags,
           SkyResult *res, SkyGpuTimes *t)
{
  const int64_t nx = img->nx, ny = img->ny, n = nx * ny;
  cudaStream_t s = gpu->stream;
  const float *src = img->pixels;
  const SkyGpuState *st = gpu->h_state;
  const int ev_measured = SKY_GPU_EV_STEP_END + SKY_STEP_MEASURE;
  const int timed = !(flags & SKY_GPU_NO_TIMES);
  SkyGpuParams want;
  int remeasured = 0, ret;
  int64_t nsources;
  size_t guess, need;
  int body;

  SKY_CUDA (cudaSetDevice (gpu->device));
  if ((ret = sky_gpu_ensure_buffers (gpu, n)) != SKY_OK
      || (ret = sky_gpu_ensure_measure (gpu, sky_gpu_initial_measure_capacity (n))) != SKY_OK)
    return ret;

  want = *gpu->h_params;
  want.clip_kappa = params->clip_kappa;
  want.threshold = params->threshold;
  want.max_iter = params->max_iter;
  want.relative = params->relative;
  want.connectivity = params->connectivity;
  /* The clip's full path, which otherwise runs only when its plan misses:
   * tests set this to check that path against the CPU too. */
  want.full_clip = gpu->switches.full_clip;
  want.loop_profile = gpu->switches.loop_profile;
  /* A run with the same parameters as the last one uploaded skips the
   * copy and its place in the stream. */
  const int upload_params = !gpu->params_uploaded
                            || memcmp (&want, gpu->h_params, sizeof want) != 0;
  *gpu->h_params = want;
  const int loaded = (flags & SKY_GPU_IMAGE_LOADED) != 0;
  const int place = loaded || (flags & SKY_GPU_PIXELS_ON_DEVICE) ? PIXELS_DEVICE
                                                                  : pixels_place (src);
  if (!loaded)
    gpu->loaded_n = 0;   /* d_image is about to hold another image */
  if (place == PIXELS_PAGEABLE)
    {
      if ((ret = sky_gpu_ensure_host ((void **) &gpu->h_stage, &gpu->h_stage_bytes,
                                      (size_t) n * 4))
          != SKY_OK)
        return ret;
      memcpy (gpu->h_stage, src, (size_t) n * 4);
      src = gpu->h_stage;
    }

  if (timed)
    SKY_CUDA (cudaEventRecord (gpu->ev[SKY_GPU_EV_START], s));
  if (loaded || src == gpu->d_image)
    ; /* sky_gpu_load_plane left the image in d_image, or the steps read the
       * caller's array in place (sky_gpu_run_on) */
  else if (place == PIXELS_DEVICE)
    {
      int blocks = (int) ((n + 255) / 256 < 4096 ? (n + 255) / 256 : 4096);
      copyBlankingInfKernel<<<blocks, 256, 0, s>>> (gpu->d_image, src, n);
      SKY_CUDA (cudaGetLastError ());
    }
  else
    SKY_CUDA (cudaMemcpyAsync (gpu->d_image, src, (size_t) n * 4, cudaMemcpyHostToDevice, s));
  if (upload_params)
    {
      SKY_CUDA (cudaMemcpyAsync (gpu->d_params, gpu->h_params, sizeof (SkyGpuParams),
                                 cudaMemcpyHostToDevice, s));
      gpu->params_uploaded = 1;
    }
  if (timed)
    SKY_CUDA (cudaEventRecord (gpu->ev[SKY_GPU_EV_UPLOADED], s));
  for (int k = 0; k < N_LESSON_STEPS; k++)
    {
      SkyStep step = lesson_steps[k].step;

      fault_point (gpu, sky_step_name (step));
      if ((ret = lesson_steps[k].enqueue (gpu, nx, ny)) != SKY_OK)
        return ret;
      if (timed)
        SKY_CUDA (cudaEventRecord (gpu->ev[SKY_GPU_EV_STEP_END + step], s));
    }
  /* The catalogue comes home with the header where it fits in what the
   * last run needed and an eighth more (at least 16 KiB; 64 KiB on a
   * context's first run): one wait for the host instead of two, which is
   * much of a small image's time. */
  guess = gpu->cat_guess > 0 ? gpu->cat_guess : (size_t) 64 << 10;
  if (guess > (size_t) gpu->meas_cap * SKY_MEASURE_CAT_BYTES)
    guess = (size_t) gpu->meas_cap * SKY_MEASURE_CAT_BYTES;
  if ((ret = sky_gpu_ensure_host ((void **) &gpu->h_cat, &gpu->h_cat_bytes, guess)) != SKY_OK)
    return ret;
  SKY_CUDA (cudaMemcpyAsync (gpu->h_state, gpu->d_state, sizeof (SkyGpuState),
                             cudaMemcpyDeviceToHost, s));
  SKY_CUDA (cudaMemcpyAsync (gpu->h_cat, gpu->d_meas + gpu->meas_cap * SKY_MEASURE_ACC_BYTES,
                             guess, cudaMemcpyDeviceToHost, s));
  SKY_CUDA (cudaEventRecord (gpu->ev[SKY_GPU_EV_HEADER], s));
  SKY_CUDA (cudaEventSynchronize (gpu->ev[SKY_GPU_EV_HEADER]));

  if (st->empty)
    return sky_fail (SKY_ERR_EMPTY, "clip: every pixel is blank");
  nsources = st->nsources;
  if (st->overflow)
    {
      /* More sources than the buffer holds: grow it, measure again. */
      if ((ret = sky_gpu_ensure_measure (gpu, nsources)) != SKY_OK)
        return ret;
      if (timed)
        SKY_CUDA (cudaEventRecord (gpu->ev[SKY_GPU_EV_REMEASURE], s));
      if ((ret = sky_gpu_measure_enqueue (gpu, nx, ny, 1)) != SKY_OK)
        return ret;
      if (timed)
        SKY_CUDA (cudaEventRecord (gpu->ev[ev_measured], s));
      SKY_CUDA (cudaMemcpyAsync (gpu->h_state, gpu->d_state, sizeof (SkyGpuState),
                                 cudaMemcpyDeviceToHost, s));
      SKY_CUDA (cudaEventRecord (gpu->ev[SKY_GPU_EV_HEADER], s));
      SKY_CUDA (cudaEventSynchronize (gpu->ev[SKY_GPU_EV_HEADER]));
      if (st->overflow)
        return sky_fail (SKY_ERR_UNAVAILABLE, "measure: %lld sources overflow a buffer of %lld",
                         (long long) nsources, (long long) gpu->meas_cap);
      remeasured = 1;
    }

  need = (size_t) nsources * SKY_MEASURE_CAT_BYTES;
  gpu->cat_guess = (need + need / 8 + 4095) / 4096 * 4096;
  if (gpu->cat_guess < ((size_t) 16 << 10))
    gpu->cat_guess = (size_t) 16 << 10;
  body = (nsources > 0 && (remeasured || need > guess))
         || (flags & (SKY_GPU_WANT_MASK | SKY_GPU_WANT_LABELS));
  if (body)
    {
      /* What did not come with the header: a second wait. */
      if ((ret = sky_gpu_ensure_host ((void **) &gpu->h_cat, &gpu->h_cat_bytes, need)) != SKY_OK)
        return ret;
      if (timed)
        SKY_CUDA (cudaEventRecord (gpu->ev[SKY_GPU_EV_BODY_START], s));
      if (nsources > 0 && (remeasured || need > guess))
        SKY_CUDA (cudaMemcpyAsync (gpu->h_cat,
                                   gpu->d_meas + gpu->meas_cap * SKY_MEASURE_ACC_BYTES, need,
                                   cudaMemcpyDeviceToHost, s));
      if ((ret = sky_gpu_download_pixels (gpu, flags, n, res, s)) != SKY_OK)
        return ret;
    }

  if (timed)
    read_times (gpu, remeasured, body, t);
  else
    {
      t->upload = t->download = t->kernels = t->total = NAN;
      for (int step = 0; step < SKY_STEP_COUNT; step++)
        t->ms[step] = NAN;
    }

  res->stats.median = st->median;
  res->stats.sigma = st->sigma;
  res->stats.mean = st->mean;
  res->stats.n = st->n;
  res->stats.ninput = st->ninput;
  res->stats.iterations = st->iterations;
  res->stats.converged = st->converged;
  res->stats.flat = st->flat;
  res->threshold_value = st->threshold_value;
  res->nsources = nsources;
  for (int step = 0; step < SKY_STEP_COUNT; step++)
    res->times.ms[step] = t->ms[step];
  res->times.total = t->kernels;
  if (flags & SKY_GPU_PACKED_ONLY)
    return SKY_OK;
  return sky_gpu_unpack_catalogue (gpu->h_cat, nsources, &res->catalogue);
}

int
sky_gpu_download_pixels (SkyGpu *gpu, unsigned flags, int64_t n, SkyResult *res, cudaStream_t s)
{
  if (flags & SKY_GPU_WANT_MASK)
    SKY_CUDA (cudaMemcpyAsync (res->mask, gpu->d_mask, (size_t) n, cudaMemcpyDeviceToHost, s));
  if (flags & SKY_GPU_WANT_LABELS)
    SKY_CUDA (cudaMemcpyAsync (res->labels, gpu->d_labels, (size_t) n * 4,
                               cudaMemcpyDeviceToHost, s));
  SKY_CUDA (cudaEventRecord (gpu->ev[SKY_GPU_EV_BODY_END], s));
  SKY_CUDA (cudaEventSynchronize (gpu->ev[SKY_GPU_EV_BODY_END]));
  return SKY_OK;
}

int
sky_gpu_run_begin (SkyGpu *gpu, const SkyParams *params, SkyGpuTimes *times)
{
  int ret;

  memset (times, 0, sizeof *times);
  if ((ret = sky_params_check (params)) != SKY_OK)
    return ret;
  if (gpu->broken)
    return sky_fail (SKY_ERR_UNAVAILABLE, "the GPU context failed earlier: %s", gpu->broken_why);
  return SKY_OK;
}

void
sky_gpu_run_failed (SkyGpu *gpu, cudaError_t err, SkyResult *res)
{
  if (err != cudaSuccess)
    {
      gpu->broken = 1;
      snprintf (gpu->broken_why, sizeof gpu->broken_why, "%s", sky_last_error ());
    }
  sky_catalogue_clear (&res->catalogue);
}

int
sky_gpu_run_on (SkyGpu *gpu, const SkyImage *img, const SkyParams *params, unsigned flags,
                SkyResult *res, SkyGpuTimes *times)
{
  SkyGpuTimes local;
  int ret;

  if (times == NULL)
    times = &local;
  if ((ret = sky_gpu_run_begin (gpu, params, times)) != SKY_OK)
    return ret;
  /* Pixel indices are 64-bit where they pass 2^31 - 1 (label, measure);
   * the clip's counts and the peak's tie-break hold 32 bits. */
  if ((img->pixels == NULL && !(flags & SKY_GPU_IMAGE_LOADED)) || img->nx <= 0 || img->ny <= 0
      || img->nx > INT32_MAX || img->ny > INT32_MAX || img->nx * img->ny > (int64_t) UINT32_MAX)
    return sky_fail (SKY_ERR_SIZE, "the GPU backend takes 1 to 2^32 - 1 pixels (got %lld x %lld)",
                     (long long) img->nx, (long long) img->ny);
  if ((flags & SKY_GPU_IMAGE_LOADED) && gpu->loaded_n != img->nx * img->ny)
    return sky_fail (SKY_ERR_ARGUMENT, "the GPU context holds no loaded image of %lld x %lld",
                     (long long) img->nx, (long long) img->ny);
  if ((ret = sky_gpu_reset_result (res, img, flags)) != SKY_OK)
    return ret;

  /* A caller's device array is read where it lies, saving a pass over it:
   * the steps read d_image, which points at the array for the run (its
   * buffers made first, so that nothing frees it meanwhile). float4 loads
   * need 16-byte alignment (CuPy's allocations have it; a view's offset
   * may not). */
  float *own_image = NULL;
  if ((flags & SKY_GPU_PIXELS_ON_DEVICE) && !(flags & SKY_GPU_IMAGE_LOADED)
      && ((uintptr_t) img->pixels & 15) == 0)
    {
      SKY_CUDA (cudaSetDevice (gpu->device));
      if ((ret = sky_gpu_ensure_buffers (gpu, img->nx * img->ny)) != SKY_OK)
        return ret;
      own_image = gpu->d_image;
      gpu->d_image = (float *) img->pixels;
    }
  ret = run_steps (gpu, img, params, flags, res, times);
  if (own_image != NULL)
    gpu->d_image = own_image;
  if (ret != SKY_OK)
    {
      /* A fault inside a kernel leaves the context unusable: say so from
       * now on instead of failing in stranger ways. */
      cudaError_t err = cudaStreamSynchronize (gpu->stream);
      if (err == cudaSuccess)
        err = cudaMemset (gpu->d_counts, 0, SKY_CLIP_BUCKETS * sizeof (uint32_t));
      sky_gpu_run_failed (gpu, err, res);
    }
  return ret;
}

/* ------------------------------------------------- process-wide context */

static pthread_mutex_t default_lock = PTHREAD_MUTEX_INITIALIZER;
static SkyGpu *default_gpu;

int
sky_gpu_run (const SkyImage *img, const SkyParams *params, SkyResult *res, SkyGpuTimes *times)
{
  int ret = SKY_OK;

  pthread_mutex_lock (&default_lock);
  if (default_gpu == NULL)
    ret = sky_gpu_new (&default_gpu);
  if (ret == SKY_OK)
    ret = sky_gpu_run_on (default_gpu, img, params, 0, res, times);
  pthread_mutex_unlock (&default_lock);
  return ret;
}

void
sky_gpu_shutdown (void)
{
  pthread_mutex_lock (&default_lock);
  sky_gpu_free (default_gpu);
  default_gpu = NULL;
  pthread_mutex_unlock (&default_lock);
}

const void *
sky_gpu_packed_catalogue (const SkyGpu *gpu)
{
  return gpu->h_cat;
}

void
sky_gpu_times_min (SkyGpuTimes *best, const SkyGpuTimes *t)
{
  best->upload = fmin (best->upload, t->upload);
  for (int step = 0; step < SKY_STEP_COUNT; step++)
    best->ms[step] = fmin (best->ms[step], t->ms[step]);
  best->download = fmin (best->download, t->download);
  best->kernels = fmin (best->kernels, t->kernels);
  best->total = fmin (best->total, t->total);
}
