/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The GPU bridge: src/gpu's context, kept for the whole process and used by
 * one worker at a time, and the comparison of its results with the CPU's. */
#include "sky-pipeline-gpu.h"
#include "sky-display-path.h"
#include "sky-gpu.h"

#include <math.h>
#include <string.h>

static GMutex gpu_lock;         /* one run at a time on the context */
static SkyGpu *gpu_context;     /* made on first use */

typedef struct {
  gboolean ok;
  char what[512];
} Probe;

static gpointer
probe_device (gpointer data)
{
  Probe *probe = g_new0 (Probe, 1);
  probe->ok = sky_gpu_available (probe->what, sizeof probe->what) == SKY_OK;
  if (!probe->ok && probe->what[0] == '\0')
    g_strlcpy (probe->what, sky_last_error (), sizeof probe->what);
  return probe;
}

static const Probe *
probe (void)
{
  static GOnce once = G_ONCE_INIT;
  return g_once (&once, probe_device, NULL);
}

gboolean
sky_pipeline_gpu_available (char **reason)
{
  const Probe *p = probe ();
  if (!p->ok && reason)
    *reason = g_strdup_printf ("No GPU to run on: %s", p->what);
  return p->ok;
}

char *
sky_pipeline_gpu_describe (void)
{
  const Probe *p = probe ();
  return p->ok ? g_strdup (p->what) : g_strdup_printf ("none: %s", p->what);
}

static gboolean
gpu_failed (int ret, GError **error)
{
  if (ret == SKY_OK)
    return FALSE;
  g_set_error (error, SKY_UI_ERROR, ret, "GPU backend: %s", sky_last_error ());
  return TRUE;
}

/* Runs the four steps on the device into res, downloading the mask and the
 * labels (the view draws them; the comparison checks them). publish: the
 * run's host mask and labels become a SkyRun's, so the view may fill its
 * textures from the device buffers that hold the same results (CUDA/GL
 * interop); otherwise, or after a failure, the view is told the device
 * holds nothing it shows. Both under the lock, before anything else runs
 * on the context. */
static gboolean
run_on_device (SkyRun *run, SkyResult *res, SkyGpuTimes *times, gboolean publish,
               GError **error)
{
  g_autoptr (GMutexLocker) locker = g_mutex_locker_new (&gpu_lock);
  int ret = SKY_OK;

  if (gpu_context == NULL)
    ret = sky_gpu_new (&gpu_context);
  if (ret == SKY_OK)
    ret = sky_gpu_run_on (gpu_context, &run->image->image, &run->params,
                          SKY_GPU_WANT_MASK | SKY_GPU_WANT_LABELS, res, times);
  if (gpu_context != NULL)
    {
      gboolean shown = publish && ret == SKY_OK;
      sky_display_publish (gpu_context, &gpu_lock, shown ? res->mask : NULL,
                           shown ? res->labels : NULL);
    }
  return !gpu_failed (ret, error);
}

/* Kernel time of each step, and the same with the transfers: the upload
 * counts to clip, the first step, and the download to measure, the last. */
static void
set_gpu_times (SkyRun *run, const SkyResult *res, const SkyGpuTimes *t)
{
  run->has_gpu = TRUE;
  run->gpu_kernel = (SkyStepTimes) { t->clip, t->segment, t->label, t->measure, t->kernels };
  run->gpu_total = (SkyStepTimes) { t->upload + t->clip, t->segment, t->label,
                                    t->measure + t->download, t->total };
}

static GBytes *
take_buffer (void **p, gsize size)
{
  void *data = g_steal_pointer (p);
  return data ? g_bytes_new_with_free_func (data, size, free, data) : NULL;
}

gboolean
sky_pipeline_gpu_fill (SkyRun *run, GCancellable *cancellable, GError **error)
{
  gsize npix = (gsize) (run->image->image.nx * run->image->image.ny);
  SkyResult res = { 0 };
  SkyGpuTimes times = { 0 };

  if (g_cancellable_set_error_if_cancelled (cancellable, error)
      || !run_on_device (run, &res, &times, TRUE, error))
    {
      sky_result_clear (&res);
      return FALSE;
    }
  run->stats = res.stats;
  run->threshold_value = res.threshold_value;
  run->mask_bytes = take_buffer ((void **) &res.mask, npix);
  run->mask = run->mask_bytes ? (guint8 *) g_bytes_get_data (run->mask_bytes, NULL) : NULL;
  run->labels_bytes = take_buffer ((void **) &res.labels, npix * sizeof (gint32));
  run->labels = run->labels_bytes ? (gint32 *) g_bytes_get_data (run->labels_bytes, NULL) : NULL;
  run->nsources = res.nsources;
  run->catalogue = res.catalogue;
  memset (&res.catalogue, 0, sizeof res.catalogue);
  set_gpu_times (run, &res, &times);
  run->done = SKY_STEP_MEASURE;
  sky_result_clear (&res);
  return TRUE;
}

static gboolean
close_rel (double a, double b, double tol)
{
  return a == b || fabs (a - b) <= tol * MAX (fabs (a), fabs (b));
}

gboolean
sky_pipeline_gpu_check (SkyRun *run, GCancellable *cancellable, GError **error)
{
  const SkyImage *img = &run->image->image;
  gsize npix = (gsize) (img->nx * img->ny);
  SkyResult res = { 0 };
  SkyGpuTimes times = { 0 };
  GString *note = g_string_new (NULL);

  if (g_cancellable_set_error_if_cancelled (cancellable, error)
      || !run_on_device (run, &res, &times, FALSE, error))
    {
      sky_result_clear (&res);
      g_string_free (note, TRUE);
      return FALSE;
    }
  set_gpu_times (run, &res, &times);

  if (run->done >= SKY_STEP_CLIP)
    {
      run->agree[SKY_STEP_CLIP] = close_rel (run->stats.median, res.stats.median, 1e-6)
                                  && close_rel (run->stats.sigma, res.stats.sigma, 1e-6)
                                  && run->stats.iterations == res.stats.iterations
                                  && run->stats.n == res.stats.n;
      if (!run->agree[SKY_STEP_CLIP])
        g_string_append_printf (note, "clip: CPU median %.9g sigma %.9g (%d passes), GPU %.9g "
                                "%.9g (%d). ", run->stats.median, run->stats.sigma,
                                run->stats.iterations, res.stats.median, res.stats.sigma,
                                res.stats.iterations);
    }
  if (run->done >= SKY_STEP_SEGMENT)
    {
      run->agree[SKY_STEP_SEGMENT] = res.mask && memcmp (run->mask, res.mask, npix) == 0;
      if (!run->agree[SKY_STEP_SEGMENT])
        g_string_append (note, "segment: the masks differ. ");
    }
  if (run->done >= SKY_STEP_LABEL)
    {
      run->agree[SKY_STEP_LABEL] = res.labels && run->nsources == res.nsources
                                   && memcmp (run->labels, res.labels, npix * 4) == 0;
      if (!run->agree[SKY_STEP_LABEL])
        g_string_append_printf (note, "label: %" G_GINT64_FORMAT " sources on the CPU, %"
                                G_GINT64_FORMAT " on the GPU, or other numbers. ",
                                run->nsources, (gint64) res.nsources);
    }
  if (run->done >= SKY_STEP_MEASURE)
    {
      SkyResult cpu = { 0 };
      char what[512];

      cpu.nx = img->nx;
      cpu.ny = img->ny;
      cpu.stats = run->stats;
      cpu.threshold_value = run->threshold_value;
      cpu.mask = run->mask;
      cpu.labels = run->labels;
      cpu.nsources = run->nsources;
      cpu.catalogue = run->catalogue;
      run->agree[SKY_STEP_MEASURE] = sky_result_compare (img, &cpu, &res, what, sizeof what) == 0;
      if (!run->agree[SKY_STEP_MEASURE])
        g_string_append_printf (note, "measure: %s", what);
    }
  g_free (run->gpu_note);
  run->gpu_note = note->len ? g_string_free (note, FALSE) : (g_string_free (note, TRUE), NULL);
  sky_result_clear (&res);
  return TRUE;
}

gboolean
sky_pipeline_gpu_convolve (gboolean f64, const void *in, gint64 nx, gint64 ny,
                           const SkyKernel *kernel, SkyConvolveMode mode, void *out2d,
                           const void *v, gint64 m, void *out1d, double times[4],
                           guint64 *device_output, GError **error)
{
  static guint64 last_output;   /* numbers of kept outputs; under gpu_lock */
  g_autoptr (GMutexLocker) locker = NULL;
  SkyGpuConvolveTimes t2 = { 0 }, t1 = { 0 };
  char *reason = NULL;
  int ret = SKY_OK;

  *device_output = 0;
  if (!sky_pipeline_gpu_available (&reason))
    {
      g_set_error_literal (error, SKY_UI_ERROR, SKY_ERR_UNAVAILABLE, reason);
      g_free (reason);
      return FALSE;
    }
  locker = g_mutex_locker_new (&gpu_lock);
  if (gpu_context == NULL)
    ret = sky_gpu_new (&gpu_context);
  if (ret == SKY_OK)
    ret = f64 ? sky_gpu_convolve2d_f64 (gpu_context, in, nx, ny, kernel, mode,
                                        SKY_CONVOLVE_AUTO, out2d, &t2)
              : sky_gpu_convolve2d_f32 (gpu_context, in, nx, ny, kernel, mode,
                                        SKY_CONVOLVE_AUTO, out2d, &t2);
  /* The output the context now keeps (or none), told to the view under
   * the lock, as a run's results are; the 1D convolution leaves it. */
  if (gpu_context != NULL)
    {
      *device_output = ret == SKY_OK ? ++last_output : 0;
      sky_display_publish_convolved (gpu_context, &gpu_lock, *device_output);
    }
  if (ret == SKY_OK)
    ret = f64 ? sky_gpu_convolve1d_f64 (gpu_context, in, nx * ny, v, m, out1d, &t1)
              : sky_gpu_convolve1d_f32 (gpu_context, in, nx * ny, v, m, out1d, &t1);
  if (gpu_failed (ret, error))
    return FALSE;
  times[0] = t2.kernel_ms;
  times[1] = t2.total_ms;
  times[2] = t1.kernel_ms;
  times[3] = t1.total_ms;
  return TRUE;
}
