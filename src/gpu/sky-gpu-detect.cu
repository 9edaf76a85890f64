/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The local method's detection on the device from its maps: flood,
 * deblend and measure back to back on the context's stream (an event
 * where each ends), then the header, the catalogue with its local columns,
 * and the mask and labels where asked. The host waits twice, as the
 * lesson's run does: for the header (counts, and whether a buffer was too
 * small: then it grows the buffer and runs the steps that need it again),
 * and for the catalogue. */
#include "sky-gpu-detect-private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

template <typename T>
static int
local_alloc (SkyGpu *gpu, T **ptr, size_t bytes, const char *what)
{
  int ret = sky_gpu_check_memory_limit (gpu, bytes, what);

  if (ret != SKY_OK)
    return ret;
  SKY_CUDA (cudaMalloc ((void **) ptr, bytes > 0 ? bytes : 8));
  return SKY_OK;
}

static void
free_pixel_buffers (SkyGpuDetect *L)
{
  void *bufs[] = { L->d_peak_key, L->d_area,
                   L->d_first, L->d_box, L->d_keep, L->d_keep_pos, L->d_relabel, L->d_kpeak,
                   L->d_karea, L->d_kfirst, L->d_kbox, L->d_need, L->d_offset, L->d_nsub,
                   L->d_newlabel, L->d_medium, L->d_first_bits, L->d_word_count, L->d_word_offset,
                   L->d_deblended, L->d_seen, L->d_chunk };

  for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
    cudaFree (bufs[i]);
  L->d_peak_key = NULL;
  L->d_area = L->d_first = L->d_keep = L->d_keep_pos = L->d_karea = L->d_kfirst = NULL;
  L->d_box = L->d_relabel = L->d_kbox = L->d_nsub = L->d_newlabel = L->d_medium = NULL;
  L->d_kpeak = NULL;
  L->d_need = L->d_offset = L->d_first_bits = L->d_word_count = L->d_word_offset = NULL;
  L->d_deblended = L->d_seen = NULL;
  L->d_chunk = NULL;
  L->capacity = 0;
}

void
sky_gpu_detect_free (SkyGpu *gpu)
{
  SkyGpuDetect *L = gpu->detect;

  if (L == NULL)
    return;
  free_pixel_buffers (L);
  if (L->side != NULL)
    {
      cudaStreamDestroy (L->side);
      cudaEventDestroy (L->side_start);
      cudaEventDestroy (L->side_done);
    }
  cudaFree (L->d_background);
  cudaFree (L->d_rms);
  cudaFree (L->d_snr);
  cudaFree (L->d_residual);
  cudaFree (L->d_scratch);
  cudaFree (L->d_src_need);
  cudaFree (L->d_src_offset);
  cudaFree (L->d_cat);
  cudaFree (L->d_total);
  cudaFree (L->d_header);
  cudaFreeHost (L->h_header);
  cudaFreeHost (L->h_cat);
  free (L);
  gpu->detect = NULL;
}

/* The second stream: it waits for what the main stream has enqueued so
 * far (made, with its events, on first use). */
int
sky_gpu_detect_fork (SkyGpu *gpu)
{
  SkyGpuDetect *L = gpu->detect;

  if (L->side == NULL)
    {
      SKY_CUDA (cudaStreamCreateWithFlags (&L->side, cudaStreamNonBlocking));
      SKY_CUDA (cudaEventCreateWithFlags (&L->side_start, cudaEventDisableTiming));
      SKY_CUDA (cudaEventCreateWithFlags (&L->side_done, cudaEventDisableTiming));
    }
  SKY_CUDA (cudaEventRecord (L->side_start, gpu->stream));
  SKY_CUDA (cudaStreamWaitEvent (L->side, L->side_start, 0));
  return SKY_OK;
}

/* The main stream waits for what the second stream has enqueued. */
int
sky_gpu_detect_join (SkyGpu *gpu)
{
  SkyGpuDetect *L = gpu->detect;

  SKY_CUDA (cudaEventRecord (L->side_done, L->side));
  SKY_CUDA (cudaStreamWaitEvent (gpu->stream, L->side_done, 0));
  return SKY_OK;
}

/* What the detection holds on the device, counted in sky_gpu_device_bytes
 * and so under SKYSIFT_GPU_MEMORY_LIMIT. */
size_t
sky_gpu_detect_bytes (const SkyGpu *gpu)
{
  const SkyGpuDetect *L = gpu->detect;
  size_t bytes;

  if (L == NULL)
    return 0;
  bytes = 8 * sizeof (unsigned long long) + sizeof (SkyGpuDetectHeader);
  if (L->capacity > 0)
    {
      /* per island: peak key, area, first, box, keep, position, relabel,
       * kept peak, area, first, box, need, offset, nsub, new label, medium */
      bytes += (size_t) L->island_cap
               * (4 + 8 + 8 + 16 + 8 + 8 + 4 + 4 + 8 + 8 + 16 + 8 + 8 + 4 + 4 + 4);
      bytes += (size_t) L->nwords * 3 * 8 + (size_t) L->capacity * 2 + 1;
      bytes += (size_t) L->chunk_cap * 8;
    }
  bytes += (size_t) L->input_cap * 4 * sizeof (float);
  bytes += (size_t) L->scratch_cap * sizeof (int32_t);
  bytes += (size_t) L->source_cap * (2 * 8 + SKY_DETECT_CAT_BYTES);
  return bytes;
}

/* Islands of n pixels are at most (n + 1) / 2 (none touch another); the
 * tables are sized for that, since the count is only known on the device. */
int
sky_gpu_detect_ensure (SkyGpu *gpu, int64_t n)
{
  SkyGpuDetect *L = gpu->detect;
  int ret;

  if (L == NULL)
    {
      if ((L = (SkyGpuDetect *) calloc (1, sizeof *L)) == NULL)
        return sky_fail (SKY_ERR_MEMORY, "no memory for the local method's context");
      gpu->detect = L;
      SKY_CUDA (cudaMalloc ((void **) &L->d_total, 8 * sizeof (unsigned long long)));
      SKY_CUDA (cudaMalloc ((void **) &L->d_header, sizeof (SkyGpuDetectHeader)));
      SKY_CUDA (cudaHostAlloc ((void **) &L->h_header, sizeof (SkyGpuDetectHeader),
                               cudaHostAllocDefault));
    }
  if (n <= L->capacity)
    return SKY_OK;
  free_pixel_buffers (L);

  const int64_t ic = (n + 1) / 2 + 2, words = (n + 63) / 64 + 1;
  /* Scans run over islands, 64-pixel words and sources (at most n). */
  const int64_t items = n + 2 > words ? n + 2 : words;
  const size_t f = sizeof (float), u = sizeof (unsigned long long), w = sizeof (int32_t);
  const char *what = "the local method's buffers";
  if ((ret = local_alloc (gpu, &L->d_peak_key, (size_t) ic * sizeof (uint32_t), what)) != SKY_OK
      || (ret = local_alloc (gpu, &L->d_area, (size_t) ic * u, what)) != SKY_OK
      || (ret = local_alloc (gpu, &L->d_first, (size_t) ic * u, what)) != SKY_OK
      || (ret = local_alloc (gpu, &L->d_box, (size_t) ic * 4 * w, what)) != SKY_OK
      || (ret = local_alloc (gpu, &L->d_keep, (size_t) ic * u, what)) != SKY_OK
      || (ret = local_alloc (gpu, &L->d_keep_pos, (size_t) ic * u, what)) != SKY_OK
      || (ret = local_alloc (gpu, &L->d_relabel, (size_t) ic * w, what)) != SKY_OK
      || (ret = local_alloc (gpu, &L->d_kpeak, (size_t) ic * f, what)) != SKY_OK
      || (ret = local_alloc (gpu, &L->d_karea, (size_t) ic * u, what)) != SKY_OK
      || (ret = local_alloc (gpu, &L->d_kfirst, (size_t) ic * u, what)) != SKY_OK
      || (ret = local_alloc (gpu, &L->d_kbox, (size_t) ic * 4 * w, what)) != SKY_OK
      || (ret = local_alloc (gpu, &L->d_need, (size_t) ic * u, what)) != SKY_OK
      || (ret = local_alloc (gpu, &L->d_offset, (size_t) ic * u, what)) != SKY_OK
      || (ret = local_alloc (gpu, &L->d_nsub, (size_t) ic * w, what)) != SKY_OK
      || (ret = local_alloc (gpu, &L->d_newlabel, (size_t) ic * w, what)) != SKY_OK
      || (ret = local_alloc (gpu, &L->d_medium, (size_t) ic * w, what)) != SKY_OK
      || (ret = local_alloc (gpu, &L->d_first_bits, (size_t) words * u, what)) != SKY_OK
      || (ret = local_alloc (gpu, &L->d_word_count, (size_t) words * u, what)) != SKY_OK
      || (ret = local_alloc (gpu, &L->d_word_offset, (size_t) words * u, what)) != SKY_OK
      || (ret = local_alloc (gpu, &L->d_deblended, (size_t) n + 1, what)) != SKY_OK
      || (ret = local_alloc (gpu, &L->d_seen, (size_t) n, what)) != SKY_OK
      || (ret = local_alloc (gpu, &L->d_chunk, (size_t) (items / 2048 + 2) * u, what)) != SKY_OK)
    {
      free_pixel_buffers (L);
      return ret;
    }
  /* The core walks keep it zero after this. */
  SKY_CUDA (cudaMemset (L->d_seen, 0, (size_t) n));
  L->capacity = n;
  L->island_cap = ic;
  L->nwords = words;
  L->chunk_cap = items / 2048 + 2;
  /* The scratch holds at least the measure's walks (a pixel index per
   * source pixel) and, at first, the deblending of islands covering a
   * sixth of the image (11 words a pixel and a little); more is asked for
   * when needed (a field's extended emission: the tests' huge islands). */
  return sky_gpu_detect_ensure_scratch (gpu, 2 * n + 16);
}

/* The maps a caller gives from elsewhere (host memory, or another device
 * array), and the residual made from them: only where they are given. */
static int
ensure_input_maps (SkyGpu *gpu, int64_t n)
{
  SkyGpuDetect *L = gpu->detect;
  /* whole 16-float runs: the measure kernel reads the residual 16 pixels
   * a thread, up to the run that holds the last pixel */
  const size_t bytes = (size_t) ((n + 15) / 16 * 16) * sizeof (float);
  const char *what = "the local method's given maps";
  int ret;

  if (L->d_background != NULL && n <= L->input_cap)
    return SKY_OK;
  cudaFree (L->d_background);
  cudaFree (L->d_rms);
  cudaFree (L->d_snr);
  cudaFree (L->d_residual);
  L->d_background = L->d_rms = L->d_snr = L->d_residual = NULL;
  L->input_cap = 0;
  if ((ret = local_alloc (gpu, &L->d_background, bytes, what)) != SKY_OK
      || (ret = local_alloc (gpu, &L->d_rms, bytes, what)) != SKY_OK
      || (ret = local_alloc (gpu, &L->d_snr, bytes, what)) != SKY_OK
      || (ret = local_alloc (gpu, &L->d_residual, bytes, what)) != SKY_OK)
    return ret;
  L->input_cap = n;
  return SKY_OK;
}

int
sky_gpu_detect_ensure_scratch (SkyGpu *gpu, int64_t words)
{
  SkyGpuDetect *L = gpu->detect;
  int ret;

  if (words <= L->scratch_cap)
    return SKY_OK;
  cudaFree (L->d_scratch);
  L->d_scratch = NULL;
  L->scratch_cap = 0;
  if ((ret = local_alloc (gpu, &L->d_scratch, (size_t) words * sizeof (int32_t),
                          "the deblending's scratch")) != SKY_OK)
    return ret;
  L->scratch_cap = words;
  return SKY_OK;
}

int
sky_gpu_detect_ensure_sources (SkyGpu *gpu, int64_t nsources)
{
  SkyGpuDetect *L = gpu->detect;
  const size_t u = sizeof (unsigned long long);
  const char *what = "the local catalogue";
  int ret;

  if (nsources <= L->source_cap)
    return SKY_OK;
  cudaFree (L->d_src_need);
  cudaFree (L->d_src_offset);
  cudaFree (L->d_cat);
  L->d_src_need = L->d_src_offset = NULL;
  L->d_cat = NULL;
  L->source_cap = 0;
  if ((ret = local_alloc (gpu, &L->d_src_need, (size_t) nsources * u, what)) != SKY_OK
      || (ret = local_alloc (gpu, &L->d_src_offset, (size_t) nsources * u, what)) != SKY_OK
      || (ret = local_alloc (gpu, &L->d_cat, (size_t) nsources * SKY_DETECT_CAT_BYTES, what))
             != SKY_OK)
    return ret;
  L->source_cap = nsources;
  return SKY_OK;
}

/* The common columns (sky-gpu-measure.cu's packing) and the local ones. */
static int
unpack (const unsigned char *common, const unsigned char *local, int64_t n, SkyCatalogue *cat)
{
  int ret = sky_gpu_unpack_catalogue (common, n, cat);
  const double *sum_err = (const double *) local, *peak_err = sum_err + n;
  const double *x_win = peak_err + n, *y_win = x_win + n;
  const float *bkg = (const float *) (y_win + n), *rms = bkg + n;
  const uint32_t *flags = (const uint32_t *) (rms + n);

  if (ret == SKY_OK)
    ret = sky_catalogue_alloc_local (cat);
  if (ret != SKY_OK || n == 0)
    return ret;
#define COPY(field, src) memcpy (cat->field, src, (size_t) n * sizeof *cat->field)
  COPY (sum_err, sum_err);
  COPY (peak_err, peak_err);
  COPY (x_win, x_win);
  COPY (y_win, y_win);
  COPY (background, bkg);
  COPY (rms, rms);
  COPY (flags, flags);
#undef COPY
  return SKY_OK;
}

static SkyGpuDetectParams
local_params (const SkyImage *img, const SkyParams *params)
{
  SkyGpuDetectParams lp;

  memset (&lp, 0, sizeof lp);
  lp.deblend = sky_deblend_params (params);
  lp.flood = (float) params->flood_sigma;
  lp.seed_sigma = params->seed_sigma;
  lp.has_blank = img->nblank > 0;
  lp.core_denominator = 2 * M_PI * log (1 / 0.7);
  return lp;
}

/* The local method's steps from the maps, in order: a step of the local
 * method on the GPU is an entry here. */
static const struct
{
  SkyStep step;
  int (*enqueue) (const SkyGpuLocalStep *step);
} kLocalSteps[] = {
  { SKY_STEP_FLOOD, sky_gpu_flood_enqueue },
  { SKY_STEP_DEBLEND, sky_gpu_deblend_enqueue },
  { SKY_STEP_MEASURE, sky_gpu_measure_local_enqueue },
};

static SkyGpuLocalStep
local_step (SkyGpu *gpu, int64_t nx, int64_t ny, const SkyGpuDetectMaps *maps,
            const SkyGpuDetectParams *lp)
{
  const SkyGpuLocalStep step = { gpu, nx, ny, nx * ny, maps, lp };
  return step;
}

int
sky_gpu_detect_enqueue (SkyGpu *gpu, int64_t nx, int64_t ny, const SkyGpuDetectMaps *maps,
                        const SkyParams *params, int64_t nblank)
{
  SkyImage shape;
  SkyGpuDetectParams lp;
  int ret;

  memset (&shape, 0, sizeof shape);
  shape.nx = nx;
  shape.ny = ny;
  shape.nblank = nblank;
  lp = local_params (&shape, params);
  const SkyGpuLocalStep step = local_step (gpu, nx, ny, maps, &lp);
  for (size_t i = 0; i < sizeof kLocalSteps / sizeof kLocalSteps[0]; i++)
    {
      if ((ret = kLocalSteps[i].enqueue (&step)) != SKY_OK)
        return ret;
      SKY_CUDA (cudaEventRecord (gpu->ev[SKY_GPU_EV_STEP_END + kLocalSteps[i].step],
                                 gpu->stream));
    }
  return SKY_OK;
}

/* Header home: the state and the local scalars. */
static int
fetch_header (SkyGpu *gpu)
{
  cudaStream_t s = gpu->stream;

  SKY_CUDA (cudaMemcpyAsync (gpu->h_state, gpu->d_state, sizeof (SkyGpuState),
                             cudaMemcpyDeviceToHost, s));
  SKY_CUDA (cudaMemcpyAsync (gpu->detect->h_header, gpu->detect->d_header,
                             sizeof (SkyGpuDetectHeader), cudaMemcpyDeviceToHost, s));
  SKY_CUDA (cudaEventRecord (gpu->ev[SKY_GPU_EV_HEADER], s));
  SKY_CUDA (cudaEventSynchronize (gpu->ev[SKY_GPU_EV_HEADER]));
  return SKY_OK;
}

static int
upload (SkyGpu *gpu, float *dst, const float *src, int64_t n)
{
  SKY_CUDA (cudaMemcpyAsync (dst, src, (size_t) n * sizeof (float), cudaMemcpyDefault,
                             gpu->stream));
  return SKY_OK;
}

static int
run_local (SkyGpu *gpu, const SkyImage *img, const SkyParams *params, const SkyGpuDetectInput *in,
           unsigned flags, SkyResult *res, SkyGpuTimes *t)
{
  const int64_t nx = img->nx, ny = img->ny, n = nx * ny;
  cudaStream_t s = gpu->stream;
  SkyGpuDetect *L;
  SkyGpuDetectMaps maps = {};
  const SkyGpuDetectHeader *hdr;
  int ret, again = 0;
  int64_t nsources;

  SKY_CUDA (cudaSetDevice (gpu->device));
  if ((ret = sky_gpu_ensure_buffers (gpu, n)) != SKY_OK
      || (ret = sky_gpu_ensure_measure (gpu, n / 128 > 4096 ? n / 128 : 4096)) != SKY_OK
      || (ret = sky_gpu_detect_ensure (gpu, n)) != SKY_OK
      || (ret = sky_gpu_detect_ensure_sources (gpu, gpu->meas_cap)) != SKY_OK)
    return ret;
  L = gpu->detect;
  hdr = L->h_header;
  gpu->h_params->connectivity = params->connectivity;
  gpu->params_uploaded = 0;   /* the lesson's next run uploads its own */

  if (in != NULL && (ret = ensure_input_maps (gpu, n)) != SKY_OK)
    return ret;
  SKY_CUDA (cudaEventRecord (gpu->ev[SKY_GPU_EV_START], s));
  if ((ret = upload (gpu, gpu->d_image, img->pixels, n)) != SKY_OK)
    return ret;
  SKY_CUDA (cudaMemcpyAsync (gpu->d_params, gpu->h_params, sizeof (SkyGpuParams),
                             cudaMemcpyHostToDevice, s));
  maps.image = gpu->d_image;
  if (in != NULL)
    {
      /* The caller's maps: uploaded (or copied on the device). */
      if ((ret = upload (gpu, L->d_background, in->background, n)) != SKY_OK
          || (ret = upload (gpu, L->d_rms, in->rms, n)) != SKY_OK
          || (in->snr != NULL && (ret = upload (gpu, L->d_snr, in->snr, n)) != SKY_OK))
        return ret;
      SKY_CUDA (cudaEventRecord (gpu->ev[SKY_GPU_EV_UPLOADED], s));
      SKY_CUDA (cudaEventRecord (gpu->ev[SKY_GPU_EV_STEP_END + SKY_STEP_BACKGROUND], s));
      maps.background = L->d_background;
      maps.rms = L->d_rms;
      maps.residual = NULL;
      maps.snr = in->snr != NULL ? L->d_snr : NULL;
    }
  else
    {
      /* The maps on the device (sky-gpu-background.cu): the background
       * step's kernels make the residual and the unfiltered detection
       * image too, so the detect step costs nothing of its own here. */
      SkyGpuLocalMaps dm;
      SKY_CUDA (cudaEventRecord (gpu->ev[SKY_GPU_EV_UPLOADED], s));
      if ((ret = sky_gpu_local_maps_splines (gpu, gpu->d_image, nx, ny, params, &dm,
                                             &maps.splines)) != SKY_OK)
        return ret;
      SKY_CUDA (cudaEventRecord (gpu->ev[SKY_GPU_EV_STEP_END + SKY_STEP_BACKGROUND], s));
      maps.background = dm.background;
      maps.rms = dm.rms;
      maps.residual = dm.residual;
      maps.snr = dm.snr;
    }
  SKY_CUDA (cudaEventRecord (gpu->ev[SKY_GPU_EV_STEP_END + SKY_STEP_DETECT], s));
  if ((ret = sky_gpu_detect_enqueue (gpu, nx, ny, &maps, params, img->nblank)) != SKY_OK
      || (ret = fetch_header (gpu)) != SKY_OK)
    return ret;

  /* A buffer too small for what the device found: grow it and run the
   * steps that need it again (rare: islands covering much of the image,
   * or more sources than a source per 128 pixels). */
  if (hdr->scratch_overflow || gpu->h_state->overflow)
    {
      const SkyGpuDetectParams lp = local_params (img, params);
      const SkyGpuLocalStep step = local_step (gpu, nx, ny, &maps, &lp);
      again = 1;
      if ((ret = sky_gpu_detect_ensure_scratch (gpu, (int64_t) hdr->scratch_need)) != SKY_OK)
        return ret;
      SKY_CUDA (cudaEventRecord (gpu->ev[SKY_GPU_EV_REMEASURE], s));
      if (hdr->scratch_overflow)
        {
          if ((ret = sky_gpu_deblend_enqueue (&step)) != SKY_OK
              || (ret = fetch_header (gpu)) != SKY_OK)
            return ret;
        }
      if (gpu->h_state->nsources > gpu->meas_cap
          && ((ret = sky_gpu_ensure_measure (gpu, gpu->h_state->nsources)) != SKY_OK
              || (ret = sky_gpu_detect_ensure_sources (gpu, gpu->meas_cap)) != SKY_OK))
        return ret;
      if ((ret = sky_gpu_measure_local_enqueue (&step)) != SKY_OK)
        return ret;
      SKY_CUDA (cudaEventRecord (gpu->ev[SKY_GPU_EV_STEP_END + SKY_STEP_MEASURE], s));
      if ((ret = fetch_header (gpu)) != SKY_OK)
        return ret;
      if (hdr->scratch_overflow || gpu->h_state->overflow)
        return sky_fail (SKY_ERR_UNAVAILABLE, "local: the device's buffers overflowed twice");
    }

  nsources = gpu->h_state->nsources;
  if ((ret = sky_gpu_ensure_host ((void **) &L->h_cat, &L->h_cat_bytes,
                                  (size_t) nsources
                                      * (SKY_MEASURE_CAT_BYTES + SKY_DETECT_CAT_BYTES)))
      != SKY_OK)
    return ret;
  SKY_CUDA (cudaEventRecord (gpu->ev[SKY_GPU_EV_BODY_START], s));
  if (nsources > 0)
    {
      SKY_CUDA (cudaMemcpyAsync (L->h_cat, gpu->d_meas + gpu->meas_cap * SKY_MEASURE_ACC_BYTES,
                                 (size_t) nsources * SKY_MEASURE_CAT_BYTES,
                                 cudaMemcpyDeviceToHost, s));
      SKY_CUDA (cudaMemcpyAsync (L->h_cat + (size_t) nsources * SKY_MEASURE_CAT_BYTES, L->d_cat,
                                 (size_t) nsources * SKY_DETECT_CAT_BYTES, cudaMemcpyDeviceToHost,
                                 s));
    }
  if ((ret = sky_gpu_download_pixels (gpu, flags, n, res, s)) != SKY_OK)
    return ret;

  t->upload = sky_gpu_elapsed_ms (gpu, SKY_GPU_EV_START, SKY_GPU_EV_UPLOADED);
  t->ms[SKY_STEP_BACKGROUND] = sky_gpu_elapsed_ms (gpu, SKY_GPU_EV_UPLOADED,
                                                   SKY_GPU_EV_STEP_END + SKY_STEP_BACKGROUND);
  t->ms[SKY_STEP_DETECT] = sky_gpu_elapsed_ms (gpu, SKY_GPU_EV_STEP_END + SKY_STEP_BACKGROUND,
                                               SKY_GPU_EV_STEP_END + SKY_STEP_DETECT);
  t->ms[SKY_STEP_FLOOD] = sky_gpu_elapsed_ms (gpu, SKY_GPU_EV_STEP_END + SKY_STEP_DETECT,
                                              SKY_GPU_EV_STEP_END + SKY_STEP_FLOOD);
  t->ms[SKY_STEP_DEBLEND] = sky_gpu_elapsed_ms (gpu, SKY_GPU_EV_STEP_END + SKY_STEP_FLOOD,
                                                SKY_GPU_EV_STEP_END + SKY_STEP_DEBLEND);
  t->ms[SKY_STEP_MEASURE] = sky_gpu_elapsed_ms (gpu, again ? SKY_GPU_EV_REMEASURE
                                                           : SKY_GPU_EV_STEP_END + SKY_STEP_DEBLEND,
                                                SKY_GPU_EV_STEP_END + SKY_STEP_MEASURE);
  t->kernels = t->ms[SKY_STEP_BACKGROUND] + t->ms[SKY_STEP_DETECT] + t->ms[SKY_STEP_FLOOD]
               + t->ms[SKY_STEP_DEBLEND] + t->ms[SKY_STEP_MEASURE];
  t->download = sky_gpu_elapsed_ms (gpu, SKY_GPU_EV_BODY_START, SKY_GPU_EV_BODY_END);
  t->total = sky_gpu_elapsed_ms (gpu, SKY_GPU_EV_START, SKY_GPU_EV_BODY_END);

  res->method = SKY_METHOD_LOCAL;
  res->threshold_value = NAN;
  res->noise_scale = 1.0;
  res->nislands = (int64_t) hdr->nislands;
  res->ndeblended = (int64_t) hdr->nsplit;
  res->nsources = nsources;
  for (int step = 0; step < SKY_STEP_COUNT; step++)
    res->times.ms[step] = t->ms[step];
  res->times.total = t->kernels;
  return unpack (L->h_cat, L->h_cat + (size_t) nsources * SKY_MEASURE_CAT_BYTES, nsources,
                 &res->catalogue);
}

int
sky_gpu_run_local_on (SkyGpu *gpu, const SkyImage *img, const SkyParams *params,
                      const SkyGpuDetectInput *in, unsigned flags, SkyResult *res,
                      SkyGpuTimes *times)
{
  SkyGpuTimes local;
  const int64_t n = img->nx * img->ny;
  int ret;

  if (times == NULL)
    times = &local;
  if ((ret = sky_gpu_run_begin (gpu, params, times)) != SKY_OK)
    return ret;
  if (img->pixels == NULL || img->nx <= 0 || img->ny <= 0 || n > INT32_MAX)
    return sky_fail (SKY_ERR_SIZE, "the GPU backend takes 1 to 2^31 - 1 pixels (got %lld x %lld)",
                     (long long) img->nx, (long long) img->ny);
  if (in != NULL && (in->background == NULL || in->rms == NULL))
    return sky_fail (SKY_ERR_ARGUMENT, "the local method takes both maps or neither");

  /* As sky_gpu_run_on, and the maps of an earlier local run go too. */
  free (res->background);
  free (res->rms);
  res->background = res->rms = NULL;
  if ((ret = sky_gpu_reset_result (res, img, flags)) != SKY_OK)
    return ret;

  ret = run_local (gpu, img, params, in, flags, res, times);
  if (ret != SKY_OK)
    sky_gpu_run_failed (gpu, cudaStreamSynchronize (gpu->stream), res);
  return ret;
}
