/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The image view's display path in a real window (run it through
 * tests/run-in-xvfb.py): on Mesa the textures go up from host memory and
 * the line says why; SKYSIFT_DISPLAY=host and a view drawn on the CPU say
 * their own reasons; a re-realized view chooses again; the timings panel
 * shows the line and the last update's time. */
#include <gtk/gtk.h>
#include <math.h>
#include <string.h>

#include "sky-display-path.h"
#include "sky-image-view.h"
#include "sky-render.h"
#include "sky-resources.h"
#include "sky-timings-panel.h"

#define WAIT_S 60

static gboolean
flag_set (gpointer data)
{
  return *(gboolean *) data;
}

static void
set_flag (gpointer data, gpointer unused)
{
  *(gboolean *) data = TRUE;
}

static gboolean
wake (gpointer data)
{
  return G_SOURCE_CONTINUE;
}

static void
iterate_until (gboolean (*done) (gpointer), gpointer data, const char *what)
{
  gint64 deadline = g_get_monotonic_time () + (gint64) WAIT_S * G_USEC_PER_SEC;
  guint tick = g_timeout_add (50, wake, NULL);

  while (!done (data) && g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, TRUE);
  g_source_remove (tick);
  if (!done (data))
    g_error ("still waiting for %s after %d s", what, WAIT_S);
}

/* A field with two sources, held in memory, made ready for the view. */
static SkyImageData *
make_image (void)
{
  SkyImageData *data = g_atomic_rc_box_new0 (SkyImageData);
  const int64_t nx = 96, ny = 64;
  float *px = g_new (float, nx * ny);

  for (int64_t i = 0; i < nx * ny; i++)
    px[i] = (float) (0.01 * sin ((double) i * 12.9898) );
  for (int dy = -2; dy <= 2; dy++)
    for (int dx = -2; dx <= 2; dx++)
      {
        px[(20 + dy) * nx + 30 + dx] = 5.0f;
        px[(40 + dy) * nx + 70 + dx] = 3.0f;
      }
  data->image.nx = nx;
  data->image.ny = ny;
  data->image.pixels = px;
  data->image.nplanes = 1;
  data->image.hdu = 1;
  data->image.bitpix = -32;
  g_assert_cmpint (sky_display_stats_compute (&data->image, 0, &data->stats), ==, SKY_OK);
  g_assert_cmpint (sky_pyramid_build (&data->image, 0, &data->pyramid), ==, SKY_OK);
  data->display_name = g_strdup ("two-sources");
  return data;
}

typedef struct {
  GtkWidget *window, *box;
  SkyImageView *view;
  SkyTimingsPanel *panel;
} Fixture;

/* A window with a view of the image (its run's mask and labels shown) and
 * a timings panel; returns once a frame showing them was drawn. */
static void
open_window (Fixture *f, SkyImageData *image, SkyRun *run)
{
  GtkWidget *box = f->box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 0);
  gboolean drawn = FALSE;

  f->window = gtk_window_new ();
  gtk_window_set_default_size (GTK_WINDOW (f->window), 480, 320);
  f->view = SKY_IMAGE_VIEW (sky_image_view_new ());
  gtk_widget_set_hexpand (GTK_WIDGET (f->view), TRUE);
  f->panel = SKY_TIMINGS_PANEL (sky_timings_panel_new ());
  gtk_box_append (GTK_BOX (box), GTK_WIDGET (f->view));
  gtk_box_append (GTK_BOX (box), GTK_WIDGET (f->panel));
  gtk_window_set_child (GTK_WINDOW (f->window), box);
  sky_image_view_set_image (f->view, image);
  sky_image_view_set_run (f->view, run);
  g_object_set (f->view, "show-mask", TRUE, "show-labels", TRUE, NULL);
  gtk_window_present (GTK_WINDOW (f->window));
  sky_image_view_when_drawn (f->view, set_flag, &drawn);
  iterate_until (flag_set, &drawn, "the first frame");
}

static void
close_window (Fixture *f)
{
  gtk_window_destroy (GTK_WINDOW (f->window));
  while (g_main_context_iteration (NULL, FALSE))
    ;
}

static void
assert_contains (const char *text, const char *part)
{
  if (text == NULL || strstr (text, part) == NULL)
    g_error ("\"%s\" does not say \"%s\"", text ? text : "(null)", part);
}

static SkyImageData *image;
static SkyRun *run;

/* OpenGL on Mesa: host upload with the driver named, and a measured time. */
static void
test_gl_host_upload (void)
{
  Fixture f;
  double host_ms, interop_ms;

  g_setenv ("SKYSIFT_VIEW", "gl", TRUE);
  g_unsetenv ("SKYSIFT_DISPLAY");
  sky_display_reset ();
  open_window (&f, image, run);
  g_test_message ("%s", sky_display_line ());
  assert_contains (sky_display_line (), "display: host upload, because ");
  /* Where the build has no interop that is the reason; else the driver. */
#ifdef SKYSIFT_HAVE_GPU_GL
  assert_contains (sky_display_line (), "not the NVIDIA driver");
#else
  assert_contains (sky_display_line (), "this build has no CUDA/OpenGL interop");
#endif
  sky_display_last_ms (&host_ms, &interop_ms);
  g_assert_cmpfloat (host_ms, >, 0);
  g_assert_cmpfloat (interop_ms, <, 0);
  /* The panel's label follows from the main loop. */
  while (g_main_context_iteration (NULL, FALSE))
    ;
  assert_contains (sky_timings_panel_get_display (f.panel), sky_display_line ());
  assert_contains (sky_timings_panel_get_display (f.panel), "ms from host memory");

  /* Forced: a re-realized area (a new context) chooses again. */
  g_setenv ("SKYSIFT_DISPLAY", "host", TRUE);
  g_object_ref (f.view);
  gtk_box_remove (GTK_BOX (f.box), GTK_WIDGET (f.view));
  g_assert_false (gtk_widget_get_realized (GTK_WIDGET (f.view)));
  gtk_box_prepend (GTK_BOX (f.box), GTK_WIDGET (f.view));
  g_object_unref (f.view);
  gboolean drawn = FALSE;
  sky_image_view_when_drawn (f.view, set_flag, &drawn);
  iterate_until (flag_set, &drawn, "a frame after the view was realized again");
  while (g_main_context_iteration (NULL, FALSE))
    ;
  g_assert_cmpstr (sky_display_line (), ==,
                   "display: host upload, because SKYSIFT_DISPLAY=host asks for it");
  assert_contains (sky_timings_panel_get_display (f.panel), "SKYSIFT_DISPLAY=host asks for it");
  close_window (&f);
  g_unsetenv ("SKYSIFT_DISPLAY");
}

/* Drawn on the CPU, the view has no textures, and says so. */
static void
test_cpu_view (void)
{
  Fixture f;

  g_setenv ("SKYSIFT_VIEW", "cpu", TRUE);
  sky_display_reset ();
  open_window (&f, image, run);
#ifdef SKYSIFT_HAVE_GPU_GL
  assert_contains (sky_display_line (),
                   "display: host upload, because the view is drawn on the CPU");
#else
  assert_contains (sky_display_line (), "this build has no CUDA/OpenGL interop");
#endif
  close_window (&f);
}

int
main (int argc, char **argv)
{
  SkyParams params;
  g_autoptr (GError) error = NULL;
  int status;

  g_test_init (&argc, &argv, NULL);
  gtk_disable_setlocale ();
  if (!gtk_init_check ())
    {
      printf ("1..0 # SKIP no display to open (DISPLAY %s)\n",
              g_getenv ("DISPLAY") ? g_getenv ("DISPLAY") : "unset");
      return 0;
    }
  (void) sky_ui_get_resource ();   /* links the view's shaders and templates in */
  image = make_image ();
  sky_params_init (&params);
  run = sky_pipeline_run (image, &params, SKY_BACKEND_CPU, SKY_STEP_MEASURE, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (run->nsources, ==, 2);
  g_test_add_func ("/display/gl-host-upload", test_gl_host_upload);
  g_test_add_func ("/display/cpu-view", test_cpu_view);
  status = g_test_run ();
  sky_run_unref (run);
  sky_image_data_unref (image);
  return status;
}
