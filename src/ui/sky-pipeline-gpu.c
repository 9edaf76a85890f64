/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The GPU bridge: src/gpu's context, kept for the whole process and used by
 * one worker at a time, shared by the runner's runs (as their
 * SkyGpuBackend), the Convolution lab and the view's CUDA/GL interop. */
#include "sky-pipeline-gpu.h"
#include "sky-display-path.h"
#include "sky-gpu.h"

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
  g_set_error (error, SKY_UI_ERROR, sky_ui_error_from_status (ret), "GPU backend: %s",
               sky_last_error ());
  return TRUE;
}

static int
bridge_available (void *data, char *why, size_t why_size)
{
  const Probe *p = probe ();

  g_strlcpy (why, p->what, why_size);
  return p->ok ? SKY_OK : SKY_ERR_UNAVAILABLE;
}

/* Runs the steps on the device into res as every front end times them
 * (a warm-up run, the best of repeat from page-locked memory), then brings
 * the mask and the labels home once (the view draws them; the comparison
 * checks them), timed apart. keep: the
 * run's host mask and labels become a SkyRun's, so the view may fill its
 * textures from the device buffers that hold the same results (CUDA/GL
 * interop); otherwise, or after a failure, the view is told the device
 * holds nothing it shows. Both under the lock, before anything else runs
 * on the context. */
static int
bridge_run (void *data, const SkyImage *img, const SkyParams *params, int keep, int repeat,
            SkyResult *res, SkyGpuTimes *times)
{
  g_autoptr (GMutexLocker) locker = g_mutex_locker_new (&gpu_lock);
  int ret = SKY_OK;

  if (gpu_context == NULL)
    ret = sky_gpu_new (&gpu_context);
  if (ret == SKY_OK)
    ret = sky_gpu_run_best (gpu_context, img, params, SKY_GPU_WANT_MASK | SKY_GPU_WANT_LABELS,
                            repeat, res, times);
  if (gpu_context != NULL)
    {
      gboolean shown = keep && ret == SKY_OK;
      sky_display_publish (gpu_context, &gpu_lock, shown ? res->mask : NULL,
                           shown ? res->labels : NULL);
    }
  return ret;
}

/* The local method's background and rms maps on the device, timed as the
 * runner's default times them (sky_gpu_local_maps_best), on this
 * bridge's context under its lock. The device then holds
 * none of a run's mask and labels for the view: it is told so. */
static int
bridge_local_maps (void *data, const SkyImage *img, const SkyParams *params, int repeat,
                   float *background, float *rms, SkyGpuTimes *times)
{
  g_autoptr (GMutexLocker) locker = g_mutex_locker_new (&gpu_lock);
  int ret = SKY_OK;

  memset (times, 0, sizeof *times);
  if (gpu_context == NULL)
    ret = sky_gpu_new (&gpu_context);
  if (ret == SKY_OK)
    ret = sky_gpu_local_maps_best (gpu_context, img, params, repeat, background, rms, times);
  if (gpu_context != NULL)
    sky_display_publish (gpu_context, &gpu_lock, NULL, NULL);
  return ret;
}

/* The local method on the device, every step or the detection's from
 * the CPU's maps, timed as the runner's default times it
 * (sky_gpu_run_local_best), on this bridge's context under its lock. Its
 * mask and labels are not where the view's interop reads a run's (the
 * lesson's buffers), so the view is told the device holds nothing it
 * shows: it fills its textures from the host. */
static int
bridge_run_local (void *data, const SkyImage *img, const SkyParams *params,
                  const float *background, const float *rms, const float *snr, int repeat,
                  SkyResult *res, SkyGpuTimes *times)
{
  g_autoptr (GMutexLocker) locker = g_mutex_locker_new (&gpu_lock);
  SkyGpuDetectInput in = { background, rms, snr };
  int ret = SKY_OK;

  if (gpu_context == NULL)
    ret = sky_gpu_new (&gpu_context);
  if (ret == SKY_OK)
    ret = sky_gpu_run_local_best (gpu_context, img, params, background != NULL ? &in : NULL,
                                  repeat, res, times);
  if (gpu_context != NULL)
    sky_display_publish (gpu_context, &gpu_lock, NULL, NULL);
  return ret;
}

static int
bridge_compare (void *data, const SkyImage *img, const SkyResult *ref, const SkyResult *res,
                char *what, size_t what_size)
{
  return sky_result_compare (img, ref, res, what, what_size);
}

const SkyGpuBackend *
sky_pipeline_gpu_backend (void)
{
  static const SkyGpuBackend bridge = { bridge_available, bridge_run, bridge_compare, NULL,
                                        bridge_local_maps, bridge_run_local };
  return &bridge;
}

gboolean
sky_pipeline_gpu_convolution_demo (SkyConvolutionDemo *d, int repeat, guint64 *device_output,
                                   GError **error)
{
  static guint64 last_output;   /* numbers of kept outputs; under gpu_lock */
  g_autoptr (GMutexLocker) locker = NULL;
  char *reason = NULL;
  int ret = SKY_OK;

  *device_output = 0;
  if (!sky_pipeline_gpu_available (&reason))
    {
      g_set_error_literal (error, SKY_UI_ERROR, SKY_UI_ERROR_UNAVAILABLE, reason);
      g_free (reason);
      return FALSE;
    }
  locker = g_mutex_locker_new (&gpu_lock);
  if (gpu_context == NULL)
    ret = sky_gpu_new (&gpu_context);
  if (ret == SKY_OK)
    ret = sky_gpu_convolution_demo (gpu_context, d, SKY_CONVOLVE_AUTO, repeat);
  /* The output the context now keeps (the last 2D convolution's; the 1D
   * ones leave it), or none, told to the view under the lock, as a run's
   * results are. */
  if (gpu_context != NULL)
    {
      *device_output = ret == SKY_OK ? ++last_output : 0;
      sky_display_publish_convolved (gpu_context, &gpu_lock, *device_output);
    }
  return !gpu_failed (ret, error);
}
