/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The app's read of an uncompressed plane: the core's conversion
 * (sky_plane_file_read_each), in chunks across the cores, each block of the
 * core's counted for the display statistics while it is in cache, so that
 * the first frame needs no pass of its own over the pixels. Between chunks:
 * the progress and the cancel. Before them, for a big image, a reduced view
 * of every k-th pixel of every k-th row, whose histogram is the image's
 * first: the full read then counts only extremes and blanks. */
#include "sky-image-read.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

/* 4 MiB of pixels a chunk: a few hundred for a 16384 x 16384 image (the
 * progress moves smoothly, a cancel waits for one); the counting is per
 * block of the core's reader, within the chunk. */
#define CHUNK_PIXELS ((int64_t) 1 << 20)
/* A histogram counts up to 2^32 - 1 pixels a bucket: fewer a task. */
#define TASK_MAX_PIXELS ((int64_t) 1 << 31)
/* The reduced view's longer side is at most this many pixels: about a
 * window's, and 1/16 of the rows of a 16384^2 file (1/32 at 32768^2). */
#define PREVIEW_SIDE 1024
/* A big image's first histogram is its reduced view's (1 pixel in 4^k);
 * without one (no memory for it), of 1 pixel in this many. Its extremes
 * and blank count are of every pixel; the exact histogram follows the
 * first frame. */
#define SAMPLE_STRIDE 16

struct _SkyOpenProgress {
  atomic_llong done, total;
  GMutex lock;
  SkyImageData *preview;
};

static void
progress_clear (SkyOpenProgress *p)
{
  g_clear_pointer (&p->preview, sky_image_data_unref);
  g_mutex_clear (&p->lock);
}

SkyOpenProgress *
sky_open_progress_new (void)
{
  SkyOpenProgress *p = g_atomic_rc_box_new0 (SkyOpenProgress);
  g_mutex_init (&p->lock);
  return p;
}

SkyOpenProgress *
sky_open_progress_ref (SkyOpenProgress *p)
{
  return g_atomic_rc_box_acquire (p);
}

void
sky_open_progress_unref (SkyOpenProgress *p)
{
  g_atomic_rc_box_release_full (p, (GDestroyNotify) progress_clear);
}

double
sky_open_progress_fraction (SkyOpenProgress *p)
{
  long long total = atomic_load (&p->total);
  return total > 0 ? (double) atomic_load (&p->done) / (double) total : 0;
}

SkyImageData *
sky_open_progress_take_preview (SkyOpenProgress *p)
{
  SkyImageData *preview;
  g_mutex_lock (&p->lock);
  preview = g_steal_pointer (&p->preview);
  g_mutex_unlock (&p->lock);
  return preview;
}

gint64
sky_image_read_progressive_min_pixels (void)
{
  const char *env = g_getenv ("SKYSIFT_PROGRESSIVE_MIN_PIXELS");
  return env != NULL && *env != '\0' ? g_ascii_strtoll (env, NULL, 10) : (gint64) 1 << 26;
}

/* A pause after each chunk, in microseconds: $SKYSIFT_READ_CHUNK_DELAY_US,
 * for the tests that must see a load under way (a reduced view shown, a
 * cancel in the middle) on any machine. 0 otherwise. */
static gulong
chunk_delay_us (void)
{
  const char *env = g_getenv ("SKYSIFT_READ_CHUNK_DELAY_US");
  return env != NULL ? (gulong) g_ascii_strtoull (env, NULL, 10) : 0;
}

typedef struct {
  SkyPlaneFile *file;
  const SkyImage *img;
  float *out;             /* the pixels (full read) or the reduced view */
  int64_t rows;           /* reduced view: rows made, and its step k */
  int64_t step, lnx;
  int64_t sample_stride;  /* 1: every pixel into the histogram; 0: none */
  int ntasks;
  SkyDisplayCounts *preview_counts;  /* the reduced view's, a task each */
  int npreview_counts;
  atomic_llong next_chunk;  /* the full read: the first chunk no task took */
  SkyDisplayCounts *counts;
  GCancellable *cancellable;
  SkyOpenProgress *progress;
  gulong delay_us;
  atomic_llong ninf;
  atomic_int failed;     /* the first failure's status, or 0 */
  GMutex lock;
  char *error;            /* the first failure's message */
} Reader;

/* The message is the failing thread's own (sky_last_error is per thread). */
static void
reader_fail (Reader *r, int status)
{
  g_mutex_lock (&r->lock);
  if (r->error == NULL)
    {
      r->error = g_strdup (sky_last_error ());
      atomic_store (&r->failed, status);
    }
  g_mutex_unlock (&r->lock);
}

static gboolean
reader_stops (Reader *r)
{
  return atomic_load (&r->failed) || g_cancellable_is_cancelled (r->cancellable);
}

/* One task's share of the counting, handed each block by the core's reader
 * as soon as the block is converted, while it is in the cache: counted
 * after the whole chunk instead, the pixels came back from memory, and
 * the read took 1.4x as long (2 cores, 16384^2). */
typedef struct {
  Reader *r;
  SkyDisplayCounts *counts;
} BlockCounter;

static void
count_block (void *user, const float *pixels, int64_t n)
{
  BlockCounter *bc = user;
  int64_t stride = bc->r->sample_stride, at = pixels - bc->r->out;

  if (stride == 0)
    sky_display_counts_add_extremes (bc->counts, pixels, n);
  else if (stride > 1)
    sky_display_counts_add_sampled (bc->counts, pixels, n, (stride - at % stride) % stride,
                                    stride);
  else
    sky_display_counts_add (bc->counts, pixels, n);
}

/* A task takes the next chunk not yet taken, so that a thread slowed down
 * (the main loop drawing the reduced view shares the cores) leaves its
 * share to the others instead of making the read wait for it; it stops
 * taking them before its histogram could overflow. */
static void
read_task (void *data, int task)
{
  Reader *r = data;
  int64_t npix = r->img->nx * r->img->ny, taken = 0, chunk;
  BlockCounter counter = { r, &r->counts[task] };

  while (taken + CHUNK_PIXELS <= TASK_MAX_PIXELS && !reader_stops (r)
         && (chunk = atomic_fetch_add (&r->next_chunk, 1)) * CHUNK_PIXELS < npix)
    {
      int64_t at = chunk * CHUNK_PIXELS, n = MIN (CHUNK_PIXELS, npix - at), ninf = 0;
      int ret = sky_plane_file_read_each (r->file, at, n, 1, r->out + at, &ninf, count_block,
                                          &counter);
      if (ret != SKY_OK)
        {
          reader_fail (r, ret);
          return;
        }
      taken += n;
      atomic_fetch_add (&r->ninf, ninf);
      if (r->progress)
        atomic_fetch_add (&r->progress->done, n);
      if (r->delay_us)
        g_usleep (r->delay_us);
    }
}

/* Rows of the reduced view, task's share: row j is every step-th pixel of
 * the image's row j * step; each row counted into the task's histogram. */
static void
preview_task (void *data, int task)
{
  Reader *r = data;
  SkyDisplayCounts *counts = &r->preview_counts[task];
  int64_t j0 = r->rows * task / r->ntasks, j1 = r->rows * (task + 1) / r->ntasks;
  float *row = malloc ((size_t) r->img->nx * sizeof *row);

  if (row == NULL)
    {
      reader_fail (r, sky_fail (SKY_ERR_MEMORY, "no memory for a row of the reduced view"));
      return;
    }
  for (int64_t j = j0; j < j1 && !reader_stops (r); j++)
    {
      int ret = sky_plane_file_read (r->file, j * r->step * r->img->nx, r->img->nx, 1, row,
                                     NULL);
      if (ret != SKY_OK)
        {
          reader_fail (r, ret);
          break;
        }
      for (int64_t i = 0; i < r->lnx; i++)
        r->out[j * r->lnx + i] = row[i * r->step];
      sky_display_counts_add (counts, r->out + j * r->lnx, r->lnx);
    }
  free (row);
}

static void
clear_preview_counts (Reader *r)
{
  for (int t = 0; r->preview_counts != NULL && t < r->npreview_counts; t++)
    sky_display_counts_clear (&r->preview_counts[t]);
  g_clear_pointer (&r->preview_counts, g_free);
  r->npreview_counts = 0;
}

/* The reduced view: the first pyramid level whose longer side is at most
 * PREVIEW_SIDE, its pixels sampled (not averaged: the levels' means need
 * every pixel, which is what the full read is for). Its histogram, counted
 * as its rows are made, stays in r->preview_counts for the image's first. */
static gboolean
make_preview (Reader *r, SkyImageData *data, SkyOpenProgress *progress, int nthreads)
{
  g_autoptr (SkyImageData) pv = g_atomic_rc_box_new0 (SkyImageData);
  SkyPyramid *pyr = &pv->pyramid;
  SkyImage sample = { 0 };
  int64_t nvalid = 0;
  int level = 0;

  pyr->nx[0] = data->image.nx;
  pyr->ny[0] = data->image.ny;
  while ((pyr->nx[level] > PREVIEW_SIDE || pyr->ny[level] > PREVIEW_SIDE)
         && level + 1 < SKY_PYRAMID_MAX_LEVELS)
    {
      level++;
      pyr->nx[level] = pyr->nx[level - 1] > 1 ? pyr->nx[level - 1] / 2 : 1;
      pyr->ny[level] = pyr->ny[level - 1] > 1 ? pyr->ny[level - 1] / 2 : 1;
    }
  if (level == 0)
    return TRUE;   /* small enough to need none */
  pyr->first = level;
  pyr->nlevels = level + 1;
  pyr->pixels[level] = malloc ((size_t) (pyr->nx[level] * pyr->ny[level]) * sizeof (float));
  if (pyr->pixels[level] == NULL)
    return TRUE;   /* no reduced view; the full read may still fit */
  r->out = pyr->pixels[level];
  r->step = (int64_t) 1 << level;
  r->rows = pyr->ny[level];
  r->lnx = pyr->nx[level];
  r->ntasks = nthreads;
  r->preview_counts = g_new0 (SkyDisplayCounts, nthreads);
  r->npreview_counts = nthreads;
  for (int t = 0; t < nthreads; t++)
    if (sky_display_counts_init (&r->preview_counts[t]) != SKY_OK)
      {
        clear_preview_counts (r);
        return TRUE;   /* no reduced view, as above */
      }
  sky_parallel_for (r->ntasks, nthreads, preview_task, r);
  if (reader_stops (r))
    return FALSE;

  sample.nx = pyr->nx[level];
  sample.ny = pyr->ny[level];
  sample.pixels = pyr->pixels[level];
  for (int t = 0; t < nthreads; t++)
    nvalid += r->preview_counts[t].nvalid;
  sample.nblank = sample.nx * sample.ny - nvalid;
  if (sky_display_stats_finish (&sample, r->preview_counts, nthreads, &pv->stats) != SKY_OK)
    {
      clear_preview_counts (r);
      return TRUE;
    }
  pv->image.nx = data->image.nx;
  pv->image.ny = data->image.ny;
  pv->has_wcs = data->has_wcs;
  pv->flip_x = data->flip_x;
  pv->display_name = g_strdup (data->display_name);
  pv->is_preview = TRUE;
  g_mutex_lock (&progress->lock);
  g_clear_pointer (&progress->preview, sky_image_data_unref);
  progress->preview = g_steal_pointer (&pv);
  g_mutex_unlock (&progress->lock);
  return TRUE;
}

static gboolean
fits_in_memory (int64_t bytes)
{
  long pages = sysconf (_SC_PHYS_PAGES), size = sysconf (_SC_PAGESIZE);
  return pages <= 0 || size <= 0 || bytes <= (int64_t) pages * size;
}

SkyImageReadResult
sky_image_read (const char *path, const SkyLoadOptions *opts, SkyImageData *data,
                SkyOpenProgress *progress, GCancellable *cancellable, GError **error)
{
  Reader r = { 0 };
  SkyImage *img = &data->image;
  SkyImageReadResult result = SKY_IMAGE_READ_DONE;
  int nthreads = sky_default_threads ();
  int64_t npix;

  if (sky_plane_file_open (path, opts, img, &r.file) != SKY_OK)
    return SKY_IMAGE_READ_CANNOT;   /* the loader says why, or reads it its way */
  npix = img->nx * img->ny;
  if (!fits_in_memory (npix * (int64_t) sizeof (float)))
    {
      sky_plane_file_close (r.file);
      sky_image_clear (img);
      return SKY_IMAGE_READ_CANNOT;   /* the loader's message says how much is needed */
    }
  sky_image_data_describe (data, path);
  r.img = img;
  r.cancellable = cancellable;
  r.progress = progress;
  r.delay_us = chunk_delay_us ();
  g_mutex_init (&r.lock);
  atomic_init (&r.ninf, 0);
  atomic_init (&r.failed, 0);
  atomic_init (&r.next_chunk, 0);
  r.sample_stride = 1;
  if (progress != NULL)
    {
      atomic_store (&progress->total, npix);
      if (npix >= sky_image_read_progressive_min_pixels ())
        {
          if (!make_preview (&r, data, progress, nthreads))
            goto exit;
          r.sample_stride = r.preview_counts != NULL ? 0 : SAMPLE_STRIDE;
        }
    }

  r.ntasks = (int) MAX (nthreads, (npix + TASK_MAX_PIXELS - CHUNK_PIXELS - 1)
                                    / (TASK_MAX_PIXELS - CHUNK_PIXELS));
  /* The reduced view's counts after the tasks', to be merged with them. */
  r.counts = g_new0 (SkyDisplayCounts, r.ntasks + r.npreview_counts);
  for (int t = 0; t < r.ntasks; t++)
    {
      int ret = SKY_OK;
      if (r.sample_stride == 0)
        r.counts[t] = (SkyDisplayCounts) { NULL, INFINITY, -INFINITY, 0, 0 };
      else
        ret = sky_display_counts_init (&r.counts[t]);
      if (ret != SKY_OK)
        {
          reader_fail (&r, ret);
          goto exit;
        }
    }
  img->pixels = sky_alloc_large ((size_t) npix * sizeof (float));
  if (img->pixels == NULL)
    {
      reader_fail (&r, sky_fail (SKY_ERR_MEMORY, "%s: no memory for %lld x %lld pixels", path,
                                 (long long) img->nx, (long long) img->ny));
      goto exit;
    }
  r.out = img->pixels;
  sky_parallel_for (r.ntasks, nthreads, read_task, &r);
  if (reader_stops (&r))
    goto exit;

  img->ninf = atomic_load (&r.ninf);
  img->nblank = npix;
  for (int t = 0; t < r.ntasks; t++)
    img->nblank -= r.counts[t].nvalid;
  if (img->nblank == npix)
    {
      reader_fail (&r, sky_fail (SKY_ERR_EMPTY, "%s: every pixel of HDU %d plane %lld is blank",
                                 path, img->hdu, (long long) img->plane));
      goto exit;
    }
  for (int t = 0; t < r.npreview_counts; t++)
    r.counts[r.ntasks + t] = r.preview_counts[t];
  {
    int ret = sky_display_stats_finish (img, r.counts, r.ntasks + r.npreview_counts,
                                        &data->stats);
    if (ret != SKY_OK)
      reader_fail (&r, ret);
  }

exit:
  if (atomic_load (&r.failed))
    {
      result = SKY_IMAGE_READ_FAILED;
      g_set_error_literal (error, SKY_UI_ERROR, sky_ui_error_from_status (atomic_load (&r.failed)),
                           r.error);
    }
  else if (g_cancellable_is_cancelled (cancellable))
    result = SKY_IMAGE_READ_CANCELLED;
  for (int t = 0; r.counts != NULL && t < r.ntasks; t++)
    sky_display_counts_clear (&r.counts[t]);
  g_free (r.counts);
  clear_preview_counts (&r);
  g_free (r.error);
  g_mutex_clear (&r.lock);
  sky_plane_file_close (r.file);
  return result;
}
