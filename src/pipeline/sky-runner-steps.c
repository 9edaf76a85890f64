/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Every step as the runner sees it: which parameters it reads, how the CPU
 * runs it, what a later run may take from an earlier one, and how its
 * result is checked against the GPU's. Indexed by SkyStep; a method's order
 * comes from sky_method_steps (src/core/sky-steps.c). */
#include "sky-runner-private.h"
#include "sky-cpu.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t
npixels (const SkyStages *st)
{
  return (size_t) (st->image->nx * st->image->ny);
}

static void note_append (char *note, size_t size, const char *fmt, ...)
  __attribute__ ((format (printf, 3, 4)));

static void
note_append (char *note, size_t size, const char *fmt, ...)
{
  size_t len = strlen (note);
  va_list ap;

  if (len + 1 >= size)
    return;
  va_start (ap, fmt);
  vsnprintf (note + len, size - len, fmt, ap);
  va_end (ap);
}

static int
close_rel (double a, double b, double tol)
{
  return a == b || fabs (a - b) <= tol * fmax (fabs (a), fabs (b));
}

/* ------------------------------------------------------------------ clip */

static int
clip_params_differ (const SkyParams *a, const SkyParams *b)
{
  return a->clip_kappa != b->clip_kappa || a->max_iter != b->max_iter;
}

static int
clip_cpu (SkyStages *st)
{
  int ret = sky_cpu_clip (st->detect, &st->params, &st->result.stats);

  if (ret == SKY_OK)
    st->result.threshold_value = sky_threshold_value (&st->params, &st->result.stats);
  return ret;
}

static void
clip_keep (SkyStages *st, const SkyStages *prev)
{
  st->result.stats = prev->result.stats;
  /* The threshold may have moved: its value is the next step's input. */
  st->result.threshold_value = sky_threshold_value (&st->params, &st->result.stats);
}

static int
clip_agree (const SkyStages *st, const SkyResult *gpu, const SkyGpuBackend *backend,
            char *note, size_t size)
{
  const SkyClipStats *c = &st->result.stats, *g = &gpu->stats;
  int agree;

  (void) backend;
  agree = close_rel (c->median, g->median, 1e-6) && close_rel (c->sigma, g->sigma, 1e-6)
              && c->iterations == g->iterations && c->n == g->n;

  if (!agree)
    note_append (note, size, "clip: CPU median %.9g sigma %.9g (%d passes), GPU %.9g %.9g (%d). ",
                 c->median, c->sigma, c->iterations, g->median, g->sigma, g->iterations);
  return agree;
}

/* --------------------------------------------------------------- segment */

static int
segment_params_differ (const SkyParams *a, const SkyParams *b)
{
  return a->threshold != b->threshold || a->relative != b->relative;
}

static int
segment_cpu (SkyStages *st)
{
  if ((st->mask_buffer = sky_buffer_new (npixels (st))) == NULL)
    return sky_fail (SKY_ERR_MEMORY, "no memory for the mask");
  st->result.mask = sky_buffer_data (st->mask_buffer);
  return sky_cpu_segment (st->detect, st->result.threshold_value, st->params.nthreads,
                          st->result.mask);
}

static void
segment_keep (SkyStages *st, const SkyStages *prev)
{
  st->mask_buffer = sky_buffer_ref (prev->mask_buffer);
  st->result.mask = prev->result.mask;
}

static int
segment_held (const SkyStages *prev)
{
  return prev->mask_buffer != NULL;
}

static int
segment_agree (const SkyStages *st, const SkyResult *gpu, const SkyGpuBackend *backend,
               char *note, size_t size)
{
  int agree;

  (void) backend;
  agree = gpu->mask && memcmp (st->result.mask, gpu->mask, npixels (st)) == 0;

  if (!agree)
    note_append (note, size, "segment: the masks differ. ");
  return agree;
}

/* ----------------------------------------------------------------- label */

static int
label_params_differ (const SkyParams *a, const SkyParams *b)
{
  return a->connectivity != b->connectivity;
}

static int
label_cpu (SkyStages *st)
{
  if ((st->labels_buffer = sky_buffer_new (npixels (st) * sizeof (int32_t))) == NULL)
    return sky_fail (SKY_ERR_MEMORY, "no memory for the labels");
  st->result.labels = sky_buffer_data (st->labels_buffer);
  return sky_cpu_label (st->result.mask, st->image->nx, st->image->ny, st->params.connectivity,
                        st->params.nthreads, st->result.labels, &st->result.nsources);
}

static void
label_keep (SkyStages *st, const SkyStages *prev)
{
  st->labels_buffer = sky_buffer_ref (prev->labels_buffer);
  st->result.labels = prev->result.labels;
  st->result.nsources = prev->result.nsources;
}

static int
label_held (const SkyStages *prev)
{
  return prev->labels_buffer != NULL;
}

static int
label_agree (const SkyStages *st, const SkyResult *gpu, const SkyGpuBackend *backend,
             char *note, size_t size)
{
  int agree;

  (void) backend;
  agree = gpu->labels && st->result.nsources == gpu->nsources
              && memcmp (st->result.labels, gpu->labels, npixels (st) * 4) == 0;

  if (!agree)
    note_append (note, size, "label: %lld sources on the CPU, %lld on the GPU, or other "
                 "numbers. ", (long long) st->result.nsources, (long long) gpu->nsources);
  return agree;
}

/* --------------------------------------------------------------- measure */

static int
measure_params_differ (const SkyParams *a, const SkyParams *b)
{
  (void) a;
  (void) b;
  return 0;
}

static int
measure_cpu (SkyStages *st)
{
  if (st->method == SKY_METHOD_LOCAL)
    return sky_cpu_local_measure (st->image, &st->params, &st->result, st->local);
  return sky_cpu_measure (st->image, st->result.labels, st->result.nsources, st->params.nthreads,
                          &st->result.catalogue);
}

static int
measure_agree (const SkyStages *st, const SkyResult *gpu, const SkyGpuBackend *backend,
               char *note, size_t size)
{
  char what[512];
  int agree = backend->compare (backend->data, st->image, &st->result, gpu, what,
                                sizeof what) == 0;

  if (!agree)
    note_append (note, size, "measure: %s", what);
  return agree;
}

/* ----------------------------------------------------- the local method */

/* The local method is computed anew on every run: its steps say that
 * their parameters always differ, so nothing of an earlier run is kept. */
static int
local_params_differ (const SkyParams *a, const SkyParams *b)
{
  (void) a;
  (void) b;
  return 1;
}

static int
background_cpu (SkyStages *st)
{
  size_t n = npixels (st);

  if (st->local == NULL && (st->local = calloc (1, sizeof *st->local)) == NULL)
    return sky_fail (SKY_ERR_MEMORY, "no memory for the local method");
  if (st->given_background != NULL)
    {
      st->result.background = sky_alloc_large (n * sizeof (float));
      st->result.rms = sky_alloc_large (n * sizeof (float));
      if (st->result.background == NULL || st->result.rms == NULL)
        return sky_fail (SKY_ERR_MEMORY, "no memory for the background maps");
      memcpy (st->result.background, st->given_background, n * sizeof (float));
      memcpy (st->result.rms, st->given_rms, n * sizeof (float));
    }
  return sky_cpu_local_background (st->image, &st->params, &st->result, st->local);
}

static int
detect_cpu (SkyStages *st)
{
  return sky_cpu_local_detect (st->image, &st->params, st->filter, &st->result, st->local);
}

static int
flood_cpu (SkyStages *st)
{
  st->mask_buffer = sky_buffer_new (npixels (st));
  st->labels_buffer = sky_buffer_new (npixels (st) * sizeof (int32_t));
  if (st->mask_buffer == NULL || st->labels_buffer == NULL)
    return sky_fail (SKY_ERR_MEMORY, "no memory for the mask and labels");
  st->result.mask = sky_buffer_data (st->mask_buffer);
  st->result.labels = sky_buffer_data (st->labels_buffer);
  return sky_cpu_local_flood (st->image, &st->params, &st->result, st->local);
}

static int
deblend_cpu (SkyStages *st)
{
  return sky_cpu_local_deblend (st->image, &st->params, &st->result, st->local);
}

/* How the local method's steps are checked against the device's run: the
 * device hands back its final mask, labels and catalogue, not its maps, so
 * each step is judged by what it decides. The maps: their values at every
 * source's peak (the catalogue's background and rms columns, exact); the
 * detection image: the flood mask (snr > flood at every pixel); the
 * islands: their count and the mask; deblending: the sources, the split
 * islands and the label image. */
static int
background_agree (const SkyStages *st, const SkyResult *gpu, const SkyGpuBackend *backend,
                  char *note, size_t size)
{
  const SkyCatalogue *c = &st->result.catalogue, *g = &gpu->catalogue;
  int agree = c->n == g->n && c->background != NULL && g->background != NULL;

  (void) backend;
  for (int64_t i = 0; agree && i < c->n; i++)
    agree = c->background[i] == g->background[i] && c->rms[i] == g->rms[i];
  if (!agree)
    note_append (note, size, "background: the maps differ at a source's peak. ");
  return agree;
}

static int
detect_agree (const SkyStages *st, const SkyResult *gpu, const SkyGpuBackend *backend,
              char *note, size_t size)
{
  int agree;

  (void) backend;
  agree = gpu->mask && st->result.mask && memcmp (st->result.mask, gpu->mask, npixels (st)) == 0;
  if (!agree)
    note_append (note, size, "detect: the flood masks differ. ");
  return agree;
}

static int
flood_agree (const SkyStages *st, const SkyResult *gpu, const SkyGpuBackend *backend,
             char *note, size_t size)
{
  int agree;

  (void) backend;
  agree = st->result.nislands == gpu->nislands && gpu->mask && st->result.mask
          && memcmp (st->result.mask, gpu->mask, npixels (st)) == 0;
  if (!agree)
    note_append (note, size, "flood: %lld islands on the CPU, %lld on the GPU, or other pixels. ",
                 (long long) st->result.nislands, (long long) gpu->nislands);
  return agree;
}

static int
deblend_agree (const SkyStages *st, const SkyResult *gpu, const SkyGpuBackend *backend,
               char *note, size_t size)
{
  int agree;

  (void) backend;
  agree = st->result.nsources == gpu->nsources && st->result.ndeblended == gpu->ndeblended
          && gpu->labels && st->result.labels
          && memcmp (st->result.labels, gpu->labels, npixels (st) * 4) == 0;
  if (!agree)
    note_append (note, size, "deblend: %lld sources (%lld islands split) on the CPU, %lld (%lld) "
                 "on the GPU, or other labels. ", (long long) st->result.nsources,
                 (long long) st->result.ndeblended, (long long) gpu->nsources,
                 (long long) gpu->ndeblended);
  return agree;
}

/* ------------------------------------------------------------------ list */

const SkyStepDef sky_step_defs[SKY_STEP_COUNT] = {
  [SKY_STEP_CLIP] = { clip_params_differ, clip_cpu, clip_keep, NULL, clip_agree },
  [SKY_STEP_SEGMENT] = { segment_params_differ, segment_cpu, segment_keep, segment_held,
                         segment_agree },
  [SKY_STEP_LABEL] = { label_params_differ, label_cpu, label_keep, label_held, label_agree },
  /* The catalogue is made anew each time: it is cheap next to labelling,
   * and a run that keeps every step is the earlier run itself. */
  [SKY_STEP_MEASURE] = { measure_params_differ, measure_cpu, NULL, NULL, measure_agree },
  [SKY_STEP_BACKGROUND] = { local_params_differ, background_cpu, NULL, NULL, background_agree },
  [SKY_STEP_DETECT] = { local_params_differ, detect_cpu, NULL, NULL, detect_agree },
  [SKY_STEP_FLOOD] = { local_params_differ, flood_cpu, NULL, NULL, flood_agree },
  [SKY_STEP_DEBLEND] = { local_params_differ, deblend_cpu, NULL, NULL, deblend_agree },
};
