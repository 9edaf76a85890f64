/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The steps on a worker thread, reusing what an earlier run already knows. */
#include "sky-pipeline.h"
#include "sky-pipeline-gpu.h"
#include "sky-cpu.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

G_DEFINE_BOXED_TYPE (SkyRun, sky_run, sky_run_ref, sky_run_unref)

static const char *const step_names[] = { "none", "clip", "segment", "label", "measure" };
static const char *const backend_names[SKY_N_BACKENDS] = { "cpu", "gpu", "both" };

const char *
sky_step_name (SkyStep step)
{
  return step <= SKY_STEP_MEASURE ? step_names[step] : "";
}

SkyStep
sky_step_from_name (const char *name)
{
  if (g_strcmp0 (name, "all") == 0)
    return SKY_STEP_MEASURE;
  for (int i = 0; name && i <= SKY_STEP_MEASURE; i++)
    if (strcmp (name, step_names[i]) == 0)
      return i;
  return (SkyStep) -1;
}

const char *
sky_backend_name (SkyBackend backend)
{
  return backend < SKY_N_BACKENDS ? backend_names[backend] : "";
}

int
sky_backend_from_name (const char *name)
{
  for (int i = 0; name && i < SKY_N_BACKENDS; i++)
    if (strcmp (name, backend_names[i]) == 0)
      return i;
  return -1;
}

gboolean
sky_backend_available (SkyBackend backend, char **reason)
{
  if (backend == SKY_BACKEND_CPU)
    return TRUE;
  return sky_pipeline_gpu_available (reason);
}

char *
sky_backend_gpu_description (void)
{
  return sky_pipeline_gpu_describe ();
}

/* ------------------------------------------------------------------ runs */

static void
run_free (SkyRun *run)
{
  g_clear_pointer (&run->image, sky_image_data_unref);
  g_clear_pointer (&run->mask_bytes, g_bytes_unref);
  g_clear_pointer (&run->labels_bytes, g_bytes_unref);
  sky_catalogue_clear (&run->catalogue);
  g_free (run->gpu_note);
  g_free (run->gpu_fault);
}

SkyRun *
sky_run_ref (SkyRun *run)
{
  return g_atomic_rc_box_acquire (run);
}

void
sky_run_unref (SkyRun *run)
{
  g_atomic_rc_box_release_full (run, (GDestroyNotify) run_free);
}

SkyStep
sky_run_valid_step (const SkyRun *prev, const SkyImageData *image, const SkyParams *params,
                    SkyBackend backend)
{
  if (prev == NULL || prev->image != image || prev->backend != backend)
    return SKY_STEP_NONE;
  if (prev->params.clip_kappa != params->clip_kappa || prev->params.max_iter != params->max_iter)
    return SKY_STEP_NONE;
  if (prev->done <= SKY_STEP_CLIP || prev->params.threshold != params->threshold
      || prev->params.relative != params->relative)
    return MIN (prev->done, SKY_STEP_CLIP);
  if (prev->done <= SKY_STEP_SEGMENT || prev->params.connectivity != params->connectivity)
    return SKY_STEP_SEGMENT;
  return prev->done;
}

/* Mask and label buffers come back to a small pool when their run is freed
 * and go to the next run of the same size: a fresh 16 MiB label image costs
 * thousands of first-touch page faults, which made a threshold step's label
 * step five times slower than the CLI's (whose sky_cpu_run reuses them). */
#define POOL_MAX 4

typedef struct {
  void *data;
  gsize size;
} PoolBuffer;

static GMutex pool_lock;
static GSList *pool;

static void
pool_give (gpointer user_data)
{
  PoolBuffer *b = user_data;
  g_mutex_lock (&pool_lock);
  if (g_slist_length (pool) < POOL_MAX)
    {
      pool = g_slist_prepend (pool, b);
      b = NULL;
    }
  g_mutex_unlock (&pool_lock);
  if (b)
    {
      free (b->data);
      g_free (b);
    }
}

static GBytes *
large_bytes (gsize size)
{
  PoolBuffer *b = NULL;

  g_mutex_lock (&pool_lock);
  for (GSList *l = pool; l; l = l->next)
    if (((PoolBuffer *) l->data)->size == size)
      {
        b = l->data;
        pool = g_slist_delete_link (pool, l);
        break;
      }
  g_mutex_unlock (&pool_lock);
  if (b == NULL)
    {
      void *p = sky_alloc_large (size);
      if (p == NULL)
        return NULL;
      b = g_new (PoolBuffer, 1);
      b->data = p;
      b->size = size;
    }
  return g_bytes_new_with_free_func (b->data, size, pool_give, b);
}

/* Pixel values around the background for the clip panel: kappa + 3 sigma
 * each side of the median, where the clipping bounds sit well inside. */
static void
clip_histogram (SkyRun *run)
{
  const SkyImage *img = &run->image->image;
  double half = (run->params.clip_kappa + 3) * run->stats.sigma;
  double lo, scale;
  gint64 npix = img->nx * img->ny;

  memset (run->hist, 0, sizeof run->hist);
  if (!(half > 0))
    half = fabs (run->stats.median) > 0 ? fabs (run->stats.median) : 1;
  lo = run->hist_lo = run->stats.median - half;
  run->hist_hi = run->stats.median + half;
  scale = SKY_CLIP_HIST_BINS / (2 * half);
  for (gint64 i = 0; i < npix; i++)
    {
      double b = (img->pixels[i] - lo) * scale;  /* NaN fails both tests */
      if (b >= 0 && b < SKY_CLIP_HIST_BINS)
        run->hist[(int) b]++;
    }
}

static gboolean
params_equal (const SkyParams *a, const SkyParams *b)
{
  return a->clip_kappa == b->clip_kappa && a->max_iter == b->max_iter
         && a->threshold == b->threshold && a->relative == b->relative
         && a->connectivity == b->connectivity;
}

static gboolean
core_failed (int ret, GError **error)
{
  if (ret == SKY_OK)
    return FALSE;
  g_set_error_literal (error, SKY_UI_ERROR, ret, sky_last_error ());
  return TRUE;
}

/* A GPU part of a run failed with gpu_error (taken). A cancellation goes
 * on to the caller (FALSE); anything else (no device, out of memory, a lost
 * device) is logged and kept as the run's gpu_fault, without GPU figures,
 * and the CPU carries on (TRUE). */
static gboolean
take_gpu_fault (SkyRun *run, GError *gpu_error, GError **error)
{
  if (g_error_matches (gpu_error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      g_propagate_error (error, gpu_error);
      return FALSE;
    }
  g_message ("the GPU failed, the CPU does the run: %s", gpu_error->message);
  run->gpu_fault = g_strdup (gpu_error->message);
  run->has_gpu = FALSE;
  g_error_free (gpu_error);
  return TRUE;
}

SkyRun *
sky_pipeline_run (SkyImageData *image, const SkyParams *params, SkyBackend backend,
                  SkyStep until, SkyRun *prev, GCancellable *cancellable, GError **error)
{
  const SkyImage *img = &image->image;
  g_autoptr (SkyRun) run = NULL;
  gsize npix = (gsize) (img->nx * img->ny);
  SkyStep valid = sky_run_valid_step (prev, image, params, backend), keep;
  double t0;

  /* Nothing to compute and nothing that shows differs (the threshold moves
   * the histogram's line even before segment has run): the same run. */
  if (prev != NULL && valid >= until && params_equal (&prev->params, params))
    return sky_run_ref (prev);
  keep = MIN (valid, until);
  if (sky_params_check (params) != SKY_OK)
    {
      g_set_error_literal (error, SKY_UI_ERROR, SKY_ERR_ARGUMENT, sky_last_error ());
      return NULL;
    }

  run = g_atomic_rc_box_new0 (SkyRun);
  run->image = sky_image_data_ref (image);
  run->params = *params;
  run->backend = backend;
  run->threshold_value = NAN;

  /* The GPU alone runs the four steps in one go on the device. If it
   * fails (no device, out of memory, lost), the CPU does the whole job and
   * the run says why. */
  if (backend == SKY_BACKEND_GPU)
    {
      GError *gpu_error = NULL;

      if (sky_pipeline_gpu_fill (run, cancellable, &gpu_error))
        {
          clip_histogram (run);
          return g_steal_pointer (&run);
        }
      if (!take_gpu_fault (run, gpu_error, error))
        return NULL;
      keep = SKY_STEP_NONE;
      until = SKY_STEP_MEASURE;
    }

  if (keep >= SKY_STEP_CLIP)
    {
      run->stats = prev->stats;
      run->threshold_value = sky_threshold_value (params, &run->stats);
      run->hist_lo = prev->hist_lo;
      run->hist_hi = prev->hist_hi;
      memcpy (run->hist, prev->hist, sizeof run->hist);
      run->cpu.clip = prev->cpu.clip;
      run->gpu_kernel.clip = prev->gpu_kernel.clip;
      run->gpu_total.clip = prev->gpu_total.clip;
      run->agree[SKY_STEP_CLIP] = prev->agree[SKY_STEP_CLIP];
      run->done = SKY_STEP_CLIP;
    }
  if (keep >= SKY_STEP_SEGMENT)
    {
      run->mask_bytes = g_bytes_ref (prev->mask_bytes);
      run->mask = prev->mask;
      run->cpu.segment = prev->cpu.segment;
      run->gpu_kernel.segment = prev->gpu_kernel.segment;
      run->gpu_total.segment = prev->gpu_total.segment;
      run->agree[SKY_STEP_SEGMENT] = prev->agree[SKY_STEP_SEGMENT];
      run->done = SKY_STEP_SEGMENT;
    }
  if (keep >= SKY_STEP_LABEL)
    {
      run->labels_bytes = g_bytes_ref (prev->labels_bytes);
      run->labels = prev->labels;
      run->nsources = prev->nsources;
      run->cpu.label = prev->cpu.label;
      run->gpu_kernel.label = prev->gpu_kernel.label;
      run->gpu_total.label = prev->gpu_total.label;
      run->agree[SKY_STEP_LABEL] = prev->agree[SKY_STEP_LABEL];
      run->done = SKY_STEP_LABEL;
    }

  for (SkyStep step = run->done + 1; step <= until; step++)
    {
      int ret = SKY_OK;

      if (g_cancellable_set_error_if_cancelled (cancellable, error))
        return NULL;
      t0 = sky_now_ms ();
      switch (step)
        {
        case SKY_STEP_CLIP:
          ret = sky_cpu_clip (img, params, &run->stats);
          run->cpu.clip = sky_now_ms () - t0;
          if (ret == SKY_OK)
            {
              run->threshold_value = sky_threshold_value (params, &run->stats);
              clip_histogram (run);
            }
          break;
        case SKY_STEP_SEGMENT:
          if ((run->mask_bytes = large_bytes (npix)) == NULL)
            ret = sky_fail (SKY_ERR_MEMORY, "no memory for the mask");
          else
            {
              run->mask = (guint8 *) g_bytes_get_data (run->mask_bytes, NULL);
              ret = sky_cpu_segment (img, run->threshold_value, params->nthreads, run->mask);
            }
          run->cpu.segment = sky_now_ms () - t0;
          break;
        case SKY_STEP_LABEL:
          if ((run->labels_bytes = large_bytes (npix * sizeof (gint32))) == NULL)
            ret = sky_fail (SKY_ERR_MEMORY, "no memory for the labels");
          else
            {
              run->labels = (gint32 *) g_bytes_get_data (run->labels_bytes, NULL);
              ret = sky_cpu_label (run->mask, img->nx, img->ny, params->connectivity,
                                   params->nthreads, run->labels, &run->nsources);
            }
          run->cpu.label = sky_now_ms () - t0;
          break;
        case SKY_STEP_MEASURE:
          ret = sky_cpu_measure (img, run->labels, run->nsources, params->nthreads,
                                 &run->catalogue);
          run->cpu.measure = sky_now_ms () - t0;
          break;
        case SKY_STEP_NONE:
        default:
          break;
        }
      if (core_failed (ret, error))
        return NULL;
      run->done = step;
    }
  run->cpu.total = run->cpu.clip + run->cpu.segment + run->cpu.label + run->cpu.measure;

  if (backend == SKY_BACKEND_BOTH)
    {
      GError *gpu_error = NULL;

      /* The CPU's results stand; the comparison is what is missing. */
      if (!sky_pipeline_gpu_check (run, cancellable, &gpu_error)
          && !take_gpu_fault (run, gpu_error, error))
        return NULL;
    }
  return g_steal_pointer (&run);
}

/* ------------------------------------------------------------------ async */

typedef struct {
  SkyImageData *image;
  SkyParams params;
  SkyBackend backend;
  SkyStep until;
  SkyRun *previous;
} RunInput;

static void
run_input_free (RunInput *in)
{
  g_clear_pointer (&in->image, sky_image_data_unref);
  g_clear_pointer (&in->previous, sky_run_unref);
  g_free (in);
}

static void
run_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  RunInput *in = task_data;
  GError *error = NULL;
  SkyRun *run = sky_pipeline_run (in->image, &in->params, in->backend, in->until, in->previous,
                                  cancellable, &error);
  if (run == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, run, (GDestroyNotify) sky_run_unref);
}

void
sky_pipeline_run_async (SkyImageData *image,
                        const SkyParams *params,
                        SkyBackend backend,
                        SkyStep until,
                        SkyRun *previous,
                        GCancellable *cancellable,
                        GAsyncReadyCallback callback,
                        gpointer user_data)
{
  g_autoptr (GTask) task = NULL;
  RunInput *in = g_new0 (RunInput, 1);

  in->image = sky_image_data_ref (image);
  in->params = *params;
  in->backend = backend;
  in->until = until;
  in->previous = previous ? sky_run_ref (previous) : NULL;
  task = g_task_new (NULL, cancellable, callback, user_data);
  g_task_set_source_tag (task, sky_pipeline_run_async);
  g_task_set_task_data (task, in, (GDestroyNotify) run_input_free);
  g_task_run_in_thread (task, run_thread);
}

SkyRun *
sky_pipeline_run_finish (GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}
