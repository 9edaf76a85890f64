/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The viewing tools, driven through their actions: the coordinate grid
 * (lines where the core puts them, labels, compass, beam; in the exported
 * PNG too), around a pole, and contours (sigma levels and the detection
 * threshold where the field's profile puts them). */
#include "test-ui-gtk.h"

#include "sky-contour-dialog.h"
#include "sky-pixel-tools.h"
#include "sky-scale-dialog.h"

#define GRID_NX 220
#define GRID_NY 180

static const int CONTOUR_RGB8[3] = { 38, 115, 255 };   /* (0.15, 0.45, 1.0) */
static const int THRESHOLD_RGB8[3] = { 255, 140, 0 };  /* (1.0, 0.55, 0.0) */

/* Noise with a SIN WCS of 36" pixels at (crval1, crval2) and a 0.05 x 0.03
 * degree beam at 30 degrees: several grid lines, a beam of a few pixels. */
static char *write_sky_image_as (const char *name, const char *ctype1, const char *ctype2,
                                  double crval1, double crval2, double cdelt);

static char *
write_sky_image (const char *name, double crval1, double crval2)
{
  return write_sky_image_as (name, "RA---SIN", "DEC--SIN", crval1, crval2, 0.01);
}

static char *
write_sky_image_as (const char *name, const char *ctype1, const char *ctype2, double crval1,
                    double crval2, double cdelt)
{
  char *path = sky_test_tmp_path (name);
  g_autofree char *create = g_strconcat ("!", path, NULL);
  g_autofree float *v = noise (GRID_NX, GRID_NY, 7);
  long axes[2] = { GRID_NX, GRID_NY };
  fitsfile *f = NULL;
  int status = 0;

  fits_create_file (&f, create, &status);
  fits_create_img (f, FLOAT_IMG, 2, axes, &status);
  fits_write_key_str (f, "BUNIT", "JY/BEAM", NULL, &status);
  fits_write_key_str (f, "CTYPE1", ctype1, NULL, &status);
  fits_write_key_str (f, "CTYPE2", ctype2, NULL, &status);
  fits_write_key_dbl (f, "CRPIX1", GRID_NX / 2.0, 10, NULL, &status);
  fits_write_key_dbl (f, "CRPIX2", GRID_NY / 2.0, 10, NULL, &status);
  fits_write_key_dbl (f, "CRVAL1", crval1, 10, NULL, &status);
  fits_write_key_dbl (f, "CRVAL2", crval2, 10, NULL, &status);
  fits_write_key_dbl (f, "CDELT1", -cdelt, 10, NULL, &status);
  fits_write_key_dbl (f, "CDELT2", cdelt, 10, NULL, &status);
  fits_write_key_dbl (f, "BMAJ", 0.05, 10, NULL, &status);
  fits_write_key_dbl (f, "BMIN", 0.03, 10, NULL, &status);
  fits_write_key_dbl (f, "BPA", 30.0, 10, NULL, &status);
  fits_write_img (f, TFLOAT, 1, (LONGLONG) GRID_NX * GRID_NY, v, &status);
  fits_close_file (f, &status);
  fail_on_cfitsio (path, status);
  return path;
}

static void save_tool_picture (GtkWidget *widget, const char *name);

static void
save_view_picture (Fixture *f, const char *name)
{
  g_autoptr (GdkTexture) texture = NULL;
  g_autofree char *path = NULL;

  if (g_getenv ("SKYSIFT_TEST_SCREENSHOTS") == NULL)
    return;
  texture = sky_image_view_render_texture (f->view, NULL);
  path = g_build_filename (g_getenv ("SKYSIFT_TEST_SCREENSHOTS"), name, NULL);
  if (texture)
    gdk_texture_save_to_png (texture, path);
}

/* The grid's green, antialiased over the grey image: well greener than
 * it is red or blue (grey colour maps never are). */
static gboolean
is_grid_green (Rgb c)
{
  return c.g - MAX (c.r, c.b) > 50;
}

static int
count_green (const Picture *pic)
{
  int n = 0;
  for (int y = 0; y < pic->height; y++)
    for (int x = 0; x < pic->width; x++)
      n += is_grid_green (pixel (pic, x, y));
  return n;
}

static gboolean
green_near (const Picture *pic, double px, double py, int r)
{
  for (int dy = -r; dy <= r; dy++)
    for (int dx = -r; dx <= r; dx++)
      {
        int x = (int) floor (px) + dx, y = (int) floor (py) + dy;
        if (x >= 0 && y >= 0 && x < pic->width && y < pic->height
            && is_grid_green (pixel (pic, x, y)))
          return TRUE;
      }
  return FALSE;
}

static int
count_colour (const Picture *pic, const int rgb[3], int tol)
{
  int n = 0;
  for (int y = 0; y < pic->height; y++)
    for (int x = 0; x < pic->width; x++)
      n += close_to (pixel (pic, x, y), rgb, tol);
  return n;
}

/* Whether the colour is within r picture pixels of (px, py). */
static gboolean
colour_near (const Picture *pic, double px, double py, int r, const int rgb[3], int tol)
{
  for (int dy = -r; dy <= r; dy++)
    for (int dx = -r; dx <= r; dx++)
      {
        int x = (int) floor (px) + dx, y = (int) floor (py) + dy;
        if (x >= 0 && y >= 0 && x < pic->width && y < pic->height
            && close_to (pixel (pic, x, y), rgb, tol))
          return TRUE;
      }
  return FALSE;
}

static Picture *
picture_from_png (const char *path)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GdkTexture) texture = gdk_texture_new_from_filename (path, &error);
  Picture *pic;

  g_assert_no_error (error);
  pic = g_new0 (Picture, 1);
  pic->width = gdk_texture_get_width (texture);
  pic->height = gdk_texture_get_height (texture);
  pic->scale = 1;
  pic->argb = g_new (guint32, (gsize) pic->width * pic->height);
  gdk_texture_download (texture, (guchar *) pic->argb, (gsize) pic->width * 4);
  return pic;
}

/* Waits for a frame with the app's state settled, then lets the view's
 * word of what that frame drew (sent from the main loop after the frame)
 * reach the state. */
static void
wait_drawn (Fixture *f, const char *what)
{
  gboolean drawn = FALSE;

  wait_idle (f, what);
  /* What moved the layout (the readout's new text resizes the view by a
   * few pixels) is laid out, and the view drawn at its new size: a view
   * waiting for its allocation renders nothing. */
  wait_frames (f);
  sky_image_view_when_drawn (f->view, set_flag, &drawn);
  iterate_until (flag_set, &drawn, what);
  while (g_main_context_pending (NULL))
    g_main_context_iteration (NULL, FALSE);
}

static gboolean
action_bool (const char *name)
{
  g_autoptr (GVariant) state = g_action_group_get_action_state (G_ACTION_GROUP (app), name);
  return g_variant_get_boolean (state);
}

static char *
action_string (const char *name)
{
  g_autoptr (GVariant) state = g_action_group_get_action_state (G_ACTION_GROUP (app), name);
  return g_variant_dup_string (state, NULL);
}

/* The grid of a SIN field: app.grid's state, the lines and labels in the
 * app's state; the drawn lines pass where the core's paths go (the middle
 * point of every path has the grid colour within 2 picture pixels), the
 * compass points north up and east left (RA grows to the left); the
 * exported PNG has the grid; turned off, no grid colour is left. */
void
test_grid (Fixture *f)
{
  Image img = { write_sky_image ("grid-sin.fits", 266.4, -28.9), GRID_NX, GRID_NY };
  g_autofree char *export_path = sky_test_tmp_path ("grid-view.png");
  g_autoptr (Picture) before = NULL;
  g_autoptr (Picture) pic = NULL;
  g_autoptr (Picture) exported = NULL;
  g_autoptr (Picture) after = NULL;
  g_autofree char *json = NULL;
  const SkyGrid *g;
  int green, missing = 0;

  open_image (f, &img);
  before = render_view (f);
  g_assert_cmpint (count_green (before), ==, 0);
  activate ("grid", g_variant_new_boolean (TRUE));
  wait_drawn (f, "the grid drawn");
  g_assert_true (action_bool ("grid"));
  pic = render_view (f);
  save_view_picture (f, "grid-sin.png");
  save_widget_picture (GTK_WIDGET (f->window), "grid-sin-window.png");
  json = state_json ();
  g_test_message ("grid state: %.400s", state_field (json, "grid"));
  g_assert_true (g_str_has_prefix (state_field (json, "grid"), "{\"shown\": true"));
  g_assert_true (g_str_has_prefix (state_field (json, "compass"), "true"));
  g_assert_true (g_str_has_prefix (state_field (json, "beam"), "true"));
  g_assert_cmpfloat (fabs (g_ascii_strtod (state_field (json, "north_deg"), NULL) - 90), <, 1);
  g_assert_cmpfloat (fabs (fabs (g_ascii_strtod (state_field (json, "east_deg"), NULL)) - 180), <, 1);
  g_assert_cmpint (atoi (state_field (json, "labels")), >=, 4);
  g_assert_nonnull (strstr (state_field (json, "lines"), "17h44m"));
  /* BPA 30: the major axis 30 degrees from north (up) towards east
   * (left): 120 degrees counter-clockwise from the right, within the
   * sky's own turn across the image (north is 89.5 at the compass). */
  {
    double beam = g_ascii_strtod (state_field (json, "beam_deg"), NULL);
    double off = fmod (fabs (beam - 120.0), 180.0);
    g_test_message ("beam on screen at %.2f degrees", beam);
    g_assert_cmpfloat (MIN (off, 180 - off), <, 2);
  }

  g = &f->view->grid;
  g_assert_true (f->view->grid_valid);
  g_assert_cmpint (g->npaths, >=, 4);
  for (int p = 0; p < g->npaths; p++)
    {
      int64_t k = (g->path_start[p] + g->path_start[p + 1]) / 2;
      double px, py;
      to_picture (f, pic, g->px[k] + 0.5, g->py[k] + 0.5, &px, &py);
      if (!green_near (pic, px, py, 2))
        {
          g_test_message ("path %d (%s): no grid colour near (%.1f, %.1f)", p,
                          g->lines[g->path_line[p]].text, px, py);
          missing++;
        }
    }
  g_assert_cmpint (missing, ==, 0);
  green = count_green (pic);
  g_test_message ("grid colour: %d picture pixels", green);
  g_assert_cmpint (green, >, 200);

  /* The exported view has it too. */
  activate ("export-view", g_variant_new_string (export_path));
  wait_idle (f, "the view exported");
  exported = picture_from_png (export_path);
  g_assert_cmpint (count_green (exported), >, 200);

  /* The figure: the image in a frame on a white margin, the grid on it,
   * the labels and axis names outside (dark text in the margins). */
  {
    g_autofree char *figure_path = sky_test_tmp_path ("grid-figure.png");
    g_autoptr (Picture) fig = NULL;
    int x0, y0, x1, y1, dark_bottom = 0, dark_left = 0;

    activate ("export-figure", g_variant_new_string (figure_path));
    wait_idle (f, "the figure exported");
    fig = picture_from_png (figure_path);
    image_rect (f, pic, &x0, &y0, &x1, &y1);
    g_test_message ("figure %d x %d, image %d x %d", fig->width, fig->height, x1 - x0, y1 - y0);
    g_assert_cmpint (abs (fig->width - (x1 - x0 + 78 + 24)), <=, 2);
    g_assert_cmpint (abs (fig->height - (y1 - y0 + 20 + 52)), <=, 2);
    g_assert_true (close_to (pixel (fig, 2, 2), (const int[3]) { 255, 255, 255 }, 3));
    g_assert_cmpint (count_green (fig), >, 200);
    for (int y = fig->height - 50; y < fig->height; y++)
      for (int x = 80; x < fig->width - 30; x++)
        dark_bottom += luminance (pixel (fig, x, y)) < 100;
    for (int y = 30; y < fig->height - 60; y++)
      for (int x = 0; x < 70; x++)
        dark_left += luminance (pixel (fig, x, y)) < 100;
    g_test_message ("dark text pixels: %d below the image, %d left of it", dark_bottom, dark_left);
    g_assert_cmpint (dark_bottom, >, 100);
    g_assert_cmpint (dark_left, >, 100);
    if (g_getenv ("SKYSIFT_TEST_SCREENSHOTS") != NULL)
      {
        g_autofree char *keep = g_build_filename (g_getenv ("SKYSIFT_TEST_SCREENSHOTS"),
                                                  "grid-figure.png", NULL);
        g_autofree char *bytes = NULL;
        gsize len;
        g_assert_true (g_file_get_contents (figure_path, &bytes, &len, NULL));
        g_assert_true (g_file_set_contents (keep, bytes, (gssize) len, NULL));
      }
    g_unlink (figure_path);
  }

  activate ("grid", g_variant_new_boolean (FALSE));
  wait_idle (f, "the grid gone");
  g_assert_false (action_bool ("grid"));
  after = render_view (f);
  g_assert_cmpint (count_green (after), ==, 0);
  g_unlink (export_path);
}

/* The whole sky in galactic Aitoff: six meridians and five parallels
 * drawn inside the projection's ellipse, in degrees, labelled. */
void
test_grid_allsky (Fixture *f)
{
  Image img = { write_sky_image_as ("grid-ait.fits", "GLON-AIT", "GLAT-AIT", 0, 0, 1.6),
                GRID_NX, GRID_NY };
  g_autoptr (Picture) pic = NULL;
  g_autofree char *json = NULL;

  open_image (f, &img);
  activate ("grid", g_variant_new_boolean (TRUE));
  wait_drawn (f, "the all-sky grid");
  pic = render_view (f);
  save_view_picture (f, "grid-allsky.png");
  json = state_json ();
  g_test_message ("grid state: %.400s", state_field (json, "grid"));
  g_assert_nonnull (strstr (state_field (json, "lines"), "\"60°\""));
  g_assert_nonnull (strstr (state_field (json, "lines"), "\"-30°\""));
  g_assert_cmpint (f->view->grid.nlines, ==, 11);
  g_assert_cmpint (atoi (state_field (json, "labels")), >=, 3);
  g_assert_cmpint (count_green (pic), >, 500);
  activate ("grid", g_variant_new_boolean (FALSE));
  wait_idle (f, "the grid gone");
}

/* Around the north pole every meridian is drawn (a full circle of them,
 * labelled) and the compass still finds north; an image without a
 * celestial WCS gets no grid, and a word why. */
void
test_grid_pole (Fixture *f)
{
  Image img = { write_sky_image ("grid-pole.fits", 40.0, 89.2), GRID_NX, GRID_NY };
  g_autofree char *json = NULL;
  g_autoptr (Picture) pic = NULL;
  int meridians = 0;

  open_image (f, &img);
  activate ("grid", g_variant_new_boolean (TRUE));
  wait_drawn (f, "the grid drawn");
  pic = render_view (f);
  save_view_picture (f, "grid-pole.png");
  json = state_json ();
  g_test_message ("grid state: %.400s", state_field (json, "grid"));
  g_assert_cmpint (f->view->grid.pole_inside, ==, 1);
  for (int l = 0; l < f->view->grid.nlines; l++)
    meridians += f->view->grid.lines[l].axis == 0;
  g_assert_cmpfloat (fabs (meridians * f->view->grid.step[0] - 360), <, 1e-9);
  g_assert_cmpint (atoi (state_field (json, "labels")), >=, 4);
  g_assert_true (g_str_has_prefix (state_field (json, "compass"), "true"));
  g_assert_cmpint (count_green (pic), >, 200);

  /* An image with no celestial WCS: nothing drawn, and the state and the
   * status line say why. */
  {
    g_autoptr (Picture) plain = NULL;
    g_autofree char *state = NULL;
    open_image (f, &orient_nowcs);
    activate ("grid", g_variant_new_boolean (FALSE));
    activate ("grid", g_variant_new_boolean (TRUE));
    wait_drawn (f, "no grid to draw");
    state = state_json ();
    g_assert_nonnull (strstr (state_field (state, "grid"), "\"note\": \"no celestial WCS\""));
    g_assert_nonnull (strstr (state_field (state, "last_error"), "has no celestial WCS"));
    plain = render_view (f);
    g_assert_cmpint (count_green (plain), ==, 0);
  }
  activate ("grid", g_variant_new_boolean (FALSE));
  wait_idle (f, "the grid gone");
}

/* Whether the colour lies on a ring of radius r (image pixels, +- 1) about
 * image point (cx, cy): found in at least 6 of 8 directions. */
static int
ring_directions (Fixture *f, const Picture *pic, double cx, double cy, double r, const int rgb[3])
{
  int found = 0;
  for (int k = 0; k < 8; k++)
    {
      double a = k * G_PI / 4;
      gboolean hit = FALSE;
      for (double rr = r - 1.0; rr <= r + 1.0 && !hit; rr += 0.25)
        {
          double px, py;
          to_picture (f, pic, cx + rr * cos (a), cy + rr * sin (a), &px, &py);
          hit = colour_near (pic, px, py, 1, rgb, 60);
        }
      found += hit;
    }
  return found;
}

/* Contours at 100 sigma and at the detection threshold (5 sigma, absolute)
 * around the brightest source: a Gaussian of peak 400 and sigma 1.5 on
 * noise of sigma 1 meets level L at r = 1.5 sqrt(2 ln (400 / L)): 2.5
 * pixels for 100 sigma (blue), 4.4 for the threshold (orange). The levels
 * in the state follow the clip's sigma; a bad level is refused by name;
 * "" takes them away. */
void
test_contours (Fixture *f)
{
  const Source *s = &field_sources[0];
  g_autoptr (Picture) pic = NULL;
  g_autoptr (Picture) none = NULL;
  g_autofree char *json = NULL;
  g_autofree char *spec = NULL;
  double sigma, level0, threshold, r100, rthr;
  const char *levels;
  char *end;

  open_image (f, &field);
  activate ("contours", g_variant_new_string ("threshold, 100 sigma"));
  wait_drawn (f, "the clip for the contours");
  spec = action_string ("contours");
  g_assert_cmpstr (spec, ==, "threshold, 100 sigma");
  json = state_json ();
  g_test_message ("contours state: %.300s", state_field (json, "contours"));
  sigma = g_ascii_strtod (state_field (json, "sigma"), NULL);
  levels = state_field (json, "levels") + 1;
  level0 = g_ascii_strtod (levels, &end);
  threshold = g_ascii_strtod (end + 1, NULL);
  g_assert_cmpfloat (fabs (level0 - 100 * sigma), <, 1e-6 * sigma);
  g_assert_cmpfloat (fabs (threshold - 5 * sigma), <, 1e-6 * sigma);
  g_assert_nonnull (strstr (state_field (json, "contours"), "\"threshold\": true"));
  g_assert_cmpint (f->view->ncontours, ==, 2);
  g_assert_cmpint (f->view->contours[0].npaths, >=, 1);
  g_assert_cmpint (f->view->contours[1].npaths, >=, 4);

  sky_window_set_zoom (f->window, 8);
  sky_image_view_center_on (f->view, s->x, s->y);
  wait_drawn (f, "zoomed on the brightest source");
  f->cx = s->x + 0.5;
  f->cy = s->y + 0.5;
  pic = render_view (f);
  save_view_picture (f, "contours-8x.png");
  r100 = 1.5 * sqrt (2 * log (400 / level0));
  rthr = 1.5 * sqrt (2 * log (400 / threshold));
  g_test_message ("radii: 100 sigma %.2f px, threshold %.2f px", r100, rthr);
  g_assert_cmpint (ring_directions (f, pic, s->x + 0.5, s->y + 0.5, r100, CONTOUR_RGB8), >=, 6);
  g_assert_cmpint (ring_directions (f, pic, s->x + 0.5, s->y + 0.5, rthr, THRESHOLD_RGB8), >=, 6);

  activate ("contours", g_variant_new_string ("3,x sigma"));
  iterate_until (app_idle, NULL, "the bad levels refused");
  assert_state ("last_error", "\"Those are not contour levels");
  g_free (spec);
  spec = action_string ("contours");
  g_assert_cmpstr (spec, ==, "threshold, 100 sigma");

  /* Typed into the Levels dialog and Enter pressed, as a person does: the
   * entry starts with the levels shown; a word it cannot read marks it. */
  {
    SkyContourDialog *dialog;
    GtkEntry *entry;
    g_autofree char *typed = NULL;

    activate ("contour-levels", NULL);
    dialog = g_object_get_data (G_OBJECT (f->window), "sky-contour-dialog");
    g_assert_nonnull (dialog);
    g_assert_true (gtk_widget_get_visible (GTK_WIDGET (dialog)));
    entry = sky_contour_dialog_get_entry (dialog);
    g_assert_cmpstr (gtk_editable_get_text (GTK_EDITABLE (entry)), ==, "threshold, 100 sigma");
    gtk_editable_set_text (GTK_EDITABLE (entry), "50 σ");
    g_signal_emit_by_name (entry, "activate");
    wait_drawn (f, "the typed levels");
    typed = action_string ("contours");
    g_assert_cmpstr (typed, ==, "50 sigma");
    g_assert_cmpint (f->view->ncontours, ==, 1);
    g_assert_false (gtk_widget_has_css_class (GTK_WIDGET (entry), "error"));
    save_tool_picture (GTK_WIDGET (dialog), "contour-levels.png");
    gtk_editable_set_text (GTK_EDITABLE (entry), "fifty");
    g_signal_emit_by_name (entry, "activate");
    iterate_until (app_idle, NULL, "the typed word refused");
    g_assert_true (gtk_widget_has_css_class (GTK_WIDGET (entry), "error"));
    assert_state ("last_error", "\"Those are not contour levels");
    gtk_window_close (GTK_WINDOW (dialog));
  }

  activate ("contours", g_variant_new_string (""));
  wait_idle (f, "the contours gone");
  none = render_view (f);
  g_assert_cmpint (count_colour (none, THRESHOLD_RGB8, 40), ==, 0);
  g_assert_cmpint (count_colour (none, CONTOUR_RGB8, 40), ==, 0);
}

/* Renders any widget on screen as the PNG export does. */
static gboolean
widget_drawn (gpointer widget)
{
  g_autoptr (GdkTexture) texture = NULL;

  if (!gtk_widget_get_mapped (widget) || gtk_widget_get_frame_clock (widget) == NULL)
    return FALSE;
  texture = sky_render_widget (widget, 1.0, NULL);
  return texture != NULL;
}

static void
painted (GdkFrameClock *clock, gpointer flag)
{
  *(gboolean *) flag = TRUE;
}

/* A window just presented has drawn nothing yet: wait for its first
 * frame. */
static Picture *
render_widget (GtkWidget *widget)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GdkTexture) texture = NULL;
  Picture *pic;

  iterate_until (widget_drawn, widget, "the tool window on screen");
  {
    /* Then a frame painted after this point, with what it shows now. */
    GdkFrameClock *clock = gtk_widget_get_frame_clock (widget);
    gboolean done = FALSE;
    gulong id = g_signal_connect (clock, "after-paint", G_CALLBACK (painted), &done);
    gtk_widget_queue_draw (widget);
    gtk_widget_queue_draw (GTK_WIDGET (gtk_widget_get_root (widget)));
    iterate_until (flag_set, &done, "a frame of the tool window");
    g_signal_handler_disconnect (clock, id);
  }
  texture = sky_render_widget (widget, 1.0, &error);
  g_assert_no_error (error);
  pic = g_new0 (Picture, 1);
  pic->width = gdk_texture_get_width (texture);
  pic->height = gdk_texture_get_height (texture);
  pic->scale = pic->width / (double) gtk_widget_get_width (widget);
  pic->argb = g_new (guint32, (gsize) pic->width * pic->height);
  gdk_texture_download (texture, (guchar *) pic->argb, (gsize) pic->width * 4);
  return pic;
}

static void
save_tool_picture (GtkWidget *widget, const char *name)
{
  g_autoptr (Picture) drawn = render_widget (widget);
  save_widget_picture (widget, name);
}

static int
action_int (const char *name)
{
  g_autoptr (GVariant) state = g_action_group_get_action_state (G_ACTION_GROUP (app), name);
  return g_variant_get_int32 (state);
}

/* Each cell of the table against the image: the value of the pixel the
 * view shows there (rows up the screen, columns as the view runs x). */
static void
assert_table (Fixture *f, SkyPixelTools *tools, int size, gint64 cx, gint64 cy)
{
  const SkyImage *img = &f->window->image->image;
  int half = size / 2;

  for (int r = 0; r < size; r++)
    for (int c = 0; c < size; c++)
      {
        gint64 x = cx + (c - half) * (f->flip ? -1 : 1), y = cy + (half - r);
        char want[32];
        g_snprintf (want, sizeof want, "%.5g", img->pixels[y * img->nx + x]);
        g_assert_cmpstr (sky_pixel_tools_get_text (tools, c, r), ==, want);
      }
}

/* The pixel table and the magnifier follow the pointer over the brightest
 * source: every cell holds its pixel's value, the state says which pixel;
 * the magnifier's centre and its neighbours have the view's colours for
 * the same pixels; 6 is refused; 0 and no magnifier hide the window. */
void
test_pixel_table (Fixture *f)
{
  const Source *s = &field_sources[0];
  g_autoptr (Picture) view = NULL;
  g_autoptr (Picture) mag = NULL;
  SkyPixelTools *tools;
  const int cell = SKY_PIXEL_TOOLS_CELL, half = SKY_PIXEL_TOOLS_MAGNIFIED / 2;

  open_image (f, &field);
  activate ("pixel-table", g_variant_new_int32 (7));
  activate ("magnifier", g_variant_new_boolean (TRUE));
  wait_drawn (f, "the pixel table");
  tools = g_object_get_data (G_OBJECT (f->window), "sky-pixel-tools");
  g_assert_nonnull (tools);
  g_assert_cmpint (action_int ("pixel-table"), ==, 7);
  g_assert_true (action_bool ("magnifier"));

  g_signal_emit_by_name (f->view, "pointer-moved", TRUE, s->x + 0.5, s->y + 0.5);
  wait_drawn (f, "the table filled");
  assert_table (f, tools, 7, (gint64) s->x, (gint64) s->y);
  {
    g_autofree char *json = state_json ();
    g_autofree char *at = g_strdup_printf ("[%d, %d]", (int) s->x + 1, (int) s->y + 1);
    g_assert_true (g_str_has_prefix (state_field (json, "pixel_tools_at"), at));
  }
  save_tool_picture (GTK_WIDGET (tools), "pixel-table-7.png");

  /* The magnifier against the view, pixel for pixel around the source. */
  view = render_view (f);
  mag = render_widget (sky_pixel_tools_get_magnifier_widget (tools));
  for (int d = -2; d <= 2; d++)
    {
      Rgb in_view = pixel_at_image (f, view, s->x + d, s->y);
      int mx = (half + (f->flip ? -d : d)) * cell + cell / 2, my = half * cell + cell / 2;
      Rgb in_mag = pixel (mag, (int) (mx * mag->scale), (int) (my * mag->scale));
      const int ref[3] = { in_view.r, in_view.g, in_view.b };
      g_test_message ("x %+d: view (%d %d %d), magnifier (%d %d %d)", d, in_view.r, in_view.g,
                      in_view.b, in_mag.r, in_mag.g, in_mag.b);
      g_assert_true (close_to (in_mag, ref, 12));
    }
  g_assert_cmpfloat (luminance (pixel (mag, (int) ((half * cell + cell / 2) * mag->scale),
                                       (int) ((half * cell + cell / 2) * mag->scale))), <, 40);

  activate ("pixel-table", g_variant_new_int32 (9));
  wait_drawn (f, "the 9 x 9 table");
  assert_table (f, tools, 9, (gint64) s->x, (gint64) s->y);
  save_tool_picture (GTK_WIDGET (tools), "pixel-table-9.png");

  activate ("pixel-table", g_variant_new_int32 (6));
  iterate_until (app_idle, NULL, "the size refused");
  assert_state ("last_error", "\"That is not a pixel table size");
  g_assert_cmpint (action_int ("pixel-table"), ==, 9);

  activate ("pixel-table", g_variant_new_int32 (0));
  activate ("magnifier", g_variant_new_boolean (FALSE));
  wait_drawn (f, "the tools hidden");
  g_assert_false (gtk_widget_get_visible (GTK_WIDGET (tools)));
  g_assert_cmpint (action_int ("pixel-table"), ==, 0);
  g_assert_false (action_bool ("magnifier"));
}

/* The scale dialog: the upper limit dragged to the place of 20 (what a
 * drag of the red line ends in) makes the view's limits typed, with the
 * upper one the plot's value there; the histogram is drawn in blue. */
void
test_scale_dialog (Fixture *f)
{
  g_autoptr (Picture) pic = NULL;
  SkyScaleDialog *dialog;
  double lo0, hi0, x, want, lo, hi;
  int blue = 0;

  open_image (f, &field);
  activate ("scale-dialog", g_variant_new_boolean (TRUE));
  wait_drawn (f, "the scale dialog");
  g_assert_true (action_bool ("scale-dialog"));
  dialog = g_object_get_data (G_OBJECT (f->window), "sky-scale-dialog");
  g_assert_nonnull (dialog);
  sky_image_view_get_scale (f->view, &lo0, &hi0, NULL);
  pic = render_widget (GTK_WIDGET (dialog));
  save_widget_picture (GTK_WIDGET (dialog), "scale-dialog.png");
  for (int y = 0; y < pic->height; y++)
    for (int xx = 0; xx < pic->width; xx++)
      blue += close_to (pixel (pic, xx, y), (const int[3]) { 89, 140, 217 }, 20);
  g_test_message ("histogram bars: %d picture pixels; limits %g to %g", blue, lo0, hi0);
  g_assert_cmpint (blue, >, 500);

  x = round (sky_scale_dialog_x_of (dialog, 20.0));
  want = sky_scale_dialog_value_at (dialog, x);
  sky_scale_dialog_move_limit (dialog, 1, x);
  wait_drawn (f, "the limits moved");
  assert_state ("limits", "\"typed\"");
  sky_image_view_get_scale (f->view, &lo, &hi, NULL);
  g_test_message ("after the drag: %g to %g (wanted upper %g)", lo, hi, want);
  g_assert_cmpfloat (fabs (hi - want), <, 1e-9 * fabs (want));
  g_assert_cmpfloat (fabs (lo - lo0), <, 1e-9 * MAX (fabs (lo0), 1));
  save_tool_picture (GTK_WIDGET (dialog), "scale-dialog-dragged.png");
  save_widget_picture (GTK_WIDGET (f->window), "scale-dialog-window.png");

  activate ("scale-dialog", g_variant_new_boolean (FALSE));
  wait_drawn (f, "the dialog hidden");
  g_assert_false (action_bool ("scale-dialog"));
}

/* On gc_like_2048.fits, grid and contours at 3, 5, 10 and 20 sigma and the
 * threshold, traced on a worker: the paths the view holds are the core's
 * for the same pixels and levels, the levels follow the clip's sigma, and
 * the main loop never waited as long as one level's tracing. */
void
test_contours_gc_like (Fixture *f)
{
  const SkyImage *img;
  g_autofree char *json = NULL;
  double sigma;

  if (!open_gc_like (f))
    return;
  activate ("grid", g_variant_new_boolean (TRUE));
  activate ("contours", g_variant_new_string ("threshold, 3,5,10,20 sigma"));
  wait_drawn (f, "contours on gc_like_2048");
  save_view_picture (f, "contours-grid-gc-like.png");
  save_widget_picture (GTK_WIDGET (f->window), "contours-grid-gc-like-window.png");
  json = state_json ();
  g_test_message ("%.500s", state_field (json, "contours"));
  sigma = g_ascii_strtod (state_field (json, "sigma"), NULL);
  img = &f->window->image->image;
  g_assert_cmpint (f->view->ncontours, ==, 5);
  g_assert_cmpint (f->view->contour_lod, ==, 0);
  for (int i = 0; i < f->view->ncontours; i++)
    {
      const double k[] = { 3, 5, 10, 20 };
      SkyContour c;
      double want = i < 4 ? k[i] * sigma : 5 * sigma;
      g_assert_cmpfloat (fabs (f->view->contour_level[i] - want), <, 1e-9 * want);
      g_assert_cmpint (sky_contour_trace (img->pixels, img->nx, img->ny, want, &c), ==, SKY_OK);
      g_test_message ("level %g: %" G_GINT64_FORMAT " paths", want, c.npaths);
      g_assert_cmpint (c.npaths, ==, f->view->contours[i].npaths);
      g_assert_cmpint (c.path_start[c.npaths], ==, f->view->contours[i].path_start[c.npaths]);
      sky_contour_free (&c);
    }
  g_assert_cmpfloat (state_number ("max_gap_ms"), <, 1000);
  activate ("grid", g_variant_new_boolean (FALSE));
  activate ("contours", g_variant_new_string (""));
  wait_drawn (f, "contours gone");
}
