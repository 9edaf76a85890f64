/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The overlays shown over the image: read, placed on its pixels, matched
 * with the run's sources (sky-overlay-set.h). */
#include "sky-overlay-set.h"
#include "sky-ui-error.h"
#include "sky-ui-json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Colours that stand out on grey, inferno and viridis alike: cyan, lime,
 * orange, violet, yellow, sky blue; the seventh takes the first again. */
static const double palette[][3] = {
  { 0.0, 0.85, 1.0 }, { 0.3, 1.0, 0.2 }, { 1.0, 0.55, 0.0 },
  { 0.75, 0.4, 1.0 }, { 1.0, 0.95, 0.1 }, { 0.35, 0.6, 1.0 },
};

#define DEFAULT_RADIUS_ARCSEC 10.0

static void
entry_free (gpointer data)
{
  SkyOverlayEntry *e = data;

  sky_overlay_clear (&e->overlay);
  g_free (e->px);
  g_free (e->py);
  g_free (e->vpx);
  g_free (e->vpy);
  g_free (e->pangle);
  g_free (e->match_theirs);
  g_free (e->match_ours);
  g_free (e);
}

SkyOverlaySet *
sky_overlay_set_new (void)
{
  SkyOverlaySet *set = g_new0 (SkyOverlaySet, 1);

  set->entries = g_ptr_array_new_with_free_func (entry_free);
  set->radius_arcsec = DEFAULT_RADIUS_ARCSEC;
  set->radius_px = DEFAULT_RADIUS_ARCSEC;
  return set;
}

void
sky_overlay_set_free (SkyOverlaySet *set)
{
  if (set == NULL)
    return;
  g_ptr_array_unref (set->entries);
  g_free (set);
}

void
sky_overlay_set_clear (SkyOverlaySet *set)
{
  g_ptr_array_set_size (set->entries, 0);
}

/* The radius in pixels on image: arcseconds through the WCS's pixel
 * scale, or pixels where the image has no celestial WCS. */
static void
update_radius (SkyOverlaySet *set, SkyWcs *wcs)
{
  double scale = sky_wcs_pixels_per_arcsec (wcs);

  set->radius_in_pixels = !isfinite (scale);
  set->radius_px = set->radius_in_pixels ? set->radius_arcsec : set->radius_arcsec * scale;
}

/* The direction of the shape's north on the pixel grid, in degrees from
 * +x (90 on an image with north up): a step along the latitude axis at
 * the shape's centre (px, py), southwards near the north pole. */
static double
north_angle (SkyWcs *wcs, const SkyShape *s, double px, double py)
{
  double step = s->y > 89.0 ? -1e-3 : 1e-3, nx, ny, a;

  if (sky_overlay_to_pixel (wcs, s->frame, s->x, s->y + step, &nx, &ny) != SKY_OK)
    return 90.0;
  a = atan2 (ny - py, nx - px) * 180.0 / G_PI;
  return step > 0 ? a : a + 180.0;
}

/* Centres of entry's shapes on image's pixels. Returns the status of the
 * first shape that could not be placed, SKY_OK where all were. */
static int
place_entry (SkyOverlayEntry *e, SkyImageData *image, SkyWcs *wcs)
{
  const SkyImage *img = &image->image;
  int first_status = SKY_OK;

  g_free (e->px);
  g_free (e->py);
  e->px = g_new (double, MAX (e->overlay.n, 1));
  e->py = g_new (double, MAX (e->overlay.n, 1));
  g_free (e->vpx);
  g_free (e->vpy);
  e->nvertices = 0;
  for (gint64 i = 0; i < e->overlay.n; i++)
    e->nvertices += e->overlay.shapes[i].nvertices;
  e->vpx = g_new (double, MAX (e->nvertices, 1));
  e->vpy = g_new (double, MAX (e->nvertices, 1));
  for (gint64 i = 0, v = 0; i < e->overlay.n; i++)
    for (int k = 0; k < e->overlay.shapes[i].nvertices; k++, v++)
      sky_overlay_to_pixel (wcs, e->overlay.shapes[i].frame, e->overlay.shapes[i].vx[k],
                            e->overlay.shapes[i].vy[k], &e->vpx[v], &e->vpy[v]);
  g_free (e->pangle);
  e->pangle = g_new (double, MAX (e->overlay.n, 1));
  e->on_image = 0;
  e->pixel_scale = wcs ? sky_wcs_pixels_per_arcsec (wcs) : NAN;
  for (gint64 i = 0; i < e->overlay.n; i++)
    {
      const SkyShape *s = &e->overlay.shapes[i];
      int status = sky_overlay_to_pixel (wcs, s->frame, s->x, s->y, &e->px[i], &e->py[i]);
      if (status != SKY_OK && first_status == SKY_OK)
        first_status = status;
      /* DS9's and astropy's angle in a sky frame is from the longitude
       * axis: on the pixels, the angle plus north's direction less 90. */
      e->pangle[i] = s->angle;
      if (status == SKY_OK && s->frame != SKY_FRAME_PIXEL)
        e->pangle[i] = s->angle + north_angle (wcs, s, e->px[i], e->py[i]) - 90.0;
      /* Pixel i covers [i - 0.5, i + 0.5) in these 0-based positions. */
      if (status == SKY_OK && e->px[i] >= -0.5 && e->px[i] < img->nx - 0.5
          && e->py[i] >= -0.5 && e->py[i] < img->ny - 0.5)
        e->on_image++;
    }
  return first_status;
}

static SkyWcs *
wcs_of (SkyImageData *image)
{
  SkyWcs *wcs = NULL;

  if (image == NULL || sky_wcs_new (&image->image, &wcs) != SKY_OK)
    return NULL;
  return wcs;
}

gboolean
sky_overlay_set_add (SkyOverlaySet *set, const char *path, SkyImageData *image, GError **error)
{
  SkyOverlayEntry *e;
  SkyWcs *wcs;
  int status;

  if (image == NULL)
    {
      g_set_error (error, SKY_UI_ERROR, SKY_UI_ERROR_NO_IMAGE,
                   "%s: open an image first: an overlay is drawn over one", path);
      return FALSE;
    }
  wcs = wcs_of (image);
  e = g_new0 (SkyOverlayEntry, 1);
  status = sky_overlay_load (path, wcs != NULL, &e->overlay);
  if (status == SKY_OK)
    {
      status = place_entry (e, image, wcs);
      /* Sky positions on an image without a sky WCS: nothing to draw. */
      if (status == SKY_ERR_UNAVAILABLE)
        sky_fail (status, "%s: its positions are on the sky (%s, %s) and %s has no "
                  "celestial WCS to place them", path, e->overlay.x_column,
                  e->overlay.y_column, image->image.path);
      else
        status = SKY_OK;
    }
  if (status != SKY_OK)
    {
      if (error)
        *error = sky_ui_error_new_from_status (status);
      entry_free (e);
      sky_wcs_free (wcs);
      return FALSE;
    }
  memcpy (e->rgb, palette[set->entries->len % G_N_ELEMENTS (palette)], sizeof e->rgb);
  update_radius (set, wcs);
  g_ptr_array_add (set->entries, e);
  sky_wcs_free (wcs);
  return TRUE;
}

void
sky_overlay_set_place (SkyOverlaySet *set, SkyImageData *image)
{
  SkyWcs *wcs = wcs_of (image);

  for (guint k = 0; k < set->entries->len; k++)
    place_entry (g_ptr_array_index (set->entries, k), image, wcs);
  update_radius (set, wcs);
  sky_wcs_free (wcs);
}

gboolean
sky_overlay_set_radius (SkyOverlaySet *set, SkyImageData *image, double arcsec, GError **error)
{
  SkyWcs *wcs;

  if (!(arcsec > 0) || !isfinite (arcsec))
    {
      g_set_error (error, SKY_UI_ERROR, SKY_UI_ERROR_ARGUMENT,
                   "The match radius must be a positive number of arcseconds, not %g", arcsec);
      return FALSE;
    }
  set->radius_arcsec = arcsec;
  wcs = wcs_of (image);
  update_radius (set, wcs);
  sky_wcs_free (wcs);
  return TRUE;
}

static gboolean
takes_part (const SkyShape *s)
{
  return s->kind != SKY_SHAPE_TEXT && !s->exclude;
}

void
sky_overlay_set_match (SkyOverlaySet *set, SkyRun *run)
{
  gboolean measured = sky_run_has (run, SKY_STEP_MEASURE);
  const SkyCatalogue *cat = measured ? &run->catalogue : NULL;

  for (guint k = 0; k < set->entries->len; k++)
    {
      SkyOverlayEntry *e = g_ptr_array_index (set->entries, k);
      gint64 n = e->overlay.n;
      g_autofree double *tx = g_new (double, MAX (n, 1));
      g_autofree double *ty = g_new (double, MAX (n, 1));
      g_autofree double *ox = NULL, *oy = NULL;

      g_clear_pointer (&e->match_theirs, g_free);
      g_clear_pointer (&e->match_ours, g_free);
      e->matched = e->only_ours = e->only_theirs = e->nours = 0;
      e->matched_run = measured;
      if (!measured)
        continue;
      for (gint64 i = 0; i < n; i++)
        {
          gboolean inside = takes_part (&e->overlay.shapes[i]) && e->px[i] >= -0.5
                            && e->py[i] >= -0.5 && e->px[i] < run->image->image.nx - 0.5
                            && e->py[i] < run->image->image.ny - 0.5;
          tx[i] = inside ? e->px[i] : NAN;
          ty[i] = inside ? e->py[i] : NAN;
          e->only_theirs += inside;
        }
      ox = g_new (double, MAX (cat->n, 1));
      oy = g_new (double, MAX (cat->n, 1));
      for (gint64 i = 0; i < cat->n; i++)
        {
          ox[i] = cat->x[i];
          oy[i] = cat->y[i];
        }
      e->nours = cat->n;
      e->match_ours = g_new (gint64, MAX (cat->n, 1));
      e->match_theirs = g_new (gint64, MAX (n, 1));
      /* Ours first, as score_catalogue.py matches detections to truth. */
      e->matched = sky_crossmatch (ox, oy, cat->n, tx, ty, n, set->radius_px, e->match_ours,
                                   e->match_theirs);
      if (e->matched < 0)
        {
          g_clear_pointer (&e->match_theirs, g_free);
          g_clear_pointer (&e->match_ours, g_free);
          e->matched = 0;
          e->matched_run = FALSE;
          continue;
        }
      e->only_ours = cat->n - e->matched;
      e->only_theirs -= e->matched;
    }
}

void
sky_overlay_set_describe (const SkyOverlaySet *set, GString *out)
{
  g_string_append (out, "[");
  for (guint k = 0; k < set->entries->len; k++)
    {
      const SkyOverlayEntry *e = g_ptr_array_index (set->entries, k);
      char colour[8];

      g_snprintf (colour, sizeof colour, "#%02x%02x%02x", (int) lround (e->rgb[0] * 255),
                  (int) lround (e->rgb[1] * 255), (int) lround (e->rgb[2] * 255));
      g_string_append (out, k ? ", {\"path\": " : "{\"path\": ");
      sky_ui_json_string (out, e->overlay.path);
      g_string_append_printf (out, ", \"kind\": \"%s\", \"n\": %" G_GINT64_FORMAT
                              ", \"on_image\": %" G_GINT64_FORMAT ", \"skipped\": %"
                              G_GINT64_FORMAT ", \"colour\": \"%s\"",
                              e->overlay.is_regions ? "regions" : "catalogue", e->overlay.n,
                              e->on_image, e->overlay.nskipped, colour);
      if (!e->overlay.is_regions)
        {
          g_string_append (out, ", \"x_column\": ");
          sky_ui_json_string (out, e->overlay.x_column);
          g_string_append (out, ", \"y_column\": ");
          sky_ui_json_string (out, e->overlay.y_column);
          g_string_append (out, ", \"units\": ");
          sky_ui_json_string (out, e->overlay.units);
        }
      if (e->matched_run)
        g_string_append_printf (out, ", \"matched\": %" G_GINT64_FORMAT ", \"only_ours\": %"
                                G_GINT64_FORMAT ", \"only_theirs\": %" G_GINT64_FORMAT,
                                e->matched, e->only_ours, e->only_theirs);
      g_string_append (out, "}");
    }
  g_string_append (out, "]");
}
