/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-runner.h: the one pipeline runner, below every front end (the CLI,
 * the app, later Python) and above the backends it calls (src/cpu, and
 * src/gpu through SkyGpuBackend). Plain C11 with POSIX threads: no GLib.
 *
 * A run takes a method's steps up to one of them on one image. It reuses
 * what an earlier run of the same image computed where the parameters each
 * step reads are unchanged (moving the threshold does not clip again), takes
 * its large buffers from a process-wide pool, and where the GPU fails (no
 * device, out of memory, a lost device) finishes on the CPU and says why.
 */
#ifndef SKY_RUNNER_H
#define SKY_RUNNER_H

#include "sky-core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum SkyBackend {
  SKY_BACKEND_CPU,
  SKY_BACKEND_GPU,      /* the device runs every step in one go */
  SKY_BACKEND_BOTH,     /* the CPU's results, checked against the GPU's */
  SKY_BACKEND_COUNT
} SkyBackend;

const char *sky_backend_name (SkyBackend backend);    /* "cpu", "gpu", "both"; "" */
int sky_backend_from_name (const char *name);          /* -1 if unknown */

/* --------------------------------------------------------------- buffers */

/* A large buffer (a mask, a label image) shared by reference between the
 * runs that reuse it. When the last reference goes, it returns to a small
 * process-wide pool and goes to the next run that asks for the same size:
 * a fresh 16 MiB label image costs thousands of first-touch page faults. */
typedef struct SkyBuffer SkyBuffer;

/* A buffer of size bytes, from the pool where one fits, else new
 * (sky_alloc_large); contents undefined. NULL when out of memory. */
SkyBuffer *sky_buffer_new (size_t size);

/* Takes data (from sky_alloc_large or malloc, size bytes) into a buffer,
 * or frees it and returns NULL when out of memory. Unlike a pooled
 * buffer it is freed with its last reference, never handed to another
 * run: a GPU run's downloads are named by their address to the app's
 * view (which may then read the device's copy), so that address must not
 * come back holding another run's results. */
SkyBuffer *sky_buffer_adopt (void *data, size_t size);

SkyBuffer *sky_buffer_ref (SkyBuffer *buf);
void sky_buffer_unref (SkyBuffer *buf);   /* NULL is allowed */
void *sky_buffer_data (const SkyBuffer *buf);

/* ------------------------------------------------------------------- GPU */

/* How the runner reaches a GPU. The default (sky_gpu_backend_default)
 * owns a process-wide device context behind a lock; a front end that
 * shares the device with more (the app's display reads its buffers) gives
 * its own. A build without CUDA links a default that only says why. */
typedef struct SkyGpuBackend {
  /* SKY_OK when a device can run the steps, why then describing it;
   * else SKY_ERR_UNAVAILABLE with the reason in why. */
  int (*available) (void *data, char *why, size_t why_size);
  /* Runs every step of params' method on the device into res (zeroed by
   * the caller), timed as a benchmark is (sky_gpu_run_best): one warm-up
   * run, then the best of repeat runs from page-locked memory; then the
   * mask and the labels of the last come home, timed apart
   * (times->outputs). keep says whether res's mask and labels will be the
   * run's (the caller may then show them from the device). SKY_OK, or a
   * status with sky_last_error(). */
  int (*run) (void *data, const SkyImage *img, const SkyParams *params, int keep, int repeat,
              SkyResult *res, SkyGpuTimes *times);
  /* Checks res against ref as docs/contract.md says; the number of failed
   * checks, what they are in what. */
  int (*compare) (void *data, const SkyImage *img, const SkyResult *ref, const SkyResult *res,
                  char *what, size_t what_size);
  void *data;
  /* The local method's background and rms maps on the device, equal to
   * the CPU's bit for bit, brought home into background and rms (nx * ny
   * floats each), timed as run is (one warm-up, the best of repeat:
   * times->ms[SKY_STEP_BACKGROUND] the kernels, the upload and download
   * apart). NULL where the backend has none: the CPU then makes them, and
   * the run says why (gpu_fault). */
  int (*local_maps) (void *data, const SkyImage *img, const SkyParams *params, int repeat,
                     float *background, float *rms, SkyGpuTimes *times);
  /* The local method on the device, timed as run is: every step where
   * background is NULL, else flood, deblend and measure from the maps
   * (nx * ny floats each on the host: background, rms, and the filtered
   * detection image or NULL). res gets the mask, labels, catalogue and
   * island counts. NULL where the backend has none: local_maps, if any,
   * makes the maps and the CPU the rest; else the CPU runs every step and
   * gpu_fault says why. */
  int (*run_local) (void *data, const SkyImage *img, const SkyParams *params,
                    const float *background, const float *rms, const float *snr, int repeat,
                    SkyResult *res, SkyGpuTimes *times);
} SkyGpuBackend;

const SkyGpuBackend *sky_gpu_backend_default (void);

/* ------------------------------------------------------------------ runs */

/* What a run holds, step by step, up to `done`. result is the usual
 * SkyResult (its mask and labels live in the buffers below, its times are
 * the CPU's); hand &stages->result to the writers, never clear it alone.
 * Immutable once made (later runs read it and share its buffers), but for
 * the mask and labels that sky_stages_give_back hands to the next run. */
typedef struct SkyStages {
  const SkyImage *image;     /* borrowed: the image measured */
  const SkyImage *detect;    /* borrowed: the image clipped and segmented */
  SkyParams params;
  SkyMethod method;          /* also result.method */
  SkyBackend backend;
  SkyStep done;              /* the last step whose result is here */
  SkyStep kept;              /* the last step taken from the earlier run
                              * (SKY_STEP_NONE: none was) */

  SkyResult result;          /* statistics, threshold, mask, labels, catalogue */
  int cpu_runs;              /* result.times are each step's best of this
                              * many CPU runs (0: no CPU step ran) */
  SkyBuffer *mask_buffer, *labels_buffer;
  /* The local method: its matched filter (borrowed, NULL for none), the
   * maps given in place of the computed ones (borrowed, copied by its
   * background step), and what its steps hand on (sky-cpu.h). */
  const SkyKernel *filter;
  const float *given_background, *given_rms;
  struct SkyLocalState *local;

  int has_gpu;               /* the GPU times below are valid */
  /* The steps the GPU computed, a bit (1u << step) each: every step of the
   * lesson's method; of the local method the background alone, its maps
   * brought home for the CPU's detect, flood, deblend and measure, or
   * (run_local) every step, or the detection's from the CPU's maps. */
  unsigned gpu_steps;
  SkyStepTimes gpu_kernel;   /* ms, the kernels alone */
  SkyStepTimes gpu_total;    /* ms, with the upload in the first step and
                              * the download in the last */
  SkyGpuTimes gpu_times;     /* the device's own figures: best of
                              * gpu_times.runs after a warm-up run, and
                              * the mask and labels' download apart */
  int agree[SKY_STEP_COUNT]; /* BOTH: the GPU's result equals the CPU's */
  char *gpu_note;            /* BOTH: what differs, or NULL */
  char *gpu_fault;           /* the GPU failed and the CPU finished: why, or NULL */
} SkyStages;

/* The GPU's timed runs when a request names none: as many as the
 * figures of skysift-cli find --repeat 10, so that the two compare. */
#define SKY_RUN_GPU_REPEAT 10

/* What to run. */
typedef struct SkyRunRequest {
  const SkyImage *image;     /* measured; also clipped and segmented... */
  const SkyImage *detect;    /* ...unless this is set (a smoothed copy;
                              * CPU only); NULL: image */
  const SkyParams *params;
  SkyMethod method;          /* 0: the lesson's */
  SkyBackend backend;
  SkyStep until;             /* the last step to run */
  const SkyKernel *filter;   /* local: the matched filter, or NULL */
  const float *background, *rms; /* local: given maps (nx * ny), or NULL */
  const SkyStages *previous; /* an earlier run to reuse, or NULL */
  const SkyGpuBackend *gpu;  /* NULL: sky_gpu_backend_default () */
  int gpu_repeat;            /* the GPU's timed runs after its warm-up;
                              * 0: SKY_RUN_GPU_REPEAT */
  int cpu_repeat;            /* the CPU's runs of the steps it computes,
                              * each step's time its best (a ratio to the
                              * GPU's best of gpu_repeat wants as many);
                              * 0 or 1: one run */
  /* Asked between steps; nonzero stops the run with SKY_ERR_CANCELLED. */
  int (*cancelled) (void *data);
  void *cancel_data;
} SkyRunRequest;

/* The last step of previous that req would compute again the same way
 * (SKY_STEP_NONE when there is none, or another image or backend): the
 * step before the first one whose parameters changed. */
SkyStep sky_run_valid_step (const SkyStages *previous, const SkyRunRequest *req);

/* Whether previous already holds everything req asks for, computed with
 * the same parameters: the caller may then use previous as it is. */
int sky_run_is_current (const SkyStages *previous, const SkyRunRequest *req);

/* Gives back to the buffer pool the mask and labels of previous that a
 * run of req will compute anew (none where previous already answers req),
 * so that the run takes them instead of fresh pages: without this, a front
 * end that shows previous until the next run is done holds two sets at
 * once (2.5 GiB at 16384 x 16384). Call it before sky_run, once nothing
 * reads those arrays any more. previous keeps its statistics, catalogue
 * and times; its result's mask and labels become NULL, and no later run
 * keeps a step whose buffer is gone. Returns the bytes given back. */
size_t sky_stages_give_back (SkyStages *previous, const SkyRunRequest *req);

/* Runs req into out (which it zeroes first). SKY_OK; SKY_ERR_CANCELLED
 * when asked to stop; another status with sky_last_error() when a CPU step
 * failed. A GPU that fails is no failure: the CPU does the work and
 * out->gpu_fault says why (the caller tells the person). The GPU alone
 * runs every step of the method whatever req->until says (of the local
 * method, with given maps or a matched filter, the CPU makes the maps and
 * the device the rest; a backend with local_maps alone makes the maps and
 * the CPU the rest: out->gpu_steps says which ran where). Clear out with
 * sky_stages_clear, also after a failure. */
int sky_run (const SkyRunRequest *req, SkyStages *out);

void sky_stages_clear (SkyStages *stages);

#ifdef __cplusplus
}
#endif

#endif /* SKY_RUNNER_H */
