/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The cube animator: a bar under the image, shown for a cube, that plays
 * the current frame's planes one after the other, steps through them and
 * has a slider over them, with the plane's world value on its third axis
 * (sky-cube-axis.h: FREQ in GHz, VRAD in km/s...). A plane is opened as
 * the Pipeline panel's Plane control opens it (and run up to the step
 * shown); while one is still being opened or run, a tick of the player
 * waits for the next, so a slow plane is never skipped nor queued twice. */
#include "sky-window-private.h"
#include "sky-window-frames.h"
#include "sky-ui-json.h"

#include <math.h>

#include "sky-cube-axis.h"

typedef struct _SkyCube SkyCube;

struct _SkyCube {
  GtkWidget *bar;
  GtkToggleButton *play;
  GtkRange *slider;
  GtkLabel *label;
  gboolean updating;     /* the slider set from the image, not by a person */
  double interval;       /* seconds between planes */
  guint timer;
  guint64 planes_played; /* planes shown while playing */
  SkyPlaneWorld world;
  gboolean has_world;
};

static gint64
nplanes (SkyWindow *self)
{
  return self->image ? self->image->image.nplanes : 0;
}

static gboolean
busy (SkyWindow *self)
{
  return self->current != NULL || !g_queue_is_empty (&self->jobs);
}

static gboolean
play_tick (gpointer data)
{
  SkyWindow *self = data;
  gint64 n = nplanes (self);

  if (n <= 1)
    {
      self->cube->timer = 0;
      gtk_toggle_button_set_active (self->cube->play, FALSE);
      return G_SOURCE_REMOVE;
    }
  if (!busy (self))
    sky_window_set_plane (self, (self->image->image.plane + 1) % n);
  return G_SOURCE_CONTINUE;
}

static void
restart_timer (SkyWindow *self)
{
  SkyCube *cube = self->cube;

  g_clear_handle_id (&cube->timer, g_source_remove);
  if (gtk_toggle_button_get_active (cube->play) && nplanes (self) > 1)
    cube->timer = g_timeout_add ((guint) (cube->interval * 1000), play_tick, self);
}

static void
on_play_toggled (GtkToggleButton *button, SkyWindow *self)
{
  gtk_button_set_icon_name (GTK_BUTTON (button), gtk_toggle_button_get_active (button)
                            ? "media-playback-pause-symbolic" : "media-playback-start-symbolic");
  gtk_widget_set_tooltip_text (GTK_WIDGET (button), gtk_toggle_button_get_active (button)
                               ? "Pause" : "Play the planes");
  restart_timer (self);
  sky_window_changed (self);
}

/* From the plane last asked for (the Plane control's), not the plane
 * shown: two steps in quick succession go two planes, even while the
 * first one is still being opened. */
void
sky_window_cube_step (SkyWindow *self, int direction)
{
  gint64 n = nplanes (self);
  gint64 asked = (gint64) gtk_spin_button_get_value (self->plane_spin);

  if (n <= 1)
    {
      sky_window_show_error (self, "There is no cube to step through",
                             "The current frame's image has one plane.");
      return;
    }
  if (asked < 0 || asked >= n)
    asked = self->image->image.plane;
  sky_window_set_plane (self, (asked + n + (direction >= 0 ? 1 : -1)) % n);
}

static void
on_back (GtkButton *button, SkyWindow *self)
{
  sky_window_cube_step (self, -1);
}

static void
on_forward (GtkButton *button, SkyWindow *self)
{
  sky_window_cube_step (self, 1);
}

static void
on_slider_moved (GtkRange *range, SkyWindow *self)
{
  gint64 plane = (gint64) llround (gtk_range_get_value (range));

  if (self->cube->updating || self->image == NULL || plane == self->image->image.plane)
    return;
  sky_window_set_plane (self, plane);
}

/* The bar follows the current frame's image: shown for a cube, its slider
 * and label at the plane shown. */
void
sky_window_cube_image_changed (SkyWindow *self)
{
  SkyCube *cube = self->cube;
  gint64 n = nplanes (self);
  g_autofree char *text = NULL;

  if (cube == NULL)
    return;
  gtk_widget_set_visible (cube->bar, n > 1);
  if (n <= 1)
    {
      cube->has_world = FALSE;
      gtk_toggle_button_set_active (cube->play, FALSE);
      return;
    }
  cube->updating = TRUE;
  gtk_range_set_range (cube->slider, 0, (double) (n - 1));
  gtk_range_set_value (cube->slider, (double) self->image->image.plane);
  cube->updating = FALSE;
  cube->has_world = sky_cube_plane_world (&self->image->image, self->image->image.plane,
                                          &cube->world);
  text = g_strdup_printf ("Plane %" G_GINT64_FORMAT " of 0–%" G_GINT64_FORMAT "%s%s",
                          self->image->image.plane, n - 1, cube->has_world ? "   " : "",
                          cube->has_world ? cube->world.text : "");
  gtk_label_set_text (cube->label, text);
  if (gtk_toggle_button_get_active (cube->play))
    cube->planes_played++;
  sky_window_changed (self);
}

void
sky_window_set_cube_play (SkyWindow *self, gboolean play)
{
  if (play && nplanes (self) <= 1)
    {
      sky_window_show_error (self, "There is no cube to play",
                             "The current frame's image has one plane.");
      play = FALSE;
    }
  if (play)
    self->cube->planes_played = 0;
  gtk_toggle_button_set_active (self->cube->play, play);
}

gboolean
sky_window_get_cube_play (SkyWindow *self)
{
  return gtk_toggle_button_get_active (self->cube->play);
}

gboolean
sky_window_set_cube_interval (SkyWindow *self, double seconds)
{
  if (!(seconds >= 0.05 && seconds <= 10))
    {
      g_autofree char *detail = g_strdup_printf ("The cube's interval is 0.05 to 10 seconds, "
                                                 "not %g.", seconds);
      sky_window_show_error (self, "That is not an interval", detail);
      return FALSE;
    }
  self->cube->interval = seconds;
  restart_timer (self);
  sky_window_changed (self);
  return TRUE;
}

double
sky_window_get_cube_interval (SkyWindow *self)
{
  return self->cube->interval;
}

void
sky_window_cube_describe (SkyWindow *self, GString *out)
{
  SkyCube *cube = self->cube;

  if (cube == NULL)
    return;
  g_string_append_printf (out, ", \"cube\": {\"nplanes\": %" G_GINT64_FORMAT ", \"plane\": %"
                          G_GINT64_FORMAT ", \"playing\": %s, \"interval\": %g, "
                          "\"planes_played\": %" G_GUINT64_FORMAT ", \"bar\": %s",
                          nplanes (self), self->image ? self->image->image.plane : 0,
                          sky_window_get_cube_play (self) ? "true" : "false", cube->interval,
                          cube->planes_played,
                          gtk_widget_get_visible (cube->bar) ? "true" : "false");
  if (cube->has_world)
    {
      g_string_append (out, ", \"axis\": ");
      sky_ui_json_string (out, cube->world.type);
      g_string_append_printf (out, ", \"value\": %.17g, \"unit\": ", cube->world.value);
      sky_ui_json_string (out, cube->world.unit);
      g_string_append_printf (out, ", \"shown\": %.17g, \"shown_unit\": ", cube->world.shown);
      sky_ui_json_string (out, cube->world.shown_unit);
    }
  g_string_append (out, ", \"label\": ");
  sky_ui_json_string (out, gtk_label_get_text (cube->label));
  g_string_append (out, "}");
}

static GtkWidget *
icon_button (const char *icon, const char *tooltip, GCallback clicked, SkyWindow *self)
{
  GtkWidget *button = gtk_button_new_from_icon_name (icon);

  gtk_widget_set_tooltip_text (button, tooltip);
  g_signal_connect (button, "clicked", clicked, self);
  return button;
}

/* Under image_area (the image's overlay), in the box that holds it. */
void
sky_window_cube_init (SkyWindow *self, GtkWidget *image_area)
{
  SkyCube *cube = g_new0 (SkyCube, 1);
  GtkWidget *box = gtk_widget_get_parent (image_area);

  self->cube = cube;
  cube->interval = 0.5;
  cube->bar = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
  gtk_widget_add_css_class (cube->bar, "toolbar");
  gtk_box_append (GTK_BOX (cube->bar), gtk_label_new ("Cube"));
  gtk_box_append (GTK_BOX (cube->bar), icon_button ("media-skip-backward-symbolic",
                                                    "The previous plane", G_CALLBACK (on_back),
                                                    self));
  cube->play = GTK_TOGGLE_BUTTON (gtk_toggle_button_new ());
  gtk_button_set_icon_name (GTK_BUTTON (cube->play), "media-playback-start-symbolic");
  gtk_widget_set_tooltip_text (GTK_WIDGET (cube->play), "Play the planes");
  g_signal_connect (cube->play, "toggled", G_CALLBACK (on_play_toggled), self);
  gtk_box_append (GTK_BOX (cube->bar), GTK_WIDGET (cube->play));
  gtk_box_append (GTK_BOX (cube->bar), icon_button ("media-skip-forward-symbolic",
                                                    "The next plane", G_CALLBACK (on_forward),
                                                    self));
  cube->slider = GTK_RANGE (gtk_scale_new_with_range (GTK_ORIENTATION_HORIZONTAL, 0, 1, 1));
  gtk_scale_set_draw_value (GTK_SCALE (cube->slider), FALSE);
  gtk_widget_set_hexpand (GTK_WIDGET (cube->slider), TRUE);
  gtk_widget_set_size_request (GTK_WIDGET (cube->slider), 120, -1);
  g_signal_connect (cube->slider, "value-changed", G_CALLBACK (on_slider_moved), self);
  gtk_box_append (GTK_BOX (cube->bar), GTK_WIDGET (cube->slider));
  cube->label = GTK_LABEL (gtk_label_new (""));
  gtk_label_set_width_chars (cube->label, 34);
  gtk_label_set_xalign (cube->label, 0);
  gtk_box_append (GTK_BOX (cube->bar), GTK_WIDGET (cube->label));
  gtk_widget_set_visible (cube->bar, FALSE);
  gtk_box_insert_child_after (GTK_BOX (box), cube->bar, image_area);
}

void
sky_window_cube_dispose (SkyWindow *self)
{
  if (self->cube == NULL)
    return;
  g_clear_handle_id (&self->cube->timer, g_source_remove);
  g_signal_handlers_disconnect_by_func (self->cube->play, on_play_toggled, self);
  g_free (self->cube);
  self->cube = NULL;
}
