/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The view's pictures after each step: drawn, the right way round for its
 * header, square pixels at 16x, another colour map, the mask tinted, the
 * sources coloured, a marker ring at each source, a moved threshold. */
#include "test-ui-gtk.h"

/* The field opens fitted, drawn where the zoom puts it: every pixel of the
 * image's rectangle is grey (reversed grey), none is the background, the
 * noise has texture, and the brightest source is the darkest spot. */
void
test_drawn (Fixture *f)
{
  g_autoptr (Picture) pic = NULL;
  int x0, y0, x1, y1, bx0 = G_MAXINT, by0 = G_MAXINT, bx1 = -1, by1 = -1;
  double sum = 0, sum2 = 0, n = 0, mean;

  open_image (f, &field);
  assert_state ("shown_step", "\"none\"");
  assert_state ("stretch", "\"log\"");
  assert_state ("colormap", "\"grey-r\"");
  assert_state ("flip", "false");
  pic = render_view (f);
  image_rect (f, pic, &x0, &y0, &x1, &y1);
  /* Fitted: the image fills the view's width or height, centred. */
  g_assert_true (x1 - x0 >= pic->width - 2 || y1 - y0 >= pic->height - 2);

  for (int y = 0; y < pic->height; y++)
    for (int x = 0; x < pic->width; x++)
      {
        Rgb c = pixel (pic, x, y);
        if (close_to (c, BACKGROUND_RGB, 3))
          continue;
        bx0 = MIN (bx0, x);
        by0 = MIN (by0, y);
        bx1 = MAX (bx1, x + 1);
        by1 = MAX (by1, y + 1);
      }
  /* What is not the background is the image's rectangle, to a pixel. */
  g_assert_cmpint (abs (bx0 - x0), <=, 1);
  g_assert_cmpint (abs (bx1 - x1), <=, 1);
  g_assert_cmpint (abs (by0 - y0), <=, 1);
  g_assert_cmpint (abs (by1 - y1), <=, 1);

  for (int y = y0 + 1; y < y1 - 1; y++)
    for (int x = x0 + 1; x < x1 - 1; x++)
      {
        Rgb c = pixel (pic, x, y);
        double l = luminance (c);
        /* grey, so not the background (59, 59, 61) either */
        g_assert_true (is_grey (c, 1));
        sum += l;
        sum2 += l * l;
        n++;
      }
  mean = sum / n;
  g_test_message ("view %d x %d device px, zoom %.3f; image mean luminance %.1f, spread %.1f",
                  pic->width, pic->height, f->zoom, mean,
                  sqrt (sum2 / n - mean * mean));
  g_assert_cmpfloat (sqrt (sum2 / n - mean * mean), >, 4);   /* noise, not a flat fill */
  /* log stretch, min-max: the peak is black, the noise light grey. */
  g_assert_cmpfloat (luminance (pixel_at_image (f, pic, field_sources[0].x, field_sources[0].y)),
                     <, 10);
  g_assert_cmpfloat (mean, >, 100);
}

/* Where the darkest pixel of the image's rectangle is, as fractions of
 * the rectangle's width from the left and height from the top. */
static void
darkest_spot (Fixture *f, double *fx, double *fy)
{
  g_autoptr (Picture) pic = render_view (f);
  int x0, y0, x1, y1, bx = -1, by = -1;
  double best = G_MAXDOUBLE;

  image_rect (f, pic, &x0, &y0, &x1, &y1);
  for (int y = y0; y < y1; y++)
    for (int x = x0; x < x1; x++)
      {
        double l = luminance (pixel (pic, x, y));
        if (l < best)
          {
            best = l;
            bx = x;
            by = y;
          }
      }
  *fx = (bx + 0.5 - x0) / (x1 - x0);
  *fy = (by + 0.5 - y0) / (y1 - y0);
}

/* RA runs to the left: a bright pixel near the image's first column shows
 * at the left where CDELT1 < 0 already says so, at the right where
 * CDELT1 > 0 (mirrored); where no celestial WCS says which way RA runs (no
 * WCS, or a linear first axis with CDELT1 > 0) x increases to the right,
 * as DS9 shows it, so the pixel is at the left; the flip setting
 * overrides. Rows go up: the pixel near the last row is near the top. */
void
test_orientation (Fixture *f)
{
  double near = (ORIENT_X + 0.5) / ORIENT_NX, far = 1 - near;
  double top = 1 - (ORIENT_Y + 0.5) / ORIENT_NY, fx, fy;

  open_image (f, &orient_west);
  assert_state ("flip", "false");
  darkest_spot (f, &fx, &fy);
  g_assert_cmpfloat (fabs (fx - near), <, 0.02);
  g_assert_cmpfloat (fabs (fy - top), <, 0.03);

  open_image (f, &orient_east);
  assert_state ("flip", "true");
  darkest_spot (f, &fx, &fy);
  g_assert_cmpfloat (fabs (fx - far), <, 0.02);
  g_assert_cmpfloat (fabs (fy - top), <, 0.03);

  open_image (f, &orient_nowcs);
  assert_state ("flip", "false");
  darkest_spot (f, &fx, &fy);
  g_assert_cmpfloat (fabs (fx - near), <, 0.02);

  open_image (f, &orient_linear);
  assert_state ("flip", "false");
  darkest_spot (f, &fx, &fy);
  g_assert_cmpfloat (fabs (fx - near), <, 0.02);
  g_assert_nonnull (strstr (gtk_label_get_text (f->window->subtitle_label),
                            "no celestial WCS"));

  /* The flip button's setting, as app.display sets it. */
  open_image (f, &orient_west);
  activate ("display", g_variant_new_string ("flip=on"));
  wait_idle (f, "flip=on");
  assert_state ("flip", "true");
  darkest_spot (f, &fx, &fy);
  g_assert_cmpfloat (fabs (fx - far), <, 0.02);
  g_assert_cmpfloat (fabs (fy - top), <, 0.03);
  activate ("display", g_variant_new_string ("flip=off"));
  wait_idle (f, "flip=off");
  darkest_spot (f, &fx, &fy);
  g_assert_cmpfloat (fabs (fx - near), <, 0.02);
}

/* The length of the run of pixels of c's colour through (x, y) along
 * (dx, dy), both ways. */
int
run_length (const Picture *pic, int x, int y, int dx, int dy)
{
  Rgb c = pixel (pic, x, y);
  int n = 1;

  for (int k = 1;; k++)
    {
      int px = x + k * dx, py = y + k * dy;
      Rgb d;
      if (px < 0 || py < 0 || px >= pic->width || py >= pic->height)
        break;
      d = pixel (pic, px, py);
      if (d.r != c.r || d.g != c.g || d.b != c.b)
        break;
      n++;
    }
  for (int k = 1;; k++)
    {
      int px = x - k * dx, py = y - k * dy;
      Rgb d;
      if (px < 0 || py < 0 || px >= pic->width || py >= pic->height)
        break;
      d = pixel (pic, px, py);
      if (d.r != c.r || d.g != c.g || d.b != c.b)
        break;
      n++;
    }
  return n;
}

/* At 16 screen pixels per image pixel around one pixel, each image pixel is
 * a square of one colour 16 pixels wide: no smoothing between them. */
void
test_zoom_square (Fixture *f)
{
  g_autoptr (Picture) pic = NULL;
  int side, x, y, prev, changes = 0, shortest = G_MAXINT;

  open_image (f, &field);
  sky_image_view_center_on (f->view, zoom_x, zoom_y);
  activate ("zoom", g_variant_new_double (16));
  wait_idle (f, "zoom 16");
  g_assert_cmpfloat (f->zoom, ==, 16);
  f->cx = zoom_x + 0.5;
  f->cy = zoom_y + 0.5;
  pic = render_view (f);
  side = (int) round (16 * pic->scale);

  /* The centred pixel: one square, its neighbours other colours. */
  x = pic->width / 2;
  y = pic->height / 2;
  g_assert_cmpint (run_length (pic, x, y, 1, 0), >=, side - 2);
  g_assert_cmpint (run_length (pic, x, y, 1, 0), <=, side + 2);
  g_assert_cmpint (run_length (pic, x, y, 0, 1), >=, side - 2);
  g_assert_cmpint (run_length (pic, x, y, 0, 1), <=, side + 2);

  /* Along the centre row, inside the image: every run of one colour is
   * at least a square wide. */
  prev = 0;
  for (int px = 1; px < pic->width; px++)
    {
      Rgb a = pixel (pic, px - 1, y), b = pixel (pic, px, y);
      if (a.r == b.r && a.g == b.g && a.b == b.b)
        continue;
      if (prev > 0)   /* the first run may be cut by the view's edge */
        {
          shortest = MIN (shortest, px - prev);
          changes++;
        }
      prev = px;
    }
  g_test_message ("16x: centre square %d x %d px; %d colour changes on the centre row, the "
                  "shortest run %d px", run_length (pic, x, y, 1, 0), run_length (pic, x, y, 0, 1),
                  changes, shortest);
  g_assert_cmpint (changes, >=, pic->width / side / 2);
  g_assert_cmpint (shortest, >=, side - 2);
}

/* Another colour map changes the picture, and going back restores it. */
void
test_colormap (Fixture *f)
{
  g_autoptr (Picture) grey = NULL, inferno = NULL, back = NULL;
  int x0, y0, x1, y1, n = 0, changed = 0, coloured = 0, same = 0;
  Rgb peak;

  open_image (f, &field);
  grey = render_view (f);
  activate ("display", g_variant_new_string ("colormap=inferno"));
  wait_idle (f, "colormap=inferno");
  assert_state ("colormap", "\"inferno\"");
  inferno = render_view (f);

  image_rect (f, grey, &x0, &y0, &x1, &y1);
  for (int y = y0; y < y1; y++)
    for (int x = x0; x < x1; x++)
      {
        Rgb a = pixel (grey, x, y), b = pixel (inferno, x, y);
        n++;
        changed += abs (a.r - b.r) + abs (a.g - b.g) + abs (a.b - b.b) > 30;
        coloured += !is_grey (b, 20);
      }
  g_test_message ("inferno: %d of %d image pixels changed, %d not grey", changed, n, coloured);
  g_assert_cmpint (changed, >, n * 9 / 10);
  g_assert_cmpint (coloured, >, n * 9 / 10);
  /* The peak is inferno's bright end, pale yellow, where grey-r had black. */
  peak = pixel_at_image (f, inferno, field_sources[0].x, field_sources[0].y);
  g_assert_cmpint (peak.r, >, 220);
  g_assert_cmpint (peak.g, >, 220);
  g_assert_cmpint (peak.b, <, peak.r - 50);

  activate ("display", g_variant_new_string ("colormap=grey-r"));
  wait_idle (f, "colormap=grey-r");
  back = render_view (f);
  for (int y = y0; y < y1; y++)
    for (int x = x0; x < x1; x++)
      {
        Rgb a = pixel (grey, x, y), b = pixel (back, x, y);
        same += abs (a.r - b.r) <= 1 && abs (a.g - b.g) <= 1 && abs (a.b - b.b) <= 1;
      }
  g_assert_cmpint (same, ==, n);
}

static gboolean
tinted (Rgb c)
{
  /* Half way to (0, 0.75, 1) from a grey. */
  return c.b - c.r > 90 && c.g - c.r > 60;
}

/* Segment from the toolbar: the mask's pixels, and only they, are tinted. */
void
test_segment_mask (Fixture *f)
{
  g_autoptr (Picture) pic = NULL;
  const SkyRun *run;
  gint64 masked = 0, npix;
  int x0, y0, x1, y1, count = 0, wrong = 0;
  double area;

  open_image (f, &field);
  click (f, "app.run", "'segment'");
  wait_idle (f, "segment");
  assert_state ("shown_step", "\"segment\"");
  assert_state ("done", "\"segment\"");
  run = f->window->run;
  npix = (gint64) f->nx * f->ny;
  for (gint64 i = 0; i < npix; i++)
    masked += run->mask[i] != 0;

  pic = render_view (f);
  image_rect (f, pic, &x0, &y0, &x1, &y1);
  for (int y = y0; y < y1; y++)
    for (int x = x0; x < x1; x++)
      count += tinted (pixel (pic, x, y));
  area = masked * pow (f->zoom * pic->scale, 2);
  g_test_message ("segment: %" G_GINT64_FORMAT " pixels in the mask, %d tinted on screen "
                  "(%.0f expected)", masked, count, area);
  g_assert_cmpint (masked, >, 0);
  g_assert_cmpfloat (fabs (count - area), <, 0.15 * area);

  /* Pixel by pixel, at the image pixels' centres. */
  for (int iy = 0; iy < f->ny; iy++)
    for (int ix = 0; ix < f->nx; ix++)
      wrong += tinted (pixel_at_image (f, pic, ix, iy)) != (run->mask[iy * f->nx + ix] != 0);
  g_assert_cmpint (wrong, ==, 0);
  for (guint s = 0; s < N_FIELD_SOURCES; s++)
    g_assert_true (tinted (pixel_at_image (f, pic, field_sources[s].x, field_sources[s].y)));
}

/* Label from the toolbar: each source in a colour of its own. */
void
test_label_colours (Fixture *f)
{
  g_autoptr (Picture) pic = NULL;
  Rgb a, b;

  open_image (f, &field);
  click (f, "app.run", "'label'");
  wait_idle (f, "label");
  assert_state ("shown_step", "\"label\"");
  g_assert_cmpfloat (state_number ("nsources"), ==, N_FIELD_SOURCES);
  pic = render_view (f);
  a = pixel_at_image (f, pic, field_sources[0].x, field_sources[0].y);
  b = pixel_at_image (f, pic, field_sources[1].x, field_sources[1].y);
  g_assert_false (is_grey (a, 30));
  g_assert_false (is_grey (b, 30));
  g_assert_cmpint (abs (a.r - b.r) + abs (a.g - b.g) + abs (a.b - b.b), >, 60);
  /* The noise stays grey. */
  g_assert_true (is_grey (pixel_at_image (f, pic, zoom_x, zoom_y), 2));
}

/* Run All from the toolbar: the catalogue has the field's sources, and
 * a marker ring is drawn at each; zoomed in enough, their outlines too. */
void
test_measure_markers (Fixture *f)
{
  g_autoptr (Picture) pic = NULL;
  const Source nowhere = { zoom_x, zoom_y, 0 };
  double x, y;
  int outline = 0;

  open_image (f, &field);
  click (f, "app.run", "'all'");
  wait_idle (f, "run all");
  assert_state ("shown_step", "\"measure\"");
  assert_state ("done", "\"measure\"");
  g_assert_cmpfloat (state_number ("nsources"), ==, N_FIELD_SOURCES);
  g_assert_cmpint (f->window->run->catalogue.n, ==, N_FIELD_SOURCES);
  pic = render_view (f);
  for (guint s = 0; s < N_FIELD_SOURCES; s++)
    assert_ring (f, pic, &field_sources[s]);
  assert_no_ring (f, pic, &nowhere);

  if (f->zoom * pic->scale < 4)
    {
      g_test_message ("the fitted view is under 4x: no outlines to see");
      return;
    }
  to_picture (f, pic, field_sources[0].x + 0.5, field_sources[0].y + 0.5, &x, &y);
  for (int py = (int) y - 20; py <= (int) y + 20; py++)
    for (int px = (int) x - 20; px <= (int) x + 20; px++)
      outline += close_to (pixel (pic, px, py), OUTLINE_RGB, 40);
  g_assert_cmpint (outline, >, 20);
}

/* app.threshold re-runs segment, label and measure: fewer sources at 20
 * sigma, reported in the state and the status line, and their markers go;
 * back at 5 sigma they return. */
void
test_threshold (Fixture *f)
{
  g_autoptr (Picture) high = NULL, low = NULL;
  const char *status;

  open_image (f, &field);
  click (f, "app.run", "'all'");
  wait_idle (f, "run all");
  g_assert_cmpfloat (state_number ("nsources"), ==, N_FIELD_SOURCES);

  activate ("threshold", g_variant_new_double (20));
  assert_state ("busy", "true");   /* a re-run was queued */
  wait_idle (f, "threshold 20");
  g_assert_cmpfloat (state_number ("threshold"), ==, 20);
  assert_state ("shown_step", "\"measure\"");
  g_assert_cmpfloat (state_number ("nsources"), ==, N_ABOVE_20_SIGMA);
  status = gtk_label_get_text (f->window->status_label);
  g_test_message ("status at 20 sigma: %s", status);
  g_assert_true (g_str_has_prefix (status, "2 sources"));
  high = render_view (f);
  for (guint s = 0; s < N_FIELD_SOURCES; s++)
    {
      if (field_sources[s].peak > 20)
        assert_ring (f, high, &field_sources[s]);
      else
        assert_no_ring (f, high, &field_sources[s]);
    }

  activate ("threshold", g_variant_new_double (5));
  wait_idle (f, "threshold 5");
  g_assert_cmpfloat (state_number ("nsources"), ==, N_FIELD_SOURCES);
  low = render_view (f);
  for (guint s = 0; s < N_FIELD_SOURCES; s++)
    assert_ring (f, low, &field_sources[s]);
}
