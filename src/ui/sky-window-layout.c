/* SkyWindow's layout: the panels' steady width. */
#include "sky-window-private.h"

/* The panel's least width beside the image. */
#define PANEL_MIN_WIDTH 380

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
  sky_window_keep_panel_width (self);
}
