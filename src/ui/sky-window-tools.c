/* SPDX-License-Identifier: GPL-3.0-or-later */
/* SkyWindow's viewing tools as scripts and the menu drive them: the
 * coordinate grid and the contours (drawn by the view), the pixel table
 * and magnifier, and the scale dialog. */
#include "sky-window-private.h"

#include "sky-contour-dialog.h"
#include "sky-pixel-tools.h"
#include "sky-scale-dialog.h"

static void
on_tools_drawn (gpointer data)
{
  sky_window_changed (data);
}

/* The view says when a frame drew a new grid or new contours: the state
 * then tells what was drawn. It says so only while it is in its window. */
static void
listen_to_view (SkyWindow *self)
{
  sky_image_view_set_tools_watcher (self->view, on_tools_drawn, self);
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

/* ------------------------------------------------- pixel table, scale */

/* The tool windows die with the main window (destroy-with-parent); the
 * window keeps a reference to each until it is finalized. */
static void
unref_window (gpointer window)
{
  g_object_unref (window);
}

/* While the tools show, the state says which pixel they show. */
static void
on_pointer_moved (SkyImageView *view, gboolean inside, double x, double y, SkyWindow *self)
{
  GtkWidget *tools = g_object_get_data (G_OBJECT (self), "sky-pixel-tools");
  if (tools != NULL && gtk_widget_get_visible (tools))
    sky_window_changed (self);
}

static SkyPixelTools *
pixel_tools (SkyWindow *self, gboolean make)
{
  SkyPixelTools *tools = g_object_get_data (G_OBJECT (self), "sky-pixel-tools");

  if (tools == NULL && make)
    {
      tools = sky_pixel_tools_new (GTK_WINDOW (self), self->view);
      g_object_set_data_full (G_OBJECT (self), "sky-pixel-tools", g_object_ref_sink (tools),
                              unref_window);
      g_signal_connect_object (self->view, "pointer-moved", G_CALLBACK (on_pointer_moved), self, 0);
    }
  return tools;
}

static void
present_or_hide_pixels (SkyWindow *self, SkyPixelTools *tools)
{
  if (sky_pixel_tools_get_size (tools) > 0 || sky_pixel_tools_get_magnifier (tools))
    gtk_window_present (GTK_WINDOW (tools));
  else
    gtk_widget_set_visible (GTK_WIDGET (tools), FALSE);
  sky_window_changed (self);
}

gboolean
sky_window_set_pixel_table (SkyWindow *self, int size)
{
  SkyPixelTools *tools;

  if (size != 0 && size != 5 && size != 7 && size != 9)
    {
      g_autofree char *detail = g_strdup_printf ("The pixel table is 5, 7 or 9 pixels a side "
                                                 "(0 hides it), not %d.", size);
      sky_window_show_error (self, "That is not a pixel table size", detail);
      return FALSE;
    }
  tools = pixel_tools (self, size > 0);
  if (tools == NULL)
    return TRUE;
  sky_pixel_tools_set_size (tools, size);
  present_or_hide_pixels (self, tools);
  return TRUE;
}

void
sky_window_set_magnifier (SkyWindow *self, gboolean show)
{
  SkyPixelTools *tools = pixel_tools (self, show);

  if (tools == NULL)
    return;
  if (show && !gtk_widget_get_visible (GTK_WIDGET (tools)))
    sky_pixel_tools_set_size (tools, 0);   /* the magnifier alone, as asked */
  sky_pixel_tools_set_magnifier (tools, show);
  present_or_hide_pixels (self, tools);
}

int
sky_window_get_pixel_table (SkyWindow *self)
{
  SkyPixelTools *tools = pixel_tools (self, FALSE);
  return tools != NULL && gtk_widget_get_visible (GTK_WIDGET (tools))
    ? sky_pixel_tools_get_size (tools) : 0;
}

gboolean
sky_window_get_magnifier (SkyWindow *self)
{
  SkyPixelTools *tools = pixel_tools (self, FALSE);
  return tools != NULL && gtk_widget_get_visible (GTK_WIDGET (tools))
    && sky_pixel_tools_get_magnifier (tools);
}

static void
on_scale_limits (SkyScaleDialog *dialog, double lo, double hi, SkyWindow *self)
{
  sky_window_set_typed_limits (self, lo, hi);
}

void
sky_window_show_scale_dialog (SkyWindow *self, gboolean show)
{
  SkyScaleDialog *dialog = g_object_get_data (G_OBJECT (self), "sky-scale-dialog");

  if (dialog == NULL && show)
    {
      dialog = sky_scale_dialog_new (GTK_WINDOW (self), self->view);
      g_signal_connect_object (dialog, "limits-changed", G_CALLBACK (on_scale_limits), self, 0);
      g_object_set_data_full (G_OBJECT (self), "sky-scale-dialog", g_object_ref_sink (dialog),
                              unref_window);
    }
  if (dialog == NULL)
    return;
  if (show)
    gtk_window_present (GTK_WINDOW (dialog));
  else
    gtk_widget_set_visible (GTK_WIDGET (dialog), FALSE);
  sky_window_changed (self);
}

gboolean
sky_window_get_scale_dialog (SkyWindow *self)
{
  GtkWidget *dialog = g_object_get_data (G_OBJECT (self), "sky-scale-dialog");
  return dialog != NULL && gtk_widget_get_visible (dialog);
}

void
sky_window_tools_describe (SkyWindow *self, GString *out)
{
  SkyPixelTools *tools = pixel_tools (self, FALSE);
  gint64 x = -1, y = -1;

  g_string_append_printf (out, ", \"pixel_table\": %d, \"magnifier\": %s",
                          sky_window_get_pixel_table (self),
                          sky_window_get_magnifier (self) ? "true" : "false");
  if (tools != NULL)
    sky_pixel_tools_get_centre (tools, &x, &y);
  /* The pixel the tools show, FITS-counted as the readout; 0 for none. */
  g_string_append_printf (out, ", \"pixel_tools_at\": [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT
                          "], \"scale_dialog\": %s", x + 1, y + 1,
                          sky_window_get_scale_dialog (self) ? "true" : "false");
}

void
sky_window_export_figure (SkyWindow *self, const char *path)
{
  g_return_if_fail (SKY_IS_WINDOW (self));
  sky_window_push_job (self, SKY_JOB_EXPORT_FIGURE, path, SKY_STEP_NONE, FALSE);
}

static void
on_levels_chosen (SkyContourDialog *dialog, const char *text, SkyWindow *self)
{
  if (sky_window_set_contours (self, text))
    gtk_widget_remove_css_class (GTK_WIDGET (sky_contour_dialog_get_entry (dialog)), "error");
  else
    gtk_widget_add_css_class (GTK_WIDGET (sky_contour_dialog_get_entry (dialog)), "error");
}

void
sky_window_show_contour_dialog (SkyWindow *self)
{
  SkyContourDialog *dialog = g_object_get_data (G_OBJECT (self), "sky-contour-dialog");
  g_autofree char *levels = sky_window_get_contours (self);

  if (dialog == NULL)
    {
      dialog = sky_contour_dialog_new (GTK_WINDOW (self));
      g_signal_connect_object (dialog, "levels-chosen", G_CALLBACK (on_levels_chosen), self, 0);
      g_object_set_data_full (G_OBJECT (self), "sky-contour-dialog", g_object_ref_sink (dialog),
                              unref_window);
    }
  sky_contour_dialog_set_text (dialog, levels);
  gtk_window_present (GTK_WINDOW (dialog));
}
