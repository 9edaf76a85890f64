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

char *
sky_run_cpu_steps_text (const SkyRun *run)
{
  const SkyStep *steps;
  int n = sky_method_steps (run->method, &steps), ngpu = 0, ncpu = 0;
  g_autoptr (GString) cpu = g_string_new (NULL);
  g_autoptr (GString) gpu = g_string_new (NULL);

  if (run->backend == SKY_BACKEND_CPU || run->gpu_fault != NULL || !run->has_gpu)
    return NULL;
  for (int k = 0; k < n; k++)
    {
      gboolean on_gpu = (run->stages.gpu_steps & (1u << steps[k])) != 0;
      GString *list = on_gpu ? gpu : cpu;

      g_string_append_printf (list, "%s%s", list->len ? ", " : "", sky_step_name (steps[k]));
      if (on_gpu)
        ngpu++;
      else
        ncpu++;
    }
  if (ncpu == 0)
    return NULL;
  if (run->backend == SKY_BACKEND_BOTH)
    return g_strdup_printf ("The GPU checked %s alone: it has no %s for the %s method yet.",
                            ngpu ? gpu->str : "nothing", cpu->str, sky_method_name (run->method));
  return g_strdup_printf ("The GPU ran %s; the CPU ran %s: the GPU has no such steps for the %s "
                          "method yet.", ngpu ? gpu->str : "nothing", cpu->str,
                          sky_method_name (run->method));
}

/* ------------------------------------------------------- shared pieces */

static void
maps_free (SkyRunMaps *maps)
{
  for (int k = 0; k < SKY_MAP_COUNT; k++)
    g_clear_pointer (&maps->made[k], sky_image_data_unref);
  g_clear_pointer (&maps->image, sky_image_data_unref);
  free (maps->background);
  free (maps->rms);
  if (maps->mesh != NULL)
    {
      sky_background_mesh_clear (maps->mesh);
      g_free (maps->mesh);
    }
  g_mutex_clear (&maps->lock);
}

SKY_DEFINE_SHARED_TYPE (SkyRunMaps, sky_run_maps, maps_free)

static void
mesh_free (SkyRunMesh *mesh)
{
  g_free (mesh->back);
}

SKY_DEFINE_SHARED_TYPE (SkyRunMesh, sky_run_mesh, mesh_free)

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
  SkyRunMesh *mesh = run != NULL ? sky_run_get_mesh (run) : NULL;
  gint64 above = 0;

  if (mesh == NULL || mesh->n == 0 || !isfinite (run->threshold_value)
      || !sky_run_has (run, SKY_STEP_CLIP))
    return -1;
  for (gint64 i = 0; i < mesh->n; i++)
    above += mesh->back[i] > run->threshold_value;
  return (double) above / (double) mesh->n;
}

SkyRunMesh *
sky_run_get_mesh (const SkyRun *run)
{
  /* Set once from NULL by another thread (sky_run_make_mesh): read atomically. */
  SkyRunMesh *const *where = &run->mesh;
  return g_atomic_pointer_get ((SkyRunMesh **) where);
}

static SkyRunMesh *
make_mesh (const SkyRun *run, GError **error)
{
  SkyBackgroundMesh mesh = { 0 };
  SkyRunMesh *out;
  /* One thread: it runs while the window draws the run it goes with, and
   * on two cores every core taken would stall the main loop's frame. */
  int ret = sky_cpu_background_mesh (&run->image->image, &run->params, 1, &mesh);

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

gboolean
sky_run_make_mesh (SkyRun *run, GError **error)
{
  double t0 = sky_now_ms ();
  SkyRunMesh *mesh;

  if (sky_run_get_mesh (run) != NULL)
    return TRUE;
  if ((mesh = make_mesh (run, error)) == NULL)
    return FALSE;
  /* Another worker may have been first: its mesh is the same. */
  if (!g_atomic_pointer_compare_and_exchange (&run->mesh, NULL, mesh))
    sky_run_mesh_unref (mesh);
  g_debug ("background mesh for the banner made in %.1f ms", sky_now_ms () - t0);
  return TRUE;
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

/* A finished mesh's copy, to outlive the run whose steps made it. */
static SkyBackgroundMesh *
copy_mesh (const SkyBackgroundMesh *mesh)
{
  SkyBackgroundMesh *copy = g_new (SkyBackgroundMesh, 1);
  gsize n = (gsize) (mesh->nbx * mesh->nby);

  /* malloc'ed, as sky_background_mesh_clear frees them. */
  float **arrays[4] = { &copy->back, &copy->rms, &copy->dback, &copy->drms };
  const float *from[4] = { mesh->back, mesh->rms, mesh->dback, mesh->drms };

  *copy = *mesh;
  for (int k = 0; k < 4; k++)
    {
      *arrays[k] = malloc (n * sizeof (float));
      g_assert (*arrays[k] != NULL);   /* a few floats a box: as GLib does */
      memcpy (*arrays[k], from[k], n * sizeof (float));
    }
  return copy;
}

/* Maps of the run's image for boxes of box pixels filtered over filter
 * boxes, with no values yet: the mesh's size from the image's, its
 * medians not known (NaN). */
static SkyRunMaps *
empty_maps (const SkyRun *run, int box, int filter)
{
  SkyRunMaps *maps = g_atomic_rc_box_new0 (SkyRunMaps);

  g_mutex_init (&maps->lock);
  maps->image = sky_image_data_ref (run->image);
  maps->box = box;
  maps->filter = filter;
  maps->nbx = (run->image->image.nx + box - 1) / box;
  maps->nby = (run->image->image.ny + box - 1) / box;
  maps->global_back = maps->global_rms = NAN;
  return maps;
}

/* The maps of a local run, none made yet: its mesh and image kept, or
 * where the GPU made the whole maps (no mesh on the host), a copy of them.
 * NULL where there is neither. */
static SkyRunMaps *
new_maps (const SkyRun *run)
{
  const SkyStages *st = &run->stages;
  gsize npix = (gsize) (run->image->image.nx * run->image->image.ny);
  SkyRunMaps *maps;

  if (st->result.background != NULL && st->result.rms != NULL)
    {
      maps = empty_maps (run, run->params.bkg_box, run->params.bkg_filter);
      maps->background = malloc (npix * sizeof (float));
      maps->rms = malloc (npix * sizeof (float));
      if (maps->background == NULL || maps->rms == NULL)
        {
          sky_run_maps_unref (maps);
          return NULL;
        }
      memcpy (maps->background, st->result.background, npix * sizeof (float));
      memcpy (maps->rms, st->result.rms, npix * sizeof (float));
      return maps;
    }
  if (st->local == NULL || st->local->mesh == NULL)
    {
      /* Every step on the device: no maps came home. The view's are made
       * on the CPU when first chosen, from the CPU's mesh, which equals
       * the device's to the bit (docs/contract.md). */
      maps = empty_maps (run, run->params.bkg_box, run->params.bkg_filter);
      maps->params = run->params;
      return maps;
    }
  maps = empty_maps (run, st->local->mesh->box, st->local->mesh->filter);
  maps->mesh = copy_mesh (st->local->mesh);
  maps->nbx = maps->mesh->nbx;
  maps->nby = maps->mesh->nby;
  maps->global_back = maps->mesh->global_back;
  maps->global_rms = maps->mesh->global_rms;
  return maps;
}

SkyImageData *
sky_run_maps_peek (SkyRunMaps *maps, SkyMapKind kind)
{
  g_autoptr (GMutexLocker) locker = g_mutex_locker_new (&maps->lock);
  return maps->made[kind];
}

/* One map at every pixel, from the mesh on every core: the floats the
 * steps' interpolator reads, to the bit (sky_cpu_background_rows); the
 * residual is the image less the background, blank where the image is. */
SkyImageData *
sky_run_maps_make (SkyRunMaps *maps, SkyMapKind kind, GError **error)
{
  static const char *const what[SKY_MAP_COUNT] = { "background", "rms", "image − background" };
  g_autoptr (GMutexLocker) locker = g_mutex_locker_new (&maps->lock);
  const SkyImage *img = &maps->image->image;
  gsize npix = (gsize) (img->nx * img->ny);
  float *pixels;
  double t0 = sky_now_ms ();
  int ret;

  if (maps->made[kind] != NULL)
    return maps->made[kind];
  if (maps->mesh == NULL && maps->background == NULL)
    {
      SkyBackgroundMesh *mesh = g_new0 (SkyBackgroundMesh, 1);

      ret = sky_cpu_background_mesh (img, &maps->params, 0, mesh);
      if (ret != SKY_OK)
        {
          sky_background_mesh_clear (mesh);
          g_free (mesh);
          g_propagate_error (error, sky_ui_error_new_from_status (ret));
          return NULL;
        }
      maps->mesh = mesh;
    }
  if ((pixels = malloc (npix * sizeof (float))) == NULL)
    {
      g_set_error (error, SKY_UI_ERROR, SKY_UI_ERROR_MEMORY,
                   "Out of memory for the %s map of %s", what[kind], maps->image->display_name);
      return NULL;
    }
  if (maps->mesh == NULL)
    {
      memcpy (pixels, kind == SKY_MAP_RMS ? maps->rms : maps->background, npix * sizeof (float));
      ret = SKY_OK;
    }
  else
    ret = sky_cpu_background_rows (maps->mesh, 0, img->ny, 0,
                                   kind == SKY_MAP_RMS ? NULL : pixels,
                                   kind == SKY_MAP_RMS ? pixels : NULL);
  if (ret != SKY_OK)
    {
      free (pixels);
      g_propagate_error (error, sky_ui_error_new_from_status (ret));
      return NULL;
    }
  if (kind == SKY_MAP_RESIDUAL)
    for (gsize i = 0; i < npix; i++)
      pixels[i] = img->pixels[i] - pixels[i];
  maps->made[kind] = map_image (maps->image, pixels, what[kind], error);
  g_debug ("the %s map for the view made in %.1f ms", what[kind], sky_now_ms () - t0);
  return maps->made[kind];
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
      run->maps = same_mesh (run, prev) && prev->maps != NULL ? sky_run_maps_ref (prev->maps)
                                                               : new_maps (run);
      return TRUE;
    }
  /* The lesson's mesh: taken along, or made later (sky_run_make_mesh),
   * after the run is shown, since it costs as much as a clip. */
  if (run->method == SKY_METHOD_LESSON && sky_run_has (run, SKY_STEP_CLIP) && same_mesh (run, prev)
      && sky_run_get_mesh (prev) != NULL)
    run->mesh = sky_run_mesh_ref (sky_run_get_mesh (prev));
  return TRUE;
}
