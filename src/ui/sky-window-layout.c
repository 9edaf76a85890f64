/* SPDX-License-Identifier: GPL-3.0-or-later */
/* SkyWindow's layout: where the panels are, and their steady width. */
#include "sky-window-private.h"

/* The panel's least width beside the image. */
#define PANEL_MIN_WIDTH 380

/* The panels beside the image (the default), below it (for a narrow
 * window: 700 px is enough, as for DS9's side by side on half a 1920 px
 * screen) or hidden. The divider goes back to where the sizes put it. */
gboolean
sky_window_set_panels (SkyWindow *self, const char *where)
{
  gboolean below = g_str_equal (where, "below"), hidden = g_str_equal (where, "hidden");
  GAction *action = g_action_map_lookup_action (G_ACTION_MAP (self), "panels");

  if (!below && !hidden && !g_str_equal (where, "side"))
    return FALSE;
  gtk_orientable_set_orientation (GTK_ORIENTABLE (self->paned),
                                  below ? GTK_ORIENTATION_VERTICAL : GTK_ORIENTATION_HORIZONTAL);
  gtk_widget_set_visible (self->side_panel, !hidden);
  g_object_set (self->paned, "position-set", FALSE, NULL);
  g_simple_action_set_state (G_SIMPLE_ACTION (action), g_variant_new_string (where));
  sky_window_changed (self);
  return TRUE;
}

static void
change_panels (GSimpleAction *action, GVariant *value, gpointer data)
{
  sky_window_set_panels (SKY_WINDOW (data), g_variant_get_string (value, NULL));
}

/* The panel is as wide as the widest of its pages' minimum widths, so that
 * switching pages does not move the divider and refit the image (the
 * stack's page is in a scrolled window that asks for its minimum width
 * only). The source table's page is left out: its list scrolls sideways,
 * and measuring it would measure its rows. Called again when a run may
 * have widened the timings; the width only grows. */
void
sky_window_keep_panel_width (SkyWindow *self)
{
  static const char *const pages[] = { "pipeline", "timings" };
  int width = PANEL_MIN_WIDTH, now;

  for (guint i = 0; i < G_N_ELEMENTS (pages); i++)
    {
      GtkWidget *page = gtk_stack_get_child_by_name (self->panels, pages[i]);
      int min;
      gtk_widget_measure (page, GTK_ORIENTATION_HORIZONTAL, -1, &min, NULL, NULL, NULL);
      width = MAX (width, min);
    }
  gtk_widget_get_size_request (self->side_panel, &now, NULL);
  if (width > now)
    gtk_widget_set_size_request (self->side_panel, width, -1);
}

void
sky_window_layout_init (SkyWindow *self)
{
  static const GActionEntry entries[] = {
    { "panels", NULL, "s", "'side'", change_panels },
  };

  g_action_map_add_action_entries (G_ACTION_MAP (self), entries, G_N_ELEMENTS (entries), self);
  sky_window_keep_panel_width (self);
}
