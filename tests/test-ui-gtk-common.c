/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Shared by the app's widget tests: the FITS fixtures, the app and its
 * window driven through its actions, waits with deadlines, pictures of
 * the view and what they show. */
#include "test-ui-gtk.h"

SkyApplication *app;
char *no_gl_reason;   /* why the OpenGL view cannot be tested, or NULL */

Image field, orient_west, orient_east, orient_nowcs, orient_linear;
/* A noise pixel of the field whose four neighbours all differ from it by
 * more than one sigma: at 16x it must be one square of its own colour. */
int zoom_x, zoom_y;

static double
gauss (GRand *rand)
{
  double u = g_rand_double (rand), v = g_rand_double (rand);
  return sqrt (-2 * log (1 - u)) * cos (2 * G_PI * v);
}

float *
noise (int nx, int ny, guint32 seed)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (seed);
  float *v = g_new (float, (gsize) nx * ny);
  for (int i = 0; i < nx * ny; i++)
    v[i] = (float) gauss (rand);
  return v;
}

/* Stops the test with cfitsio's reason where writing a fixture failed. */
void
fail_on_cfitsio (const char *path, int status)
{
  char text[FLEN_STATUS];

  if (status == 0)
    return;
  fits_get_errstatus (status, text);
  g_error ("%s: cfitsio: %s", path, text);
}

/* Writes pixels as a float32 FITS image; cdelt1_sign -1 or +1 gives it a
 * celestial WCS with that sign of CDELT1, 0 none, LINEAR_CDELT1 a linear
 * (not celestial) first axis with CDELT1 > 0. */
char *
write_fits (const char *name, const float *pixels, int nx, int ny, int cdelt1_sign)
{
  char *path = sky_test_tmp_path (name);
  g_autofree char *create = g_strconcat ("!", path, NULL);
  long axes[2] = { nx, ny };
  fitsfile *f = NULL;
  int status = 0;

  fits_create_file (&f, create, &status);
  fits_create_img (f, FLOAT_IMG, 2, axes, &status);
  fits_write_key_str (f, "BUNIT", "JY/BEAM", NULL, &status);
  if (cdelt1_sign == LINEAR_CDELT1)
    {
      fits_write_key_str (f, "CTYPE1", "LINEAR", NULL, &status);
      fits_write_key_str (f, "CTYPE2", "LINEAR", NULL, &status);
      fits_write_key_dbl (f, "CDELT1", 0.5, 10, NULL, &status);
      fits_write_key_dbl (f, "CDELT2", 0.5, 10, NULL, &status);
    }
  else if (cdelt1_sign != 0)
    {
      fits_write_key_str (f, "CTYPE1", "RA---SIN", NULL, &status);
      fits_write_key_str (f, "CTYPE2", "DEC--SIN", NULL, &status);
      fits_write_key_dbl (f, "CRPIX1", nx / 2.0, 10, NULL, &status);
      fits_write_key_dbl (f, "CRPIX2", ny / 2.0, 10, NULL, &status);
      fits_write_key_dbl (f, "CRVAL1", 266.4, 10, NULL, &status);
      fits_write_key_dbl (f, "CRVAL2", -29.0, 10, NULL, &status);
      fits_write_key_dbl (f, "CDELT1", cdelt1_sign / 3600.0, 10, NULL, &status);
      fits_write_key_dbl (f, "CDELT2", 1 / 3600.0, 10, NULL, &status);
      fits_write_key_str (f, "CUNIT1", "deg", NULL, &status);
      fits_write_key_str (f, "CUNIT2", "deg", NULL, &status);
    }
  fits_write_img (f, TFLOAT, 1, (LONGLONG) nx * ny, (void *) pixels, &status);
  fits_close_file (f, &status);
  fail_on_cfitsio (path, status);
  return path;
}

void
make_fixtures (void)
{
  float *v;

  field.nx = FIELD_NX;
  field.ny = FIELD_NY;
  v = noise (FIELD_NX, FIELD_NY, 20241203);
  for (int y = 0; y < FIELD_NY; y++)
    for (int x = 0; x < FIELD_NX; x++)
      for (guint s = 0; s < N_FIELD_SOURCES; s++)
        {
          double dx = x - field_sources[s].x, dy = y - field_sources[s].y;
          v[y * FIELD_NX + x] += (float) (field_sources[s].peak
                                          * exp (-(dx * dx + dy * dy) / (2 * PSF_SIGMA * PSF_SIGMA)));
        }
  field.path = write_fits ("field.fits", v, FIELD_NX, FIELD_NY, -1);

  /* The square for the zoom: in the noise, right of the sources. */
  zoom_x = -1;
  for (int y = 45; y < 75 && zoom_x < 0; y++)
    for (int x = 135; x < 150 && zoom_x < 0; x++)
      {
        float c = v[y * FIELD_NX + x];
        if (fabsf (v[y * FIELD_NX + x - 1] - c) > 1 && fabsf (v[y * FIELD_NX + x + 1] - c) > 1
            && fabsf (v[(y - 1) * FIELD_NX + x] - c) > 1 && fabsf (v[(y + 1) * FIELD_NX + x] - c) > 1)
          {
            zoom_x = x;
            zoom_y = y;
          }
      }
  g_assert_cmpint (zoom_x, >=, 0);
  g_free (v);

  v = noise (ORIENT_NX, ORIENT_NY, 7);
  v[ORIENT_Y * ORIENT_NX + ORIENT_X] = 200;
  orient_west = (Image) { write_fits ("west.fits", v, ORIENT_NX, ORIENT_NY, -1), ORIENT_NX,
                          ORIENT_NY };
  orient_east = (Image) { write_fits ("east.fits", v, ORIENT_NX, ORIENT_NY, +1), ORIENT_NX,
                          ORIENT_NY };
  orient_nowcs = (Image) { write_fits ("no_wcs.fits", v, ORIENT_NX, ORIENT_NY, 0), ORIENT_NX,
                           ORIENT_NY };
  orient_linear = (Image) { write_fits ("linear.fits", v, ORIENT_NX, ORIENT_NY, LINEAR_CDELT1),
                            ORIENT_NX, ORIENT_NY };
  g_free (v);
}

void
activate (const char *action, GVariant *param)
{
  g_action_group_activate_action (G_ACTION_GROUP (app), action, param);
}

/* Clicks the toolbar button for action with target (as GVariant text). */
static gboolean
click_in (GtkWidget *root, const char *action, const char *target)
{
  for (GtkWidget *w = gtk_widget_get_first_child (root); w; w = gtk_widget_get_next_sibling (w))
    {
      if (GTK_IS_BUTTON (w) && g_strcmp0 (gtk_actionable_get_action_name (GTK_ACTIONABLE (w)),
                                          action) == 0)
        {
          GVariant *value = gtk_actionable_get_action_target_value (GTK_ACTIONABLE (w));
          g_autofree char *text = value ? g_variant_print (value, FALSE) : NULL;
          if (g_strcmp0 (text, target) == 0)
            {
              /* What a click ends in (gtk_widget_activate () would
               * first show the button pressed for a quarter second). */
              g_assert_true (gtk_widget_is_sensitive (w));
              g_signal_emit_by_name (w, "clicked");
              return TRUE;
            }
        }
      if (click_in (w, action, target))
        return TRUE;
    }
  return FALSE;
}

void
click (Fixture *f, const char *action, const char *target)
{
  if (!click_in (GTK_WIDGET (f->window), action, target))
    g_error ("no button for %s %s in the window", action, target);
}

char *
state_json (void)
{
  g_autoptr (GVariant) state = g_action_group_get_action_state (G_ACTION_GROUP (app), "state");
  return g_variant_dup_string (state, NULL);
}

/* The text after "key": in the app's state, which it writes flat, one
 * space after each colon. */
const char *
state_field (const char *json, const char *key)
{
  g_autofree char *needle = g_strdup_printf ("\"%s\": ", key);
  const char *at = strstr (json, needle);

  if (at == NULL)
    g_error ("no \"%s\" in the app's state %s", key, json);
  return at + strlen (needle);
}

double
state_number (const char *key)
{
  g_autofree char *json = state_json ();
  return g_ascii_strtod (state_field (json, key), NULL);
}

/* Whether the state's key has this value, as JSON text ("false", "\"measure\""). */
static gboolean
state_is (const char *key, const char *value)
{
  g_autofree char *json = state_json ();
  return g_str_has_prefix (state_field (json, key), value);
}

void
assert_state (const char *key, const char *value)
{
  if (!state_is (key, value))
    {
      g_autofree char *json = state_json ();
      g_autofree char *msg = g_strdup_printf ("state %s is not %s: %s", key, value, json);
      g_assertion_message (G_LOG_DOMAIN, __FILE__, __LINE__, G_STRFUNC, msg);
    }
}

static gboolean
wake (gpointer data)
{
  return G_SOURCE_CONTINUE;
}

/* Runs the main loop until done (data), and fails the test if that takes
 * more than WAIT_S. */
void
iterate_until (gboolean (*done) (gpointer), gpointer data, const char *what)
{
  gint64 deadline = g_get_monotonic_time () + (gint64) (WAIT_S * G_USEC_PER_SEC);
  guint tick = g_timeout_add (50, wake, NULL);   /* so that the clock is read */

  while (!done (data) && g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, TRUE);
  g_source_remove (tick);
  if (!done (data))
    {
      g_autofree char *json = state_json ();
      g_autofree char *msg = g_strdup_printf ("still waiting for %s after %.0f s; the app's "
                                              "state: %s", what, WAIT_S, json);
      g_assertion_message (G_LOG_DOMAIN, __FILE__, __LINE__, G_STRFUNC, msg);
    }
}

gboolean
app_idle (gpointer data)
{
  return state_is ("busy", "false");
}

gboolean
flag_set (gpointer data)
{
  return *(gboolean *) data;
}

gboolean
pointer_cleared (gpointer data)
{
  return *(gpointer *) data == NULL;
}

void
set_flag (gpointer data, gpointer unused)
{
  *(gboolean *) data = TRUE;
}

/* Until the queue is empty and the view has drawn a frame that shows it. */
void
wait_idle (Fixture *f, const char *what)
{
  gboolean drawn = FALSE;

  iterate_until (app_idle, NULL, what);
  sky_image_view_when_drawn (f->view, set_flag, &drawn);
  iterate_until (flag_set, &drawn, what);
  f->zoom = state_number ("zoom");
  f->flip = state_is ("flip", "true");
}

/* Opens image with app.open, as a script or the Open dialog would. */
void
open_image (Fixture *f, const Image *image)
{
  activate ("open", g_variant_new_string (image->path));
  if (f->window == NULL)
    {
      for (GList *l = gtk_application_get_windows (GTK_APPLICATION (app)); l; l = l->next)
        if (SKY_IS_WINDOW (l->data))
          f->window = l->data;
      g_assert_nonnull (f->window);
      f->view = f->window->view;
    }
  wait_idle (f, image->path);
  {
    g_autofree char *json = state_json ();
    /* The app shows the path made absolute, without "..". */
    g_autofree char *canonical = g_canonicalize_filename (image->path, NULL);
    g_autofree char *want = g_strdup_printf ("\"%s\"", canonical);
    if (!g_str_has_prefix (state_field (json, "image"), want))
      g_error ("%s did not open: %s", image->path, json);
  }
  f->nx = image->nx;
  f->ny = image->ny;
  f->cx = image->nx / 2.0;
  f->cy = image->ny / 2.0;
}

void
picture_free (Picture *pic)
{
  g_free (pic->argb);
  g_free (pic);
}

typedef struct {
  SkyImageView *view;
  GdkTexture *texture;
  GError *error;
  gboolean done;
} ViewFrame;

/* After the view's own after-paint handler (connected when it was
 * realized), so that it has marked whether this frame showed its state. */
static void
take_view_picture (GdkFrameClock *clock, gpointer data)
{
  ViewFrame *frame = data;

  if (frame->done || !sky_image_view_is_drawn (frame->view))
    return;
  frame->texture = sky_image_view_render_texture (frame->view, &frame->error);
  frame->done = TRUE;
}

/* The view as the screen shows it, markers included: what app.export-view
 * writes (sky_image_view_render_texture), downloaded. The view's picture is
 * the node it drew in its window's last frame, and a view given a new size
 * has none until the window's next frame: a change of layout (a label that
 * grew, a window that came up) is only carried out in that frame, so one
 * frame of the window is waited for, and then (a new size makes the view
 * draw again) the first frame that shows the view's state, and the picture
 * is taken in that frame's after-paint, as the app's export takes it. */
Picture *
render_view (Fixture *f)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GdkTexture) texture = NULL;
  GtkWidget *window = GTK_WIDGET (gtk_widget_get_root (GTK_WIDGET (f->view)));
  GdkFrameClock *clock = gtk_widget_get_frame_clock (window);
  ViewFrame frame = { f->view, NULL, NULL, FALSE };
  Picture *pic;

  if (clock != NULL && gtk_widget_get_mapped (GTK_WIDGET (f->view)))
    {
      gulong id = g_signal_connect (clock, "after-paint", G_CALLBACK (take_view_picture), &frame);
      gtk_widget_queue_draw (window);
      iterate_until (flag_set, &frame.done, "a frame of the window that shows the view");
      g_signal_handler_disconnect (clock, id);
      texture = frame.texture;
      error = frame.error;
    }
  else
    texture = sky_image_view_render_texture (f->view, &error);
  g_assert_no_error (error);
  pic = g_new0 (Picture, 1);
  pic->width = gdk_texture_get_width (texture);
  pic->height = gdk_texture_get_height (texture);
  pic->scale = pic->width / (double) gtk_widget_get_width (GTK_WIDGET (f->view));
  pic->argb = g_new (guint32, (gsize) pic->width * pic->height);
  gdk_texture_download (texture, (guchar *) pic->argb, (gsize) pic->width * 4);
  return pic;
}

Rgb
pixel (const Picture *pic, int x, int y)
{
  guint32 p;

  g_assert_cmpint (x, >=, 0);
  g_assert_cmpint (y, >=, 0);
  g_assert_cmpint (x, <, pic->width);
  g_assert_cmpint (y, <, pic->height);
  p = pic->argb[(gsize) y * pic->width + x];
  return (Rgb) { (p >> 16) & 255, (p >> 8) & 255, p & 255 };
}

gboolean
close_to (Rgb c, const int ref[3], int tol)
{
  int dr = c.r - ref[0], dg = c.g - ref[1], db = c.b - ref[2];
  return dr * dr + dg * dg + db * db <= tol * tol;
}

gboolean
is_grey (Rgb c, int tol)
{
  return abs (c.r - c.g) <= tol && abs (c.g - c.b) <= tol;
}

double
luminance (Rgb c)
{
  return 0.299 * c.r + 0.587 * c.g + 0.114 * c.b;
}

/* Where image point (ix, iy) is on the picture, from the zoom and flip the
 * app's state reports and the centre the test set. */
void
to_picture (Fixture *f, const Picture *pic, double ix, double iy, double *px, double *py)
{
  double z = f->zoom * pic->scale, s = f->flip ? -1 : 1;

  *px = pic->width / 2.0 + s * (ix - f->cx) * z;
  *py = pic->height / 2.0 - (iy - f->cy) * z;
}

Rgb
pixel_at_image (Fixture *f, const Picture *pic, double ix, double iy)
{
  double px, py;
  to_picture (f, pic, ix + 0.5, iy + 0.5, &px, &py);
  return pixel (pic, (int) floor (px), (int) floor (py));
}

/* The picture's rectangle [x0, x1) x [y0, y1) that the image covers. */
void
image_rect (Fixture *f, const Picture *pic, int *x0, int *y0, int *x1, int *y1)
{
  double ax, ay, bx, by;
  to_picture (f, pic, 0, 0, &ax, &ay);
  to_picture (f, pic, f->nx, f->ny, &bx, &by);
  *x0 = MAX ((int) ceil (MIN (ax, bx)), 0);
  *x1 = MIN ((int) floor (MAX (ax, bx)), pic->width);
  *y0 = MAX ((int) ceil (MIN (ay, by)), 0);
  *y1 = MIN ((int) floor (MAX (ay, by)), pic->height);
}

/* Looks along 72 rays from picture point (x, y) for the first pixel of the
 * marker colour up to max_r out; *radius is the median distance where they
 * met it. Returns how many met it within 2.5 pixels of that distance: a
 * ring around (x, y) meets nearly every ray at one distance. */
int
ring_hits (const Picture *pic, double x, double y, double max_r, double *radius)
{
  double found[72];
  int n = 0, close = 0;

  for (int k = 0; k < 72; k++)
    {
      double t = 2 * G_PI * k / 72;
      for (double r = 1; r <= max_r; r += 0.5)
        {
          int px = (int) floor (x + r * cos (t)), py = (int) floor (y + r * sin (t));
          if (px < 0 || py < 0 || px >= pic->width || py >= pic->height)
            break;
          if (close_to (pixel (pic, px, py), MARKER_RGB, 60))
            {
              found[n++] = r;
              break;
            }
        }
    }
  *radius = 0;
  if (n == 0)
    return 0;
  for (int i = 1; i < n; i++)   /* insertion sort: at most 72 */
    for (int j = i; j > 0 && found[j - 1] > found[j]; j--)
      {
        double tmp = found[j];
        found[j] = found[j - 1];
        found[j - 1] = tmp;
      }
  *radius = found[n / 2];
  for (int i = 0; i < n; i++)
    close += fabs (found[i] - *radius) <= 2.5;
  return close;
}

/* The catalogue index of the source nearest image point (x, y). */
static gint64
nearest_source (Fixture *f, double x, double y)
{
  const SkyCatalogue *cat = &f->window->run->catalogue;
  gint64 best = -1;
  double best_d = G_MAXDOUBLE;

  for (gint64 i = 0; i < cat->n; i++)
    {
      double d = hypot (cat->x[i] - x, cat->y[i] - y);
      if (d < best_d)
        {
          best = i;
          best_d = d;
        }
    }
  return best;
}

/* Asserts the marker ring of the field's source s, where the view puts a
 * marker: a circle about the source's area, 3 logical pixels out. */
void
assert_ring (Fixture *f, const Picture *pic, const Source *s)
{
  gint64 i = nearest_source (f, s->x, s->y);
  const SkyCatalogue *cat = &f->window->run->catalogue;
  double x, y, radius, want;
  int hits;

  g_assert_cmpint (i, >=, 0);
  g_assert_cmpfloat (hypot (cat->x[i] - s->x, cat->y[i] - s->y), <, 0.5);
  want = MAX (sqrt (cat->npix[i] / G_PI) * f->zoom + 3, 5) * pic->scale;
  to_picture (f, pic, s->x + 0.5, s->y + 0.5, &x, &y);
  hits = ring_hits (pic, x, y, 3 * want, &radius);
  if (hits < 54 || fabs (radius - want) > 2.5)
    g_error ("no marker ring at source (%g, %g), picture (%.0f, %.0f): %d of 72 rays met the "
             "marker colour at %.1f px, expected a ring of %.1f px", s->x, s->y, x, y, hits,
             radius, want);
}

void
assert_no_ring (Fixture *f, const Picture *pic, const Source *s)
{
  double x, y, radius;
  int hits;

  to_picture (f, pic, s->x + 0.5, s->y + 0.5, &x, &y);
  hits = ring_hits (pic, x, y, 40 * pic->scale, &radius);
  if (hits > 4)
    g_error ("a marker at (%g, %g), where no source should be: %d rays at %.1f px", s->x, s->y,
             hits, radius);
}
