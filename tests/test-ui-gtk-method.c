/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The method switch: the local method chosen through app.method finds the
 * field's sources with its own steps and timings; its parameters re-run;
 * its background step shows the maps and the mesh; the lesson's threshold
 * below the local background brings the banner that offers the local
 * method; a local run asked of the GPU says it ran on the CPU. */
#include "test-ui-gtk.h"

/* A field on extended emission: noise of sigma 1, a broad Gaussian of
 * peak 40 and sigma 40 pixels centred on (EMISSION_X, EMISSION_Y), and
 * two point sources in the quiet part. The lesson's absolute 5 sigma lies
 * under the emission over much of the image. */
#define EMISSION_NX 256
#define EMISSION_NY 256
#define EMISSION_X 80
#define EMISSION_Y 128
#define EMISSION_PEAK 40.0
#define EMISSION_SIGMA 40.0

static const Source emission_points[] = {
  { 200, 60, 60 },
  { 210, 200, 30 },
};

static char *
write_emission (void)
{
  float *v = noise (EMISSION_NX, EMISSION_NY, 424242);
  char *path;

  for (int y = 0; y < EMISSION_NY; y++)
    for (int x = 0; x < EMISSION_NX; x++)
      {
        double dx = x - EMISSION_X, dy = y - EMISSION_Y;
        v[y * EMISSION_NX + x] += (float) (EMISSION_PEAK * exp (-(dx * dx + dy * dy)
                                                                / (2 * EMISSION_SIGMA
                                                                   * EMISSION_SIGMA)));
        for (guint s = 0; s < G_N_ELEMENTS (emission_points); s++)
          {
            double px = x - emission_points[s].x, py = y - emission_points[s].y;
            v[y * EMISSION_NX + x] += (float) (emission_points[s].peak
                                               * exp (-(px * px + py * py)
                                                      / (2 * PSF_SIGMA * PSF_SIGMA)));
          }
      }
  path = write_fits ("emission.fits", v, EMISSION_NX, EMISSION_NY, -1);
  g_free (v);
  return path;
}

static void
screenshot (Fixture *f, const char *name)
{
  if (g_getenv ("SKYSIFT_TEST_SCREENSHOTS"))
    {
      g_autofree char *file = g_strdup_printf ("%s-%s.png", name,
                                               g_getenv ("SKYSIFT_VIEW"));
      g_autofree char *shot = g_build_filename (g_getenv ("SKYSIFT_TEST_SCREENSHOTS"), file,
                                                NULL);
      sky_window_screenshot (f->window, "window", 1, shot);
      wait_idle (f, "the screenshot");
    }
}

static gboolean
revealed (gpointer revealer)
{
  return gtk_revealer_get_child_revealed (revealer);
}

static gboolean
hidden (gpointer revealer)
{
  return !gtk_revealer_get_child_revealed (revealer);
}

/* The mean luminance of the picture over the image pixels within r of
 * (ix, iy): one pixel of noise says little. */
static double
mean_luminance (Fixture *f, const Picture *pic, double ix, double iy, int r)
{
  double sum = 0;
  int n = 0;

  for (int dy = -r; dy <= r; dy++)
    for (int dx = -r; dx <= r; dx++)
      {
        sum += luminance (pixel_at_image (f, pic, ix + dx, iy + dy));
        n++;
      }
  return sum / n;
}

/* Switched to the local method with results shown, the window runs the
 * local method up to its measure: the field's four sources, each ringed,
 * the five local steps timed; a parameter re-runs, a bad one is refused,
 * and back to the lesson the four steps find them again. */
void
test_method_switch (Fixture *f)
{
  g_autoptr (Picture) pic = NULL;
  g_autofree char *json = NULL;
  static const char *const local_steps[] = { "background", "detect", "flood", "deblend",
                                             "measure" };

  open_image (f, &field);
  assert_state ("method", "\"lesson\"");
  g_assert_false (gtk_widget_get_visible (f->window->local_grid));
  click (f, "app.run", "'all'");
  wait_idle (f, "run all, the lesson's method");
  g_assert_cmpfloat (state_number ("nsources"), ==, N_FIELD_SOURCES);

  activate ("method", g_variant_new_string ("local"));
  wait_idle (f, "the local method's run");
  assert_state ("method", "\"local\"");
  assert_state ("shown_step", "\"measure\"");
  assert_state ("done", "\"measure\"");
  g_assert_cmpint (f->window->run->method, ==, SKY_METHOD_LOCAL);
  g_assert_true (gtk_widget_get_visible (f->window->local_grid));
  g_assert_true (gtk_widget_get_visible (f->window->background_button));
  g_assert_false (gtk_widget_get_visible (f->window->clip_button));
  g_assert_false (gtk_widget_get_sensitive (GTK_WIDGET (f->window->threshold_spin)));
  g_assert_cmpfloat (state_number ("nsources"), ==, N_FIELD_SOURCES);
  pic = render_view (f);
  for (guint s = 0; s < N_FIELD_SOURCES; s++)
    assert_ring (f, pic, &field_sources[s]);
  /* The timings follow the method's steps: the state's and the panel's. */
  json = state_json ();
  for (guint k = 0; k < G_N_ELEMENTS (local_steps); k++)
    {
      g_autofree char *key = g_strdup_printf ("\"%s\": ", local_steps[k]);
      const char *times = strstr (json, "\"times_ms\"");
      g_assert_nonnull (times);
      if (strstr (times, key) == NULL)
        g_error ("times_ms lacks %s: %s", local_steps[k], json);
    }
  g_assert_null (strstr (strstr (json, "\"times_ms\""), "\"clip\": "));
  activate ("panel", g_variant_new_string ("timings"));
  wait_idle (f, "the timings panel");
  screenshot (f, "method-local-timings");
  activate ("panel", g_variant_new_string ("pipeline"));
  screenshot (f, "method-local");
  /* Its toolbar and panel still fit the narrow window, the panels below
   * (resize_window fails where the window cannot take the size). */
  activate ("display", g_variant_new_string ("panels=below"));
  resize_window (f, 700, 600);
  g_assert_cmpint (gtk_widget_get_width (GTK_WIDGET (f->window)), <=, 700);
  screenshot (f, "method-local-narrow");
  activate ("display", g_variant_new_string ("panels=side"));
  resize_window (f, 1280, 820);

  /* A parameter re-runs: a smaller mesh, the same sources. */
  activate ("local", g_variant_new_string ("box=32"));
  wait_idle (f, "box 32");
  g_assert_cmpint (f->window->run->params.bkg_box, ==, 32);
  g_assert_cmpfloat (state_number ("nsources"), ==, N_FIELD_SOURCES);
  {
    g_autofree char *state = state_json ();
    g_assert_nonnull (strstr (state, "\"box\": 32"));
  }
  /* A seed above every source's peak in rms (the faintest is 9) finds fewer. */
  activate ("local", g_variant_new_string ("seed=30"));
  wait_idle (f, "seed 30");
  g_assert_cmpfloat (state_number ("nsources"), <, N_FIELD_SOURCES);
  activate ("local", g_variant_new_string ("seed=4.6"));
  wait_idle (f, "seed back to 4.6");
  g_assert_cmpfloat (state_number ("nsources"), ==, N_FIELD_SOURCES);
  /* An even filter, and a seed under the flood level, are refused by name. */
  activate ("local", g_variant_new_string ("filter=4"));
  wait_idle (f, "filter 4 refused");
  assert_state ("last_error", "\"The local method cannot take that");
  {
    g_autofree char *state = state_json ();
    g_assert_nonnull (strstr (state_field (state, "last_error"), "odd"));
    g_assert_nonnull (strstr (state, "\"filter\": 3"));
  }
  activate ("local", g_variant_new_string ("seed=1"));
  wait_idle (f, "seed 1 refused");
  assert_state ("last_error", "\"The local method cannot take that");
  g_assert_cmpfloat (f->window->params.seed_sigma, ==, 4.6);
  /* The lesson's step names stand for the local method's own. */
  activate ("run", g_variant_new_string ("clip"));
  wait_idle (f, "clip asked of the local method");
  assert_state ("shown_step", "\"background\"");
  activate ("run", g_variant_new_string ("detect"));
  wait_idle (f, "detect");
  assert_state ("shown_step", "\"detect\"");
  click (f, "app.run", "'all'");
  wait_idle (f, "run all, the local method");
  assert_state ("shown_step", "\"measure\"");
  activate ("method", g_variant_new_string ("global"));
  wait_idle (f, "an unknown method refused");
  assert_state ("last_error", "\"There is no such method");
  assert_state ("method", "\"local\"");

  /* The export is the local method's catalogue, with its columns and
   * provenance. */
  {
    g_autofree char *path = sky_test_tmp_path ("local.ecsv");
    g_autofree char *text = NULL;
    activate ("export-catalog", g_variant_new_string (path));
    wait_idle (f, "the local catalogue exported");
    g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
    g_assert_nonnull (strstr (text, "method: local"));
    g_assert_nonnull (strstr (text, "x_win"));
    g_unlink (path);
  }
  activate ("method", g_variant_new_string ("lesson"));
  wait_idle (f, "back to the lesson's method");
  assert_state ("shown_step", "\"measure\"");
  g_assert_cmpint (f->window->run->method, ==, SKY_METHOD_LESSON);
  g_assert_cmpfloat (state_number ("nsources"), ==, N_FIELD_SOURCES);
  g_assert_true (gtk_widget_get_visible (f->window->clip_button));
}

/* The background step shows its map with the mesh's boxes outlined; the
 * view's choices show the background, the rms and the image less the
 * background, and the image again. On the emission field the background
 * map is dark (high, in reversed grey) at the emission's centre and light
 * far from it; the image less the background is nearly as light there as
 * far away, the emission removed. */
void
test_background_views (Fixture *f)
{
  Image emission = { write_emission (), EMISSION_NX, EMISSION_NY };
  double centre, far, contrast_background, contrast_residual;

  open_image (f, &emission);
  /* Linear: the log stretch of the lesson puts most of a smooth map in
   * the darkest greys. */
  activate ("display", g_variant_new_string ("stretch=linear"));
  activate ("method", g_variant_new_string ("local"));
  /* Boxes of 32 pixels: the emission spans some five of them, which the
   * median filter over 3 x 3 keeps (at 64, two, which it would cut). */
  activate ("local", g_variant_new_string ("box=32"));
  click (f, "app.run", "'background'");
  wait_idle (f, "the background step");
  assert_state ("shown_step", "\"background\"");
  assert_state ("background_view", "\"background\"");
  g_assert_cmpfloat (state_number ("mesh_box"), ==, 32);
  g_assert_nonnull (f->window->run->maps);
  g_assert_true (sky_image_view_get_shown_pixels (f->view)
                 == sky_run_maps_peek (f->window->run->maps, SKY_MAP_BACKGROUND));
  /* Only the map looked at is made. */
  g_assert_null (sky_run_maps_peek (f->window->run->maps, SKY_MAP_RMS));
  g_assert_null (sky_run_maps_peek (f->window->run->maps, SKY_MAP_RESIDUAL));
  screenshot (f, "background-map");
  {
    g_autoptr (Picture) pic = render_view (f);
    double px, py;
    gboolean cyan = FALSE;

    centre = mean_luminance (f, pic, EMISSION_X, EMISSION_Y, 3);
    far = mean_luminance (f, pic, 230, 230, 3);
    contrast_background = far - centre;
    g_test_message ("background map: luminance %.0f at the emission, %.0f far off", centre,
                    far);
    g_assert_cmpfloat (contrast_background, >, 80);
    /* The mesh: a line between boxes, at image x = 64, half way up a box. */
    to_picture (f, pic, 64, 32, &px, &py);
    for (int dx = -1; dx <= 1 && !cyan; dx++)
      {
        Rgb c = pixel (pic, (int) floor (px) + dx, (int) floor (py));
        cyan = c.r < 60 && c.g > 170 && c.b > 170;
      }
    g_assert_true (cyan);
  }

  activate ("display", g_variant_new_string ("background=rms"));
  wait_idle (f, "the rms map");
  assert_state ("background_view", "\"rms\"");
  g_assert_nonnull (sky_run_maps_peek (f->window->run->maps, SKY_MAP_RMS));
  g_assert_true (sky_image_view_get_shown_pixels (f->view)
                 == sky_run_maps_peek (f->window->run->maps, SKY_MAP_RMS));
  /* The readout gives the map's value beside the image's. */
  g_signal_emit_by_name (f->view, "pointer-moved", TRUE, 200.5, 100.5);
  {
    const char *readout = gtk_label_get_text (f->window->readout_label);
    g_autofree char *want = g_strdup_printf (
      "rms %.5g", sky_run_maps_peek (f->window->run->maps, SKY_MAP_RMS)
                    ->image.pixels[100 * EMISSION_NX + 200]);
    if (strstr (readout, want) == NULL)
      g_error ("the readout \"%s\" lacks \"%s\"", readout, want);
  }

  activate ("display", g_variant_new_string ("background=residual"));
  wait_idle (f, "the image less the background");
  assert_state ("background_view", "\"residual\"");
  {
    g_autoptr (Picture) pic = render_view (f);
    centre = mean_luminance (f, pic, EMISSION_X, EMISSION_Y, 3);
    far = mean_luminance (f, pic, 230, 230, 3);
    contrast_residual = far - centre;
    g_test_message ("image - background: luminance %.0f at the emission, %.0f far off", centre,
                    far);
    g_assert_cmpfloat (fabs (contrast_residual), <, contrast_background / 3);
  }
  activate ("zoom", g_variant_new_double (4));
  wait_idle (f, "zoom 4");
  screenshot (f, "background-residual-4x");

  activate ("display", g_variant_new_string ("background=image"));
  wait_idle (f, "the image again");
  g_assert_null (sky_image_view_get_shown_pixels (f->view));
  /* The later steps draw over the image, the maps' choice back to it. */
  activate ("display", g_variant_new_string ("background=rms"));
  click (f, "app.run", "'all'");
  wait_idle (f, "the local method's run");
  assert_state ("background_view", "\"image\"");
  g_assert_cmpfloat (state_number ("mesh_box"), ==, 0);
  g_assert_cmpfloat (state_number ("nsources"), >=, G_N_ELEMENTS (emission_points));
  g_assert_false (sky_window_set_background_view (f->window, "noise"));
  g_unlink (emission.path);
  g_free (emission.path);
}

/* With the lesson's method on the emission field, clip finds its 5σ under
 * the local background over much of the image: the banner says so and
 * offers the local method, which its button switches to (running the
 * local method's background, the step that stands for clip). On the
 * quiet field no banner comes. The histogram marks a threshold off its
 * axis with an arrow and its value. */
void
test_lesson_banner (Fixture *f)
{
  Image emission = { write_emission (), EMISSION_NX, EMISSION_NY };

  open_image (f, &field);
  click (f, "app.run", "'clip'");
  wait_idle (f, "clip on the quiet field");
  assert_state ("method_banner", "false");
  g_assert_cmpfloat (state_number ("background_above"), ==, 0);
  {
    /* 5σ lies on the axis (median ± (κ + 3)σ): a line, its value said. */
    g_autofree char *text = sky_clip_histogram_threshold_text (f->window->run);
    g_autofree char *want = g_strdup_printf ("threshold %.3g", f->window->run->threshold_value);
    g_assert_cmpstr (text, ==, want);
  }
  activate ("threshold", g_variant_new_double (20));
  wait_idle (f, "threshold 20");
  {
    g_autofree char *text = sky_clip_histogram_threshold_text (f->window->run);
    g_autofree char *want = g_strdup_printf ("threshold %.3g →",
                                             f->window->run->threshold_value);
    g_assert_cmpfloat (f->window->run->threshold_value, >, f->window->run->hist_hi);
    g_assert_cmpstr (text, ==, want);
  }
  if (g_getenv ("SKYSIFT_TEST_SCREENSHOTS"))
    {
      g_autofree char *file = g_strdup_printf ("histogram-threshold-arrow-%s.png",
                                               g_getenv ("SKYSIFT_VIEW"));
      g_autofree char *shot = g_build_filename (g_getenv ("SKYSIFT_TEST_SCREENSHOTS"), file,
                                                NULL);
      sky_window_screenshot (f->window, "panel", 1, shot);
      wait_idle (f, "the panel's screenshot");
    }
  activate ("threshold", g_variant_new_double (5));
  wait_idle (f, "threshold 5");

  open_image (f, &emission);
  click (f, "app.run", "'clip'");
  wait_idle (f, "clip on the emission field");
  assert_state ("method_banner", "true");
  g_test_message ("background above the threshold: %.0f%% of the boxes",
                  100 * state_number ("background_above"));
  g_assert_cmpfloat (state_number ("background_above"), >=, SKY_BACKGROUND_ABOVE_SHARE);
  iterate_until (revealed, f->window->method_banner, "the banner to slide in");
  wait_idle (f, "the view under the banner");
  g_assert_true (gtk_widget_get_mapped (GTK_WIDGET (f->window->method_banner_label)));
  g_assert_nonnull (strstr (gtk_label_get_text (f->window->method_banner_label),
                            "above the threshold"));
  screenshot (f, "lesson-banner");

  /* A threshold move with the banner shown lays its new text out a few
   * times (its width, its height for the width, its drawing), not once per
   * step of a search over widths at each allocation: a horizontal box asks
   * a wrapping label its width for a height, which GtkLabel finds by
   * bisection, and a wrapping label of no width in characters is laid out
   * a character or two to a line for its minimum. That was some 240
   * layouts of the banner's 250 characters at each move on
   * gc_like_2048.fits, a tenth of a second of the main loop. */
  {
    g_autofree char *before = g_strdup (gtk_label_get_text (f->window->method_banner_label));
    guint layouts;
    layouts_count_start ("The local background lies above the threshold");
    activate ("threshold", g_variant_new_double (4.5));
    wait_idle (f, "threshold 4.5 under the banner");
    layouts = layouts_count_stop ();
    assert_state ("method_banner", "true");
    /* New text (the threshold's value): it has to be laid out anew. */
    g_assert_cmpstr (gtk_label_get_text (f->window->method_banner_label), !=, before);
    g_test_message ("the banner's text laid out %u times at a threshold move", layouts);
    g_assert_cmpuint (layouts, >, 0);
    g_assert_cmpuint (layouts, <=, 12);
  }

  g_signal_emit_by_name (f->window->method_banner_button, "clicked");
  wait_idle (f, "the local method's background");
  iterate_until (hidden, f->window->method_banner, "the banner to go");
  assert_state ("method", "\"local\"");
  assert_state ("method_banner", "false");
  assert_state ("shown_step", "\"background\"");
  g_assert_nonnull (f->window->run->maps);
  g_unlink (emission.path);
  g_free (emission.path);
}

/* The local method asked of the GPU: the GPU makes the background maps
 * and the CPU runs the steps the GPU has not, and the banner says which
 * ran where (cpu_only); a runner that refuses the method on the GPU
 * leaves the CPU all of it, said likewise; with no device here, the GPU's
 * fault says why. Never results on the CPU with nothing said. */
void
test_local_gpu_says_cpu (Fixture *f)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SkyRun) run = NULL;
  SkyParams params;

  open_image (f, &field);
  activate ("method", g_variant_new_string ("local"));
  params = f->window->params;
  run = sky_pipeline_run_method (f->window->image, &params, SKY_METHOD_LOCAL, SKY_BACKEND_GPU,
                                 SKY_STEP_MEASURE, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (run->method, ==, SKY_METHOD_LOCAL);
  g_assert_cmpint (run->nsources, ==, N_FIELD_SOURCES);
  if (run->cpu_only == NULL && run->gpu_fault == NULL)
    {
      /* The GPU ran every step of the local method: nothing to say. */
      g_assert_true (run->has_gpu);
      return;
    }
  sky_window_apply_run (f->window, run, SKY_STEP_MEASURE);
  wait_idle (f, "the run drawn");
  iterate_until (revealed, f->window->gpu_banner, "the banner to slide in");
  if (run->cpu_only != NULL)
    {
      assert_state ("cpu_only", "true");
      if (run->has_gpu)
        {
          /* The maps on the device, the rest on the CPU. */
          g_assert_true (run->stages.gpu_steps & (1u << SKY_STEP_BACKGROUND));
          assert_state ("gpu_banner", "\"The GPU ran background; the CPU ran detect, flood, "
                                      "deblend, measure");
        }
      else
        {
          g_assert_cmpint (run->backend, ==, SKY_BACKEND_CPU);
          assert_state ("gpu_banner", "\"The GPU has no steps of the local method");
        }
      screenshot (f, "local-gpu-cpu-steps");
    }
  else
    assert_state ("gpu_banner", "\"The GPU failed");
}
