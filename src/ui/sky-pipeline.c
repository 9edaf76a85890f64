/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The runner's runs on a worker thread, for the app. */
#include "sky-pipeline.h"
#include "sky-pipeline-gpu.h"
#include "sky-ui-task.h"

#include <math.h>
#include <string.h>


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
run_clear (SkyRun *run)
{
  g_clear_pointer (&run->image, sky_image_data_unref);
  sky_stages_clear (&run->stages);
}

SKY_DEFINE_SHARED_TYPE (SkyRun, sky_run, run_clear)

/* The fields the app reads, from what the runner made (borrowed from it:
 * the run frees only its stages). */
static void
show_stages (SkyRun *run)
{
  const SkyStages *st = &run->stages;

  run->params = st->params;
  run->backend = st->backend;
  run->done = st->done;
  run->stats = st->result.stats;
  run->threshold_value = st->result.threshold_value;
  run->mask = st->result.mask;
  run->labels = st->result.labels;
  run->nsources = st->result.nsources;
  run->catalogue = st->result.catalogue;
  run->cpu = st->result.times;
  run->has_gpu = st->has_gpu;
  run->gpu_kernel = st->gpu_kernel;
  run->gpu_total = st->gpu_total;
  for (int step = 0; step < SKY_STEP_COUNT; step++)
    run->agree[step] = st->agree[step];
  run->gpu_note = st->gpu_note;
  run->gpu_fault = st->gpu_fault;
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

static int
is_cancelled (void *cancellable)
{
  return g_cancellable_is_cancelled (cancellable);
}

/* The runner's request for a run of the app. */
static SkyRunRequest
app_request (SkyImageData *image, const SkyParams *params, SkyBackend backend, SkyStep until,
             SkyRun *prev)
{
  SkyRunRequest req = { 0 };

  req.image = &image->image;
  req.params = params;
  req.method = SKY_METHOD_LESSON;
  req.backend = backend;
  req.until = until;
  req.previous = prev && prev->image == image ? &prev->stages : NULL;
  req.gpu = sky_pipeline_gpu_backend ();
  /* Both backends are there to be compared: the CPU's times are then the
   * same statistic as the GPU's, the best of as many runs. */
  req.gpu_repeat = SKY_RUN_GPU_REPEAT;
  req.cpu_repeat = backend == SKY_BACKEND_BOTH ? SKY_RUN_GPU_REPEAT : 1;
  return req;
}

gsize
sky_run_give_back (SkyRun *run, const SkyParams *params, SkyBackend backend, SkyStep until)
{
  SkyRunRequest req = app_request (run->image, params, backend, until, run);
  gsize given = sky_stages_give_back (&run->stages, &req);

  run->mask = run->stages.result.mask;
  run->labels = run->stages.result.labels;
  return given;
}

SkyRun *
sky_pipeline_run (SkyImageData *image, const SkyParams *params, SkyBackend backend,
                  SkyStep until, SkyRun *prev, GCancellable *cancellable, GError **error)
{
  g_autoptr (SkyRun) run = NULL;
  SkyRunRequest req = app_request (image, params, backend, until, prev);
  int ret;

  req.cancelled = cancellable ? is_cancelled : NULL;
  req.cancel_data = cancellable;
  if (sky_run_is_current (req.previous, &req))
    return sky_run_ref (prev);

  run = g_atomic_rc_box_new0 (SkyRun);
  run->image = sky_image_data_ref (image);
  ret = sky_run (&req, &run->stages);
  if (ret == SKY_ERR_CANCELLED && g_cancellable_set_error_if_cancelled (cancellable, error))
    return NULL;
  if (ret != SKY_OK)
    {
      g_propagate_error (error, sky_ui_error_new_from_status (ret));
      return NULL;
    }
  if (run->stages.gpu_fault != NULL)
    g_message ("the GPU failed, the CPU does the run: %s", run->stages.gpu_fault);
  show_stages (run);

  /* The histogram goes with the clip step: taken along where it was kept. */
  if (run->stages.kept != SKY_STEP_NONE)
    {
      run->hist_lo = prev->hist_lo;
      run->hist_hi = prev->hist_hi;
      memcpy (run->hist, prev->hist, sizeof run->hist);
    }
  else if (run->done != SKY_STEP_NONE)
    clip_histogram (run);
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
  RunInput *in = g_new0 (RunInput, 1);

  in->image = sky_image_data_ref (image);
  in->params = *params;
  in->backend = backend;
  in->until = until;
  in->previous = previous ? sky_run_ref (previous) : NULL;
  sky_ui_task_run (sky_pipeline_run_async, in, (GDestroyNotify) run_input_free, run_thread,
                   cancellable, callback, user_data);
}

SkyRun *
sky_pipeline_run_finish (GAsyncResult *result, GError **error)
{
  return sky_ui_task_finish_pointer (result, sky_pipeline_run_async, error);
}

char *
sky_run_describe_gpu (const SkyGpuTimes *t)
{
  g_autofree char *runs = t->runs > 0
    ? g_strdup_printf ("best of %d runs after a warm-up run", t->runs)
    : g_strdup ("one run, the first on the device may include its warm-up");
  g_autofree char *outputs = t->outputs >= 0
    ? g_strdup_printf (" The mask and labels for the view came down after them in %.2f ms "
                       "(page-locked), in no figure.", t->outputs)
    : g_strdup ("");

  return g_strdup_printf ("GPU: %s, from device events. GPU total adds the image's upload "
                          "from page-locked memory to the first step and the statistics and "
                          "catalogue's download to the last, as skysift-cli find --repeat "
                          "reports them.%s", runs, outputs);
}

gboolean
sky_run_speedup (const SkyRun *run, SkyStep step, double *ratio)
{
  const SkyStepTimes *cpu = &run->cpu, *gpu = &run->gpu_total;
  double c = step == SKY_STEP_NONE ? cpu->total : cpu->ms[step];
  double g = step == SKY_STEP_NONE ? gpu->total : gpu->ms[step];

  /* One run on one side and the best of ten on the other would flatter
   * the side that had ten tries: no ratio then. */
  if (!run->has_gpu || run->backend != SKY_BACKEND_BOTH || !(g > 0)
      || MAX (run->stages.cpu_runs, 1) != MAX (run->stages.gpu_times.runs, 1))
    return FALSE;
  *ratio = c / g;
  return TRUE;
}

char *
sky_run_describe_cpu (const SkyRun *run)
{
  return run->stages.cpu_runs > 1
    ? g_strdup_printf ("CPU: best of %d runs, as the GPU's.", run->stages.cpu_runs)
    : g_strdup ("CPU: one run.");
}
