/* SPDX-License-Identifier: GPL-3.0-or-later */
/* SkyApplication: the app's actions and its one window.
 *
 * Every operation a script may want is an application action, so that it
 * is on D-Bus (org.gtk.Actions at /io/github/skysift/SkySift) and its state
 * is readable with Describe:
 *   open (s)            PATH, or PATH[HDU] or PATH[HDU,PLANE] for another
 *                       HDU (1-based) or plane (0-based) of a cube;
 *                       state: the image shown
 *   backend (s)         cpu, gpu or both; state: the backend in use
 *   run (s)             clip, segment, label, measure or all;
 *                       state: the step whose result is shown
 *   threshold (d)       state: the threshold in sigma
 *   export-catalog (s)  state: the last CSV written
 *   export-view (s)     state: the last PNG written
 *   state               no parameter; state: the window's figures as JSON
 *                       (busy, nsources, times, the main loop's stalls)
 *   screenshot (s)      the whole window as PNG; "panel:PATH" the side
 *                       panel, "lab:PATH" the Convolution lab's window,
 *                       "zoom=0.8:PATH" smaller (documentation)
 *   zoom (d)            logical screen pixels per image pixel (to 32)
 *   select-source (x)   select and centre the source with that number
 *   panel (s)           pipeline, timings or sources
 *   display (s)         stretch=…, limits=… (or limits=LO,HI), colormap=…, or mask, labels,
 *                       markers, flip =on|off, or smooth=KERNEL|none (the
 *                       picture alone, for the eye)
 *   convolution-demo    opens (or raises) the Convolution lab: the lesson's
 *                       grid of deltas and its convolution, side by side;
 *                       state: the lab's timings ("" until it has a result)
 *   header (s)          opens the header window, showing the cards that
 *                       hold the text given ("" all); state: the header
 *   overlay (s)         draws a catalogue (CSV, ECSV, VOTable, SExtractor)
 *                       or a DS9 region file over the image, matched with
 *                       the sources; "" clears them; state: the last path
 *   match-radius (d)    the cross-match radius in arcseconds
 *   source-filter (s)   which sources the table lists: area=N, snr=N,
 *                       flux=SUM, edge=off, flags=off, or none
 *   smooth (s)          detect on a copy smoothed by a kernel, as
 *                       skysift-cli find --smooth ("" none)
 *   samp-connect (b), samp-send-image, samp-send-table, samp
 *                       the app on a SAMP hub (sky-samp-link.h)
 *   about, quit
 * Operations queue in the window and run in order, so a script can send
 * open, run and export one after the other and poll state until busy is
 * false.
 */
#include "sky-application.h"
#include "sky-convolution-lab.h"
#include "sky-display-path.h"
#include "sky-pipeline.h"
#include "sky-render.h"
#include "sky-samp-link.h"
#include "sky-window.h"
#include "sky-window-script.h"

#include <epoxy/gl.h>
#include <errno.h>
#include <math.h>
#include <string.h>

struct _SkyApplication {
  GtkApplication parent_instance;
  gint64 start_us;
  SkySampLink *samp;
};

G_DEFINE_FINAL_TYPE (SkyApplication, sky_application, GTK_TYPE_APPLICATION)

SkyApplication *
sky_application_new (void)
{
  gint64 start_us = g_get_monotonic_time ();
  SkyApplication *self = g_object_new (SKY_TYPE_APPLICATION,
                       "application-id", SKY_APPLICATION_ID,
                       "flags", G_APPLICATION_HANDLES_OPEN,
                       "resource-base-path", "/io/github/skysift/SkySift",
                       NULL);
  self->start_us = start_us;
  return self;
}

static void
set_state (SkyApplication *self, const char *name, GVariant *state)
{
  GAction *action = g_action_map_lookup_action (G_ACTION_MAP (self), name);
  g_autoptr (GVariant) sunk = g_variant_ref_sink (state);
  g_autoptr (GVariant) old = g_action_get_state (action);

  if (old == NULL || !g_variant_equal (old, sunk))
    g_simple_action_set_state (G_SIMPLE_ACTION (action), sunk);
}

/* The window's state, mirrored into the actions' states for Describe. */
static void
on_window_state_changed (SkyWindow *window, SkyApplication *self)
{
  SkyStep step = sky_window_get_shown_step (window);

  set_state (self, "open", g_variant_new_string (sky_window_get_image_path (window)));
  set_state (self, "backend", g_variant_new_string (sky_backend_name (sky_window_get_backend (window))));
  set_state (self, "run", g_variant_new_string (sky_step_name (step)));
  set_state (self, "threshold", g_variant_new_double (sky_window_get_threshold (window)));
  set_state (self, "kappa", g_variant_new_double (sky_window_get_params (window)->clip_kappa));
  set_state (self, "connectivity",
             g_variant_new_int32 (sky_window_get_params (window)->connectivity));
  set_state (self, "relative", g_variant_new_boolean (sky_window_get_params (window)->relative));
  set_state (self, "method",
             g_variant_new_string (sky_method_name (sky_window_get_method (window))));
  set_state (self, "plane", g_variant_new_int64 (sky_window_get_plane (window)));
  set_state (self, "export-catalog", g_variant_new_string (sky_window_get_catalogue_path (window)));
  set_state (self, "export-view", g_variant_new_string (sky_window_get_view_path (window)));
  set_state (self, "header", g_variant_new_take_string (sky_window_get_header_text (window)));
  set_state (self, "grid", g_variant_new_boolean (sky_window_get_grid (window)));
  set_state (self, "contours", g_variant_new_take_string (sky_window_get_contours (window)));
  set_state (self, "pixel-table", g_variant_new_int32 (sky_window_get_pixel_table (window)));
  set_state (self, "magnifier", g_variant_new_boolean (sky_window_get_magnifier (window)));
  set_state (self, "scale-dialog", g_variant_new_boolean (sky_window_get_scale_dialog (window)));
  set_state (self, "toggle-grid", g_variant_new_boolean (sky_window_get_grid (window)));
  set_state (self, "toggle-magnifier", g_variant_new_boolean (sky_window_get_magnifier (window)));
  set_state (self, "toggle-scale-dialog",
             g_variant_new_boolean (sky_window_get_scale_dialog (window)));
  sky_application_frames_sync (self, GTK_WINDOW (window));
  set_state (self, "state", g_variant_new_take_string (sky_window_describe (window)));
  if (self->samp)
    sky_samp_link_window_changed (self->samp, GTK_WINDOW (window));
}

static SkyWindow *
main_window (SkyApplication *self)
{
  GList *windows = gtk_application_get_windows (GTK_APPLICATION (self));
  SkyWindow *window;

  for (GList *l = windows; l; l = l->next)
    if (SKY_IS_WINDOW (l->data))
      return l->data;
  window = sky_window_new (GTK_APPLICATION (self));
  sky_window_set_start_time (window, self->start_us);
  g_signal_connect_object (window, "state-changed", G_CALLBACK (on_window_state_changed), self, 0);
  /* An action that finds no main window (a script's, after the user closed
   * it) gets one the user can see, not a hidden one that never draws. */
  gtk_window_present (GTK_WINDOW (window));
  return window;
}

GtkWindow *
sky_application_get_window (SkyApplication *self)
{
  return GTK_WINDOW (main_window (self));
}

/* Relative paths from D-Bus or the command line are taken from the
 * caller's working directory where we know it, else ours. */
static char *
absolute_path (const char *path)
{
  g_autoptr (GFile) file = g_file_new_for_commandline_arg (path);
  char *abs = g_file_get_path (file);
  return abs ? abs : g_strdup (path);
}

/* --------------------------------------------------------------- actions */

/* "PATH", or "PATH[HDU]" or "PATH[HDU,PLANE]" (HDU 1-based, PLANE 0-based)
 * for another HDU or plane of a cube, as FITS tools write it, unless PATH
 * with its brackets is itself a file. */
static gboolean
split_plane (const char *text, char **path, int *hdu, gint64 *plane)
{
  g_autoptr (GRegex) re = g_regex_new ("^(.+)\\[\\s*(\\d+)\\s*(?:,\\s*(\\d+)\\s*)?\\]$", 0,
                                      0, NULL);
  g_autoptr (GMatchInfo) m = NULL;
  g_autofree char *abs = absolute_path (text);

  *hdu = 0;
  *plane = 0;
  if (g_file_test (abs, G_FILE_TEST_EXISTS) || !g_regex_match (re, text, 0, &m))
    {
      *path = g_steal_pointer (&abs);
      return FALSE;
    }
  {
    g_autofree char *file = g_match_info_fetch (m, 1);
    g_autofree char *h = g_match_info_fetch (m, 2);
    g_autofree char *p = g_match_info_fetch (m, 3);
    *path = absolute_path (file);
    *hdu = (int) g_ascii_strtoll (h, NULL, 10);
    *plane = p && *p ? g_ascii_strtoll (p, NULL, 10) : 0;
  }
  return TRUE;
}

void
sky_application_split_path (const char *text, char **path, int *hdu, gint64 *plane)
{
  split_plane (text, path, hdu, plane);
}

static void
action_open (GSimpleAction *action, GVariant *param, gpointer data)
{
  SkyApplication *self = data;
  SkyWindow *window = main_window (self);
  g_autofree char *path = NULL;
  gint64 plane;
  int hdu;

  if (split_plane (g_variant_get_string (param, NULL), &path, &hdu, &plane))
    sky_window_open_plane (window, path, hdu, plane);
  else
    sky_window_open (window, path, FALSE);
  gtk_window_present (GTK_WINDOW (window));
}

static void
action_backend (GSimpleAction *action, GVariant *param, gpointer data)
{
  SkyApplication *self = data;
  SkyWindow *window = main_window (self);
  int backend = sky_backend_from_name (g_variant_get_string (param, NULL));
  g_autoptr (GError) error = NULL;

  if (backend < 0)
    g_warning ("app.backend: “%s” is not cpu, gpu or both", g_variant_get_string (param, NULL));
  else if (!sky_window_set_backend (window, backend, &error))
    sky_window_show_error (window, "That backend cannot run here", error->message);
}

static void
action_run (GSimpleAction *action, GVariant *param, gpointer data)
{
  SkyApplication *self = data;
  SkyStep step = sky_step_from_name (g_variant_get_string (param, NULL));

  if ((int) step <= (int) SKY_STEP_NONE)
    {
      g_warning ("app.run: “%s” is not clip, segment, label, measure or all",
                 g_variant_get_string (param, NULL));
      return;
    }
  sky_window_run (main_window (self), step);
}

/* The actions that hand the window one value of their own type: threshold,
 * kappa, zoom and match-radius (d), connectivity and pixel-table (i: 5, 7
 * or 9, 0 hides the table), relative, grid, magnifier and scale-dialog (b), plane and select-source (x),
 * source-filter, smooth and contours (s: "3,5,10 sigma", "threshold",
 * "0.1 0.2", "" for none). */
static void
action_set_value (GSimpleAction *action, GVariant *param, gpointer data)
{
  SkyWindow *window = main_window (data);
  const char *name = g_action_get_name (G_ACTION (action));

  if (g_str_equal (name, "threshold"))
    sky_window_set_threshold (window, g_variant_get_double (param));
  else if (g_str_equal (name, "kappa"))
    sky_window_set_kappa (window, g_variant_get_double (param));
  else if (g_str_equal (name, "zoom"))
    sky_window_set_zoom (window, g_variant_get_double (param));
  else if (g_str_equal (name, "connectivity"))
    sky_window_set_connectivity (window, g_variant_get_int32 (param));
  else if (g_str_equal (name, "relative"))
    sky_window_set_relative (window, g_variant_get_boolean (param));
  else if (g_str_equal (name, "plane"))
    sky_window_set_plane (window, g_variant_get_int64 (param));
  else if (g_str_equal (name, "select-source"))
    sky_window_select_source (window, g_variant_get_int64 (param));
  else if (g_str_equal (name, "match-radius"))
    sky_window_set_match_radius (window, g_variant_get_double (param));
  else if (g_str_equal (name, "pixel-table"))
    sky_window_set_pixel_table (window, g_variant_get_int32 (param));
  else if (g_str_equal (name, "grid"))
    sky_window_set_grid (window, g_variant_get_boolean (param));
  else if (g_str_equal (name, "magnifier"))
    sky_window_set_magnifier (window, g_variant_get_boolean (param));
  else if (g_str_equal (name, "scale-dialog"))
    sky_window_show_scale_dialog (window, g_variant_get_boolean (param));
  else if (g_str_equal (name, "source-filter"))
    sky_window_set_source_filter (window, g_variant_get_string (param, NULL));
  else if (g_str_equal (name, "smooth"))
    sky_window_set_smooth (window, g_variant_get_string (param, NULL));
  else if (g_str_equal (name, "contours"))
    sky_window_set_contours (window, g_variant_get_string (param, NULL));
  else
    g_assert_not_reached ();
}

/* The menu's check items: GTK shows an item as a check box only for an
 * action with a boolean state and no parameter, and greys out an item whose
 * action takes a parameter it has no target for. So grid, magnifier and
 * scale-dialog (b, for scripts) each have a parameterless twin that flips
 * the same setting; both states follow the window. */
static void
action_toggle (GSimpleAction *action, GVariant *param, gpointer data)
{
  SkyWindow *window = main_window (data);
  const char *name = g_action_get_name (G_ACTION (action)) + strlen ("toggle-");

  if (g_str_equal (name, "grid"))
    sky_window_set_grid (window, !sky_window_get_grid (window));
  else if (g_str_equal (name, "magnifier"))
    sky_window_set_magnifier (window, !sky_window_get_magnifier (window));
  else if (g_str_equal (name, "scale-dialog"))
    sky_window_show_scale_dialog (window, !sky_window_get_scale_dialog (window));
  else
    g_assert_not_reached ();
}

/* lesson or local; anything else is refused with a message. */
static void
action_method (GSimpleAction *action, GVariant *param, gpointer data)
{
  SkyWindow *window = main_window (data);
  const char *name = g_variant_get_string (param, NULL);

  for (int m = 0; m < SKY_METHOD_COUNT; m++)
    if (g_str_equal (name, sky_method_name (m)))
      {
        sky_window_set_method (window, m);
        return;
      }
  {
    g_autofree char *detail = g_strdup_printf ("The methods are lesson and local, not “%s”.",
                                               name);
    sky_window_show_error (window, "There is no such method", detail);
  }
}

/* NAME=VALUE: one of the local method's parameters (sky-window-script.h). */
static void
action_local (GSimpleAction *action, GVariant *param, gpointer data)
{
  SkyWindow *window = main_window (data);
  const char *text = g_variant_get_string (param, NULL);
  const char *eq = strchr (text, '=');
  g_autofree char *name = eq ? g_strndup (text, (gsize) (eq - text)) : NULL;
  char *end = NULL;
  double value = eq ? g_ascii_strtod (eq + 1, &end) : NAN;

  if (eq == NULL || end == eq + 1 || *end != '\0' || !isfinite (value))
    {
      g_autofree char *detail = g_strdup_printf ("app.local takes NAME=NUMBER (box=32, "
                                                 "seed=5...), not “%s”.", text);
      sky_window_show_error (window, "That is not a parameter setting", detail);
      return;
    }
  sky_window_set_local_param (window, name, value);
}

/* (x, y): FITS image pixel, counted from 1. */
static void
action_pan (GSimpleAction *action, GVariant *param, gpointer data)
{
  double x, y;

  g_variant_get (param, "(dd)", &x, &y);
  sky_window_pan (main_window (data), x, y);
}

/* export-catalog and export-view: a path, relative to the app's folder. */
static void
action_export (GSimpleAction *action, GVariant *param, gpointer data)
{
  SkyApplication *self = data;
  g_autofree char *path = absolute_path (g_variant_get_string (param, NULL));

  if (g_str_equal (g_action_get_name (G_ACTION (action)), "export-view"))
    sky_window_export_view (main_window (self), path);
  else if (g_str_equal (g_action_get_name (G_ACTION (action)), "export-figure"))
    sky_window_export_figure (main_window (self), path);
  else
    sky_window_export_catalogue (main_window (self), path);
}

static void
on_lab_png_written (GObject *source, GAsyncResult *result, gpointer data)
{
  g_autofree char *path = data;
  g_autoptr (GError) error = NULL;

  if (!sky_texture_save_png_finish (result, &error))
    g_warning ("app.screenshot: %s: %s", path, error->message);
}

/* The Convolution lab's window as it was last drawn, where it is open. */
static void
screenshot_lab (SkyApplication *self, double zoom, const char *path)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GdkTexture) texture = NULL;
  GtkWidget *lab = NULL;

  for (GList *l = gtk_application_get_windows (GTK_APPLICATION (self)); l; l = l->next)
    if (SKY_IS_CONVOLUTION_LAB (l->data))
      lab = l->data;
  if (lab == NULL)
    {
      g_warning ("app.screenshot: lab: the Convolution lab is not open");
      return;
    }
  texture = sky_render_widget (lab, CLAMP (zoom, 0.1, 4.0), &error);
  if (texture == NULL)
    {
      g_warning ("app.screenshot: lab: %s", error->message);
      return;
    }
  sky_texture_save_png_async (texture, path, NULL, on_lab_png_written, g_strdup (path));
}

/* "PATH" for the window; before the path, "panel:" for the side panel
 * alone, "lab:" for the Convolution lab and "zoom=F:" for a picture F
 * times the size on screen. */
static void
action_screenshot (GSimpleAction *action, GVariant *param, gpointer data)
{
  SkyApplication *self = data;
  const char *text = g_variant_get_string (param, NULL);
  gboolean panel = FALSE, lab = FALSE;
  double zoom = 1;
  g_autofree char *path = NULL;

  for (;;)
    {
      if (g_str_has_prefix (text, "panel:"))
        {
          panel = TRUE;
          text += 6;
        }
      else if (g_str_has_prefix (text, "lab:"))
        {
          lab = TRUE;
          text += 4;
        }
      else if (g_str_has_prefix (text, "zoom="))
        {
          char *end;
          zoom = g_ascii_strtod (text + 5, &end);
          if (*end != ':' || !(zoom > 0))
            {
              g_warning ("app.screenshot: “%s”: zoom=F: wants a number", text);
              return;
            }
          text = end + 1;
        }
      else
        break;
    }
  path = absolute_path (text);
  if (lab)
    screenshot_lab (self, zoom, path);
  else
    sky_window_screenshot (main_window (self), panel ? "panel" : NULL, zoom, path);
}

static void
action_cancel (GSimpleAction *action, GVariant *param, gpointer data)
{
  sky_window_cancel (main_window (data));
}

static void
action_panel (GSimpleAction *action, GVariant *param, gpointer data)
{
  if (!sky_window_show_panel (main_window (data), g_variant_get_string (param, NULL)))
    g_warning ("app.panel: no panel “%s” (pipeline, timings, sources)",
               g_variant_get_string (param, NULL));
}

static void
action_sort (GSimpleAction *action, GVariant *param, gpointer data)
{
  if (!sky_window_sort_sources (main_window (data), g_variant_get_string (param, NULL)))
    g_warning ("app.sort: “%s” is not a column (id, peak, sum, ...) with ascending or "
               "descending", g_variant_get_string (param, NULL));
}

/* "setting=value", e.g. "stretch=asinh", "limits=zscale", "colormap=inferno". */
static void
action_display (GSimpleAction *action, GVariant *param, gpointer data)
{
  const char *text = g_variant_get_string (param, NULL);
  g_auto (GStrv) parts = g_strsplit (text, "=", 2);

  if (g_strv_length (parts) != 2 || !sky_window_set_display (main_window (data), parts[0], parts[1]))
    g_warning ("app.display: “%s” is not stretch=, limits=, colormap=, mask=, labels=, "
               "markers=, flip=, panels= or smooth= with a known value", text);
}

static void
action_header (GSimpleAction *action, GVariant *param, gpointer data)
{
  sky_window_show_header (main_window (data), g_variant_get_string (param, NULL));
}

static void
action_overlay (GSimpleAction *action, GVariant *param, gpointer data)
{
  const char *text = g_variant_get_string (param, NULL);
  g_autofree char *path = *text ? absolute_path (text) : g_strdup ("");

  set_state (data, "overlay", g_variant_new_string (path));
  sky_window_add_overlay (main_window (data), path);
}

/* The dialog to type contour levels in. */
static void
action_contour_levels (GSimpleAction *action, GVariant *param, gpointer data)
{
  sky_window_show_contour_dialog (main_window (data));
}

static void
action_state (GSimpleAction *action, GVariant *param, gpointer data)
{
  /* Nothing to do: the state is the answer. */
}

static void
action_quit (GSimpleAction *action, GVariant *param, gpointer data)
{
  GList *windows = gtk_application_get_windows (GTK_APPLICATION (data));
  /* Held: destroying the main window destroys the lab with it, which may
   * come later in the list. */
  GList *held = g_list_copy (windows);

  for (GList *l = held; l; l = l->next)
    g_object_ref (l->data);
  for (GList *l = held; l; l = l->next)
    gtk_window_destroy (l->data);
  g_list_free_full (held, g_object_unref);
}

/* The about dialog shows the system information in a text view that does
 * not wrap, as wide as the dialog: long lines (the display path's reason)
 * were cut at its right edge. Each line is wrapped at spaces to at most
 * width characters (a word longer than that is broken). */
static char *
wrap_lines (const char *text, int width)
{
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  GString *out = g_string_new (NULL);

  for (guint i = 0; lines[i]; i++)
    {
      const char *rest = lines[i];
      if (i > 0)
        g_string_append_c (out, '\n');
      while (g_utf8_strlen (rest, -1) > width)
        {
          const char *cut = g_utf8_offset_to_pointer (rest, width), *space = NULL;
          for (const char *p = rest; p < cut; p = g_utf8_next_char (p))
            if (*p == ' ')
              space = p;
          if (*cut == ' ')
            space = cut;
          if (space == NULL || space == rest)
            space = cut;
          g_string_append_len (out, rest, space - rest);
          g_string_append_c (out, '\n');
          rest = *space == ' ' ? space + 1 : space;
        }
      g_string_append (out, rest);
    }
  return g_string_free (out, FALSE);
}

#define ABOUT_LINE_CHARS 64

static void
action_about (GSimpleAction *action, GVariant *param, gpointer data)
{
  SkyApplication *self = data;
  SkyWindow *window = main_window (self);
  g_autofree char *gpu = sky_backend_gpu_description ();
  g_autofree char *display = sky_display_describe ();
  g_autofree char *system = g_strdup_printf ("GPU backend: %s\n\nImage view: %s\n\n%s\n\n"
                                             "CPU backend: %d threads\n\nGTK %u.%u.%u",
                                             gpu, sky_window_get_gl_info (window), display,
                                             sky_default_threads (), gtk_get_major_version (),
                                             gtk_get_minor_version (), gtk_get_micro_version ());
  const char *authors[] = { "The skysift authors", NULL };
  const char *method[] = {
    "The Carpentries lesson “Using your GPU with CuPy” "
      "https://carpentries-incubator.github.io/lesson-gpu-programming/cupy.html",
    "SciPy (ndimage), the reference it is checked against https://scipy.org",
    NULL };
  const char *built_on[] = {
    "cfitsio (NASA HEASARC) https://heasarc.gsfc.nasa.gov/fitsio/",
    "wcslib (Mark Calabretta) https://www.atnf.csiro.au/people/mcalabre/WCS/",
    "GTK https://gtk.org",
    "libepoxy https://github.com/anholt/libepoxy",
    "CUDA (NVIDIA), for the GPU backend https://developer.nvidia.com/cuda-toolkit",
    NULL };
  g_autofree char *wrapped = wrap_lines (system, ABOUT_LINE_CHARS);
  GtkAboutDialog *about;

  about = GTK_ABOUT_DIALOG (gtk_about_dialog_new ());
  gtk_window_set_transient_for (GTK_WINDOW (about), GTK_WINDOW (window));
  gtk_window_set_destroy_with_parent (GTK_WINDOW (about), TRUE);
  gtk_about_dialog_add_credit_section (about, "The method", method);
  gtk_about_dialog_add_credit_section (about, "Built on", built_on);
  g_object_set (about,
                "program-name", "skysift",
                "logo-icon-name", SKY_APPLICATION_ID,
                "version", SKYSIFT_VERSION,
                "comments", "Find and measure the sources in a radio image: "
                            "kappa-sigma clip, segment, label, measure — on the CPU "
                            "and on the GPU, side by side.",
                "website", "https://github.com/skysift/skysift",
                "license-type", GTK_LICENSE_GPL_3_0,
                "authors", authors,
                "system-information", wrapped,
                NULL);
  gtk_window_present (GTK_WINDOW (about));
}

static void
on_lab_timings (GObject *lab, GParamSpec *pspec, gpointer data)
{
  const char *timings = sky_convolution_lab_get_timings (SKY_CONVOLUTION_LAB (lab));

  set_state (data, "convolution-demo", g_variant_new_string (timings));
  /* And in the timings panel, a section under the pipeline's. */
  for (GList *l = gtk_application_get_windows (GTK_APPLICATION (data)); l; l = l->next)
    if (SKY_IS_WINDOW (l->data))
      sky_window_set_convolution_timings (l->data, timings);
}

/* The lab belongs to the main window: closing that closes both, and the
 * app ends as a one-window app does. Not gtk_window_set_destroy_with_parent:
 * GTK 4.8 then keeps the dead parent as the lab's transient parent, and the
 * lab, alive a little longer while its computation ends, touches it when it
 * goes. */
static void
close_lab_with_main (GtkWindow *lab)
{
  gtk_window_set_transient_for (lab, NULL);
  gtk_window_destroy (lab);
}

/* One lab per application, transient for the main window where there is one. */
static void
action_convolution_demo (GSimpleAction *action, GVariant *param, gpointer data)
{
  GList *windows = gtk_application_get_windows (GTK_APPLICATION (data));
  GtkWidget *lab = NULL;

  for (GList *l = windows; l; l = l->next)
    if (SKY_IS_CONVOLUTION_LAB (l->data))
      lab = l->data;
  if (lab == NULL)
    {
      lab = sky_convolution_lab_new (GTK_APPLICATION (data));
      g_signal_connect_object (lab, "notify::timings", G_CALLBACK (on_lab_timings), data, 0);
      for (GList *l = windows; l; l = l->next)
        if (SKY_IS_WINDOW (l->data))
          {
            gtk_window_set_transient_for (GTK_WINDOW (lab), l->data);
            g_signal_connect_object (l->data, "destroy", G_CALLBACK (close_lab_with_main), lab,
                                     G_CONNECT_SWAPPED);
          }
    }
  gtk_window_present (GTK_WINDOW (lab));
}

static const GActionEntry app_actions[] = {
  { "open", action_open, "s", "''", NULL },
  { "backend", action_backend, "s", "'cpu'", NULL },
  { "run", action_run, "s", "'none'", NULL },
  { "threshold", action_set_value, "d", "5.0", NULL },
  { "kappa", action_set_value, "d", "3.0", NULL },
  { "connectivity", action_set_value, "i", "4", NULL },
  { "relative", action_set_value, "b", "false", NULL },
  { "method", action_method, "s", "'lesson'", NULL },
  { "local", action_local, "s", NULL, NULL },
  { "plane", action_set_value, "x", "int64 0", NULL },
  { "pan", action_pan, "(dd)", NULL, NULL },
  { "export-catalog", action_export, "s", "''", NULL },
  { "export-view", action_export, "s", "''", NULL },
  { "export-figure", action_export, "s", NULL, NULL },
  { "screenshot", action_screenshot, "s", NULL, NULL },
  { "zoom", action_set_value, "d", NULL, NULL },
  { "cancel", action_cancel, NULL, NULL, NULL },
  { "select-source", action_set_value, "x", NULL, NULL },
  { "panel", action_panel, "s", NULL, NULL },
  { "sort", action_sort, "s", NULL, NULL },
  { "display", action_display, "s", NULL, NULL },
  { "state", action_state, NULL, "'{}'", NULL },
  { "convolution-demo", action_convolution_demo, NULL, "''", NULL },
  { "header", action_header, "s", "''", NULL },
  { "overlay", action_overlay, "s", "''", NULL },
  { "match-radius", action_set_value, "d", "10.0", NULL },
  { "source-filter", action_set_value, "s", NULL, NULL },
  { "smooth", action_set_value, "s", NULL, NULL },
  { "grid", action_set_value, "b", "false", NULL },
  { "contours", action_set_value, "s", "''", NULL },
  { "pixel-table", action_set_value, "i", "0", NULL },
  { "magnifier", action_set_value, "b", "false", NULL },
  { "scale-dialog", action_set_value, "b", "false", NULL },
  { "toggle-grid", action_toggle, NULL, "false", NULL },
  { "toggle-magnifier", action_toggle, NULL, "false", NULL },
  { "toggle-scale-dialog", action_toggle, NULL, "false", NULL },
  { "contour-levels", action_contour_levels, NULL, NULL, NULL },
  { "about", action_about, NULL, NULL, NULL },
  { "quit", action_quit, NULL, NULL, NULL },
};

/* ------------------------------------------------------- GApplication */

/* With a software OpenGL (llvmpipe and the like, as under Xvfb or on a
 * machine without a GPU driver) GTK's cairo renderer draws a window three
 * times faster than its GL renderer, and the image view draws on the CPU
 * (sky-raster.h). Decided once, before the first window is made;
 * GSK_RENDERER and SKYSIFT_VIEW, when set, win. */
static void
choose_renderer (void)
{
  GdkDisplay *display = gdk_display_get_default ();
  g_autoptr (GdkGLContext) context = NULL;
  g_autoptr (GError) error = NULL;
  const char *renderer;

  gboolean software;

  if (display == NULL)
    return;
  context = gdk_display_create_gl_context (display, &error);
  if (context == NULL || !gdk_gl_context_realize (context, &error))
    {
      g_debug ("no OpenGL: %s", error ? error->message : "?");
      sky_render_set_gl_probe (NULL, TRUE);
      return;
    }
  gdk_gl_context_make_current (context);
  renderer = (const char *) glGetString (GL_RENDERER);
  software = renderer && (strstr (renderer, "llvmpipe") || strstr (renderer, "softpipe")
                          || strstr (renderer, "Software Rasterizer")
                          || strstr (renderer, "swrast"));
  sky_render_set_gl_probe (renderer, software);
  if (software && g_getenv ("GSK_RENDERER") == NULL)
    {
      g_debug ("software OpenGL (%s): windows drawn with cairo", renderer);
      g_setenv ("GSK_RENDERER", "cairo", FALSE);
    }
  gdk_gl_context_clear_current ();
}

static void
sky_application_startup (GApplication *app)
{
  g_autoptr (GtkCssProvider) css = gtk_css_provider_new ();
  static const char *const quit_accels[] = { "<Control>q", NULL };
  static const char *const run_accels[] = { "<Control>r", NULL };
  static const char *const header_accels[] = { "<Control>h", NULL };

  G_APPLICATION_CLASS (sky_application_parent_class)->startup (app);
  choose_renderer ();

  g_set_application_name ("skysift");
  gtk_window_set_default_icon_name (SKY_APPLICATION_ID);
  gtk_css_provider_load_from_resource (css, "/io/github/skysift/SkySift/style.css");
  gtk_style_context_add_provider_for_display (gdk_display_get_default (),
                                              GTK_STYLE_PROVIDER (css),
                                              GTK_STYLE_PROVIDER_PRIORITY_APPLICATION);

  g_action_map_add_action_entries (G_ACTION_MAP (app), app_actions, G_N_ELEMENTS (app_actions),
                                   app);
  sky_application_frames_add_actions (SKY_APPLICATION (app));
  gtk_application_set_accels_for_action (GTK_APPLICATION (app), "app.quit", quit_accels);
  gtk_application_set_accels_for_action (GTK_APPLICATION (app), "app.run('all')", run_accels);
  gtk_application_set_accels_for_action (GTK_APPLICATION (app), "app.header('')", header_accels);
  SKY_APPLICATION (app)->samp = sky_samp_link_new (GTK_APPLICATION (app));
}

static void
sky_application_shutdown (GApplication *app)
{
  SkyApplication *self = SKY_APPLICATION (app);

  g_clear_pointer (&self->samp, sky_samp_link_close);
  G_APPLICATION_CLASS (sky_application_parent_class)->shutdown (app);
}

static void
sky_application_activate (GApplication *app)
{
  SkyApplication *self = SKY_APPLICATION (app);
  SkyWindow *window = main_window (self);

  /* Started with no file: show the demo, made on first use. */
  if (!sky_window_has_image (window))
    {
      g_autofree char *demo = sky_image_data_demo_path ();
      sky_window_open (window, demo, TRUE);
    }
  gtk_window_present (GTK_WINDOW (window));
}

static void
sky_application_open (GApplication *app, GFile **files, int n_files, const char *hint)
{
  SkyApplication *self = SKY_APPLICATION (app);
  SkyWindow *window = main_window (self);

  /* One window shows one image: the last file named is the one that stays.
   * FILE[HDU] and FILE[HDU,PLANE] pick another HDU or plane. */
  for (int i = 0; i < n_files; i++)
    {
      g_autofree char *given = g_file_get_path (files[i]);
      g_autofree char *path = NULL;
      gint64 plane;
      int hdu;

      if (given == NULL)
        continue;
      if (split_plane (given, &path, &hdu, &plane))
        sky_window_open_plane (window, path, hdu, plane);
      else
        sky_window_open (window, path, FALSE);
    }
  gtk_window_present (GTK_WINDOW (window));
}

static void
sky_application_class_init (SkyApplicationClass *klass)
{
  GApplicationClass *app_class = G_APPLICATION_CLASS (klass);

  app_class->startup = sky_application_startup;
  app_class->shutdown = sky_application_shutdown;
  app_class->activate = sky_application_activate;
  app_class->open = sky_application_open;
}

static void
sky_application_init (SkyApplication *self)
{
}
