/* SPDX-License-Identifier: GPL-3.0-or-later */
/* SkyWindow's viewing tools as scripts and the menu drive them: the
 * coordinate grid and the contours (drawn by the view), the pixel table
 * and magnifier, and the scale dialog. */
#include "sky-window-private.h"

/* The view says when a frame drew a new grid or new contours: the state
 * then tells what was drawn. Connected when a script or the menu first
 * asks for either. */
static void
listen_to_view (SkyWindow *self)
{
  if (g_object_get_data (G_OBJECT (self), "sky-tools-listening") != NULL)
    return;
  g_object_set_data (G_OBJECT (self), "sky-tools-listening", GINT_TO_POINTER (1));
  g_signal_connect_object (self->view, "display-changed", G_CALLBACK (sky_window_changed), self,
                           G_CONNECT_SWAPPED);
}

void
sky_window_set_grid (SkyWindow *self, gboolean show)
{
  listen_to_view (self);
  if (show && self->image != NULL && !self->image->has_wcs)
    {
      g_free (self->last_error);
      self->last_error = g_strdup_printf ("%s has no celestial WCS: no coordinate grid to draw",
                                          self->image->display_name);
      sky_window_set_status (self, self->last_error);
    }
  sky_image_view_set_grid (self->view, show);
  sky_window_changed (self);
}

gboolean
sky_window_get_grid (SkyWindow *self)
{
  return sky_image_view_get_grid (self->view);
}

/* Sigma levels and the threshold need a clipped run: where none is shown,
 * one is started (it shows the histogram, as the Clip button does). */
gboolean
sky_window_set_contours (SkyWindow *self, const char *text)
{
  g_autoptr (GError) error = NULL;
  SkyContourSpec spec;

  listen_to_view (self);
  if (!sky_contour_spec_parse (text, &spec, &error))
    {
      sky_window_show_error (self, "Those are not contour levels", error->message);
      return FALSE;
    }
  sky_image_view_set_contours (self->view, &spec);
  if ((spec.threshold || (spec.sigma && spec.n > 0)) && self->image != NULL
      && (self->run == NULL || self->run->done < SKY_STEP_CLIP))
    sky_window_run (self, SKY_STEP_CLIP);
  sky_window_changed (self);
  return TRUE;
}

char *
sky_window_get_contours (SkyWindow *self)
{
  return sky_contour_spec_to_string (sky_image_view_get_contours (self->view));
}
