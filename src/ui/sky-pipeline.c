/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The runner's runs on a worker thread, for the app. */
#include "sky-pipeline.h"
#include "sky-pipeline-gpu.h"
#include "sky-ui-task.h"
#include "sky-cpu.h"

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
smoothed_free (SkySmoothed *smoothed)
{
  sky_image_clear (&smoothed->image);
  sky_kernel_clear (&smoothed->filter);
  g_free (smoothed->kernel);
}

static void
run_clear (SkyRun *run)
{
  g_clear_pointer (&run->image, sky_image_data_unref);
  g_clear_pointer (&run->maps, sky_run_maps_unref);
  g_clear_pointer (&run->mesh, sky_run_mesh_unref);
  g_free (run->cpu_only);
  g_free (run->by_sum);
  sky_stages_clear (&run->stages);
  if (run->smoothed)
    g_atomic_rc_box_release_full (run->smoothed, (GDestroyNotify) smoothed_free);
}

static int
smooth_kernel (const SkyImage *img, const char *kernel, SkyKernel *k)
{
  if (g_str_equal (kernel, "beam"))
    return sky_kernel_beam (k, img);
  return sky_kernel_parse (k, kernel);
}

int
sky_smooth_image (const SkyImage *img, const char *kernel, int nthreads, SkyImage *out)
{
  SkyKernel k = { 0 };
  int status = smooth_kernel (img, kernel, &k);

  if (status == SKY_OK)
    status = sky_cpu_smooth (img, &k, nthreads, out);
  sky_kernel_clear (&k);
  return status;
}

gboolean
sky_smooth_kernel_check (SkyImageData *image, const char *kernel, GError **error)
{
  SkyKernel k = { 0 };
  int status = smooth_kernel (&image->image, kernel, &k);

  sky_kernel_clear (&k);
  if (status != SKY_OK)
    {
      g_set_error (error, SKY_UI_ERROR, status, "--smooth %s: %s", kernel, sky_last_error ());
      return FALSE;
    }
  return TRUE;
}

/* Whether a and b (either NULL: none) are the same smoothing. */
static gboolean
same_smoothing (const SkySmoothed *a, const SkySmoothed *b)
{
  if (a == NULL || b == NULL)
    return a == b;
  return a->is_filter == b->is_filter && g_str_equal (a->kernel, b->kernel);
}

/* The lesson's method: the image smoothed by kernel, normalised to unit
 * sum as the CLI does. The local method: kernel as its matched filter, which
 * its detect step applies (skysift-cli find --method local --smooth). From
 * prev where it has it, else made now. */
static SkySmoothed *
smoothed_for (SkyImageData *image, SkyMethod method, const char *kernel, SkyRun *prev,
              int nthreads, GError **error)
{
  gboolean is_filter = method == SKY_METHOD_LOCAL;
  SkySmoothed *smoothed;
  double t0;
  int status;

  if (prev && prev->image == image && prev->smoothed && prev->smoothed->is_filter == is_filter
      && g_str_equal (prev->smoothed->kernel, kernel))
    return g_atomic_rc_box_acquire (prev->smoothed);
  smoothed = g_atomic_rc_box_new0 (SkySmoothed);
  smoothed->kernel = g_strdup (kernel);
  smoothed->is_filter = is_filter;
  t0 = sky_now_ms ();
  if (is_filter)
    status = smooth_kernel (&image->image, kernel, &smoothed->filter);
  else
    status = sky_smooth_image (&image->image, kernel, nthreads, &smoothed->image);
  smoothed->ms = sky_now_ms () - t0;
  if (status != SKY_OK)
    {
      g_set_error (error, SKY_UI_ERROR, status, "--smooth %s: %s", kernel, sky_last_error ());
      g_atomic_rc_box_release_full (smoothed, (GDestroyNotify) smoothed_free);
      return NULL;
    }
  return smoothed;
}

SKY_DEFINE_SHARED_TYPE (SkyRun, sky_run, run_clear)

static int
compare_sum_desc (gconstpointer a, gconstpointer b, gpointer data)
{
  const SkyCatalogue *cat = data;
  double x = cat->sum[*(const gint64 *) a], y = cat->sum[*(const gint64 *) b];
  return (x < y) - (x > y);
}

/* The run's by_sum, where it has a catalogue. */
static void
sort_by_sum (SkyRun *run)
{
  const SkyCatalogue *cat = &run->catalogue;

  if (!sky_run_has (run, SKY_STEP_MEASURE) || cat->n == 0)
    return;
  run->by_sum = g_new (gint64, cat->n);
  for (gint64 i = 0; i < cat->n; i++)
    run->by_sum[i] = i;
  g_qsort_with_data (run->by_sum, (gint) cat->n, sizeof (gint64), compare_sum_desc, (gpointer) cat);
}

/* The fields the app reads, from what the runner made (borrowed from it:
 * the run frees only its stages). */
static void
show_stages (SkyRun *run)
{
  const SkyStages *st = &run->stages;

  run->params = st->params;
  run->method = st->method;
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
  /* The pixels that were clipped: the smoothed copy's where there is one. */
  const SkyImage *img = run->smoothed && !run->smoothed->is_filter ? &run->smoothed->image
                                                                     : &run->image->image;
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

/* The runner's request for a run of the app; smoothed: the lesson's copy to
 * clip and segment or the local method's matched filter, or NULL. prev is
 * lent only with the same smoothing: the runner compares the detection
 * image it was given, not the filter. */
static SkyRunRequest
app_request (SkyImageData *image, const SkyParams *params, SkyMethod method, SkyBackend backend,
             SkyStep until, const SkySmoothed *smoothed, SkyRun *prev)
{
  SkyRunRequest req = { 0 };

  req.image = &image->image;
  req.detect = smoothed && !smoothed->is_filter ? &smoothed->image : NULL;
  req.filter = smoothed && smoothed->is_filter ? &smoothed->filter : NULL;
  req.params = params;
  req.method = method;
  req.backend = backend;
  req.until = until;
  req.previous = prev && prev->image == image && same_smoothing (prev->smoothed, smoothed)
    ? &prev->stages : NULL;
  req.gpu = sky_pipeline_gpu_backend ();
  /* Both backends are there to be compared: the CPU's times are then the
   * same statistic as the GPU's, the best of as many runs. */
  req.gpu_repeat = SKY_RUN_GPU_REPEAT;
  req.cpu_repeat = backend == SKY_BACKEND_BOTH ? SKY_RUN_GPU_REPEAT : 1;
  return req;
}

gsize
sky_run_give_back (SkyRun *run, const SkyParams *params, SkyMethod method, SkyBackend backend,
                   SkyStep until)
{
  SkyRunRequest req = app_request (run->image, params, method, backend, until, run->smoothed,
                                   run);
  gsize given = sky_stages_give_back (&run->stages, &req);

  run->mask = run->stages.result.mask;
  run->labels = run->stages.result.labels;
  return given;
}

static SkyRun *
run_with (SkyImageData *image, const SkyParams *params, SkyMethod method, SkyBackend backend,
          SkyStep until, const char *kernel, SkyRun *prev, GCancellable *cancellable,
          GError **error)
{
  g_autoptr (SkyRun) run = NULL;
  SkySmoothed *smoothed = NULL;
  SkyRunRequest req;
  int ret;

  if (kernel != NULL)
    {
      smoothed = smoothed_for (image, method, kernel, prev, params->nthreads, error);
      if (smoothed == NULL)
        return NULL;
    }
  req = app_request (image, params, method, backend, until, smoothed, prev);
  req.cancelled = cancellable ? is_cancelled : NULL;
  req.cancel_data = cancellable;
  if (sky_run_is_current (req.previous, &req))
    {
      if (smoothed)
        g_atomic_rc_box_release_full (smoothed, (GDestroyNotify) smoothed_free);
      return sky_run_ref (prev);
    }

  run = g_atomic_rc_box_new0 (SkyRun);
  run->image = sky_image_data_ref (image);
  run->smoothed = smoothed;
  ret = sky_run (&req, &run->stages);
  if (ret == SKY_ERR_ARGUMENT && method != SKY_METHOD_LESSON && backend != SKY_BACKEND_CPU)
    {
      /* The runner refuses the method on the GPU: it has no GPU steps for
       * it. The CPU runs it, and the run keeps the runner's reason for the
       * window to say; where the GPU has the steps, the runner takes the
       * request as it is and this never happens. Bad parameters fail again
       * below, on the CPU, with their own message. */
      run->cpu_only = g_strdup_printf ("The GPU has no steps of the %s method, so the CPU ran "
                                       "them all: every figure is the CPU's (%s).",
                                       sky_method_name (method), sky_last_error ());
      sky_stages_clear (&run->stages);
      req.backend = SKY_BACKEND_CPU;
      req.cpu_repeat = 1;
      ret = sky_run (&req, &run->stages);
    }
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
  if (run->cpu_only == NULL)
    run->cpu_only = sky_run_cpu_steps_text (run);

  /* The histogram goes with the clip step: taken along where it was kept. */
  if (run->stages.kept != SKY_STEP_NONE)
    {
      run->hist_lo = prev->hist_lo;
      run->hist_hi = prev->hist_hi;
      memcpy (run->hist, prev->hist, sizeof run->hist);
    }
  else if (sky_run_has (run, SKY_STEP_CLIP))
    clip_histogram (run);
  if (!sky_run_prepare_background (run, prev, error))
    return NULL;
  sort_by_sum (run);
  return g_steal_pointer (&run);
}

SkyRun *
sky_pipeline_run_method (SkyImageData *image, const SkyParams *params, SkyMethod method,
                         SkyBackend backend, SkyStep until, SkyRun *prev,
                         GCancellable *cancellable, GError **error)
{
  return run_with (image, params, method, backend, until, NULL, prev, cancellable, error);
}

SkyRun *
sky_pipeline_run_smoothed (SkyImageData *image, const SkyParams *params, SkyMethod method,
                           SkyBackend backend, SkyStep until, const char *kernel, SkyRun *prev,
                           GCancellable *cancellable, GError **error)
{
  return run_with (image, params, method, backend, until, kernel, prev, cancellable, error);
}

SkyRun *
sky_pipeline_run (SkyImageData *image, const SkyParams *params, SkyBackend backend,
                  SkyStep until, SkyRun *prev, GCancellable *cancellable, GError **error)
{
  return run_with (image, params, SKY_METHOD_LESSON, backend, until, NULL, prev, cancellable,
                   error);
}

/* ------------------------------------------------------------------ async */

typedef struct {
  SkyImageData *image;
  SkyParams params;
  SkyMethod method;
  SkyBackend backend;
  SkyStep until;
  char *kernel;
  SkyRun *previous;
} RunInput;

static void
run_input_free (RunInput *in)
{
  g_clear_pointer (&in->image, sky_image_data_unref);
  g_clear_pointer (&in->previous, sky_run_unref);
  g_free (in->kernel);
  g_free (in);
}

static void
run_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  RunInput *in = task_data;
  GError *error = NULL;
  SkyRun *run = run_with (in->image, &in->params, in->method, in->backend, in->until,
                          in->kernel, in->previous, cancellable, &error);
  if (run == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, run, (GDestroyNotify) sky_run_unref);
}

void
sky_pipeline_run_async (SkyImageData *image,
                        const SkyParams *params,
                        SkyMethod method,
                        SkyBackend backend,
                        SkyStep until,
                        SkyRun *previous,
                        GCancellable *cancellable,
                        GAsyncReadyCallback callback,
                        gpointer user_data)
{
  sky_pipeline_run_smoothed_async (image, params, method, backend, until, NULL, previous,
                                   cancellable, callback, user_data);
}

void
sky_pipeline_run_smoothed_async (SkyImageData *image, const SkyParams *params, SkyMethod method,
                                 SkyBackend backend, SkyStep until, const char *kernel,
                                 SkyRun *previous, GCancellable *cancellable,
                                 GAsyncReadyCallback callback, gpointer user_data)
{
  RunInput *in = g_new0 (RunInput, 1);

  in->kernel = g_strdup (kernel);
  in->image = sky_image_data_ref (image);
  in->params = *params;
  in->method = method;
  in->backend = backend;
  in->until = until;
  in->previous = previous ? sky_run_ref (previous) : NULL;
  /* One source tag for both, which finish checks. */
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

gboolean
sky_run_write_catalogue (const SkyRun *run, const char *path, GError **error)
{
  SkyResult res = { 0 };
  SkyRunInfo info = { 0 };
  SkyExport ex;
  int ret;

  res.nx = run->image->image.nx;
  res.ny = run->image->image.ny;
  res.stats = run->stats;
  res.threshold_value = run->threshold_value;
  res.mask = run->mask;
  res.labels = run->labels;
  res.nsources = run->nsources;
  res.catalogue = run->catalogue;   /* borrowed: res is not cleared */
  res.times = run->cpu;
  /* The local method's: its columns and provenance. */
  res.method = run->method;
  res.noise_scale = run->stages.result.noise_scale;
  res.nislands = run->stages.result.nislands;
  res.ndeblended = run->stages.result.ndeblended;
  info.image = &run->image->image;
  info.params = &run->params;
  info.backend = run->backend == SKY_BACKEND_GPU && run->gpu_fault == NULL ? "gpu" : "cpu";
  ret = sky_export_init (&ex, &info, &res);
  if (ret == SKY_OK)
    ret = sky_export_write (path, sky_catalogue_format_for_path (path), &ex);
  sky_export_clear (&ex);
  if (ret != SKY_OK)
    {
      g_propagate_error (error, sky_ui_error_new_from_status (ret));
      return FALSE;
    }
  return TRUE;
}
