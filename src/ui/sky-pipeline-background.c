/* SPDX-License-Identifier: GPL-3.0-or-later */
/* What a run adds about the background, made on the worker beside the
 * runner's steps: for the local method, its maps as images the view shows
 * (the runner's steps only interpolate the mesh where they read it); for
 * the lesson's, the mesh background, to tell the person when the one
 * global threshold lies below the local background. */
#include "sky-pipeline.h"
#include "sky-cpu.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------- which steps */

static int
step_position (SkyMethod method, SkyStep step)
{
  const SkyStep *steps;
  int n = sky_method_steps (method, &steps);

  for (int k = 0; k < n; k++)
    if (steps[k] == step)
      return k;
  return -1;
}

gboolean
sky_run_has (const SkyRun *run, SkyStep step)
{
  int at;

  if (run == NULL || run->done == SKY_STEP_NONE)
    return FALSE;
  at = step_position (run->method, step);
  return at >= 0 && at <= step_position (run->method, run->done);
}

gboolean
sky_run_has_labels (const SkyRun *run)
{
  return sky_run_has (run, SKY_STEP_LABEL) || sky_run_has (run, SKY_STEP_FLOOD);
}

/* ------------------------------------------------------- shared pieces */

static void
maps_free (SkyRunMaps *maps)
{
  g_clear_pointer (&maps->background, sky_image_data_unref);
  g_clear_pointer (&maps->rms, sky_image_data_unref);
  g_clear_pointer (&maps->residual, sky_image_data_unref);
}

SkyRunMaps *
sky_run_maps_ref (SkyRunMaps *maps)
{
  return g_atomic_rc_box_acquire (maps);
}

void
sky_run_maps_unref (SkyRunMaps *maps)
{
  g_atomic_rc_box_release_full (maps, (GDestroyNotify) maps_free);
}

static void
mesh_free (SkyRunMesh *mesh)
{
  g_free (mesh->back);
}

SkyRunMesh *
sky_run_mesh_ref (SkyRunMesh *mesh)
{
  return g_atomic_rc_box_acquire (mesh);
}

void
sky_run_mesh_unref (SkyRunMesh *mesh)
{
  g_atomic_rc_box_release_full (mesh, (GDestroyNotify) mesh_free);
}

/* ---------------------------------------------------- the lesson's check */

/* Why this criterion. The lesson's threshold is one number for the whole
 * image (5σ of the clipped background, absolute). The mesh background is
 * SExtractor's (and SEP's) estimate of the sky under the sources, box by
 * box: each box's clipped mode, then a median filter over 3 x 3 boxes that
 * removes a box lit by one bright source. Where that local background lies
 * above the threshold, the pixels there are above it with no source at
 * all: segment floods the whole area and measure reports it as one vast
 * "source" that swallows the real ones in it. One box in a hundred (an
 * area of 6 x 6 boxes on a 2048-pixel image at 64-pixel boxes, after the
 * filter, so never one bright source) is past what a person would call an
 * accident of the field, and still well short of the half of the image a
 * comparison of the clip's median with the threshold would need.
 * skysift-cli find warns in two cases of this (a threshold under the
 * clipped median, a sky level; one source over half the image); both lift
 * most of the mesh above the threshold, so the banner comes for them too,
 * and for emission over a part of the image, which neither sees. */
double
sky_run_background_above (const SkyRun *run)
{
  gint64 above = 0;

  if (run == NULL || run->mesh == NULL || run->mesh->n == 0 || !isfinite (run->threshold_value)
      || !sky_run_has (run, SKY_STEP_CLIP))
    return -1;
  for (gint64 i = 0; i < run->mesh->n; i++)
    above += run->mesh->back[i] > run->threshold_value;
  return (double) above / (double) run->mesh->n;
}

static SkyRunMesh *
make_mesh (const SkyRun *run, GError **error)
{
  SkyBackgroundMesh mesh = { 0 };
  SkyRunMesh *out;
  int ret = sky_cpu_background_mesh (&run->image->image, &run->params, run->params.nthreads,
                                     &mesh);

  if (ret != SKY_OK)
    {
      sky_background_mesh_clear (&mesh);
      g_propagate_error (error, sky_ui_error_new_from_status (ret));
      return NULL;
    }
  out = g_atomic_rc_box_new0 (SkyRunMesh);
  out->box = run->params.bkg_box;
  out->filter = run->params.bkg_filter;
  out->n = mesh.nbx * mesh.nby;
  out->back = g_memdup2 (mesh.back, (gsize) out->n * sizeof (float));
  sky_background_mesh_clear (&mesh);
  return out;
}

/* ------------------------------------------------------- the local maps */

/* A map as an image the view can show: the source's unit and orientation,
 * its own display statistics and zoom-out pyramid. Takes pixels. */
static SkyImageData *
map_image (const SkyImageData *like, float *pixels, const char *what, GError **error)
{
  SkyImageData *data = g_atomic_rc_box_new0 (SkyImageData);
  int ret;

  data->image.nx = like->image.nx;
  data->image.ny = like->image.ny;
  data->image.pixels = pixels;
  data->image.hdu = like->image.hdu;
  data->image.plane = like->image.plane;
  data->image.nplanes = 1;
  data->image.bitpix = -32;
  g_strlcpy (data->image.bunit, like->image.bunit, sizeof data->image.bunit);
  for (gint64 i = 0; i < data->image.nx * data->image.ny; i++)
    data->image.nblank += isnan (pixels[i]);
  data->flip_x = like->flip_x;
  data->has_wcs = FALSE;  /* the readout reads the image's own WCS */
  data->display_name = g_strdup_printf ("%s of %s", what, like->display_name);
  if ((ret = sky_display_stats_compute (&data->image, 0, &data->stats)) != SKY_OK
      || (ret = sky_pyramid_build (&data->image, 0, &data->pyramid)) != SKY_OK)
    {
      g_propagate_error (error, sky_ui_error_new_from_status (ret));
      sky_image_data_unref (data);
      return NULL;
    }
  return data;
}

/* The maps at every pixel, the values the steps read (sky_local_maps: the
 * mesh's interpolator, or given maps), and the image less the background
 * (blank where the image is). */
static SkyRunMaps *
make_maps (const SkyRun *run, GError **error)
{
  const SkyImage *img = &run->image->image;
  const SkyStages *st = &run->stages;
  SkyLocalState none = { 0 };
  SkyLocalMaps lm = sky_local_maps (&st->result, st->local ? st->local : &none);
  gsize npix = (gsize) (img->nx * img->ny);
  float *back = malloc (npix * sizeof (float));
  float *rms = malloc (npix * sizeof (float));
  float *residual = malloc (npix * sizeof (float));
  SkyRunMaps *maps;

  /* A run whose steps left neither maps nor a mesh here (a device's run)
   * has nothing to show from the host. */
  if (lm.background == NULL && lm.interp == NULL)
    {
      free (back);
      free (rms);
      free (residual);
      return NULL;
    }
  if (back == NULL || rms == NULL || residual == NULL)
    {
      free (back);
      free (rms);
      free (residual);
      g_set_error (error, SKY_UI_ERROR, SKY_UI_ERROR_MEMORY,
                   "Out of memory for the background maps of %s", run->image->display_name);
      return NULL;
    }
  /* From a mesh, on every core (sky_cpu_background_rows gives the values
   * the interpolator gives, to the bit); given maps, as they are. */
  if (st->local != NULL && st->local->mesh != NULL && lm.background == NULL)
    {
      int ret = sky_cpu_background_rows (st->local->mesh, 0, img->ny, run->params.nthreads, back,
                                         rms);
      if (ret != SKY_OK)
        {
          free (back);
          free (rms);
          free (residual);
          g_propagate_error (error, sky_ui_error_new_from_status (ret));
          return NULL;
        }
    }
  else
    sky_local_maps_window (&lm, 0, 0, img->nx, img->ny, back, rms);
  for (gsize i = 0; i < npix; i++)
    residual[i] = img->pixels[i] - back[i];
  maps = g_atomic_rc_box_new0 (SkyRunMaps);
  maps->box = run->params.bkg_box;
  maps->filter = run->params.bkg_filter;
  if (st->local != NULL && st->local->mesh != NULL)
    {
      maps->nbx = st->local->mesh->nbx;
      maps->nby = st->local->mesh->nby;
      maps->global_back = st->local->mesh->global_back;
      maps->global_rms = st->local->mesh->global_rms;
    }
  /* map_image takes the pixels it is given, failing or not. */
  maps->background = map_image (run->image, back, "background", error);
  maps->rms = maps->background ? map_image (run->image, g_steal_pointer (&rms), "rms", error)
                               : NULL;
  maps->residual = maps->rms ? map_image (run->image, g_steal_pointer (&residual),
                                          "image − background", error)
                             : NULL;
  free (rms);
  free (residual);
  if (maps->residual == NULL)
    g_clear_pointer (&maps, sky_run_maps_unref);
  return maps;
}

static gboolean
same_mesh (const SkyRun *run, const SkyRun *prev)
{
  return prev != NULL && prev->image == run->image && prev->params.bkg_box == run->params.bkg_box
         && prev->params.bkg_filter == run->params.bkg_filter;
}

gboolean
sky_run_prepare_background (SkyRun *run, SkyRun *prev, GError **error)
{
  if (run->method == SKY_METHOD_LOCAL && sky_run_has (run, SKY_STEP_BACKGROUND))
    {
      if (same_mesh (run, prev) && prev->maps != NULL)
        run->maps = sky_run_maps_ref (prev->maps);
      else
        {
          g_autoptr (GError) local_error = NULL;
          double t0 = sky_now_ms ();
          run->maps = make_maps (run, &local_error);
          g_debug ("background maps for the view made in %.1f ms", sky_now_ms () - t0);
          if (local_error != NULL)
            {
              g_propagate_error (error, g_steal_pointer (&local_error));
              return FALSE;
            }
        }
      return TRUE;
    }
  if (run->method == SKY_METHOD_LESSON && sky_run_has (run, SKY_STEP_CLIP))
    {
      if (same_mesh (run, prev) && prev->mesh != NULL)
        run->mesh = sky_run_mesh_ref (prev->mesh);
      else
        {
          double t0 = sky_now_ms ();
          run->mesh = make_mesh (run, error);
          g_debug ("background mesh for the banner made in %.1f ms", sky_now_ms () - t0);
        }
      return run->mesh != NULL;
    }
  return TRUE;
}
