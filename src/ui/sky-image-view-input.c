/* SPDX-License-Identifier: GPL-3.0-or-later */
/* SkyImageView: the pointer, the wheel, drags, clicks on markers and keys. */
#include "sky-image-view-private.h"

#include <math.h>

/* Zoom steps: halves of an octave, then whole logical pixels from 2x up so
 * that every image pixel is drawn the same number of screen pixels wide. */
double
sky_image_view_next_zoom (double zoom, int direction)
{
  double z = zoom * (direction > 0 ? G_SQRT2 : 1 / G_SQRT2);
  if (z >= 1.9)
    z = direction > 0 ? MAX (round (z), floor (zoom) + 1) : MIN (round (z), ceil (zoom) - 1);
  return z;
}

static void
on_motion (GtkEventControllerMotion *motion, double x, double y, SkyImageView *self)
{
  self->pointer_inside = TRUE;
  self->pointer_x = x;
  self->pointer_y = y;
  sky_image_view_pointer_update (self);
}

static void
on_leave (GtkEventControllerMotion *motion, SkyImageView *self)
{
  self->pointer_inside = FALSE;
  sky_image_view_pointer_update (self);
}

static gboolean
on_scroll (GtkEventControllerScroll *scroll, double dx, double dy, SkyImageView *self)
{
  double zoom = self->zoom;
  GdkScrollUnit unit = gtk_event_controller_scroll_get_unit (scroll);

  if (self->image == NULL || dy == 0)
    return FALSE;
  if (unit == GDK_SCROLL_UNIT_WHEEL)
    {
      /* One click, one zoom step; a high-resolution wheel's fractions add
       * up to one. */
      int steps = (int) round (fabs (dy));
      for (int i = 0; i < MAX (steps, 1); i++)
        zoom = sky_image_view_next_zoom (zoom, dy < 0 ? 1 : -1);
    }
  else
    zoom *= exp (-dy * 0.01);  /* touchpad: smooth */
  sky_image_view_zoom_around (self, zoom, self->pointer_x, self->pointer_y);
  return TRUE;
}

static void
on_drag_begin (GtkGestureDrag *drag, double x, double y, SkyImageView *self)
{
  self->drag_cx = self->cx;
  self->drag_cy = self->cy;
  gtk_widget_grab_focus (GTK_WIDGET (self));
}

static void
on_drag_update (GtkGestureDrag *drag, double dx, double dy, SkyImageView *self)
{
  /* Within the click's tolerance (on_drag_end) a press is no pan yet: a
   * click on a marker must not unfit a fitted view. */
  if (self->image == NULL || (self->fitted && fabs (dx) <= 3 && fabs (dy) <= 3))
    return;
  self->fitted = FALSE;
  sky_image_view_set_view (self, self->zoom,
                           self->drag_cx - dx / self->zoom * (self->flip_x ? -1 : 1),
                           self->drag_cy + dy / self->zoom);
}

static void
on_drag_end (GtkGestureDrag *drag, double dx, double dy, SkyImageView *self)
{
  double x, y;
  gint64 index;

  /* A press that did not move is a click: on a marker it picks the source. */
  if (fabs (dx) > 3 || fabs (dy) > 3 || !gtk_gesture_drag_get_start_point (drag, &x, &y))
    return;
  index = sky_image_view_overlay_pick (self, x, y);
  if (index >= 0)
    g_signal_emit_by_name (self, "source-activated", index);
}

static gboolean
action_pan (GtkWidget *widget, GVariant *args, gpointer user_data)
{
  SkyImageView *self = SKY_IMAGE_VIEW (widget);
  int dx, dy;

  if (self->image == NULL)
    return FALSE;
  g_variant_get (args, "(ii)", &dx, &dy);
  self->fitted = FALSE;
  /* A tenth of the view per key press, at least one image pixel. */
  double step = MAX (gtk_widget_get_width (widget) / 10.0 / self->zoom, 1.0);
  sky_image_view_set_view (self, self->zoom, self->cx + dx * step * (self->flip_x ? -1 : 1),
                           self->cy + dy * step);
  return TRUE;
}

static gboolean
action_zoom (GtkWidget *widget, GVariant *args, gpointer user_data)
{
  SkyImageView *self = SKY_IMAGE_VIEW (widget);
  const char *what = g_variant_get_string (args, NULL);

  if (g_str_equal (what, "in"))
    sky_image_view_zoom_in (self);
  else if (g_str_equal (what, "out"))
    sky_image_view_zoom_out (self);
  else if (g_str_equal (what, "fit"))
    sky_image_view_fit (self);
  else
    sky_image_view_zoom_one (self);
  return TRUE;
}

void
sky_image_view_input_class_init (GtkWidgetClass *widget_class)
{
  gtk_widget_class_add_binding (widget_class, GDK_KEY_plus, 0, action_zoom, "s", "in");
  gtk_widget_class_add_binding (widget_class, GDK_KEY_KP_Add, 0, action_zoom, "s", "in");
  gtk_widget_class_add_binding (widget_class, GDK_KEY_equal, 0, action_zoom, "s", "in");
  gtk_widget_class_add_binding (widget_class, GDK_KEY_minus, 0, action_zoom, "s", "out");
  gtk_widget_class_add_binding (widget_class, GDK_KEY_KP_Subtract, 0, action_zoom, "s", "out");
  gtk_widget_class_add_binding (widget_class, GDK_KEY_0, 0, action_zoom, "s", "fit");
  gtk_widget_class_add_binding (widget_class, GDK_KEY_KP_0, 0, action_zoom, "s", "fit");
  gtk_widget_class_add_binding (widget_class, GDK_KEY_1, 0, action_zoom, "s", "one");
  gtk_widget_class_add_binding (widget_class, GDK_KEY_KP_1, 0, action_zoom, "s", "one");
  gtk_widget_class_add_binding (widget_class, GDK_KEY_Left, 0, action_pan, "(ii)", -1, 0);
  gtk_widget_class_add_binding (widget_class, GDK_KEY_Right, 0, action_pan, "(ii)", 1, 0);
  gtk_widget_class_add_binding (widget_class, GDK_KEY_Up, 0, action_pan, "(ii)", 0, 1);
  gtk_widget_class_add_binding (widget_class, GDK_KEY_Down, 0, action_pan, "(ii)", 0, -1);
}

void
sky_image_view_input_init (SkyImageView *self)
{
  GtkEventController *controller;
  GtkGesture *drag;

  controller = gtk_event_controller_motion_new ();
  g_signal_connect (controller, "motion", G_CALLBACK (on_motion), self);
  g_signal_connect (controller, "leave", G_CALLBACK (on_leave), self);
  gtk_widget_add_controller (GTK_WIDGET (self), controller);

  controller = gtk_event_controller_scroll_new (GTK_EVENT_CONTROLLER_SCROLL_VERTICAL);
  g_signal_connect (controller, "scroll", G_CALLBACK (on_scroll), self);
  gtk_widget_add_controller (GTK_WIDGET (self), controller);

  drag = gtk_gesture_drag_new ();
  gtk_gesture_single_set_button (GTK_GESTURE_SINGLE (drag), GDK_BUTTON_PRIMARY);
  g_signal_connect (drag, "drag-begin", G_CALLBACK (on_drag_begin), self);
  g_signal_connect (drag, "drag-update", G_CALLBACK (on_drag_update), self);
  g_signal_connect (drag, "drag-end", G_CALLBACK (on_drag_end), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (drag));
}
