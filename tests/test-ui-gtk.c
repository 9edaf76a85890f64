/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The desktop app in-process, with its real widgets on a display (Xvfb, by
 * tests/run-in-xvfb.py). The window opens small FITS images made here, runs
 * the steps on the CPU through the actions the toolbar's buttons activate,
 * and its image view, rendered to a texture the way app.export-view renders
 * it, is checked pixel by pixel: the image is drawn, the right way round
 * for its header; square pixels at 16x; another colour map changes it; the
 * mask is tinted after segment and the sources coloured after label; a
 * marker ring sits at each source after measure; a moved threshold re-runs
 * and changes the sources; a cancelled re-run puts the parameters back to
 * the results shown; with tens of thousands of sources a zoom is still
 * redrawn at once, every source in view marked. Each test runs with the
 * view drawn on the CPU and again with OpenGL (skipped where there is
 * none), in a fresh window.
 *
 * Every wait has a deadline: a hang fails the test instead of holding up
 * CI. Positions on the picture come from the zoom and flip that the app's
 * state reports, not from the view's own transform, so that a wrong
 * transform shows. */
#include "test-ui-gtk.h"

typedef struct {
  const char *view;     /* SKYSIFT_VIEW: cpu or gl */
  void (*func) (Fixture *f);
} Case;

static void
run_case (gconstpointer data)
{
  const Case *c = data;
  Fixture f = { 0 };
  gpointer window;

  if (g_str_equal (c->view, "gl") && no_gl_reason != NULL)
    {
      g_test_skip (no_gl_reason);
      return;
    }
  /* Read when a view is made; set in main () for the first cases, before
   * there were threads, and changed once for the rest. */
  if (g_strcmp0 (g_getenv ("SKYSIFT_VIEW"), c->view) != 0)
    g_setenv ("SKYSIFT_VIEW", c->view, TRUE);
  c->func (&f);
  if (f.window == NULL)
    return;
  /* The view drew the way the case asked for. */
  g_assert_true (g_str_has_prefix (sky_image_view_get_gl_info (f.view), "drawn on the CPU")
                 == g_str_equal (c->view, "cpu"));
  window = f.window;
  g_object_add_weak_pointer (G_OBJECT (window), &window);
  gtk_window_destroy (GTK_WINDOW (f.window));
  iterate_until (pointer_cleared, &window, "the closed window to be finalized");
}

static char *
probe_gl (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GdkGLContext) context = gdk_display_create_gl_context (gdk_display_get_default (),
                                                                    &error);

  if (context == NULL || !gdk_gl_context_realize (context, &error))
    return g_strdup_printf ("no OpenGL on this display: %s", error->message);
  return NULL;
}

int
main (int argc, char **argv)
{
  static const struct {
    const char *name;
    void (*func) (Fixture *f);
  } tests[] = {
    { "drawn", test_drawn },
    { "orientation", test_orientation },
    { "zoom-16x-square-pixels", test_zoom_square },
    { "colormap", test_colormap },
    { "segment-mask-tint", test_segment_mask },
    { "label-colours", test_label_colours },
    { "measure-marker-rings", test_measure_markers },
    { "threshold-reruns", test_threshold },
    { "cancel-threshold-rerun", test_cancel_threshold },
    { "cancel-parameter-reruns", test_cancel_parameters },
    { "cancel-new-image", test_cancel_new_image },
    { "gc-like-2048", test_gc_like },
    { "dense-markers", test_dense_markers },
    { "dense-markers-time-limits", test_dense_time_limits },
    { "convolution-16x", test_convolution_16x },
    { "gpu-fault-banner", test_gpu_fault_banner },
    { "script-edges", test_script_edges },
    { "readout", test_readout },
    { "cube-planes", test_cube_planes },
    { "kappa-typed", test_kappa_typed },
    { "threshold-field", test_threshold_field },
    { "limits-error-clears", test_limits_error_clears },
    { "panel-wheel", test_panel_wheel },
    { "panel-width-steady", test_panel_width_steady },
    { "readout-room", test_readout_room },
    { "narrow-window", test_narrow_window },
    { "source-table-columns", test_source_table_columns },
    { "source-table-scroll", test_source_table_scroll },
    { "error-dialog", test_error_dialog },
    { "script-parameters", test_script_parameters },
    { "export-folder", test_export_folder },
    { "about", test_about },
    { "junk-pixel-limits", test_junk_pixel_limits },
    { "status-says-what-ran", test_status_says_what_ran },
    { "rerun-gives-back-arrays", test_rerun_gives_back_arrays },
    { "plane-reruns", test_plane_reruns },
    { "lab-readout-keys", test_lab_readout_keys },
    { "sort-responsive", test_sort_responsive },
    { "sort-action", test_sort_action },
    { "table-many-rows", test_table_many_rows },
    { "file-dialogs", test_file_dialogs },
    { "header-window", test_header_window },
    { "overlay-truth", test_overlay_truth },
    { "overlay-sextractor", test_overlay_sextractor },
    { "overlay-regions", test_overlay_regions },
    { "source-filters", test_source_filters },
    { "smooth-detection", test_smooth_detection },
    { "display-smooth", test_display_smooth },
    { "method-switch", test_method_switch },
    { "background-views", test_background_views },
    { "lesson-banner", test_lesson_banner },
    { "local-gpu-says-cpu", test_local_gpu_says_cpu },
    { "grid", test_grid },
    { "grid-pole", test_grid_pole },
    { "grid-allsky", test_grid_allsky },
    { "contours", test_contours },
    { "pixel-table", test_pixel_table },
    { "scale-dialog", test_scale_dialog },
    { "contours-gc-like", test_contours_gc_like },
    { "frames-menu-tiles", test_frames_menu_tiles },
    { "menu-actions", test_menu_actions },
    { "menu-scale-toggle", test_menu_scale_toggle },
    { "cube-animator", test_cube_animator },
  };
  static const char *const views[] = { "cpu", "gl" };
  g_autofree char *home = NULL;
  g_autoptr (GError) error = NULL;
  int status;

  /* The app writes recent files, Mesa its shader cache: here (removed at
   * exit with the fixtures), not in the user's home. */
  home = sky_test_tmp_path ("home");
  g_mkdir (home, 0700);
  for (const char *const *var = (const char *const[]) { "XDG_CACHE_HOME", "XDG_CONFIG_HOME",
                                                        "XDG_DATA_HOME", "XDG_STATE_HOME", NULL };
       *var; var++)
    {
      g_autofree char *dir = g_build_filename (home, *var, NULL);
      g_setenv (*var, dir, TRUE);
    }
  g_setenv ("SKYSIFT_VIEW", views[0], TRUE);
  g_test_init (&argc, &argv, NULL);
  gtk_disable_setlocale ();
  if (!gtk_init_check ())
    {
      /* Run it through tests/run-in-xvfb.py. */
      printf ("1..0 # SKIP no display to open (DISPLAY %s)\n",
              g_getenv ("DISPLAY") ? g_getenv ("DISPLAY") : "unset");
      return 0;
    }

  make_fixtures ();
  app = sky_application_new ();
  /* One of many: no name on a bus to own, nor to find taken. */
  g_application_set_flags (G_APPLICATION (app), g_application_get_flags (G_APPLICATION (app))
                                                 | G_APPLICATION_NON_UNIQUE);
  g_assert_true (g_application_register (G_APPLICATION (app), NULL, &error));
  g_assert_no_error (error);
  no_gl_reason = probe_gl ();

  for (guint v = 0; v < G_N_ELEMENTS (views); v++)
    for (guint t = 0; t < G_N_ELEMENTS (tests); t++)
      {
        Case *c = g_new (Case, 1);
        g_autofree char *path = g_strdup_printf ("/ui-gtk/%s-view/%s", views[v], tests[t].name);
        c->view = views[v];
        c->func = tests[t].func;
        g_test_add_data_func_full (path, c, run_case, g_free);
      }
  status = g_test_run ();
  g_clear_object (&app);
  return status;
}
