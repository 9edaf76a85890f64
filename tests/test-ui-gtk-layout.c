/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The window's layout: a steady panel width, room for the readout, a
 * narrow window. */
#include "test-ui-gtk.h"

static gboolean
count_frame (GtkWidget *widget, GdkFrameClock *clock, gpointer data)
{
  int *frames = data;
  return --*frames > 0 ? G_SOURCE_CONTINUE : G_SOURCE_REMOVE;
}

static gboolean
frames_done (gpointer data)
{
  return *(int *) data <= 0;
}

/* Until the window has gone through a few frames: a new page is laid out. */
void
wait_frames (Fixture *f)
{
  int frames = 3;
  gtk_widget_add_tick_callback (GTK_WIDGET (f->window), count_frame, &frames, NULL);
  gtk_widget_queue_allocate (GTK_WIDGET (f->window));
  iterate_until (frames_done, &frames, "three frames of the window");
}

/* The readout's text is whole: not ellipsized, and no wider than the
 * label is given. */
static void
assert_readout_whole (Fixture *f)
{
  GtkLabel *label = f->window->readout_label;
  PangoRectangle ink, logical;
  int min;

  pango_layout_get_pixel_extents (gtk_label_get_layout (label), &ink, &logical);
  gtk_widget_measure (GTK_WIDGET (label), GTK_ORIENTATION_HORIZONTAL, -1, &min, NULL, NULL, NULL);
  g_test_message ("readout %d px wide in %d px (minimum %d): %s", logical.width,
                  gtk_widget_get_width (GTK_WIDGET (label)), min, gtk_label_get_text (label));
  g_assert_false (pango_layout_is_ellipsized (gtk_label_get_layout (label)));
  g_assert_cmpint (logical.width, <=, gtk_widget_get_width (GTK_WIDGET (label)));
}

/* The longest readout the field gives: on a source, with the sky position. */
static void
point_at_source (Fixture *f)
{
  const Source *s = &field_sources[0];
  g_signal_emit_by_name (f->view, "pointer-moved", TRUE, s->x + 0.5, s->y + 0.5);
  g_assert_nonnull (strstr (gtk_label_get_text (f->window->readout_label), "source"));
}

/* Whether w is in a part of the window that scrolls vertically: reachable
 * by scrolling wherever it is. */
static gboolean
inside_window (Fixture *f, const graphene_rect_t *r)
{
  return r->origin.x >= 0 && r->origin.y >= 0
         && r->origin.x + r->size.width <= gtk_widget_get_width (GTK_WIDGET (f->window)) + 0.5
         && r->origin.y + r->size.height <= gtk_widget_get_height (GTK_WIDGET (f->window)) + 0.5;
}

static gboolean
in_scrolling_part (GtkWidget *w)
{
  for (GtkWidget *a = gtk_widget_get_parent (w); a; a = gtk_widget_get_parent (a))
    if (GTK_IS_SCROLLED_WINDOW (a))
      {
        GtkPolicyType v;
        gtk_scrolled_window_get_policy (GTK_SCROLLED_WINDOW (a), NULL, &v);
        if (v != GTK_POLICY_NEVER)
          return TRUE;
      }
  return FALSE;
}

/* Every control on screen has at least its minimum width, and lies inside
 * the window or in a part of it that scrolls (which itself lies inside,
 * and is at least 100 px high). */
static void
assert_controls_fit (Fixture *f, GtkWidget *root, int *n_checked)
{
  for (GtkWidget *w = gtk_widget_get_first_child (root); w; w = gtk_widget_get_next_sibling (w))
    {
      if (!gtk_widget_get_mapped (w))
        continue;
      if (GTK_IS_BUTTON (w) || GTK_IS_DROP_DOWN (w) || GTK_IS_SPIN_BUTTON (w) || GTK_IS_SCALE (w)
          || GTK_IS_CHECK_BUTTON (w) || GTK_IS_ENTRY (w) || GTK_IS_MENU_BUTTON (w)
          || GTK_IS_STACK_SWITCHER (w))
        {
          graphene_rect_t r;
          int min;
          g_assert_true (gtk_widget_compute_bounds (w, GTK_WIDGET (f->window), &r));
          gtk_widget_measure (w, GTK_ORIENTATION_HORIZONTAL, -1, &min, NULL, NULL, NULL);
          GtkBorder css;
          /* The minimum counts the margins (the widget's and its style's),
           * the bounds do not. */
          G_GNUC_BEGIN_IGNORE_DEPRECATIONS
          gtk_style_context_get_margin (gtk_widget_get_style_context (w), &css);
          G_GNUC_END_IGNORE_DEPRECATIONS
          if (r.size.width + gtk_widget_get_margin_start (w) + gtk_widget_get_margin_end (w)
              + css.left + css.right < min
              || (!in_scrolling_part (w) && !inside_window (f, &r)))
            g_error ("a %s (%s) at %.0f,%.0f %.0f x %.0f (minimum width %d) is cut in a window "
                     "of %d x %d", G_OBJECT_TYPE_NAME (w),
                     gtk_widget_get_tooltip_text (w) ? gtk_widget_get_tooltip_text (w) : "",
                     r.origin.x, r.origin.y, r.size.width, r.size.height, min,
                     gtk_widget_get_width (GTK_WIDGET (f->window)),
                     gtk_widget_get_height (GTK_WIDGET (f->window)));
          (*n_checked)++;
          if (!GTK_IS_STACK_SWITCHER (w))
            continue;
        }
      if (GTK_IS_SCROLLED_WINDOW (w) && in_scrolling_part (gtk_widget_get_first_child (w)))
        {
          graphene_rect_t r;
          g_assert_true (gtk_widget_compute_bounds (w, GTK_WIDGET (f->window), &r));
          if (!inside_window (f, &r) || r.size.height < 100)
            g_error ("a scrolled part (%s) at %.0f,%.0f %.0f x %.0f is cut in a window of "
                     "%d x %d", G_OBJECT_TYPE_NAME (gtk_widget_get_first_child (w)),
                     r.origin.x, r.origin.y, r.size.width, r.size.height,
                     gtk_widget_get_width (GTK_WIDGET (f->window)),
                     gtk_widget_get_height (GTK_WIDGET (f->window)));
        }
      assert_controls_fit (f, w, n_checked);
    }
}

/* Switching panels leaves the panel's width, and so the image's, as it
 * was: the panel is as wide as a page's minimum, not its natural width. */
void
test_panel_width_steady (Fixture *f)
{
  static const char *const pages[] = { "timings", "sources", "pipeline" };
  int panel_width, view_width;

  open_image (f, &field);
  click (f, "app.run", "'all'");
  wait_idle (f, "run all");
  panel_width = gtk_widget_get_width (f->window->side_panel);
  view_width = gtk_widget_get_width (GTK_WIDGET (f->view));
  g_test_message ("panel %d px, view %d px", panel_width, view_width);
  for (guint i = 0; i < G_N_ELEMENTS (pages); i++)
    {
      activate ("panel", g_variant_new_string (pages[i]));
      wait_idle (f, pages[i]);
      wait_frames (f);
      g_assert_cmpint (gtk_widget_get_width (f->window->side_panel), ==, panel_width);
      g_assert_cmpint (gtk_widget_get_width (GTK_WIDGET (f->view)), ==, view_width);
    }
}

/* The readout has a row of its own across the window: whole at the default
 * size with typed limits showing their entries, where it used to share a
 * row with them and be cut. */
void
test_readout_room (Fixture *f)
{
  open_image (f, &field);
  click (f, "app.run", "'all'");
  wait_idle (f, "run all");
  gtk_drop_down_set_selected (f->window->limits_dropdown, SKY_LIMITS_TYPED);
  wait_idle (f, "typed limits");
  point_at_source (f);
  assert_readout_whole (f);
  {
    int height = gtk_widget_get_height (GTK_WIDGET (f->view));
    /* Off the image the readout is empty, and the image keeps its size. */
    g_signal_emit_by_name (f->view, "pointer-moved", FALSE, 0.0, 0.0);
    wait_idle (f, "the readout emptied");
    g_assert_cmpint (gtk_widget_get_height (GTK_WIDGET (f->view)), ==, height);
  }
}

/* Beside DS9 on half a 1920 px screen: with the panels below the image the
 * window can be 700 x 600, every control there at its full size inside
 * it, on each page, and the readout whole. */
void
test_narrow_window (Fixture *f)
{
  static const char *const pages[] = { "pipeline", "timings", "sources" };
  int n_checked = 0;

  open_image (f, &field);
  click (f, "app.run", "'all'");
  wait_idle (f, "run all");
  gtk_drop_down_set_selected (f->window->limits_dropdown, SKY_LIMITS_TYPED);
  activate ("display", g_variant_new_string ("panels=below"));
  assert_state ("panels", "\"below\"");
  g_assert_cmpint (gtk_orientable_get_orientation (GTK_ORIENTABLE (f->window->paned)), ==,
                   GTK_ORIENTATION_VERTICAL);
  resize_window (f, 700, 600);
  for (guint i = 0; i < G_N_ELEMENTS (pages); i++)
    {
      activate ("panel", g_variant_new_string (pages[i]));
      wait_idle (f, pages[i]);
      wait_frames (f);
      assert_controls_fit (f, GTK_WIDGET (f->window), &n_checked);
    }
  if (g_getenv ("SKYSIFT_TEST_SCREENSHOTS"))
    {
      g_autofree char *shot = g_build_filename (g_getenv ("SKYSIFT_TEST_SCREENSHOTS"),
                                                "narrow-700x600.png", NULL);
      activate ("panel", g_variant_new_string ("pipeline"));
      sky_window_screenshot (f->window, "window", 1, shot);
      wait_idle (f, "the screenshot");
    }

  g_test_message ("%d controls checked", n_checked);
  g_assert_cmpint (n_checked, >, 40);
  g_assert_cmpint (gtk_widget_get_height (GTK_WIDGET (f->view)), >=, 140);
  point_at_source (f);
  assert_readout_whole (f);
  /* Hidden, and back beside the image. */
  activate ("display", g_variant_new_string ("panels=hidden"));
  wait_idle (f, "panels hidden");
  g_assert_false (gtk_widget_get_mapped (f->window->side_panel));
  activate ("display", g_variant_new_string ("panels=side"));
  resize_window (f, 1280, 820);
  g_assert_true (gtk_widget_get_mapped (f->window->side_panel));
  g_assert_cmpint (gtk_orientable_get_orientation (GTK_ORIENTABLE (f->window->paned)), ==,
                   GTK_ORIENTATION_HORIZONTAL);
}
