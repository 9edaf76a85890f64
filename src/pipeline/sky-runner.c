/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The runner: a method's steps up to one of them, reusing an earlier run,
 * on the CPU, the GPU or both, with the GPU's failures finished on the CPU. */
#include "sky-runner-private.h"
#include "sky-cpu.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const backend_names[SKY_BACKEND_COUNT] = { "cpu", "gpu", "both" };

const char *
sky_backend_name (SkyBackend backend)
{
  return backend >= 0 && backend < SKY_BACKEND_COUNT ? backend_names[backend] : "";
}

int
sky_backend_from_name (const char *name)
{
  for (int i = 0; name && i < SKY_BACKEND_COUNT; i++)
    if (strcmp (name, backend_names[i]) == 0)
      return i;
  return -1;
}

/* Where step stands in the method's order; -1 for SKY_STEP_NONE or a step
 * the method does not have. */
static int
position (const SkyStep *steps, int nsteps, SkyStep step)
{
  for (int k = 0; k < nsteps; k++)
    if (steps[k] == step)
      return k;
  return -1;
}

static const SkyImage *
detect_image (const SkyRunRequest *req)
{
  return req->detect ? req->detect : req->image;
}

SkyStep
sky_run_valid_step (const SkyStages *prev, const SkyRunRequest *req)
{
  const SkyStep *steps;
  int nsteps = sky_method_steps (req->method, &steps), done;
  SkyStep valid = SKY_STEP_NONE;

  if (prev == NULL || prev->image != req->image || prev->detect != detect_image (req)
      || prev->backend != req->backend || prev->method != req->method)
    return SKY_STEP_NONE;
  done = position (steps, nsteps, prev->done);
  for (int k = 0; k < nsteps && k <= done; k++)
    {
      const SkyStepDef *def = &sky_step_defs[steps[k]];

      if (def->params_differ (&prev->params, req->params)
          || (def->held != NULL && !def->held (prev)))
        break;
      valid = steps[k];
    }
  return valid;
}

int
sky_run_is_current (const SkyStages *prev, const SkyRunRequest *req)
{
  const SkyStep *steps;
  int nsteps = sky_method_steps (req->method, &steps);

  if (prev == NULL || position (steps, nsteps, sky_run_valid_step (prev, req))
                      < position (steps, nsteps, req->until))
    return 0;
  /* Nothing to compute, and nothing that shows differs either (the
   * threshold moves the clip histogram's line before segment has run). */
  for (int k = 0; k < nsteps; k++)
    if (sky_step_defs[steps[k]].params_differ (&prev->params, req->params))
      return 0;
  return 1;
}

size_t
sky_stages_give_back (SkyStages *prev, const SkyRunRequest *req)
{
  const SkyStep *steps;
  int nsteps = sky_method_steps (req->method, &steps);
  int keep = position (steps, nsteps, sky_run_valid_step (prev, req));
  int until = position (steps, nsteps, req->until);
  SkyStages kept = { 0 };
  size_t npix, given = 0;

  if (prev == NULL || sky_run_is_current (prev, req))
    return 0;
  npix = (size_t) (prev->result.nx * prev->result.ny);
  /* What req's run will take from prev: the buffers that the keep
   * functions of its kept steps reference (the GPU alone keeps none). */
  kept.params = *req->params;
  for (int k = 0; req->backend != SKY_BACKEND_GPU && k <= keep && k <= until
                  && sky_step_defs[steps[k]].keep; k++)
    sky_step_defs[steps[k]].keep (&kept, prev);
  if (prev->mask_buffer != NULL && prev->mask_buffer != kept.mask_buffer)
    {
      sky_buffer_unref (prev->mask_buffer);
      prev->mask_buffer = NULL;
      prev->result.mask = NULL;
      given += npix;
    }
  if (prev->labels_buffer != NULL && prev->labels_buffer != kept.labels_buffer)
    {
      sky_buffer_unref (prev->labels_buffer);
      prev->labels_buffer = NULL;
      prev->result.labels = NULL;
      given += npix * sizeof (int32_t);
    }
  sky_buffer_unref (kept.mask_buffer);
  sky_buffer_unref (kept.labels_buffer);
  return given;
}

void
sky_stages_clear (SkyStages *st)
{
  sky_buffer_unref (st->mask_buffer);
  sky_buffer_unref (st->labels_buffer);
  sky_catalogue_clear (&st->result.catalogue);
  free (st->result.background);
  free (st->result.rms);
  if (st->local != NULL)
    sky_local_state_clear (st->local);
  free (st->local);
  free (st->gpu_note);
  free (st->gpu_fault);
  memset (st, 0, sizeof *st);
  st->done = st->kept = SKY_STEP_NONE;
}

static int
cancelled (const SkyRunRequest *req)
{
  return req->cancelled != NULL && req->cancelled (req->cancel_data);
}

static char *
copy_text (const char *prefix, const char *text)
{
  size_t n = strlen (prefix) + strlen (text) + 1;
  char *s = malloc (n);

  if (s != NULL)
    snprintf (s, n, "%s%s", prefix, text);
  return s;
}

/* Kernel time of each step, and the same with the transfers: the upload
 * counts to the first step and the download to the last. */
static void
set_gpu_times (SkyStages *st, const SkyGpuTimes *t)
{
  const SkyStep *steps;
  int nsteps = sky_method_steps (st->method, &steps);

  st->has_gpu = 1;
  st->gpu_times = *t;
  for (int k = 0; k < nsteps; k++)
    {
      double with_transfers = t->ms[steps[k]];

      if (k == 0)
        with_transfers = t->upload + with_transfers;
      if (k == nsteps - 1)
        with_transfers = with_transfers + t->download;
      st->gpu_kernel.ms[steps[k]] = t->ms[steps[k]];
      st->gpu_total.ms[steps[k]] = with_transfers;
    }
  st->gpu_kernel.total = t->kernels;
  st->gpu_total.total = t->total;
}

/* The device's mask, labels and catalogue become the run's: its arrays
 * adopted as the run's buffers, res left without them. */
static void
take_gpu_result (SkyStages *st, SkyResult *res)
{
  size_t npix = (size_t) (st->image->nx * st->image->ny);

  sky_buffer_unref (st->mask_buffer);
  sky_buffer_unref (st->labels_buffer);
  st->mask_buffer = res->mask ? sky_buffer_adopt (res->mask, npix) : NULL;
  st->labels_buffer = res->labels ? sky_buffer_adopt (res->labels, npix * sizeof (int32_t))
                                  : NULL;
  res->mask = NULL;
  res->labels = NULL;
  st->result.mask = sky_buffer_data (st->mask_buffer);
  st->result.labels = sky_buffer_data (st->labels_buffer);
  st->result.nsources = res->nsources;
  sky_catalogue_clear (&st->result.catalogue);
  st->result.catalogue = res->catalogue;
  memset (&res->catalogue, 0, sizeof res->catalogue);
}

/* Both: each step the CPU has done (up to st->done) checked against the
 * device's result; what differs goes to gpu_note. */
static void
check_gpu_steps (SkyStages *st, const SkyResult *res, const SkyGpuBackend *gpu)
{
  const SkyStep *steps;
  int nsteps = sky_method_steps (st->method, &steps);
  int done = position (steps, nsteps, st->done);
  char note[2048] = "";

  for (int k = 0; k <= done; k++)
    st->agree[steps[k]] = sky_step_defs[steps[k]].agree (st, res, gpu, note, sizeof note);
  free (st->gpu_note);
  st->gpu_note = note[0] ? copy_text ("", note) : NULL;
}

/* The lesson's method, every step on the device. The GPU alone (take):
 * its results are taken as the run's. Both: the CPU's results stand up to
 * st->done, and each of those steps is checked against the device's. */
static int
lesson_gpu_run (SkyStages *st, const SkyGpuBackend *gpu, int repeat, int take)
{
  const SkyStep *steps;
  int nsteps = sky_method_steps (st->method, &steps);
  SkyResult res = { 0 };
  SkyGpuTimes times = { 0 };
  int ret = gpu->run (gpu->data, st->image, &st->params, take, repeat, &res, &times);

  if (ret != SKY_OK)
    {
      sky_result_clear (&res);
      return ret;
    }
  set_gpu_times (st, &times);
  for (int k = 0; k < nsteps; k++)
    st->gpu_steps |= 1u << steps[k];
  if (take)
    {
      take_gpu_result (st, &res);
      st->result.stats = res.stats;
      st->result.threshold_value = res.threshold_value;
      st->done = steps[nsteps - 1];
    }
  else
    check_gpu_steps (st, &res, gpu);
  sky_result_clear (&res);
  return SKY_OK;
}

/* The local method's maps for a device that does not make them itself:
 * the caller's maps, or a matched filter's detection image (the device
 * makes the unfiltered maps only). The whole maps, made from the mesh the
 * background step left where they were not given. NULL maps: the device
 * makes every step. */
static int
local_device_maps (SkyStages *st, const float **background, const float **rms,
                   const float **snr)
{
  const size_t n = (size_t) (st->image->nx * st->image->ny);

  *background = *rms = *snr = NULL;
  if (st->given_background == NULL && st->filter == NULL)
    return SKY_OK;
  if (st->result.background == NULL)
    {
      float *b = sky_alloc_large (n * sizeof *b), *r = sky_alloc_large (n * sizeof *r);
      int ret;
      if (b == NULL || r == NULL || st->local == NULL || st->local->mesh == NULL)
        {
          free (b);
          free (r);
          return sky_fail (b == NULL || r == NULL ? SKY_ERR_MEMORY : SKY_ERR_ARGUMENT,
                           "no background maps for the GPU");
        }
      ret = sky_cpu_background_rows (st->local->mesh, 0, st->image->ny, st->params.nthreads, b,
                                     r);
      st->result.background = b;
      st->result.rms = r;
      if (ret != SKY_OK)
        return ret;
    }
  *background = st->result.background;
  *rms = st->result.rms;
  *snr = st->local != NULL ? st->local->snr : NULL;
  return SKY_OK;
}

/* The steps the device ran of the local method: every one, or, where it
 * took the CPU's maps, the detection's. */
static void
set_local_gpu_steps (SkyStages *st, int took_maps)
{
  const SkyStep *steps;
  int nsteps = sky_method_steps (st->method, &steps);

  st->gpu_steps = 0;
  for (int k = 0; k < nsteps; k++)
    if (!took_maps || (steps[k] != SKY_STEP_BACKGROUND && steps[k] != SKY_STEP_DETECT))
      st->gpu_steps |= 1u << steps[k];
}

/* The local method on the device: every step, or, with given maps or a
 * matched filter (which the device does not make), flood, deblend and
 * measure from the maps the CPU's background and detect steps made (both:
 * the same maps as the CPU's). The GPU alone (take): its results are
 * taken as the run's. Both: the CPU's results stand up to st->done, and
 * each of those steps is checked against the device's. */
static int
local_gpu_run (SkyStages *st, const SkyGpuBackend *gpu, int repeat, int take)
{
  const SkyStep *steps;
  int nsteps = sky_method_steps (st->method, &steps);
  const float *background, *rms, *snr;
  SkyResult res = { 0 };
  SkyGpuTimes times = { 0 };
  int ret = local_device_maps (st, &background, &rms, &snr);

  if (ret == SKY_OK)
    ret = gpu->run_local (gpu->data, st->image, &st->params, background, rms, snr, repeat, &res,
                          &times);
  if (ret != SKY_OK)
    {
      sky_result_clear (&res);
      return ret;
    }
  if (take)
    {
      take_gpu_result (st, &res);
      st->result.nislands = res.nislands;
      st->result.ndeblended = res.ndeblended;
      st->done = steps[nsteps - 1];
      /* Steps the CPU ran (the maps, where the device took them made)
       * keep their CPU times; those the device ran are timed there. */
      if (background != NULL)
        {
          times.ms[SKY_STEP_BACKGROUND] = st->result.times.ms[SKY_STEP_BACKGROUND];
          times.ms[SKY_STEP_DETECT] = st->result.times.ms[SKY_STEP_DETECT];
        }
    }
  set_gpu_times (st, &times);
  if (!take)
    {
      res.method = SKY_METHOD_LOCAL;
      check_gpu_steps (st, &res, gpu);
    }
  sky_result_clear (&res);
  set_local_gpu_steps (st, background != NULL);
  return SKY_OK;
}

/* The local method's background step on the GPU: its figures, and the
 * steps after it on the CPU (set_gpu_times' upload and download belong to
 * this step alone). */
static void
set_local_gpu_times (SkyStages *st, const SkyGpuTimes *t)
{
  st->has_gpu = 1;
  st->gpu_times = *t;
  st->gpu_kernel.ms[SKY_STEP_BACKGROUND] = t->ms[SKY_STEP_BACKGROUND];
  st->gpu_total.ms[SKY_STEP_BACKGROUND] = t->total;
  st->gpu_kernel.total = t->kernels;
  st->gpu_total.total = t->total;
  st->gpu_steps = 1u << SKY_STEP_BACKGROUND;
}

/* The local method on the GPU: the background and rms maps made on the
 * device and brought home, where the CPU's steps read them as given maps.
 * On failure nothing is kept and the CPU makes its own. */
static int
local_gpu_maps (SkyStages *st, const SkyGpuBackend *gpu, int repeat)
{
  size_t n = (size_t) (st->image->nx * st->image->ny);
  SkyGpuTimes times = { 0 };
  int ret;

  if (gpu->local_maps == NULL)
    return sky_fail (SKY_ERR_UNAVAILABLE, "this GPU backend has no local method");
  st->result.background = sky_alloc_large (n * sizeof (float));
  st->result.rms = sky_alloc_large (n * sizeof (float));
  if (st->result.background == NULL || st->result.rms == NULL)
    ret = sky_fail (SKY_ERR_MEMORY, "no memory for the GPU's background maps");
  else
    ret = gpu->local_maps (gpu->data, st->image, &st->params, repeat, st->result.background,
                           st->result.rms, &times);
  if (ret != SKY_OK)
    {
      free (st->result.background);
      free (st->result.rms);
      st->result.background = st->result.rms = NULL;
      return ret;
    }
  set_local_gpu_times (st, &times);
  return SKY_OK;
}

/* Both, local method: the GPU's maps against the CPU's, bit for bit (NaN
 * equal to NaN), the CPU's made row by row from its mesh. with_steps: the
 * device's run of every step was checked already (local_gpu_run): its
 * figures stand, and the maps' verdict joins the background's. */
static int
local_gpu_check_maps (SkyStages *st, const SkyGpuBackend *gpu, int repeat, int with_steps)
{
  const int64_t nx = st->image->nx, ny = st->image->ny;
  size_t n = (size_t) (nx * ny);
  float *bkg = sky_alloc_large (n * sizeof (float)), *rms = sky_alloc_large (n * sizeof (float));
  float *row = malloc ((size_t) (2 * nx) * sizeof (float));
  SkyGpuTimes times = { 0 };
  int64_t bad = 0, first = -1;
  int ret;

  if (gpu->local_maps == NULL)
    ret = sky_fail (SKY_ERR_UNAVAILABLE, "this GPU backend has no local method");
  else if (bkg == NULL || rms == NULL || row == NULL)
    ret = sky_fail (SKY_ERR_MEMORY, "no memory for the GPU's background maps");
  else
    ret = gpu->local_maps (gpu->data, st->image, &st->params, repeat, bkg, rms, &times);
  if (ret == SKY_OK)
    {
      SkyLocalMaps maps = sky_local_maps (&st->result, st->local);
      for (int64_t y = 0; y < ny; y++)
        {
          sky_local_maps_window (&maps, 0, y, nx, y + 1, row, row + nx);
          for (int64_t x = 0; x < nx; x++)
            for (int m = 0; m < 2; m++)
              {
                float c = row[m * nx + x], g = (m ? rms : bkg)[y * nx + x];
                if (memcmp (&c, &g, sizeof c) != 0 && !(isnan (c) && isnan (g)))
                  {
                    if (first < 0)
                      first = y * nx + x;
                    bad++;
                  }
              }
        }
      if (!with_steps)
        {
          set_local_gpu_times (st, &times);
          free (st->gpu_note);
          st->gpu_note = NULL;
          st->agree[SKY_STEP_BACKGROUND] = 1;
        }
      st->agree[SKY_STEP_BACKGROUND] = st->agree[SKY_STEP_BACKGROUND] && bad == 0;
      if (bad > 0)
        {
          char note[256];
          char *joined;
          snprintf (note, sizeof note, "background: %lld map values differ, the first at x %lld "
                    "y %lld. ", (long long) bad, (long long) (first % nx),
                    (long long) (first / nx));
          joined = copy_text (st->gpu_note ? st->gpu_note : "", note);
          free (st->gpu_note);
          st->gpu_note = joined;
        }
    }
  free (bkg);
  free (rms);
  free (row);
  return ret;
}

/* The GPU failed with the message in sky_last_error(): the run goes on
 * without GPU figures and keeps why. */
static void
take_gpu_fault (SkyStages *st)
{
  free (st->gpu_fault);
  st->gpu_fault = copy_text ("GPU backend: ", sky_last_error ());
  st->has_gpu = 0;
  st->gpu_steps = 0;
}

/* A fresh run of req in st, nothing done yet. */
static void
stages_init (const SkyRunRequest *req, SkyStages *st)
{
  memset (st, 0, sizeof *st);
  st->image = req->image;
  st->detect = detect_image (req);
  st->params = *req->params;
  st->method = req->method;
  st->backend = req->backend;
  st->done = st->kept = SKY_STEP_NONE;
  st->result.method = req->method;
  st->filter = req->filter;
  st->given_background = req->background;
  st->given_rms = req->rms;
  st->result.noise_scale = 1.0;
  st->result.nx = req->image->nx;
  st->result.ny = req->image->ny;
  st->result.threshold_value = NAN;
}

static void
sum_total (SkyStages *st)
{
  st->result.times.total = 0;
  for (int s = 0; s < SKY_STEP_COUNT; s++)
    st->result.times.total += st->result.times.ms[s];
}

/* Takes from prev the steps up to position keep (and until), with their
 * times; then runs the rest up to until on the CPU, each timed. */
static int
cpu_steps (const SkyRunRequest *req, int keep, int until, SkyStages *st)
{
  const SkyStages *prev = req->previous;
  const SkyStep *steps;
  int nsteps = sky_method_steps (req->method, &steps), ret;

  /* A second call (the CPU going on after the device) keeps nothing anew. */
  if (st->done != SKY_STEP_NONE)
    keep = -1;
  for (int k = 0; k <= keep && k <= until && sky_step_defs[steps[k]].keep; k++)
    {
      SkyStep s = steps[k];

      sky_step_defs[s].keep (st, prev);
      st->result.times.ms[s] = prev->result.times.ms[s];
      st->gpu_kernel.ms[s] = prev->gpu_kernel.ms[s];
      st->gpu_total.ms[s] = prev->gpu_total.ms[s];
      st->agree[s] = prev->agree[s];
      st->done = st->kept = s;
    }
  for (int k = position (steps, nsteps, st->done) + 1; k <= until; k++)
    {
      SkyStep s = steps[k];
      double t0;

      if (cancelled (req))
        return sky_fail (SKY_ERR_CANCELLED, "the run was cancelled");
      t0 = sky_now_ms ();
      ret = sky_step_defs[s].cpu (st);
      /* A step the GPU made costs the CPU nothing: its time is the GPU's. */
      st->result.times.ms[s] = st->gpu_steps & (1u << s) ? 0 : sky_now_ms () - t0;
      if (ret != SKY_OK)
        return ret;
      st->done = s;
    }
  st->cpu_runs = st->done != st->kept ? 1 : prev != NULL && st->done != SKY_STEP_NONE
                                            ? prev->cpu_runs : 0;
  return SKY_OK;
}

/* The CPU's part timed as the best of req->cpu_repeat: the extra runs
 * first, each freed as it ends, so that their buffers go on to the run
 * kept (one set lives at a time); then the run kept, its times each
 * step's best. A run whose steps the GPU began (the local method's maps)
 * runs once: the extra runs could not begin where it does. */
static int
cpu_steps_best_of (const SkyRunRequest *req, int keep, int until, SkyStages *st)
{
  SkyStepTimes best = { 0 };
  int repeat = st->gpu_steps == 0 ? req->cpu_repeat : 1, ret;

  for (int r = 1; r < repeat; r++)
    {
      SkyStages extra;

      stages_init (req, &extra);
      ret = cpu_steps (req, keep, until, &extra);
      if (ret == SKY_OK && r == 1)
        best = extra.result.times;
      else if (ret == SKY_OK)
        sky_step_times_min (&best, &extra.result.times);
      sky_stages_clear (&extra);
      if (ret != SKY_OK)
        return ret;
    }
  if ((ret = cpu_steps (req, keep, until, st)) != SKY_OK)
    return ret;
  if (repeat > 1 && st->done != st->kept)
    {
      sky_step_times_min (&st->result.times, &best);
      st->cpu_runs = repeat;
    }
  sum_total (st);
  return SKY_OK;
}

int
sky_run (const SkyRunRequest *req, SkyStages *st)
{
  const SkyStages *prev = req->previous;
  const SkyGpuBackend *gpu = req->gpu ? req->gpu : sky_gpu_backend_default ();
  const SkyStep *steps;
  int nsteps = sky_method_steps (req->method, &steps);
  int until = position (steps, nsteps, req->until);
  int keep = position (steps, nsteps, sky_run_valid_step (prev, req));
  int repeat = req->gpu_repeat > 0 ? req->gpu_repeat : SKY_RUN_GPU_REPEAT;
  int ret;

  stages_init (req, st);
  if (nsteps == 0 || until < 0)
    return sky_fail (SKY_ERR_ARGUMENT, "the %s method has no step '%s'",
                     sky_method_name (req->method), sky_step_name (req->until));
  if ((ret = sky_params_check (req->params)) != SKY_OK)
    return ret;
  if (st->detect->nx != st->image->nx || st->detect->ny != st->image->ny)
    return sky_fail (SKY_ERR_ARGUMENT, "the detection image is %lld x %lld, the image %lld x %lld",
                     (long long) st->detect->nx, (long long) st->detect->ny,
                     (long long) st->image->nx, (long long) st->image->ny);
  if ((req->background == NULL) != (req->rms == NULL))
    return sky_fail (SKY_ERR_ARGUMENT, "the local method takes both maps or neither");
  if (req->backend != SKY_BACKEND_CPU && st->detect != st->image)
    return sky_fail (SKY_ERR_ARGUMENT, "detection on a smoothed image runs on the CPU only");

  /* The GPU alone runs the steps in one go on the device. If it fails
   * (no device, out of memory, lost), the CPU does the whole job. */
  if (req->backend == SKY_BACKEND_GPU && req->method != SKY_METHOD_LOCAL)
    {
      if (cancelled (req))
        return sky_fail (SKY_ERR_CANCELLED, "the run was cancelled");
      if (lesson_gpu_run (st, gpu, repeat, 1) == SKY_OK)
        return SKY_OK;
      take_gpu_fault (st);
      keep = -1;
      until = nsteps - 1;
    }

  /* The local method on the GPU alone: every step on the device, or, with
   * given maps or a matched filter (which the device does not make), the
   * CPU's background and detect steps first. A backend that only makes
   * the maps (local_maps) makes them, and the CPU does the rest. */
  int cpu_until = until;
  int local_gpu = req->backend == SKY_BACKEND_GPU && req->method == SKY_METHOD_LOCAL;
  if (local_gpu && gpu->run_local == NULL)
    {
      local_gpu = 0;
      if (cancelled (req))
        return sky_fail (SKY_ERR_CANCELLED, "the run was cancelled");
      if (req->background != NULL)
        {
          sky_fail (SKY_ERR_UNAVAILABLE, "this GPU backend runs no local step on given maps");
          take_gpu_fault (st);
        }
      else if (local_gpu_maps (st, gpu, repeat) != SKY_OK)
        take_gpu_fault (st);
    }
  if (local_gpu)
    {
      until = nsteps - 1;
      if (req->background == NULL && req->filter == NULL)
        {
          if (cancelled (req))
            return sky_fail (SKY_ERR_CANCELLED, "the run was cancelled");
          if (local_gpu_run (st, gpu, repeat, 1) == SKY_OK)
            return SKY_OK;
          take_gpu_fault (st);
          local_gpu = 0;
        }
      else
        cpu_until = position (steps, nsteps, SKY_STEP_DETECT);
    }

  if ((ret = cpu_steps_best_of (req, keep, cpu_until, st)) != SKY_OK)
    return ret;
  if (cpu_until != until)
    {
      /* The maps are made: the device runs the rest, or the CPU does. */
      if (cancelled (req))
        return sky_fail (SKY_ERR_CANCELLED, "the run was cancelled");
      if (local_gpu_run (st, gpu, repeat, 1) != SKY_OK)
        {
          take_gpu_fault (st);
          if ((ret = cpu_steps_best_of (req, keep, until, st)) != SKY_OK)
            return ret;
        }
      sum_total (st);
    }

  if (req->backend == SKY_BACKEND_BOTH)
    {
      if (cancelled (req))
        return sky_fail (SKY_ERR_CANCELLED, "the run was cancelled");
      if (req->method != SKY_METHOD_LOCAL)
        ret = lesson_gpu_run (st, gpu, repeat, 0);
      else if (gpu->run_local == NULL && gpu->local_maps == NULL)
        ret = sky_fail (SKY_ERR_UNAVAILABLE, "this GPU backend does not run the local method");
      else
        {
          /* Every step of the device's run checked against the CPU's, then
           * (where the backend brings them home) the maps bit for bit. */
          ret = gpu->run_local != NULL ? local_gpu_run (st, gpu, repeat, 0) : SKY_OK;
          if (ret == SKY_OK && gpu->local_maps != NULL && req->background == NULL)
            ret = local_gpu_check_maps (st, gpu, repeat, gpu->run_local != NULL);
        }
      if (ret != SKY_OK)
        take_gpu_fault (st);
    }
  return SKY_OK;
}
