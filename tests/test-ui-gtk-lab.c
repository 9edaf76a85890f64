/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The Convolution lab: its pictures at 16x, its readout and its keys. */
#include "test-ui-gtk.h"

static gboolean
lab_ready (gpointer data)
{
  SkyConvolutionLab *lab = data;
  return !sky_convolution_lab_is_busy (lab)
         && sky_image_view_get_image (sky_convolution_lab_get_deltas_view (lab)) != NULL
         && sky_image_view_get_image (sky_convolution_lab_get_result_view (lab)) != NULL;
}

/* Until view has drawn a frame showing its current state. */
static void
wait_drawn (SkyImageView *view, const char *what)
{
  gboolean drawn = FALSE;
  sky_image_view_when_drawn (view, set_flag, &drawn);
  iterate_until (flag_set, &drawn, what);
}

/* The brightest pixel of pic within r of its centre. */
static void
brightest_near_centre (const Picture *pic, int r, int *bx, int *by)
{
  double best = -1;
  for (int y = pic->height / 2 - r; y <= pic->height / 2 + r; y++)
    for (int x = pic->width / 2 - r; x <= pic->width / 2 + r; x++)
      if (luminance (pixel (pic, x, y)) > best)
        {
          best = luminance (pixel (pic, x, y));
          *bx = x;
          *by = y;
        }
}

/* app.convolution-demo opens the lab, and its timings show in the main
 * window's timings panel too; at 16x, centred on one delta of the
 * lesson's grid, the deltas view shows that one as a lone white square 16
 * screen pixels wide on black, and the result view, at the same zoom, a
 * blob that falls off smoothly from its centre in each direction. */
void
test_convolution_16x (Fixture *f)
{
  const int dx = SKY_CONVOLUTION_DEMO_FIRST + 64 * SKY_CONVOLUTION_DEMO_STEP;   /* 1032 */
  SkyConvolutionLab *lab = NULL;
  SkyImageView *deltas, *result;
  g_autoptr (Picture) dpic = NULL;
  g_autoptr (Picture) rpic = NULL;
  gpointer weak;
  int side, x, y, bx = 0, by = 0;
  Rgb c;

  /* The main window too: the lab's timings go to its timings panel. */
  open_image (f, &field);
  activate ("convolution-demo", NULL);
  for (GList *l = gtk_application_get_windows (GTK_APPLICATION (app)); l; l = l->next)
    if (SKY_IS_CONVOLUTION_LAB (l->data))
      lab = l->data;
  g_assert_nonnull (lab);
  iterate_until (lab_ready, lab, "the convolution lab's result");
  deltas = sky_convolution_lab_get_deltas_view (lab);
  result = sky_convolution_lab_get_result_view (lab);
  g_test_message ("%s", sky_convolution_lab_get_timings (lab));
  g_assert_nonnull (strstr (sky_convolution_lab_get_timings (lab), "CPU 2D separable"));
  g_assert_nonnull (strstr (sky_convolution_lab_get_timings (lab), "CPU 2D direct"));
  g_assert_nonnull (strstr (sky_convolution_lab_get_timings (lab), "CPU 1D"));
  g_assert_nonnull (strstr (sky_convolution_lab_get_timings (lab), "separable = direct: yes"));
  g_assert_nonnull (strstr (sky_convolution_lab_get_timings (lab), "GPU"));
  g_assert_cmpstr (sky_timings_panel_get_convolution (f->window->timings), ==,
                   sky_convolution_lab_get_timings (lab));

  sky_convolution_lab_show_delta (lab, 16, dx, dx);
  wait_drawn (deltas, "the deltas at 16x");
  wait_drawn (result, "the result at 16x");
  /* Which output is shown and how it reached the screen: without a GPU,
   * the CPU's, from host memory (drawn on the CPU here, or uploaded to a
   * texture where the view draws with OpenGL); never through interop. */
  {
    const char *t = sky_convolution_lab_get_timings (lab);
    g_test_message ("%s", t);
    if (!sky_pipeline_gpu_available (NULL))
      {
        g_assert_nonnull (strstr (t, "Result shown: the CPU's 2D output (separable), "));
        g_assert_nonnull (strstr (t, "from host memory"));
        g_assert_null (strstr (t, "interop"));
        g_assert_nonnull (strstr (t, sky_image_view_get_image_fill (result)));
      }
    else
      g_assert_nonnull (strstr (t, "Result shown: the GPU's 2D output, "));
  }
  /* One zoom for both. */
  g_assert_cmpfloat (sky_image_view_get_zoom (deltas), ==, 16);
  g_assert_cmpfloat (sky_image_view_get_zoom (result), ==, 16);

  /* The deltas: one white square at the centre, black all round it up to
   * seven image pixels away (the next delta is sixteen away). */
  f->view = deltas;
  dpic = render_view (f);
  side = (int) round (16 * dpic->scale);
  x = dpic->width / 2;
  y = dpic->height / 2;
  c = pixel (dpic, x, y);
  g_assert_cmpint (c.r, >=, 250);
  g_assert_true (is_grey (c, 2));
  g_assert_cmpint (run_length (dpic, x, y, 1, 0), >=, side - 2);
  g_assert_cmpint (run_length (dpic, x, y, 1, 0), <=, side + 2);
  g_assert_cmpint (run_length (dpic, x, y, 0, 1), >=, side - 2);
  g_assert_cmpint (run_length (dpic, x, y, 0, 1), <=, side + 2);
  for (int py = MAX (0, y - 7 * side); py < MIN (dpic->height, y + 7 * side); py++)
    for (int px = MAX (0, x - 7 * side); px < MIN (dpic->width, x + 7 * side); px++)
      if (abs (px - x) > side || abs (py - y) > side)
        g_assert_cmpfloat (luminance (pixel (dpic, px, py)), <=, 5);

  /* The result: its brightest point at the centre (the same delta, moved
   * by the mode's offset, which the lab centres), and from there the
   * brightness falls, never rises, one image pixel at a time, both ways
   * along the row and the column; the next pixel is still bright (a
   * blob, not a point) and seven pixels out it is near black. */
  f->view = result;
  rpic = render_view (f);
  brightest_near_centre (rpic, side, &bx, &by);
  g_assert_cmpint (abs (bx - rpic->width / 2), <=, side / 2 + 1);
  g_assert_cmpint (abs (by - rpic->height / 2), <=, side / 2 + 1);
  g_assert_cmpfloat (luminance (pixel (rpic, bx, by)), >=, 240);
  {
    static const int dirs[4][2] = { { 1, 0 }, { -1, 0 }, { 0, 1 }, { 0, -1 } };
    x = rpic->width / 2;
    y = rpic->height / 2;
    for (int d = 0; d < 4; d++)
      {
        double prev = luminance (pixel (rpic, x, y));
        GString *row = g_string_new (NULL);
        for (int k = 1; k <= 7; k++)
          {
            double l = luminance (pixel (rpic, x + dirs[d][0] * k * side,
                                         y + dirs[d][1] * k * side));
            g_string_append_printf (row, " %.0f", l);
            g_assert_cmpfloat (l, <=, prev + 1);
            if (k == 1)
              g_assert_cmpfloat (l, >=, 0.5 * luminance (pixel (rpic, x, y)));
            prev = l;
          }
        g_assert_cmpfloat (prev, <=, 0.2 * luminance (pixel (rpic, x, y)));
        g_test_message ("result, direction %d: centre %.0f then%s", d,
                        luminance (pixel (rpic, x, y)), row->str);
        g_string_free (row, TRUE);
      }
  }

  /* At Fit the view shows the zoom-out levels: the blobs (each of the
   * kernel's sum, 72, spread over 16 x 16 pixels) make a grey of about
   * 0.28 of white, never black, whichever way the levels were filled. */
  {
    g_autoptr (Picture) fitpic = NULL;
    double sum = 0;
    int n = 0;

    sky_image_view_fit (result);
    wait_drawn (result, "the result at Fit");
    f->view = result;
    fitpic = render_view (f);
    for (int py = fitpic->height / 4; py < 3 * fitpic->height / 4; py++)
      for (int px = fitpic->width / 4; px < 3 * fitpic->width / 4; px++, n++)
        sum += luminance (pixel (fitpic, px, py));
    g_test_message ("result at Fit: mean luminance %.1f (%s)", sum / n,
                    sky_image_view_get_image_fill (result));
    g_assert_cmpfloat (sum / n, >=, 30);
  }

  if (g_getenv ("SKY_TEST_CONVOLUTION_SCREENSHOT"))
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (GdkTexture) shot = sky_render_widget (GTK_WIDGET (lab), 1, &error);
      g_assert_no_error (error);
      g_assert_true (gdk_texture_save_to_png (shot, g_getenv ("SKY_TEST_CONVOLUTION_SCREENSHOT")));
    }

  /* float32 and full mode: the result is 2062 pixels square, the delta
   * moved by 7, and the lab centres the result view on it still. */
  sky_convolution_lab_choose (lab, "f32", "full", NULL);
  iterate_until (lab_ready, lab, "the lab's result in f32, full mode");
  g_assert_nonnull (strstr (sky_convolution_lab_get_timings (lab), "float32, full, 2062 x 2062"));
  g_assert_cmpint (sky_convolution_lab_get_result_offset (lab), ==, 7);
  g_assert_cmpint (sky_image_view_get_image (result)->image.nx, ==, 2062);
  g_assert_cmpfloat (sky_image_view_get_image (result)->image.pixels[(gsize) (dx + 7) * 2062
                                                                      + dx + 7], ==, 1);
  wait_drawn (result, "the f32 full result at 16x");
  g_assert_cmpfloat (sky_image_view_get_zoom (result), ==, 16);
  {
    g_autoptr (Picture) fpic = render_view (f);
    g_assert_cmpfloat (luminance (pixel (fpic, fpic->width / 2, fpic->height / 2)), >=, 250);
    g_assert_cmpfloat (luminance (pixel (fpic, fpic->width / 2 + 7 * side, fpic->height / 2)),
                       <=, 0.2 * 255);
  }
  /* One at a time: the result alone. */
  sky_convolution_lab_choose (lab, NULL, NULL, "result");
  g_assert_false (gtk_widget_get_visible (gtk_widget_get_parent (GTK_WIDGET (deltas))));
  g_assert_true (gtk_widget_get_visible (gtk_widget_get_parent (GTK_WIDGET (result))));
  sky_convolution_lab_choose (lab, NULL, NULL, "both");

  f->view = f->window->view;
  weak = lab;
  g_object_add_weak_pointer (G_OBJECT (lab), &weak);
  gtk_window_destroy (GTK_WINDOW (lab));
  iterate_until (pointer_cleared, &weak, "the closed lab to be finalized");
}

/* The window's own shortcut for trigger (as GTK writes it: "Escape",
 * "<Control>w"), or NULL. */
static GtkShortcut *
shortcut_for (GtkWidget *widget, const char *trigger)
{
  g_autoptr (GListModel) controllers = gtk_widget_observe_controllers (widget);

  for (guint i = 0; i < g_list_model_get_n_items (controllers); i++)
    {
      g_autoptr (GObject) c = g_list_model_get_item (controllers, i);
      if (!GTK_IS_SHORTCUT_CONTROLLER (c))
        continue;
      for (guint k = 0; k < g_list_model_get_n_items (G_LIST_MODEL (c)); k++)
        {
          g_autoptr (GtkShortcut) sc = g_list_model_get_item (G_LIST_MODEL (c), k);
          g_autofree char *t = gtk_shortcut_trigger_to_string (gtk_shortcut_get_trigger (sc));
          if (g_strcmp0 (t, trigger) == 0)
            return sc;   /* the controller keeps it */
        }
    }
  return NULL;
}

/* Presses trigger's shortcut on widget: what its key does. */
static void
press_shortcut (GtkWidget *widget, const char *trigger, const char *want_action)
{
  GtkShortcut *sc = shortcut_for (widget, trigger);
  g_autofree char *action = NULL;

  if (sc == NULL)
    g_error ("no %s shortcut on a %s", trigger, G_OBJECT_TYPE_NAME (widget));
  action = gtk_shortcut_action_to_string (gtk_shortcut_get_action (sc));
  g_assert_cmpstr (action, ==, want_action);
  g_assert_true (gtk_shortcut_action_activate (gtk_shortcut_get_action (sc), 0, widget, NULL));
}

static SkyConvolutionLab *
open_lab (void)
{
  SkyConvolutionLab *lab = NULL;

  activate ("convolution-demo", NULL);
  for (GList *l = gtk_application_get_windows (GTK_APPLICATION (app)); l; l = l->next)
    if (SKY_IS_CONVOLUTION_LAB (l->data))
      lab = l->data;
  g_assert_nonnull (lab);
  iterate_until (lab_ready, lab, "the convolution lab's result");
  return lab;
}

/* The Convolution lab: a colour bar under each view and a readout of the
 * pixel under the pointer, in either view, so that the blurred Gaussian's
 * values can be read at 16x; Escape and Ctrl+W close it, and Ctrl+W closes
 * the main window. */
void
test_lab_readout_keys (Fixture *f)
{
  const int dx = SKY_CONVOLUTION_DEMO_FIRST + 64 * SKY_CONVOLUTION_DEMO_STEP;   /* 1032 */
  SkyConvolutionLab *lab;
  SkyImageView *views[2];
  GtkWidget *readout = NULL;
  gpointer weak_lab, weak_window;
  int bars = 0;

  open_image (f, &field);
  lab = open_lab ();
  views[0] = sky_convolution_lab_get_deltas_view (lab);
  views[1] = sky_convolution_lab_get_result_view (lab);
  sky_convolution_lab_show_delta (lab, 16, dx, dx);
  wait_drawn (views[1], "the result at 16x");

  /* A colour bar for each view. */
  for (guint i = 0; i < 2; i++)
    {
      GtkWidget *column = gtk_widget_get_parent (GTK_WIDGET (views[i]));
      for (GtkWidget *w = gtk_widget_get_first_child (column); w; w = gtk_widget_get_next_sibling (w))
        if (SKY_IS_COLOR_BAR (w))
          {
            SkyImageView *bound = NULL;
            g_object_get (w, "view", &bound, NULL);
            g_assert_true (bound == views[i]);
            g_clear_object (&bound);
            bars++;
          }
    }
  g_assert_cmpint (bars, ==, 2);

  /* The readout: one pixel right of the centre of the blob. */
  g_signal_emit_by_name (views[1], "pointer-moved", TRUE, dx + 1.5, dx + 0.5);
  {
    SkyImageData *data = sky_image_view_get_image (views[1]);
    float v = data->image.pixels[(gsize) dx * data->image.nx + dx + 1];
    g_autofree char *want = g_strdup_printf ("result  x %5d  y %5d (FITS, from 1)  %.6g",
                                             dx + 2, dx + 1, v);
    readout = header_label_prefix (GTK_WIDGET (lab), "result  x");
    g_assert_nonnull (readout);
    g_assert_cmpstr (gtk_label_get_text (GTK_LABEL (readout)), ==, want);
    g_assert_cmpfloat (v, >, 0.5);
    g_assert_cmpfloat (v, <, 1);
  }
  g_signal_emit_by_name (views[0], "pointer-moved", TRUE, dx + 0.5, dx + 0.5);
  {
    g_autofree char *want = g_strdup_printf ("deltas  x %5d  y %5d (FITS, from 1)  1", dx + 1,
                                             dx + 1);
    g_assert_cmpstr (gtk_label_get_text (GTK_LABEL (readout)), ==, want);
  }
  g_signal_emit_by_name (views[1], "pointer-moved", TRUE, dx + 1.5, dx + 0.5);
  wait_frames (f);
  save_widget_picture (GTK_WIDGET (lab), "convolution-16x.png");
  g_signal_emit_by_name (views[0], "pointer-moved", FALSE, 0.0, 0.0);
  g_assert_cmpstr (gtk_label_get_text (GTK_LABEL (readout)), ==, "");

  /* Escape closes the lab; Ctrl+W closes it too, and the main window. */
  weak_lab = lab;
  g_object_add_weak_pointer (G_OBJECT (lab), &weak_lab);
  press_shortcut (GTK_WIDGET (lab), "Escape", "action(window.close)");
  iterate_until (pointer_cleared, &weak_lab, "the lab closed by Escape");
  lab = open_lab ();
  weak_lab = lab;
  g_object_add_weak_pointer (G_OBJECT (lab), &weak_lab);
  press_shortcut (GTK_WIDGET (lab), "<Control>w", "action(window.close)");
  iterate_until (pointer_cleared, &weak_lab, "the lab closed by Ctrl+W");

  weak_window = f->window;
  g_object_add_weak_pointer (G_OBJECT (f->window), &weak_window);
  press_shortcut (GTK_WIDGET (f->window), "<Control>w", "action(window.close)");
  f->window = NULL;
  iterate_until (pointer_cleared, &weak_window, "the main window closed by Ctrl+W");
}

/* Each case in a window of its own, closed (and finalized) after it. */
