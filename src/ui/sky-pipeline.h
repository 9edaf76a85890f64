/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-pipeline.h: the app's runs of the steps, on a worker thread.
 *
 * A SkyRun is the outcome of running the steps up to one of them on one
 * image with one set of parameters (immutable, but for the arrays that
 * sky_run_give_back hands to the next run): the background statistics and
 * their histogram, the mask, the labels and the catalogue, each step's time.
 * The runner (src/pipeline, sky-runner.h) does the work: it reuses what an
 * earlier run of the same image computed with the same parameters (moving
 * the threshold does not clip again), pools the buffers and finishes on the
 * CPU where the GPU fails. This wraps it in a GTask and a reference count,
 * and adds what only the app shows (the clip panel's histogram).
 */
#pragma once

#include <gio/gio.h>

#include "sky-core.h"
#include "sky-image-data.h"
#include "sky-runner.h"

G_BEGIN_DECLS

/* Whether the backend can run here; if not, *reason (free it) says why. */
gboolean sky_backend_available (SkyBackend backend, char **reason);

/* A one-line description of the GPU in use, or why there is none. */
char *sky_backend_gpu_description (void);

#define SKY_CLIP_HIST_BINS 160

typedef struct _SkyRun {
  SkyImageData *image;
  SkyStages stages;          /* what the runner made; the fields below show it */

  SkyParams params;
  SkyBackend backend;
  SkyStep done;              /* the last step whose result is here */

  SkyClipStats stats;
  double threshold_value;    /* NAN when flat */
  /* Pixel values between hist_lo and hist_hi, in SKY_CLIP_HIST_BINS bins:
   * the clip panel's histogram, with the median and the clipping bounds. */
  double hist_lo, hist_hi;
  guint32 hist[SKY_CLIP_HIST_BINS];

  guint8 *mask;              /* nx * ny, after segment */
  gint32 *labels;            /* nx * ny, after label */
  gint64 nsources;
  SkyCatalogue catalogue;    /* after measure */

  SkyStepTimes cpu;          /* ms; a reused step keeps the time it took then */
  gboolean has_gpu;          /* GPU figures below are valid */
  SkyStepTimes gpu_kernel;   /* ms, the kernels alone */
  SkyStepTimes gpu_total;    /* ms, with transfers */
  gboolean agree[SKY_STEP_COUNT]; /* GPU result equals CPU, per step */
  const char *gpu_note;      /* why there are no GPU figures, or NULL */
  const char *gpu_fault;     /* the GPU failed and the CPU finished: why, or NULL */
} SkyRun;

#define SKY_TYPE_RUN (sky_run_get_type ())
SKY_DECLARE_SHARED_TYPE (SkyRun, sky_run)

/* Before a run of run's image with these inputs: gives the mask and labels
 * of run that it will compute anew back to the runner's pool, for it to
 * take (sky_stages_give_back), and makes run->mask and run->labels NULL.
 * The one change a run sees after it is made: on the main thread, where
 * no other thread reads those arrays through run (a reader elsewhere
 * holds the buffers themselves). Returns the bytes given back. */
gsize sky_run_give_back (SkyRun *run, const SkyParams *params, SkyBackend backend,
                         SkyStep until);

/* What a run's GPU figures include, as the timings panel says it: how
 * many runs they are the best of, which transfers "GPU total" adds (those
 * skysift-cli find counts), and the mask and labels' download for the
 * view, kept apart. Free it. */
char *sky_run_describe_gpu (const SkyGpuTimes *times);

/* The CPU's time over the GPU's with transfers, for step (SKY_STEP_NONE:
 * the total), where both backends ran and their figures are the same
 * statistic (the best of as many runs, or one run each); otherwise FALSE
 * and *ratio is left alone. */
gboolean sky_run_speedup (const SkyRun *run, SkyStep step, double *ratio);

/* What the run's CPU figures are ("CPU: one run.", "CPU: best of 10
 * runs, as the GPU's."). Free it. */
char *sky_run_describe_cpu (const SkyRun *run);

/* Runs the steps up to `until` on a worker thread. previous (may be NULL)
 * lends what it holds that the same image and parameters would give again;
 * when it already holds everything up to `until`, it is what comes back.
 * Cancelling stops between steps. */
void sky_pipeline_run_async (SkyImageData *image, const SkyParams *params, SkyBackend backend,
                             SkyStep until, SkyRun *previous, GCancellable *cancellable,
                             GAsyncReadyCallback callback, gpointer user_data);
SkyRun *sky_pipeline_run_finish (GAsyncResult *result, GError **error);

/* Synchronous form, for tests and the worker itself. */
SkyRun *sky_pipeline_run (SkyImageData *image, const SkyParams *params, SkyBackend backend,
                          SkyStep until, SkyRun *previous, GCancellable *cancellable,
                          GError **error);

G_END_DECLS
