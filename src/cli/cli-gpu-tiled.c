/* SPDX-License-Identifier: GPL-3.0-or-later */
/* skysift-cli find --backend gpu on a field larger than the device's
 * memory: the plane stays in its file and runs in bands of rows. The clip
 * is the CPU's over reads of the file (sky_cpu_clip_source: the whole
 * image's statistics, bit for bit); each band then goes to the device,
 * which cuts, labels and measures it (sky_gpu_band_*) while the host reads
 * the next; the bands' labels are joined as the CPU's run in bands joins
 * them (SkyBandJoin) and each source's pieces are added up in band order. */
#include "cli-find.h"
#include "cli-gpu.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The context's own buffers beside the image's (the clip's tables, the
 * state): about a MiB, kept out of the room before there is a context to
 * ask. */
#define CONTEXT_BYTES ((size_t) 4 << 20)

/* Files smaller than this (8M float32 pixels, 112 MiB on the device) run
 * whole unless a limit is given, with no header read twice and no device
 * asked; a device short even of that fails the run, and the CPU finishes. */
#define SMALL_FILE_BYTES ((long long) 32 << 20)

/* The largest band, whatever the device holds (1 GiB of float32): the two
 * page-locked band buffers stay within 2 GiB of host memory, and a band
 * this size already keeps the device busy far longer than its launches. */
#define BAND_MAX_PIXELS ((int64_t) 1 << 28)

/* Every band's pieces, by provisional id (SkyBandJoin's numbering, from 1). */
typedef struct {
  int64_t n, capacity;
  SkyGpuBand all;
} Pieces;

static int
pieces_add (Pieces *p, int64_t base, const SkyGpuBand *band)
{
  const int64_t need = base + band->nlabels + 1;

  if (need > p->capacity)
    {
      int64_t cap = p->capacity > 0 ? p->capacity : 4096;
      while (cap < need)
        cap *= 2;
#define GROW(field)                                                                    \
  do                                                                                   \
    {                                                                                  \
      void *q_ = realloc (p->all.field, (size_t) cap * sizeof *p->all.field);          \
      if (q_ == NULL)                                                                  \
        return sky_fail (SKY_ERR_MEMORY, "measure: no memory for %lld pieces of sources", \
                         (long long) need);                                            \
      p->all.field = q_;                                                               \
    }                                                                                  \
  while (0)
      GROW (sum); GROW (sx); GROW (sy); GROW (npix); GROW (peak); GROW (peak_x);
      GROW (peak_y); GROW (xmin); GROW (xmax); GROW (ymin); GROW (ymax);
#undef GROW
      p->capacity = cap;
    }
#define COPY(field)                                                                    \
  memcpy (p->all.field + base + 1, band->field, (size_t) band->nlabels * sizeof *band->field)
  COPY (sum); COPY (sx); COPY (sy); COPY (npix); COPY (peak); COPY (peak_x);
  COPY (peak_y); COPY (xmin); COPY (xmax); COPY (ymin); COPY (ymax);
#undef COPY
  p->n = base + band->nlabels;
  return SKY_OK;
}

/* Each source from its pieces, in provisional id order: band by band, so
 * a source's sums add its bands' sums top to bottom, and its peak is the
 * first piece's on a tie (raster order, as within a band). */
static int
pieces_merge (const Pieces *p, const int32_t *final, int64_t nsources, SkyCatalogue *cat)
{
  int ret = sky_catalogue_alloc (cat, nsources);
  const SkyGpuBand *a = &p->all;

  if (ret != SKY_OK)
    return ret;
  for (int64_t s = 0; s < nsources; s++)
    {
      cat->x[s] = cat->y[s] = cat->sum[s] = 0;
      cat->npix[s] = 0;
      cat->xmin[s] = cat->ymin[s] = INT32_MAX;
      cat->xmax[s] = cat->ymax[s] = -1;
    }
  /* x and y hold the weighted sums until the division below. */
  for (int64_t id = 1; id <= p->n; id++)
    {
      const int64_t s = final[id] - 1;
      const int first = cat->npix[s] == 0;

      cat->sum[s] += a->sum[id];
      cat->x[s] += a->sx[id];
      cat->y[s] += a->sy[id];
      cat->npix[s] += a->npix[id];
      if (first || sky_float_key (a->peak[id]) > sky_float_key (cat->peak[s]))
        {
          cat->peak[s] = a->peak[id];
          cat->peak_x[s] = a->peak_x[id];
          cat->peak_y[s] = a->peak_y[id];
        }
      cat->xmin[s] = a->xmin[id] < cat->xmin[s] ? a->xmin[id] : cat->xmin[s];
      cat->xmax[s] = a->xmax[id] > cat->xmax[s] ? a->xmax[id] : cat->xmax[s];
      cat->ymin[s] = a->ymin[id] < cat->ymin[s] ? a->ymin[id] : cat->ymin[s];
      cat->ymax[s] = a->ymax[id] > cat->ymax[s] ? a->ymax[id] : cat->ymax[s];
    }
  for (int64_t s = 0; s < nsources; s++)
    {
      cat->x[s] /= cat->sum[s];
      cat->y[s] /= cat->sum[s];
    }
  return SKY_OK;
}

/* Two page-locked band buffers: the device copies from one while the host
 * reads the next band into the other. */
typedef struct {
  float *buf[2];
  int locked[2];
  size_t bytes;
} Buffers;

static void
buffers_free (Buffers *b)
{
  for (int k = 0; k < 2; k++)
    if (b->buf[k] != NULL)
      {
        sky_gpu_unlock_host (b->buf[k], b->locked[k]);
        free (b->buf[k]);
      }
}

static int
run_bands (SkyGpu *gpu, SkyPlaneFile *file, const SkyImage *img, const SkyParams *params,
           int64_t rows, double threshold, CliGpuRun *run, int64_t *ninf)
{
  const int64_t nx = img->nx, ny = img->ny, nbands = (ny + rows - 1) / rows;
  SkyResult *res = &run->res;
  SkyBandJoin *join = NULL;
  SkyGpuBand band = { 0 };
  Pieces pieces = { 0 };
  Buffers b = { { NULL, NULL }, { 0, 0 }, (size_t) (nx * rows) * sizeof (float) };
  double t0 = sky_now_ms (), t;
  int ret;

  run->nbands = nbands;
  run->band_rows = rows;
  for (int k = 0; k < 2 && k < nbands; k++)
    {
      b.buf[k] = sky_alloc_large (b.bytes);
      if (b.buf[k] == NULL)
        {
          ret = sky_fail (SKY_ERR_MEMORY, "no host memory for a band of %lld x %lld pixels",
                          (long long) nx, (long long) rows);
          goto exit;
        }
      b.locked[k] = sky_gpu_lock_host (b.buf[k], b.bytes);
    }
  if ((ret = sky_band_join_new (nx, nbands, params->connectivity, &join)) != SKY_OK)
    goto exit;

  t = sky_now_ms ();
  ret = sky_plane_file_read (file, 0, (rows < ny ? rows : ny) * nx, params->nthreads, b.buf[0],
                             ninf);
  run->read_ms += sky_now_ms () - t;
  for (int64_t k = 0; k < nbands && ret == SKY_OK; k++)
    {
      const int64_t y0 = k * rows, n = (y0 + rows < ny ? rows : ny - y0);

      if ((ret = sky_gpu_band_start (gpu, b.buf[k % 2], nx, n, threshold, params)) != SKY_OK)
        break;
      if (k + 1 < nbands)
        {
          /* The next band's read, while the device works on this one. */
          const int64_t y1 = y0 + rows, n1 = (y1 + rows < ny ? rows : ny - y1);
          t = sky_now_ms ();
          ret = sky_plane_file_read (file, y1 * nx, n1 * nx, params->nthreads,
                                     b.buf[(k + 1) % 2], ninf);
          run->read_ms += sky_now_ms () - t;
          if (ret != SKY_OK)
            {
              sky_gpu_band_failed (gpu);
              break;
            }
        }
      if ((ret = sky_gpu_band_finish (gpu, y0, &band)) != SKY_OK)
        break;
      run->times.upload += band.upload_ms;
      run->times.ms[SKY_STEP_SEGMENT] += band.segment_ms;
      run->times.ms[SKY_STEP_LABEL] += band.label_ms;
      run->times.ms[SKY_STEP_MEASURE] += band.measure_ms;
      run->times.download += band.download_ms;
      t = sky_now_ms ();
      ret = sky_band_join_add (join, band.first_row, band.last_row, band.nlabels);
      if (ret == SKY_OK)
        ret = pieces_add (&pieces, sky_band_join_base (join, k), &band);
      run->merge_ms += sky_now_ms () - t;
    }
  if (ret != SKY_OK)
    {
      sky_gpu_band_failed (gpu);
      goto exit;
    }
  run->bands_ms = sky_now_ms () - t0;
  t = sky_now_ms ();
  if ((ret = sky_band_join_finish (join, &res->nsources)) == SKY_OK)
    ret = pieces_merge (&pieces, sky_band_join_final (join), res->nsources, &res->catalogue);
  run->merge_ms += sky_now_ms () - t;

exit:
  buffers_free (&b);
  sky_band_join_free (join);
  sky_gpu_band_clear (&band);
  sky_gpu_band_clear (&pieces.all);
  return ret;
}

int
cli_gpu_find_tiled (const char *path, const SkyLoadOptions *opts, const SkyParams *params,
                    int64_t limit, SkyImage *img, CliGpuRun *run, int *tiled, double *load_ms)
{
  SkyPlaneFile *file = NULL;
  SkyGpu *gpu = NULL;
  SkyPixelSource src;
  struct stat st;
  size_t room = 0;
  int64_t n, rows, ninf = 0;
  double t0 = sky_now_ms ();
  int ret;

  *tiled = 0;
  *load_ms = 0;
  memset (run, 0, sizeof *run);
  if (limit == 0 && stat (path, &st) == 0 && st.st_size < SMALL_FILE_BYTES)
    return 0;
  if ((ret = sky_plane_file_open (path, opts, img, &file)) != SKY_OK)
    {
      /* A compressed image, or anything the whole-image load will name. */
      sky_image_clear (img);
      return 0;
    }
  *load_ms = sky_now_ms () - t0;
  n = img->nx * img->ny;
  /* Where the whole-image run fits, it runs (faster: one upload). */
  if (sky_gpu_room (NULL, (size_t) limit, &room) != SKY_OK
      || (n <= (int64_t) UINT32_MAX && sky_gpu_run_bytes (n) + CONTEXT_BYTES <= room))
    {
      sky_plane_file_close (file);
      sky_image_clear (img);
      return 0;
    }
  ret = CLI_EXIT_FAILURE;
  if (sky_gpu_new (&gpu) != SKY_OK || sky_gpu_room (gpu, (size_t) limit, &room) != SKY_OK)
    {
      cli_error ("%s: GPU: %s", path, sky_last_error ());
      goto exit;
    }
  rows = sky_gpu_band_rows (img->nx, img->ny, room);
  if (rows > 1 && rows * img->nx > BAND_MAX_PIXELS)
    rows = BAND_MAX_PIXELS / img->nx > 1 ? BAND_MAX_PIXELS / img->nx : 1;
  if (rows < 1 && limit == 0)
    {
      /* The device's own memory is short even for a row: the whole-image
       * path fails and the CPU finishes, saying why. */
      ret = 0;
      goto exit;
    }
  if (rows < 1)
    {
      cli_error ("%s: --gpu-memory-limit %lld bytes leaves %zu MiB for a band of rows, less "
                 "than one row of %lld pixels needs (%zu MiB)",
                 path, (long long) limit, room >> 20, (long long) img->nx,
                 (sky_gpu_run_bytes (img->nx) + (1u << 20) - 1) >> 20);
      goto exit;
    }
  *tiled = 1;

  /* The clip: the CPU's over the file, the whole image's statistics. */
  cli_plane_source (file, img, &src);
  t0 = sky_now_ms ();
  if (sky_cpu_clip_source (&src, params, &run->res.stats) != SKY_OK)
    {
      cli_error ("%s: %s", path, sky_last_error ());
      goto exit;
    }
  run->clip_ms = sky_now_ms () - t0;
  run->res.nx = img->nx;
  run->res.ny = img->ny;
  run->res.threshold_value = sky_threshold_value (params, &run->res.stats);
  if (run_bands (gpu, file, img, params, rows, run->res.threshold_value, run, &ninf) != SKY_OK)
    {
      cli_error ("%s: GPU: %s", path, sky_last_error ());
      goto exit;
    }
  run->times.ms[SKY_STEP_CLIP] = run->clip_ms;
  run->times.kernels = run->times.ms[SKY_STEP_SEGMENT] + run->times.ms[SKY_STEP_LABEL]
                       + run->times.ms[SKY_STEP_MEASURE];
  run->times.total = run->clip_ms + run->bands_ms + run->merge_ms;
  for (int step = 0; step < SKY_STEP_COUNT; step++)
    run->res.times.ms[step] = run->times.ms[step];
  run->res.times.total = run->times.total;
  run->device_bytes = sky_gpu_device_bytes (gpu);
  img->nblank = n - run->res.stats.ninput;
  img->ninf = ninf;
  ret = 0;

exit:
  if (ret != 0 || !*tiled)
    {
      sky_result_clear (&run->res);
      sky_image_clear (img);
    }
  sky_plane_file_close (file);
  sky_gpu_free (gpu);
  return ret;
}

void
cli_gpu_print_tiled (const CliGpuRun *run)
{
  const SkyGpuTimes *t = &run->times;

  printf ("gpu bands  %lld bands of %lld rows, %.1f MiB on the device: clip on the host over "
          "the file %.1f ms; bands %.1f ms (host reads %.1f, beside the device's work; upload "
          "%.1f, segment %.1f, label %.1f, measure %.1f, download %.1f); joins and sums %.1f "
          "ms; all %.1f ms\n",
          (long long) run->nbands, (long long) run->band_rows, run->device_bytes / 1048576.0,
          run->clip_ms, run->bands_ms, run->read_ms, t->upload, t->ms[SKY_STEP_SEGMENT],
          t->ms[SKY_STEP_LABEL], t->ms[SKY_STEP_MEASURE], t->download, run->merge_ms, t->total);
}
