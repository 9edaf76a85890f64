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

/* The local method's maps as images the view can show: the background,
 * the rms and the image minus the background, each made when first asked
 * for (on a worker: a map with its display statistics and pyramid is some
 * 5.3 bytes a pixel, which a person who never looks at it should not pay),
 * from the run's mesh, kept here. Shared, read-only but for the maps made,
 * by the runs that keep the same mesh (sky-pipeline-background.c). */
typedef enum {
  SKY_MAP_BACKGROUND,
  SKY_MAP_RMS,
  SKY_MAP_RESIDUAL,     /* the image minus the background */
  SKY_MAP_COUNT
} SkyMapKind;

typedef struct _SkyRunMaps SkyRunMaps;
struct _SkyRunMaps {
  int box, filter;           /* the mesh: boxes of box pixels, filtered over filter boxes */
  gint64 nbx, nby;
  double global_back, global_rms;  /* the mesh's medians */
  /* private */
  SkyImageData *image;
  struct SkyBackgroundMesh *mesh;  /* a copy: it outlives the run that made it */
  float *background, *rms;         /* or the whole maps (the GPU's), copied */
  SkyParams params;                /* or neither: the mesh made when first asked for */
  GMutex lock;
  SkyImageData *made[SKY_MAP_COUNT];
};

/* The map if it is made, else NULL (no reference given). */
SkyImageData *sky_run_maps_peek (SkyRunMaps *maps, SkyMapKind kind);
/* The map, made now if it is not yet (on a worker: it reads the whole
 * image); NULL with error when out of memory. No reference given. */
SkyImageData *sky_run_maps_make (SkyRunMaps *maps, SkyMapKind kind, GError **error);

SKY_DECLARE_SHARED_TYPE (SkyRunMaps, sky_run_maps)

/* The lesson's method: the mesh background (boxes of box pixels, median
 * filtered over filter boxes), made beside the clip to say whether its
 * one threshold lies below the local background (sky_run_background_above). */
typedef struct _SkyRunMesh {
  int box, filter;
  gint64 n;                  /* boxes */
  float *back;               /* n, the filtered mesh's background */
} SkyRunMesh;

SKY_DECLARE_SHARED_TYPE (SkyRunMesh, sky_run_mesh)

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
  gint64 *by_sum;            /* after measure: catalogue indices, brightest sum
                              * first, the markers' drawing order (sorted on
                              * the worker: 230,776 sources take the main
                              * loop some 100 ms) */

  SkyStepTimes cpu;          /* ms; a reused step keeps the time it took then */
  gboolean has_gpu;          /* GPU figures below are valid */
  SkyStepTimes gpu_kernel;   /* ms, the kernels alone */
  SkyStepTimes gpu_total;    /* ms, with transfers */
  gboolean agree[SKY_STEP_COUNT]; /* GPU result equals CPU, per step */
  const char *gpu_note;      /* why there are no GPU figures, or NULL */
  const char *gpu_fault;     /* the GPU failed and the CPU finished: why, or NULL */

  SkyMethod method;
  SkyRunMaps *maps;          /* local, after background: the maps to show */
  SkyRunMesh *mesh;          /* lesson, after clip: the mesh background, set once
                              * (sky_run_get_mesh, sky_run_make_mesh) */
  /* Steps asked of the GPU that the CPU ran because the GPU has no such
   * steps (the local method's after its background maps, or all of a
   * method the runner refuses on the GPU), said for a person, or NULL.
   * Never silent: the window shows it. A GPU that failed is gpu_fault. */
  char *cpu_only;
  /* Detection smoothed (skysift-cli find --smooth): the kernel as typed
   * and, for the lesson's method, the copy clip and segment read, or for
   * the local method its matched filter; NULL: none. Shared with the runs
   * that reuse it. */
  struct _SkySmoothed *smoothed;
} SkyRun;

/* Which of run's steps the CPU ran although the GPU was asked (its
 * stages' gpu_steps lack them), as a sentence; NULL where the GPU ran
 * every step it was asked for, or failed (gpu_fault), or was not asked. */
char *sky_run_cpu_steps_text (const SkyRun *run);

/* Whether run holds step's result: step is one of its method's steps, at
 * or before the last done. */
gboolean sky_run_has (const SkyRun *run, SkyStep step);
/* Whether run holds a label image (the lesson's label, the local flood). */
gboolean sky_run_has_labels (const SkyRun *run);

/* The lesson's run's mesh, or NULL until it is made: sky_run_make_mesh
 * makes it (on a worker: it reads the whole image) and sets it once,
 * the one change a run sees after it is made besides give-backs. */
SkyRunMesh *sky_run_get_mesh (const SkyRun *run);
gboolean sky_run_make_mesh (SkyRun *run, GError **error);

/* The share of the mesh's boxes whose background lies above the lesson's
 * threshold (0 to 1), or -1 where it is not known (no mesh, no threshold).
 * Above SKY_BACKGROUND_ABOVE_SHARE the window offers the local method. */
double sky_run_background_above (const SkyRun *run);
#define SKY_BACKGROUND_ABOVE_SHARE 0.01

/* The background products of a new run, on the worker: the mesh of a
 * local run for its maps (none made yet); a lesson run's mesh where prev
 * holds it for the same image and mesh (else none yet). FALSE with error
 * when out of memory. */
gboolean sky_run_prepare_background (SkyRun *run, SkyRun *prev, GError **error);

/* The image convolved with a kernel of unit sum, for the lesson's
 * detection, or the kernel as the local method's matched filter. */
typedef struct _SkySmoothed {
  SkyImage image;            /* lesson: the smoothed pixels, no header */
  SkyKernel filter;          /* local (is_filter): the kernel its detect step applies */
  gboolean is_filter;
  char *kernel;              /* beam, lesson, gauss:SIGMA[:SIZE] or box:SIZE */
  double ms;                 /* the convolution's time (lesson), or the kernel's */
} SkySmoothed;

/* img convolved with kernel (beam, lesson, gauss:SIGMA[:SIZE], box:SIZE)
 * scaled to unit sum, as skysift-cli find --smooth makes it, into out. */
int sky_smooth_image (const SkyImage *img, const char *kernel, int nthreads, SkyImage *out);

/* Checks kernel against image (beam needs BMAJ, BMIN and a celestial WCS):
 * FALSE with error naming the kernel and why. */
gboolean sky_smooth_kernel_check (SkyImageData *image, const char *kernel, GError **error);

#define SKY_TYPE_RUN (sky_run_get_type ())
SKY_DECLARE_SHARED_TYPE (SkyRun, sky_run)

/* Before a run of run's image with these inputs: gives the mask and labels
 * of run that it will compute anew back to the runner's pool, for it to
 * take (sky_stages_give_back), and makes run->mask and run->labels NULL.
 * The one change a run sees after it is made: on the main thread, where
 * no other thread reads those arrays through run (a reader elsewhere
 * holds the buffers themselves). Returns the bytes given back. */
gsize sky_run_give_back (SkyRun *run, const SkyParams *params, SkyMethod method,
                         SkyBackend backend, SkyStep until);

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

/* Writes run's catalogue with the CLI's writers and the CLI's inputs, so
 * that the file is the one `skysift-cli find --csv` (--ecsv, --votable,
 * --regions: the name's extension chooses) writes for the same image and
 * parameters: the pixel columns, then sky positions and fluxes where the
 * header has them. Any thread (it makes its own WCS). FALSE with error
 * naming path where it cannot. */
gboolean sky_run_write_catalogue (const SkyRun *run, const char *path, GError **error);

/* Runs the steps up to `until` on a worker thread. previous (may be NULL)
 * lends what it holds that the same image and parameters would give again;
 * when it already holds everything up to `until`, it is what comes back.
 * Cancelling stops between steps. */
void sky_pipeline_run_async (SkyImageData *image, const SkyParams *params, SkyMethod method,
                             SkyBackend backend, SkyStep until, SkyRun *previous,
                             GCancellable *cancellable,
                             GAsyncReadyCallback callback, gpointer user_data);
SkyRun *sky_pipeline_run_finish (GAsyncResult *result, GError **error);

/* The same with smoothing kernel (as skysift-cli find --smooth takes it;
 * NULL: none): with the lesson's method, clip and segment on the image
 * smoothed by kernel and sources measured on the image itself, on the CPU
 * backend only; with the local method, kernel is its detect step's matched
 * filter (find --method local --smooth). The copy or kernel is made on the
 * worker, or taken from previous where it has the same. */
void sky_pipeline_run_smoothed_async (SkyImageData *image, const SkyParams *params,
                                      SkyMethod method, SkyBackend backend, SkyStep until,
                                      const char *kernel, SkyRun *previous,
                                      GCancellable *cancellable,
                                      GAsyncReadyCallback callback, gpointer user_data);

/* Synchronous forms, for tests and the worker itself. sky_pipeline_run
 * runs the lesson's method. A method whose steps the GPU does not have,
 * asked of the GPU or of both, runs on the CPU and says so (cpu_only). */
SkyRun *sky_pipeline_run_method (SkyImageData *image, const SkyParams *params, SkyMethod method,
                                 SkyBackend backend, SkyStep until, SkyRun *previous,
                                 GCancellable *cancellable, GError **error);
SkyRun *sky_pipeline_run_smoothed (SkyImageData *image, const SkyParams *params,
                                   SkyMethod method, SkyBackend backend, SkyStep until,
                                   const char *kernel, SkyRun *previous,
                                   GCancellable *cancellable, GError **error);
SkyRun *sky_pipeline_run (SkyImageData *image, const SkyParams *params, SkyBackend backend,
                          SkyStep until, SkyRun *previous, GCancellable *cancellable,
                          GError **error);

G_END_DECLS
