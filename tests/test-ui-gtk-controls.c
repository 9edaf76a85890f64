/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The parameter controls: the readout, a cube's planes, kappa and the
 * threshold typed, the limits' error clearing, the wheel over the panel. */
#include "test-ui-gtk.h"

/* The readout under the pointer: pixel and value, then the sky position
 * and the source, whole at the window's default size. */
void
test_readout (Fixture *f)
{
  const Source *s = &field_sources[0];
  const char *text;
  g_auto (GStrv) lines = NULL;
  g_autofree char *first = NULL;
  g_autofree char *source = NULL;
  int label, height;

  open_image (f, &field);
  click (f, "app.run", "'all'");
  wait_idle (f, "run all");
  /* The image keeps its size as the readout, empty so far, shows two lines. */
  g_assert_cmpstr (gtk_label_get_text (f->window->readout_label), ==, "");
  height = gtk_widget_get_height (GTK_WIDGET (f->view));
  label = f->window->run->labels[(gsize) s->y * FIELD_NX + (gsize) s->x];
  g_assert_cmpint (label, >, 0);
  g_signal_emit_by_name (f->view, "pointer-moved", TRUE, s->x + 0.5, s->y + 0.5);
  wait_idle (f, "the readout drawn");
  text = gtk_label_get_text (f->window->readout_label);
  g_test_message ("readout: %s", text);
  lines = g_strsplit (text, "\n", -1);
  g_assert_cmpuint (g_strv_length (lines), ==, 2);
  /* FITS pixels, counted from 1, and said so. */
  first = g_strdup_printf ("x %5d  y %5d (FITS, from 1)  ", (int) s->x + 1, (int) s->y + 1);
  g_assert_true (g_str_has_prefix (lines[0], first));
  g_assert_nonnull (strstr (lines[0], "JY/BEAM"));
  g_assert_nonnull (strstr (lines[1], "17:45:"));     /* RA near 266.4 degrees */
  source = g_strdup_printf ("source %d", label);
  g_assert_true (g_str_has_suffix (lines[1], source));
  g_assert_false (pango_layout_is_ellipsized (gtk_label_get_layout (f->window->readout_label)));
  wait_frames (f);   /* laid out anew with the two lines */
  g_assert_cmpint (gtk_widget_get_height (GTK_WIDGET (f->view)), ==, height);

  /* Off the image: nothing. */
  g_signal_emit_by_name (f->view, "pointer-moved", FALSE, 0.0, 0.0);
  g_assert_cmpstr (gtk_label_get_text (f->window->readout_label), ==, "");
}
/* A cube of nplanes planes of nx x ny whose every pixel holds its plane's
 * number times 10 (plus noise to give the clip something to measure). */
char *
write_cube (const char *name, int nx, int ny, int nplanes)
{
  char *path = sky_test_tmp_path (name);
  g_autofree char *create = g_strconcat ("!", path, NULL);
  long axes[3] = { nx, ny, nplanes };
  float *v = noise (nx, ny * nplanes, 99);
  fitsfile *f = NULL;
  int status = 0;

  for (int p = 0; p < nplanes; p++)
    for (int i = 0; i < nx * ny; i++)
      v[(gsize) p * nx * ny + i] += 10.0f * p;
  fits_create_file (&f, create, &status);
  fits_create_img (f, FLOAT_IMG, 3, axes, &status);
  fits_write_img (f, TFLOAT, 1, (LONGLONG) nx * ny * nplanes, v, &status);
  fits_close_file (f, &status);
  g_free (v);
  fail_on_cfitsio (path, status);
  return path;
}
/* A cube: the Plane control shows its range and opens another plane; a
 * 2D image hides it. */
void
test_cube_planes (Fixture *f)
{
  Image cube = { write_cube ("cube.fits", 40, 30, 3), 40, 30 };
  g_autofree char *subtitle = NULL;
  double mean = 0;

  open_image (f, &cube);
  g_assert_true (gtk_widget_get_visible (f->window->plane_box));
  g_assert_cmpstr (gtk_label_get_text (f->window->plane_range_label), ==, "of 0–2");
  g_assert_cmpfloat (gtk_spin_button_get_value (f->window->plane_spin), ==, 0);

  gtk_spin_button_set_value (f->window->plane_spin, 2);
  wait_idle (f, "plane 2");
  g_assert_cmpfloat (state_number ("plane"), ==, 2);
  for (int i = 0; i < 40 * 30; i++)
    mean += f->window->image->image.pixels[i] / (40.0 * 30.0);
  g_assert_cmpfloat (fabs (mean - 20), <, 0.5);   /* plane 2's pixels: 20 + noise */
  subtitle = g_strdup (gtk_label_get_text (f->window->subtitle_label));
  g_assert_nonnull (strstr (subtitle, "plane 2 (of 0–2)"));
  g_assert_cmpfloat (gtk_spin_button_get_value (f->window->plane_spin), ==, 2);

  open_image (f, &field);
  g_assert_false (gtk_widget_get_visible (f->window->plane_box));
  g_free (cube.path);
}

/* Types text into a spin button and presses Enter, as a person does. */
static void
type_into_spin (GtkSpinButton *spin, const char *text)
{
  gtk_editable_set_text (GTK_EDITABLE (spin), text);
  g_signal_emit_by_name (gtk_widget_get_first_child (GTK_WIDGET (spin)), "activate");
}

static void
assert_status_has (Fixture *f, const char *part)
{
  const char *status = gtk_label_get_text (f->window->status_label);
  if (strstr (status, part) == NULL)
    g_error ("the status line does not say \"%s\": %s", part, status);
}

/* A typo in "Clip at κ" is refused with its reason and κ stays (it used
 * to become 0 and then the lower bound, 1, without a word, and the image
 * came out flat); κ below 2, where clipping noise collapses, is refused
 * too; a good value re-runs and the error goes from the status line. */
void
test_kappa_typed (Fixture *f)
{
  SkyWindow *w;

  open_image (f, &field);
  w = f->window;
  click (f, "app.run", "'all'");
  wait_idle (f, "run all");

  type_into_spin (w->kappa_spin, "x3");
  assert_state ("busy", "false");   /* no re-run */
  g_assert_cmpfloat (gtk_adjustment_get_value (w->kappa_adjustment), ==, 3);
  g_assert_cmpfloat (state_number ("clip_kappa"), ==, 3);
  assert_status_has (f, "Clip at κ: “x3” is not a number; it stays 3");
  assert_state ("last_error", "\"Clip at κ: “x3” is not a number");
  g_assert_true (gtk_widget_has_css_class (GTK_WIDGET (w->kappa_spin), "error"));
  g_assert_cmpstr (gtk_editable_get_text (GTK_EDITABLE (w->kappa_spin)), ==, "3.0");

  type_into_spin (w->kappa_spin, "1");
  assert_state ("busy", "false");
  g_assert_cmpfloat (state_number ("clip_kappa"), ==, 3);
  assert_status_has (f, "Clip at κ: 1 is below 2, where clipping noise no longer converges");
  g_assert_cmpfloat (gtk_adjustment_get_lower (w->kappa_adjustment), ==, 2);

  type_into_spin (w->kappa_spin, " 2.5 ");
  g_assert_cmpfloat (state_number ("clip_kappa"), ==, 2.5);
  wait_idle (f, "the re-run at kappa 2.5");
  g_assert_cmpfloat (w->run->params.clip_kappa, ==, 2.5);
  g_assert_null (strstr (gtk_label_get_text (w->status_label), "Clip at κ"));
  g_assert_false (gtk_widget_has_css_class (GTK_WIDGET (w->kappa_spin), "error"));
  g_assert_false (w->run->stats.flat);
  g_assert_cmpfloat (state_number ("nsources"), ==, N_FIELD_SOURCES);
}

/* The threshold has a number field beside its slider: 25σ typed or sent by
 * app.threshold is taken (the slider rests at its end, 20), and a
 * threshold out of range is refused with a message, not clamped. */
void
test_threshold_field (Fixture *f)
{
  SkyWindow *w;

  open_image (f, &field);
  w = f->window;
  click (f, "app.run", "'all'");
  wait_idle (f, "run all");

  type_into_spin (w->threshold_spin, "25");
  wait_idle (f, "threshold 25 typed");
  g_assert_cmpfloat (state_number ("threshold"), ==, 25);
  g_assert_cmpfloat (w->run->params.threshold, ==, 25);
  g_assert_cmpfloat (gtk_range_get_value (GTK_RANGE (w->threshold_scale)), ==, 20);
  g_assert_cmpfloat (state_number ("nsources"), ==, N_ABOVE_20_SIGMA);

  /* The slider moves the number. */
  gtk_range_set_value (GTK_RANGE (w->threshold_scale), 12);
  wait_idle (f, "threshold 12 from the slider");
  g_assert_cmpfloat (state_number ("threshold"), ==, 12);
  g_assert_cmpfloat (gtk_spin_button_get_value (w->threshold_spin), ==, 12);

  activate ("threshold", g_variant_new_double (25));
  wait_idle (f, "app.threshold 25");
  g_assert_cmpfloat (state_number ("threshold"), ==, 25);
  g_assert_cmpfloat (action_threshold (), ==, 25);

  activate ("threshold", g_variant_new_double (5000));
  assert_state ("busy", "false");
  g_assert_cmpfloat (state_number ("threshold"), ==, 25);
  assert_state ("last_error", "\"That is not a threshold: The threshold is 1 to 1000 σ, not 5000");

  type_into_spin (w->threshold_spin, "5 sigma");
  assert_state ("busy", "false");
  g_assert_cmpfloat (state_number ("threshold"), ==, 25);
  assert_status_has (f, "Threshold: “5 sigma” is not a number; it stays 25");
}

/* An error about typed display limits goes from the status line once it no
 * longer applies: good limits entered, or another choice of limits. */
void
test_limits_error_clears (Fixture *f)
{
  SkyWindow *w;

  open_image (f, &field);
  w = f->window;
  gtk_drop_down_set_selected (w->limits_dropdown, SKY_LIMITS_TYPED);
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (w->lo_entry)));
  gtk_editable_set_text (GTK_EDITABLE (w->lo_entry), "5");
  gtk_editable_set_text (GTK_EDITABLE (w->hi_entry), "1");
  g_signal_emit_by_name (w->hi_entry, "activate");
  assert_status_starts (f, "Display limits: two numbers, the lower first");

  gtk_editable_set_text (GTK_EDITABLE (w->hi_entry), "50");
  g_signal_emit_by_name (w->hi_entry, "activate");
  wait_idle (f, "limits 5, 50");
  g_assert_cmpstr (gtk_label_get_text (w->status_label), ==, "");
  {
    g_autofree char *json = state_json ();
    g_assert_true (g_str_has_prefix (state_field (json, "scale"), "[5, 50]"));
  }

  gtk_editable_set_text (GTK_EDITABLE (w->lo_entry), "low");
  g_signal_emit_by_name (w->lo_entry, "activate");
  assert_status_starts (f, "Display limits");
  activate ("display", g_variant_new_string ("limits=zscale"));
  g_assert_cmpstr (gtk_label_get_text (w->status_label), ==, "");

  /* A status line that has moved on is left alone. */
  gtk_drop_down_set_selected (w->limits_dropdown, SKY_LIMITS_TYPED);
  gtk_editable_set_text (GTK_EDITABLE (w->lo_entry), "low");
  g_signal_emit_by_name (w->lo_entry, "activate");
  click (f, "app.run", "'clip'");
  wait_idle (f, "clip");
  {
    g_autofree char *status = g_strdup (gtk_label_get_text (w->status_label));
    g_assert_null (strstr (status, "Display limits"));
    activate ("display", g_variant_new_string ("limits=minmax"));
    g_assert_cmpstr (gtk_label_get_text (w->status_label), ==, status);
  }
}

typedef struct {
  GtkWidget *window;
  int width, height;
} WindowSize;

static gboolean
window_has_size (gpointer data)
{
  WindowSize *want = data;
  /* Within the client-side decoration's border. */
  return abs (gtk_widget_get_width (want->window) - want->width) <= 20
         && abs (gtk_widget_get_height (want->window) - want->height) <= 20;
}

/* Resizes the window as a user's drag does, and waits for the new size to
 * be laid out and drawn. */
void
resize_window (Fixture *f, int width, int height)
{
  WindowSize want = { GTK_WIDGET (f->window), width, height };

  gtk_window_set_default_size (GTK_WINDOW (f->window), width, height);
  iterate_until (window_has_size, &want, "the window's new size");
  wait_idle (f, "the window resized");
}

static GtkEventController *
wheel_controller (GtkWidget *control)
{
  g_autoptr (GListModel) controllers = gtk_widget_observe_controllers (control);

  for (guint i = 0; i < g_list_model_get_n_items (controllers); i++)
    {
      g_autoptr (GtkEventController) c = g_list_model_get_item (controllers, i);
      if (g_strcmp0 (gtk_event_controller_get_name (c), "sky-wheel-when-focused") == 0)
        return c;
    }
  g_error ("no wheel controller on a %s", G_OBJECT_TYPE_NAME (control));
  return NULL;
}

/* A wheel turn over the threshold slider, the threshold's number or κ, in
 * the scrolled Pipeline panel, scrolls the panel and leaves the parameter
 * (it used to move the threshold and start a long re-run), until the
 * control has the focus. The policy is a scroll controller in the capture
 * phase, which runs before the control's own; the test sends it the
 * wheel's scroll. */
void
test_panel_wheel (Fixture *f)
{
  SkyWindow *w;
  GtkAdjustment *panel;
  GtkWidget *controls[3];
  double before;
  gboolean handled = FALSE;

  open_image (f, &field);
  w = f->window;
  click (f, "app.run", "'all'");
  wait_idle (f, "run all");
  /* Short enough that the panel scrolls. */
  resize_window (f, 1280, 420);
  panel = gtk_scrolled_window_get_vadjustment (
    GTK_SCROLLED_WINDOW (gtk_widget_get_ancestor (GTK_WIDGET (w->threshold_scale),
                                                  GTK_TYPE_SCROLLED_WINDOW)));
  g_assert_cmpfloat (gtk_adjustment_get_upper (panel), >, gtk_adjustment_get_page_size (panel));

  controls[0] = GTK_WIDGET (w->threshold_scale);
  controls[1] = GTK_WIDGET (w->threshold_spin);
  controls[2] = GTK_WIDGET (w->kappa_spin);
  for (guint i = 0; i < G_N_ELEMENTS (controls); i++)
    {
      GtkEventController *wheel = wheel_controller (controls[i]);

      g_assert_cmpint (gtk_event_controller_get_propagation_phase (wheel), ==, GTK_PHASE_CAPTURE);
      gtk_widget_grab_focus (GTK_WIDGET (w->view));
      gtk_adjustment_set_value (panel, 0);
      g_signal_emit_by_name (wheel, "scroll", 0.0, 1.0, &handled);
      g_assert_true (handled);
      g_assert_cmpfloat (gtk_adjustment_get_value (panel), >, 0);
      assert_state ("busy", "false");
      g_assert_cmpfloat (state_number ("threshold"), ==, 5);
      g_assert_cmpfloat (state_number ("clip_kappa"), ==, 3);

      /* Focused, the wheel is the control's. */
      g_assert_true (gtk_widget_grab_focus (controls[i]));
      before = gtk_adjustment_get_value (panel);
      g_signal_emit_by_name (wheel, "scroll", 0.0, 1.0, &handled);
      g_assert_false (handled);
      g_assert_cmpfloat (gtk_adjustment_get_value (panel), ==, before);
    }
}
