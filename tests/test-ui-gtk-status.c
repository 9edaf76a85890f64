/* SPDX-License-Identifier: GPL-3.0-or-later */
/* What the window says: the GPU fault banner, limits set by junk pixels,
 * the status line after a run, a plane's re-run. */
#include "test-ui-gtk.h"

static gboolean
banner_shown (gpointer revealer)
{
  return gtk_revealer_get_child_revealed (revealer);
}
/* A GPU that fails leaves a banner saying so over the CPU's complete
 * results. With a GPU, the user's path: choose it, run, with a device
 * memory limit it cannot meet. Without one, the window gets what a GPU run
 * gives there (the pipeline falls back, as it does for a missing device). */
void
test_gpu_fault_banner (Fixture *f)
{
  g_autoptr (Picture) pic = NULL;
  gboolean have_gpu = sky_backend_available (SKY_BACKEND_GPU, NULL);
  g_autofree char *why = have_gpu ? g_strdup ("SKYSIFT_GPU_MEMORY_LIMIT") : NULL;

  open_image (f, &field);
  assert_state ("gpu_banner", "\"\"");
  g_setenv ("SKYSIFT_GPU_MEMORY_LIMIT", "1K", TRUE);
  if (have_gpu)
    {
      activate ("backend", g_variant_new_string ("gpu"));
      click (f, "app.run", "'all'");
      wait_idle (f, "run all on a GPU out of memory");
    }
  else
    {
      g_autoptr (GError) error = NULL;
      SkyParams params = f->window->params;
      g_autoptr (SkyRun) run = sky_pipeline_run (f->window->image, &params, SKY_BACKEND_GPU,
                                                 SKY_STEP_MEASURE, NULL, NULL, &error);
      g_assert_no_error (error);
      g_assert_nonnull (run->gpu_fault);
      why = g_strdup (run->gpu_fault);
      sky_window_apply_run (f->window, run, SKY_STEP_MEASURE);
      wait_idle (f, "the fallen-back run drawn");
    }
  g_unsetenv ("SKYSIFT_GPU_MEMORY_LIMIT");
  /* The banner gives the reason: the memory limit, or the GPU's failure
   * (no device, or a build without CUDA) that the run kept. */
  assert_state ("gpu_banner", "\"The GPU failed, so the CPU finished this run. ");
  {
    g_autofree char *json = state_json ();
    if (strstr (state_field (json, "gpu_banner"), why) == NULL)
      g_error ("the banner does not say \"%s\": %s", why, json);
  }
  iterate_until (banner_shown, f->window->gpu_banner, "the banner to slide in");
  wait_idle (f, "the view under the banner");   /* smaller now: a new zoom */
  g_assert_true (gtk_widget_get_mapped (GTK_WIDGET (f->window->gpu_banner_label)));
  /* Nothing is lost: every source found, listed and marked. */
  assert_state ("done", "\"measure\"");
  g_assert_cmpfloat (state_number ("nsources"), ==, N_FIELD_SOURCES);
  g_assert_cmpint (f->window->run->catalogue.n, ==, N_FIELD_SOURCES);
  pic = render_view (f);
  for (guint s = 0; s < N_FIELD_SOURCES; s++)
    assert_ring (f, pic, &field_sources[s]);
  if (g_getenv ("SKYSIFT_TEST_SCREENSHOTS"))
    {
      g_autofree char *shot = g_build_filename (g_getenv ("SKYSIFT_TEST_SCREENSHOTS"),
                                                "gpu-fault-banner.png", NULL);
      sky_window_screenshot (f->window, "window", 1, shot);
      wait_idle (f, "the screenshot");
    }

  g_signal_emit_by_name (f->window->gpu_banner_close, "clicked");
  assert_state ("gpu_banner", "\"\"");
  g_assert_cmpint (f->window->run->catalogue.n, ==, N_FIELD_SOURCES);
}

/* 21 junk pixels (±3e38) in 512 x 512 of noise, under 0.01% of them, set
 * the min-max range: the default view would be one colour. The app shows
 * 99.9% limits instead, says so in the Pipeline panel, and goes back to
 * min-max for the next image; the user's choice of min-max stands. */
void
test_junk_pixel_limits (Fixture *f)
{
  float *v = noise (512, 512, 11);
  Image junk = { NULL, 512, 512 };
  g_autoptr (Picture) pic = NULL;
  int x0, y0, x1, y1;
  double sum = 0, sum2 = 0, n = 0;

  for (int k = 0; k < 21; k++)
    v[(gsize) (k * 12289) % (512 * 512)] = k % 2 ? 3e38f : -3e38f;
  junk.path = write_fits ("junk.fits", v, 512, 512, -1);
  g_free (v);

  open_image (f, &junk);
  assert_state ("limits", "\"99.9\"");
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (f->window->limits_note)));
  g_test_message ("%s", gtk_label_get_text (f->window->limits_note));
  g_assert_true (g_str_has_prefix (gtk_label_get_text (f->window->limits_note),
                                   "Display limits 99.9%, not min–max: 21 pixels (0.008% of "
                                   "the image) reach -3e+38 to 3e+38"));
  /* The noise shows: not one colour. */
  pic = render_view (f);
  image_rect (f, pic, &x0, &y0, &x1, &y1);
  for (int y = y0 + 1; y < y1 - 1; y += 2)
    for (int x = x0 + 1; x < x1 - 1; x += 2)
      {
        double l = luminance (pixel (pic, x, y));
        sum += l;
        sum2 += l * l;
        n++;
      }
  g_test_message ("luminance spread %.1f", sqrt (sum2 / n - (sum / n) * (sum / n)));
  g_assert_cmpfloat (sqrt (sum2 / n - (sum / n) * (sum / n)), >, 10);

  open_image (f, &field);
  assert_state ("limits", "\"minmax\"");
  g_assert_false (gtk_widget_get_visible (GTK_WIDGET (f->window->limits_note)));

  /* Chosen by the user, min-max stays, and the note goes. */
  open_image (f, &junk);
  assert_state ("limits", "\"99.9\"");
  gtk_drop_down_set_selected (f->window->limits_dropdown, SKY_LIMITS_MINMAX);
  assert_state ("limits", "\"minmax\"");
  g_assert_false (gtk_widget_get_visible (GTK_WIDGET (f->window->limits_note)));
  g_free (junk.path);
}

/* The status line says "<steps> took <ms> on the CPU" for the steps
 * that ran, summing their times only, and names the steps reused. */
static void
assert_status_ran (Fixture *f, const char *found, const SkyStep *ran, int nran,
                   const char *reused)
{
  const SkyRun *run = f->window->run;
  g_autoptr (GString) want = g_string_new (found);
  double ms = 0;

  g_string_append (want, "; ");
  for (int k = 0; k < nran; k++)
    {
      g_string_append_printf (want, "%s%s", k == 0 ? "" : k == nran - 1 ? " and " : ", ",
                              sky_step_name (ran[k]));
      ms += run->cpu.ms[ran[k]];
    }
  g_string_append_printf (want, " took %.1f ms on the CPU", ms);
  if (reused)
    g_string_append_printf (want, " (%s reused)", reused);
  g_test_message ("status: %s", gtk_label_get_text (f->window->status_label));
  g_assert_cmpstr (gtk_label_get_text (f->window->status_label), ==, want->str);
}

/* After a threshold move the status line counts the steps that ran, not
 * the clip the move reused (it used to add the clip's earlier time to the
 * "four steps"); 8-connectivity reuses the mask too; a step asked for
 * again runs nothing. */
void
test_status_says_what_ran (Fixture *f)
{
  static const SkyStep all[] = { SKY_STEP_CLIP, SKY_STEP_SEGMENT, SKY_STEP_LABEL,
                                 SKY_STEP_MEASURE };

  open_image (f, &field);
  click (f, "app.run", "'all'");
  wait_idle (f, "run all");
  assert_status_ran (f, "4 sources", all, 4, NULL);

  activate ("threshold", g_variant_new_double (20));
  wait_idle (f, "threshold 20");
  assert_status_ran (f, "2 sources", all + 1, 3, "clip");

  activate ("connectivity", g_variant_new_int32 (8));
  wait_idle (f, "8-connected");
  assert_status_ran (f, "2 sources", all + 2, 2, "clip and segment");

  click (f, "app.run", "'measure'");
  wait_idle (f, "measure again");
  assert_status_starts (f, "2 sources; nothing ran: the results were there");
}

/* A threshold move gives the mask and labels shown to the run replacing
 * them (the runner's pool hands the same arrays back to it), so that a big
 * image never holds two sets; the run replaced keeps its catalogue. A
 * connectivity change keeps the mask and gives only the labels. */
void
test_rerun_gives_back_arrays (Fixture *f)
{
  g_autoptr (SkyRun) shown = NULL;
  g_autoptr (SkyRun) moved = NULL;
  const guint8 *mask;
  const gint32 *labels;

  open_image (f, &field);
  click (f, "app.run", "'all'");
  wait_idle (f, "run all");
  shown = sky_run_ref (f->window->run);
  mask = shown->mask;
  labels = shown->labels;
  g_assert_nonnull (mask);

  activate ("threshold", g_variant_new_double (20));
  wait_idle (f, "threshold 20");
  g_assert_true (f->window->run != shown);
  g_assert_null (shown->mask);
  g_assert_null (shown->labels);
  g_assert_cmpint (shown->catalogue.n, ==, 4);
  g_assert_true (f->window->run->mask == mask);
  g_assert_true (f->window->run->labels == labels);
  g_assert_cmpint (f->window->run->nsources, ==, 2);

  moved = sky_run_ref (f->window->run);
  activate ("connectivity", g_variant_new_int32 (8));
  wait_idle (f, "8-connected");
  g_assert_true (moved->mask == mask);
  g_assert_null (moved->labels);
  g_assert_true (f->window->run->mask == mask);
  g_assert_true (f->window->run->labels == labels);
}

/* Another plane of a cube keeps the step shown: it runs again on the new
 * plane, as a moved threshold does, where it used to drop the results. */
void
test_plane_reruns (Fixture *f)
{
  Image cube = { write_cube ("cube-rerun.fits", 40, 30, 3), 40, 30 };

  open_image (f, &cube);
  click (f, "app.run", "'segment'");
  wait_idle (f, "segment");
  assert_state ("shown_step", "\"segment\"");

  gtk_spin_button_set_value (f->window->plane_spin, 1);
  wait_idle (f, "plane 1");
  g_assert_cmpfloat (state_number ("plane"), ==, 1);
  assert_state ("shown_step", "\"segment\"");
  assert_state ("done", "\"segment\"");
  g_assert_true (f->window->run->image == f->window->image);
  /* Plane 1 is 10 + noise: its median says which plane was clipped. */
  g_assert_cmpfloat (fabs (f->window->run->stats.median - 10), <, 0.5);
  {
    gboolean mask;
    g_object_get (f->view, "show-mask", &mask, NULL);
    g_assert_true (mask);
  }

  /* With nothing shown, another plane only opens. */
  open_image (f, &cube);
  gtk_spin_button_set_value (f->window->plane_spin, 2);
  wait_idle (f, "plane 2");
  assert_state ("shown_step", "\"none\"");
  g_assert_null (f->window->run);
  g_free (cube.path);
}
