/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The desktop app's code that needs no display: colour maps and stretches,
 * display limits, the zoom-out pyramid, the orientation from the header,
 * the CPU drawing of the view, the loader and the pipeline runs it keeps
 * (src/ui). The pipeline must give exactly what sky_cpu_run gives. */
#include <math.h>
#include <string.h>
#include <glib/gstdio.h>

#include "sky-colormap.h"
#include "sky-cpu.h"
#include "sky-display-stats.h"
#include "sky-image-data.h"
#include "sky-image-read.h"
#include "sky-pipeline.h"
#include "sky-raster.h"
#include "sky-test-util.h"
#include "sky-ticks.h"

/* ------------------------------------------------------------ colour maps */

static void
test_colormap_ends (void)
{
  guint8 rgba[SKY_CMAP_SIZE * 4];
  const guint8 *last = rgba + 4 * (SKY_CMAP_SIZE - 1);

  sky_colormap_fill (SKY_COLORMAP_GREY_R, rgba);
  g_assert_cmpuint (rgba[0], ==, 255);   /* the lesson's gray_r: faint is white */
  g_assert_cmpuint (last[0], ==, 0);
  sky_colormap_fill (SKY_COLORMAP_GREY, rgba);
  g_assert_cmpuint (rgba[1], ==, 0);
  g_assert_cmpuint (last[1], ==, 255);
  /* matplotlib's viridis runs from (68, 1, 84) to (253, 231, 37) and
   * inferno from (0, 0, 4) to (252, 255, 164): the fits are within a few. */
  sky_colormap_fill (SKY_COLORMAP_VIRIDIS, rgba);
  g_assert_cmpint (abs (rgba[0] - 68) + abs (rgba[1] - 1) + abs (rgba[2] - 84), <=, 6);
  g_assert_cmpint (abs (last[0] - 253) + abs (last[1] - 231) + abs (last[2] - 37), <=, 6);
  sky_colormap_fill (SKY_COLORMAP_INFERNO, rgba);
  g_assert_cmpint (rgba[0] + rgba[1] + rgba[2], <=, 8);
  g_assert_cmpint (abs (last[0] - 252) + abs (last[1] - 255) + abs (last[2] - 164), <=, 8);
  for (int c = 0; c < SKY_N_COLORMAPS; c++)
    {
      g_assert_cmpint (sky_colormap_from_name (sky_colormap_name (c)), ==, c);
      sky_colormap_fill (c, rgba);
      for (int i = 0; i < SKY_CMAP_SIZE; i++)
        g_assert_cmpuint (rgba[4 * i + 3], ==, 255);
    }
  g_assert_cmpint (sky_colormap_from_name ("jet"), ==, -1);
}

static void
test_stretch_inverse (void)
{
  float eq[SKY_EQ_SIZE];

  /* An equalisation table that rises like a square root. */
  for (int i = 0; i < SKY_EQ_SIZE; i++)
    eq[i] = (float) sqrt ((double) i / (SKY_EQ_SIZE - 1));
  for (int s = 0; s < SKY_N_STRETCHES; s++)
    {
      double prev = -1;
      g_assert_cmpint (sky_stretch_from_name (sky_stretch_name (s)), ==, s);
      g_assert_cmpfloat_with_epsilon (sky_stretch_apply (s, 0, eq), 0, 1e-9);
      g_assert_cmpfloat_with_epsilon (sky_stretch_apply (s, 1, eq), 1, 1e-6);
      for (double v = 0; v <= 1.0; v += 1.0 / 64)
        {
          double t = sky_stretch_apply (s, v, eq);
          g_assert_cmpfloat (t, >=, prev);   /* rises */
          prev = t;
          g_assert_cmpfloat_with_epsilon (sky_stretch_invert (s, t, eq), v, 1e-4);
        }
      /* Out of the limits: clamped. */
      g_assert_cmpfloat (sky_stretch_apply (s, -3, eq), ==, sky_stretch_apply (s, 0, eq));
      g_assert_cmpfloat (sky_stretch_apply (s, 7, eq), ==, sky_stretch_apply (s, 1, eq));
    }
  /* The log stretch lifts the faint end, as DS9's with exponent 1000. */
  g_assert_cmpfloat_with_epsilon (sky_stretch_apply (SKY_STRETCH_LOG, 0.01, NULL),
                                  log10 (11.0) / log10 (1001.0), 1e-9);
}

/* -------------------------------------------------------- display limits */

static void
test_display_quantiles (void)
{
  SkyImage img = { 0 };
  SkyDisplayStats st;
  g_autofree float *v = g_new (float, 100000);

  for (int i = 0; i < 100000; i++)
    v[i] = i % 1000 == 7 ? NAN : (float) i;   /* a ramp with 100 blanks */
  sky_test_image (&img, 1000, 100, v);
  g_assert_cmpint (sky_display_stats_compute (&img, 3, &st), ==, SKY_OK);
  g_assert_cmpint (st.nvalid, ==, 99900);
  g_assert_cmpfloat (st.min, ==, 0);
  g_assert_cmpfloat (st.max, ==, 99999);
  /* Buckets are 1/128 of an octave: quantiles within half a percent. */
  g_assert_cmpfloat (fabs (sky_display_stats_quantile (&st, 0.5) - 50000), <, 250);
  g_assert_cmpfloat (fabs (st.hi[SKY_LIMITS_99_5] - 99750), <, 500);
  g_assert_cmpfloat (fabs (st.lo[SKY_LIMITS_99_9] - 50), <, 2);
  g_assert_cmpfloat (st.lo[SKY_LIMITS_MINMAX], ==, 0);
  g_assert_cmpfloat (st.hi[SKY_LIMITS_MINMAX], ==, 99999);
  /* The CDF rises, from 0 below the minimum to 1 above the maximum. */
  g_assert_cmpfloat (sky_display_stats_cdf (&st, -1), ==, 0);
  g_assert_cmpfloat (sky_display_stats_cdf (&st, 1e6), ==, 1);
  g_assert_cmpfloat (fabs (sky_display_stats_cdf (&st, 25000) - 0.25), <, 0.005);
  {
    float eq[SKY_EQ_SIZE];
    sky_display_stats_fill_eq (&st, 0, 99999, eq);
    g_assert_cmpfloat (eq[0], ==, 0);
    g_assert_cmpfloat_with_epsilon (eq[SKY_EQ_SIZE - 1], 1, 1e-6);
    /* A uniform ramp equalises to a straight line. */
    g_assert_cmpfloat (fabs (eq[SKY_EQ_SIZE / 2] - 0.5), <, 0.01);
    for (int i = 1; i < SKY_EQ_SIZE; i++)
      g_assert_cmpfloat (eq[i], >=, eq[i - 1]);
  }
  sky_display_stats_clear (&st);
  sky_image_clear (&img);
}

static void
test_display_negative_and_flat (void)
{
  SkyImage img = { 0 };
  SkyDisplayStats st;
  float v[64];

  for (int i = 0; i < 64; i++)
    v[i] = -1.0f - i;
  sky_test_image (&img, 8, 8, v);
  g_assert_cmpint (sky_display_stats_compute (&img, 1, &st), ==, SKY_OK);
  g_assert_cmpfloat (st.min, ==, -64);
  g_assert_cmpfloat (st.max, ==, -1);
  g_assert_cmpfloat (fabs (sky_display_stats_quantile (&st, 0.5) + 32.5), <, 1);
  sky_display_stats_clear (&st);
  sky_image_clear (&img);

  for (int i = 0; i < 64; i++)
    v[i] = NAN;
  sky_test_image (&img, 8, 8, v);
  g_assert_cmpint (sky_display_stats_compute (&img, 1, &st), ==, SKY_OK);
  g_assert_cmpint (st.nvalid, ==, 0);
  g_assert_cmpfloat (st.lo[SKY_LIMITS_ZSCALE], ==, st.hi[SKY_LIMITS_ZSCALE]);
  sky_display_stats_clear (&st);
  sky_image_clear (&img);
}

/* The extremes pass (sixteen lanes, vectorized) against one pixel at a
 * time: every length around the lane count and its multiples, every
 * offset into a lane, blanks in every lane, infinities, signed zeros and
 * runs of blanks longer than a lane; and extremes carried in from an
 * earlier call. */
static void
test_display_extremes (void)
{
  enum { N = 1000 };
  g_autofree float *v = g_new (float, N + 64);
  g_autoptr (GRand) rand = g_rand_new_with_seed (11);

  for (int i = 0; i < N + 64; i++)
    {
      double u = g_rand_double (rand);
      v[i] = u < 0.1 ? NAN : u < 0.11 ? (u < 0.105 ? -0.0f : 0.0f)
             : (float) g_rand_double_range (rand, -100, 100);
    }
  for (int i = 300; i < 340; i++)
    v[i] = NAN;
  v[517] = INFINITY;
  v[903] = -INFINITY;
  for (int off = 0; off < 17; off++)
    for (int n = 0; n <= N - 40; n += n < 70 ? 1 : 37)
      for (int carried = 0; carried < 2; carried++)
        {
          SkyDisplayCounts c = { .min = carried ? -5.0f : INFINITY,
                                 .max = carried ? 5.0f : -INFINITY,
                                 .nvalid = carried ? 3 : 0 };
          float lo = c.min, hi = c.max;
          gint64 valid = c.nvalid;

          for (int i = off; i < off + n; i++)
            if (!isnan (v[i]))
              {
                lo = v[i] < lo ? v[i] : lo;
                hi = v[i] > hi ? v[i] : hi;
                valid++;
              }
          sky_display_counts_add_extremes (&c, v + off, n);
          g_assert_cmpfloat (c.min, ==, lo);
          g_assert_cmpfloat (c.max, ==, hi);
          g_assert_cmpint (c.nvalid, ==, valid);
        }
}

/* Unit noise with a few bright pixels. The expected limits are astropy's
 * ZScaleInterval(n_samples=1000).get_limits () of this very array (written
 * out and read with numpy when this test was made): -3.2292542, 6.0780386.
 * The lower one is the sample's minimum, the upper one the fitted slope. */
static void
test_zscale (void)
{
  SkyImage img = { 0 };
  g_autofree float *v = g_new (float, 256 * 256);
  g_autoptr (GRand) rand = g_rand_new_with_seed (7);
  double lo, hi;

  for (int i = 0; i < 256 * 256; i++)
    {
      /* Box-Muller */
      double u = g_rand_double (rand), w = g_rand_double (rand);
      v[i] = (float) (sqrt (-2 * log (u + 1e-300)) * cos (2 * G_PI * w));
      if (i % 997 == 0)
        v[i] = 1000;
    }
  sky_test_image (&img, 256, 256, v);
  sky_zscale (&img, 1000, &lo, &hi);
  g_test_message ("zscale of unit noise: %.6f .. %.6f", lo, hi);
  g_assert_cmpfloat_with_epsilon (lo, -3.2292542, 1e-5);
  g_assert_cmpfloat_with_epsilon (hi, 6.0780386, 1e-3);

  /* With blanks the sample skips them (image[finite][::stride]): a NaN
   * the blank count knows of, or one it missed, gives the same limits. */
  {
    double lo_counted, hi_counted, lo_missed, hi_missed;

    img.pixels[0] = NAN;
    img.nblank = 1;
    sky_zscale (&img, 1000, &lo_counted, &hi_counted);
    img.nblank = 0;
    sky_zscale (&img, 1000, &lo_missed, &hi_missed);
    g_assert_true (isfinite (lo_counted) && isfinite (hi_counted));
    g_assert_cmpfloat (lo_missed, ==, lo_counted);
    g_assert_cmpfloat (hi_missed, ==, hi_counted);
  }
  sky_image_clear (&img);
}

static void
test_pyramid (void)
{
  SkyImage img = { 0 };
  SkyPyramid pyr;
  /* 5 x 3; the last column and row fold into the last pixel of the next
   * level, and a blank is left out of its mean. */
  float v[15] = { 1, 2, 3, 4, 5,
                  6, 7, 8, 9, 10,
                  11, NAN, 13, 14, 15 };

  sky_test_image (&img, 5, 3, v);
  g_assert_cmpint (sky_pyramid_build (&img, 2, &pyr), ==, SKY_OK);
  g_assert_cmpint (pyr.nlevels, ==, 3);
  g_assert_cmpint (pyr.nx[1], ==, 2);
  g_assert_cmpint (pyr.ny[1], ==, 1);
  g_assert_cmpint (pyr.nx[2], ==, 1);
  g_assert_cmpint (pyr.ny[2], ==, 1);
  g_assert_true (pyr.pixels[0] == img.pixels);
  /* (0,0): rows 0..2, columns 0..1 without the blank: (1+2+6+7+11) / 5 */
  g_assert_cmpfloat_with_epsilon (pyr.pixels[1][0], 27.0 / 5, 1e-6);
  /* (1,0): rows 0..2, columns 2..4 */
  g_assert_cmpfloat_with_epsilon (pyr.pixels[1][1], (3 + 4 + 5 + 8 + 9 + 10 + 13 + 14 + 15) / 9.0,
                                  1e-5);
  sky_pyramid_clear (&pyr);

  for (int i = 0; i < 15; i++)
    v[i] = NAN;
  sky_image_clear (&img);
  sky_test_image (&img, 5, 3, v);
  g_assert_cmpint (sky_pyramid_build (&img, 1, &pyr), ==, SKY_OK);
  g_assert_true (isnan (pyr.pixels[2][0]));
  sky_pyramid_clear (&pyr);
  sky_image_clear (&img);
}

static char *
cards (const char *const *lines)
{
  GString *s = g_string_new (NULL);
  for (int i = 0; lines[i]; i++)
    g_string_append_printf (s, "%-80s", lines[i]);
  return g_string_free (s, FALSE);
}

static void
test_header_flip (void)
{
  const char *cdelt_neg[] = { "CTYPE1  = 'RA---SIN'", "CDELT1  = -0.00138888888889", NULL };
  const char *cdelt_pos[] = { "CTYPE1  = 'RA---SIN'", "CDELT1  =  1.0E-3", NULL };
  const char *cd[] = { "CD1_1   =  2.0E-4", "CDELT1  = -1.0", NULL };
  const char *pc[] = { "CDELT1  = -1.0", "PC1_1   = -1.0", NULL };
  const char *none[] = { "BUNIT   = 'JY/BEAM '", "CDELT12 = 1", NULL };
  g_autofree char *a = cards (cdelt_neg), *b = cards (cdelt_pos), *c = cards (cd);
  g_autofree char *d = cards (pc), *e = cards (none);
  int wcs;

  /* CDELT1 < 0 is the usual sky: RA already grows to the left. */
  g_assert_false (sky_header_flip_x (a, 2, &wcs));
  g_assert_true (wcs);
  g_assert_true (sky_header_flip_x (b, 2, &wcs));
  g_assert_true (sky_header_flip_x (c, 2, &wcs));   /* CD wins over CDELT */
  g_assert_true (sky_header_flip_x (d, 2, &wcs));   /* CDELT1 * PC1_1 > 0 */
  /* No WCS: x increases to the right, as DS9 shows it. */
  g_assert_false (sky_header_flip_x (e, 2, &wcs));
  g_assert_false (wcs);
  g_assert_false (sky_header_flip_x (NULL, 0, &wcs));
  g_assert_false (wcs);
}

/* ------------------------------------------------------------------ raster */

static void
pixel (const guint8 *rgba, int w, int x, int y, guint8 out[3])
{
  memcpy (out, rgba + 4 * ((size_t) y * w + x), 3);
}

static void
test_raster (void)
{
  SkyImage img = { 0 };
  SkyPyramid pyr;
  guint8 cmap[SKY_CMAP_SIZE * 4], rgba[16 * 8 * 4], c[3];
  guint8 mask[8] = { 0, 0, 0, 0, 0, 1, 0, 0 };
  gint32 labels[8] = { 0, 0, 0, 0, 0, 3, 0, 0 };
  /* 4 x 2: row 0 is 0 1 2 3, row 1 is blank, 10, 10, 10. */
  float v[8] = { 0, 1, 2, 3, NAN, 10, 10, 10 };
  SkyRasterParams p = { 0 };

  sky_test_image (&img, 4, 2, v);
  g_assert_cmpint (sky_pyramid_build (&img, 1, &pyr), ==, SKY_OK);
  sky_colormap_fill (SKY_COLORMAP_GREY, cmap);
  p = (SkyRasterParams) { .width = 16, .height = 8, .fb_zoom = 4, .cx = 2, .cy = 1,
                          .lo = 0, .hi = 3, .stretch = SKY_STRETCH_LINEAR, .cmap = cmap,
                          .background = { 1, 2, 3 }, .blank = { 200, 100, 50 } };
  sky_raster_render (&pyr, &p, rgba, 16 * 4, 2);
  /* Image row 0 is at the bottom of the picture, column 0 on the left. */
  pixel (rgba, 16, 1, 7, c);
  g_assert_cmpuint (c[0], ==, 0);
  pixel (rgba, 16, 14, 7, c);
  g_assert_cmpuint (c[0], ==, 255);
  pixel (rgba, 16, 5, 6, c);                       /* value 1 of 3 */
  g_assert_cmpint (abs (c[0] - 85), <=, 1);
  pixel (rgba, 16, 1, 1, c);                       /* the blank */
  g_assert_cmpuint (c[0], ==, 200);
  g_assert_cmpuint (c[2], ==, 50);
  pixel (rgba, 16, 6, 1, c);                       /* 10 is above the limits */
  g_assert_cmpuint (c[1], ==, 255);

  /* Mirrored: column 0 on the right. */
  p.flip_x = 1;
  sky_raster_render (&pyr, &p, rgba, 16 * 4, 2);
  pixel (rgba, 16, 14, 7, c);
  g_assert_cmpuint (c[0], ==, 0);
  pixel (rgba, 16, 14, 1, c);
  g_assert_cmpuint (c[0], ==, 200);
  p.flip_x = 0;

  /* Zoomed out past the image: the background. */
  p.fb_zoom = 1;
  p.cx = 100;
  sky_raster_render (&pyr, &p, rgba, 16 * 4, 1);
  pixel (rgba, 16, 3, 3, c);
  g_assert_cmpuint (c[0], ==, 1);
  g_assert_cmpuint (c[2], ==, 3);
  p.fb_zoom = 4;
  p.cx = 2;

  /* The mask tints its pixel blue; an outline edges the label at zoom 4. */
  p.mask = mask;
  p.labels = labels;
  p.overlay = SKY_OVERLAY_MASK;
  sky_raster_render (&pyr, &p, rgba, 16 * 4, 1);
  pixel (rgba, 16, 5, 1, c);
  g_assert_cmpuint (c[2], >, c[0]);
  pixel (rgba, 16, 9, 1, c);
  g_assert_cmpuint (c[2], ==, c[0]);
  p.overlay = SKY_OVERLAY_OUTLINES;
  sky_raster_render (&pyr, &p, rgba, 16 * 4, 1);
  pixel (rgba, 16, 4, 1, c);                       /* the left edge of label 3 */
  g_assert_cmpuint (c[0], ==, 255);
  g_assert_cmpuint (c[1], ==, 204);
  g_assert_cmpuint (c[2], ==, 0);
  pixel (rgba, 16, 6, 1, c);                       /* its middle is not edge */
  g_assert_cmpuint (c[2], !=, 0);

  sky_pyramid_clear (&pyr);
  sky_image_clear (&img);
}

/* ---------------------------------------------------------------- pipeline */

typedef struct {
  GMainLoop *loop;
  SkyImageData *image;
  GError *error;
} LoadWait;

static void
on_loaded (GObject *source, GAsyncResult *result, gpointer data)
{
  LoadWait *w = data;
  w->image = sky_image_data_load_finish (result, &w->error);
  g_main_loop_quit (w->loop);
}

static SkyImageData *
load (const char *path, gboolean demo, GError **error)
{
  LoadWait w = { g_main_loop_new (NULL, FALSE), NULL, NULL };
  sky_image_data_load_async (path, NULL, demo, NULL, NULL, on_loaded, &w);
  g_main_loop_run (w.loop);
  g_main_loop_unref (w.loop);
  if (w.error)
    g_propagate_error (error, w.error);
  return w.image;
}

static void
test_load (void)
{
  g_autofree char *path = sky_test_tmp_path ("demo/made-on-first-use.fits");
  g_autofree char *bad = sky_test_tmp_path ("not-fits.fits");
  g_autofree char *truth = sky_test_tmp_path ("demo/made-on-first-use_truth.csv");
  g_autoptr (GError) error = NULL;
  g_autoptr (SkyImageData) image = NULL;

  /* The demo is made where it is missing, with its truth file beside it. */
  image = load (path, TRUE, &error);
  g_assert_no_error (error);
  g_assert_true (g_file_test (truth, G_FILE_TEST_EXISTS));
  g_assert_cmpint (image->image.nx, ==, 2048);
  g_assert_true (image->is_demo);
  g_assert_true (image->has_wcs);
  g_assert_false (image->flip_x);   /* the synthetic field has CDELT1 < 0 */
  g_assert_cmpstr (image->display_name, ==, "made-on-first-use.fits");
  g_assert_cmpint (image->pyramid.nlevels, ==, 12);
  g_assert_cmpfloat (image->stats.lo[SKY_LIMITS_99_5], <, image->stats.hi[SKY_LIMITS_99_5]);
  g_clear_pointer (&image, sky_image_data_unref);

  /* A bad file: the core's message, naming the file. */
  g_assert_true (g_file_set_contents (bad, "no FITS here", -1, NULL));
  image = load (bad, FALSE, &error);
  g_assert_null (image);
  g_assert_error (error, SKY_UI_ERROR, SKY_ERR_FORMAT);
  g_assert_nonnull (strstr (error->message, "not-fits.fits"));
}

/* The app's chunked read (sky-image-read.c) against the core's loader and
 * a separate histogram pass: the same pixels, blank and infinity counts and
 * display statistics to the bit, on an image of several chunks with NaN
 * and infinities in it; its reduced view samples every k-th pixel of every
 * k-th row; the zoom-out levels made after the first frame are those the
 * loader made before; a cancelled read says so. */
static void
on_levels (GObject *source, GAsyncResult *result, gpointer data)
{
  gboolean *done = data;
  g_assert_true (sky_image_data_make_levels_finish (result, NULL));
  *done = TRUE;
}

static void
assert_same_read (const SkyImageData *data, const SkyImage *ref)
{
  int64_t n = ref->nx * ref->ny;
  g_assert_cmpint (data->image.nx, ==, ref->nx);
  g_assert_cmpint (data->image.ny, ==, ref->ny);
  g_assert_cmpmem (data->image.pixels, n * sizeof (float), ref->pixels, n * sizeof (float));
  g_assert_cmpint (data->image.nblank, ==, ref->nblank);
  g_assert_cmpint (data->image.ninf, ==, ref->ninf);
  g_assert_cmpint (data->image.bitpix, ==, ref->bitpix);
  g_assert_cmpstr (data->image.path, ==, ref->path);
}

static void
assert_same_stats (const SkyDisplayStats *a, const SkyDisplayStats *b)
{
  g_assert_cmpint (a->sampled, ==, b->sampled);
  g_assert_cmpint (a->nvalid, ==, b->nvalid);
  g_assert_cmpfloat (a->min, ==, b->min);
  g_assert_cmpfloat (a->max, ==, b->max);
  g_assert_cmpmem (a->lo, sizeof a->lo, b->lo, sizeof b->lo);
  g_assert_cmpmem (a->hi, sizeof a->hi, b->hi, sizeof b->hi);
  g_assert_cmpmem (a->cum, (SKY_DISPLAY_NBUCKETS + 1) * sizeof (uint64_t), b->cum,
                   (SKY_DISPLAY_NBUCKETS + 1) * sizeof (uint64_t));
}

static void
test_read_chunked (void)
{
  const int64_t nx = 2600, ny = 1700;   /* 4.4 M pixels: five chunks */
  g_autofree char *path = sky_test_tmp_path ("chunked.fits");
  g_autofree float *v = g_new (float, nx * ny);
  g_autoptr (SkyOpenProgress) progress = sky_open_progress_new ();
  g_autoptr (SkyImageData) data = g_atomic_rc_box_new0 (SkyImageData);
  g_autoptr (SkyImageData) preview = NULL;
  g_autoptr (GError) error = NULL;
  SkyImage ref;
  SkyDisplayStats ref_stats;
  SkyPyramid ref_pyr;
  GRand *rand = g_rand_new_with_seed (7);
  int k;

  for (int64_t i = 0; i < nx * ny; i++)
    v[i] = (float) (g_rand_double (rand) * 100 - 20);
  v[5] = NAN;
  v[nx * ny / 2] = INFINITY;
  v[nx * ny - 3] = -INFINITY;
  v[nx * 1000 + 17] = 1e30f;
  g_rand_free (rand);
  g_assert_cmpint (sky_fits_write_plane (path, nx, ny, -32, v), ==, SKY_OK);
  g_assert_cmpint (sky_image_load (path, NULL, &ref), ==, SKY_OK);
  g_assert_cmpint (sky_display_stats_compute (&ref, 0, &ref_stats), ==, SKY_OK);

  /* Every pixel counted as it is read: the statistics to the bit. */
  g_assert_cmpint (sky_image_read (path, NULL, data, NULL, NULL, &error), ==,
                   SKY_IMAGE_READ_DONE);
  g_assert_no_error (error);
  assert_same_read (data, &ref);
  assert_same_stats (&data->stats, &ref_stats);
  g_clear_pointer (&data, sky_image_data_unref);

  /* A big image: the same pixels, exact extremes and blank count, and at
   * first the histogram of its reduced view (below). */
  g_setenv ("SKYSIFT_PROGRESSIVE_MIN_PIXELS", "1000000", TRUE);
  data = g_atomic_rc_box_new0 (SkyImageData);
  g_assert_cmpint (sky_image_read (path, NULL, data, progress, NULL, &error), ==,
                   SKY_IMAGE_READ_DONE);
  g_assert_no_error (error);
  assert_same_read (data, &ref);
  g_assert_true (data->stats.sampled);
  g_assert_false (ref_stats.sampled);
  g_assert_cmpfloat (data->stats.min, ==, ref_stats.min);
  g_assert_cmpfloat (data->stats.max, ==, ref_stats.max);
  g_assert_cmpfloat (data->stats.lo[SKY_LIMITS_MINMAX], ==, ref_stats.lo[SKY_LIMITS_MINMAX]);
  g_assert_cmpfloat (data->stats.hi[SKY_LIMITS_MINMAX], ==, ref_stats.hi[SKY_LIMITS_MINMAX]);
  g_assert_cmpint (data->stats.nvalid, >=, nx * ny / 16 - 3);
  g_assert_cmpint (data->stats.nvalid, <=, nx * ny / 16 + 1);
  g_assert_cmpfloat (fabs (data->stats.lo[SKY_LIMITS_99_5] - ref_stats.lo[SKY_LIMITS_99_5]), <,
                     0.5);
  g_assert_cmpfloat (sky_open_progress_fraction (progress), ==, 1.0);

  /* 2600 x 1700 halves twice to 650 x 425 (a side of 1024 at most):
   * every 4th pixel of every 4th row, whose histogram is the image's first. */
  preview = sky_open_progress_take_preview (progress);
  g_assert_nonnull (preview);
  g_assert_null (sky_open_progress_take_preview (progress));
  g_assert_true (preview->is_preview);
  g_assert_null (preview->image.pixels);
  k = preview->pyramid.first;
  g_assert_cmpint (k, ==, 2);
  g_assert_cmpint (preview->pyramid.nlevels, ==, k + 1);
  g_assert_cmpint (preview->pyramid.nx[k], ==, nx / 4);
  g_assert_cmpint (preview->pyramid.ny[k], ==, ny / 4);
  for (int64_t j = 0; j < ny / 4; j++)
    for (int64_t i = 0; i < nx / 4; i++)
      {
        float a = preview->pyramid.pixels[k][j * (nx / 4) + i];
        float b = ref.pixels[(4 * j) * nx + 4 * i];
        g_assert_true (memcmp (&a, &b, sizeof a) == 0);
      }
  g_assert_cmpint (preview->stats.nvalid, >, 0);
  g_assert_cmpint (data->stats.nvalid, ==, preview->stats.nvalid);
  g_assert_cmpmem (data->stats.cum, (SKY_DISPLAY_NBUCKETS + 1) * sizeof (uint64_t),
                   preview->stats.cum, (SKY_DISPLAY_NBUCKETS + 1) * sizeof (uint64_t));

  /* The loader's image: level 0 alone at first, then the loader's levels. */
  {
    g_autoptr (SkyImageData) loaded = NULL;
    g_autoptr (SkyOpenProgress) p2 = sky_open_progress_new ();
    LoadWait w = { g_main_loop_new (NULL, FALSE), NULL, NULL };
    gboolean done = FALSE;

    sky_image_data_load_async (path, NULL, FALSE, p2, NULL, on_loaded, &w);
    g_main_loop_run (w.loop);
    g_main_loop_unref (w.loop);
    g_assert_no_error (w.error);
    loaded = w.image;
    g_assert_true (loaded->levels_pending);
    g_assert_true (loaded->stats.sampled);
    g_assert_cmpint (sky_pyramid_levels (&loaded->pyramid), ==, 1);
    sky_image_data_make_levels_async (loaded, NULL, on_levels, &done);
    while (!done)
      g_main_context_iteration (NULL, TRUE);
    g_assert_cmpint (sky_pyramid_build (&ref, 0, &ref_pyr), ==, SKY_OK);
    g_assert_cmpint (sky_pyramid_levels (&loaded->pyramid), ==, ref_pyr.nlevels);
    /* ... and the exact statistics with them. */
    assert_same_stats (&loaded->stats, &ref_stats);
    for (int l = 1; l < ref_pyr.nlevels; l++)
      g_assert_cmpmem (loaded->pyramid.pixels[l], ref_pyr.nx[l] * ref_pyr.ny[l] * sizeof (float),
                       ref_pyr.pixels[l], ref_pyr.nx[l] * ref_pyr.ny[l] * sizeof (float));
    sky_pyramid_clear (&ref_pyr);
  }

  /* Cancelled before it starts: it says so and reads nothing. */
  {
    g_autoptr (GCancellable) cancel = g_cancellable_new ();
    g_autoptr (SkyImageData) again = g_atomic_rc_box_new0 (SkyImageData);
    g_cancellable_cancel (cancel);
    g_assert_cmpint (sky_image_read (path, NULL, again, progress, cancel, &error), ==,
                     SKY_IMAGE_READ_CANCELLED);
    g_assert_no_error (error);
  }
  g_unsetenv ("SKYSIFT_PROGRESSIVE_MIN_PIXELS");
  sky_display_stats_clear (&ref_stats);
  sky_image_clear (&ref);
  g_remove (path);
}

static SkyImageData *
small_field (void)
{
  static SkyImageData *image;
  if (image == NULL)
    {
      g_autofree char *path = sky_test_tmp_path ("field-512.fits");
      SkySynthOptions opts;
      g_autoptr (GError) error = NULL;

      sky_synth_options_init (&opts);
      opts.size = 512;
      g_assert_cmpint (sky_synth_write (path, NULL, &opts), ==, SKY_OK);
      image = load (path, FALSE, &error);
      g_assert_no_error (error);
    }
  return image;
}

/* test-ui-units-order.c */
void source_order_check (SkyImageData *image);

/* test-ui-units-read.c */
void read_cases_check (void);

static void
test_source_order (void)
{
  source_order_check (small_field ());
}

static gboolean
close_rel (double a, double b, double tol)
{
  return a == b || fabs (a - b) <= tol * MAX (fabs (a), fabs (b));
}

/* The run against sky_cpu_run: bit for bit where the CPU made it, within
 * the contract (docs/contract.md) where the GPU did. */
static void
assert_same_as_cpu (SkyRun *run, const SkyParams *params, gboolean exact)
{
  SkyResult ref = { 0 };
  gint64 npix = run->image->image.nx * run->image->image.ny;
  double rel = exact ? 0 : 1e-6, pix = exact ? 0 : 1e-4;

  sky_test_run_cpu (&run->image->image, params, &ref);
  g_assert_true (close_rel (run->stats.median, ref.stats.median, rel));
  g_assert_true (close_rel (run->stats.sigma, ref.stats.sigma, rel));
  g_assert_cmpint (run->stats.iterations, ==, ref.stats.iterations);
  g_assert_true (close_rel (run->threshold_value, ref.threshold_value, rel));
  g_assert_true (memcmp (run->mask, ref.mask, (size_t) npix) == 0);
  g_assert_true (memcmp (run->labels, ref.labels, (size_t) npix * 4) == 0);
  g_assert_cmpint (run->nsources, ==, ref.nsources);
  g_assert_cmpint (run->catalogue.n, ==, ref.catalogue.n);
  for (gint64 i = 0; i < ref.catalogue.n; i++)
    {
      g_assert_cmpfloat (fabs (run->catalogue.x[i] - ref.catalogue.x[i]), <=, pix);
      g_assert_cmpfloat (fabs (run->catalogue.y[i] - ref.catalogue.y[i]), <=, pix);
      g_assert_true (close_rel (run->catalogue.sum[i], ref.catalogue.sum[i], rel));
      g_assert_cmpint (run->catalogue.npix[i], ==, ref.catalogue.npix[i]);
    }
  sky_result_clear (&ref);
}

static void
test_pipeline_steps (void)
{
  SkyImageData *image = small_field ();
  g_autoptr (SkyRun) clip = NULL, all = NULL, moved = NULL, again = NULL, eight = NULL;
  g_autoptr (GError) error = NULL;
  SkyParams params;

  sky_params_init (&params);
  clip = sky_pipeline_run (image, &params, SKY_BACKEND_CPU, SKY_STEP_CLIP, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (clip->done, ==, SKY_STEP_CLIP);
  g_assert_null (clip->mask);
  g_assert_cmpfloat (clip->hist_lo, <, clip->stats.median);
  g_assert_cmpfloat (clip->hist_hi, >, clip->threshold_value);

  /* Going on from clip keeps its statistics and time. */
  all = sky_pipeline_run (image, &params, SKY_BACKEND_CPU, SKY_STEP_MEASURE, clip, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (all->done, ==, SKY_STEP_MEASURE);
  g_assert_cmpfloat (all->cpu.ms[SKY_STEP_CLIP], ==, clip->cpu.ms[SKY_STEP_CLIP]);
  assert_same_as_cpu (all, &params, TRUE);

  /* Asking again for what a run holds gives that run. */
  again = sky_pipeline_run (image, &params, SKY_BACKEND_CPU, SKY_STEP_LABEL, all, NULL, &error);
  g_assert_true (again == all);

  /* A moved threshold segments again from the same background. */
  params.threshold = 7;
  moved = sky_pipeline_run (image, &params, SKY_BACKEND_CPU, SKY_STEP_MEASURE, all, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (moved != all);
  g_assert_cmpfloat (moved->cpu.ms[SKY_STEP_CLIP], ==, all->cpu.ms[SKY_STEP_CLIP]);
  g_assert_true (moved->mask != all->mask);
  g_assert_cmpint (moved->nsources, <, all->nsources);
  assert_same_as_cpu (moved, &params, TRUE);

  /* 8-connectivity: the mask is kept, the labels are not. */
  params.connectivity = 8;
  eight = sky_pipeline_run (image, &params, SKY_BACKEND_CPU, SKY_STEP_MEASURE, moved, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (eight->mask == moved->mask);
  g_assert_true (eight->labels != moved->labels);
  assert_same_as_cpu (eight, &params, TRUE);
}

static void
test_pipeline_cancel (void)
{
  g_autoptr (GCancellable) cancellable = g_cancellable_new ();
  g_autoptr (GError) error = NULL;
  SkyParams params;
  SkyRun *run;

  sky_params_init (&params);
  g_cancellable_cancel (cancellable);
  run = sky_pipeline_run (small_field (), &params, SKY_BACKEND_CPU, SKY_STEP_MEASURE, NULL,
                          cancellable, &error);
  g_assert_null (run);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
}

/* The local method's run: the maps the view shows are the CPU's maps to
 * the bit (sky_cpu_background, the maps skysift-cli background writes),
 * the residual the image less the background; runs with the same mesh
 * share them and a new box makes new ones; a run holds the steps of its
 * own method only. The lesson's run has the mesh for its banner instead. */
/* The Smooth field's kernel with the local method is its detect step's
 * matched filter, as skysift-cli find --method local --smooth hands it to
 * the runner: the same sources as the runner given the kernel itself, and
 * no run of another kernel (or none) lends it its detection. */
static void
test_pipeline_local_smooth (void)
{
  SkyImageData *image = small_field ();
  g_autoptr (GError) error = NULL;
  g_autoptr (SkyRun) plain = NULL, filtered = NULL, again = NULL, back = NULL;
  SkyKernel kernel = { 0 };
  SkyStages direct = { 0 };
  SkyRunRequest req = { 0 };
  SkyParams params;

  sky_params_init (&params);
  plain = sky_pipeline_run_method (image, &params, SKY_METHOD_LOCAL, SKY_BACKEND_CPU,
                                   SKY_STEP_MEASURE, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_null (plain->smoothed);
  filtered = sky_pipeline_run_smoothed (image, &params, SKY_METHOD_LOCAL, SKY_BACKEND_CPU,
                                        SKY_STEP_MEASURE, "gauss:2", plain, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (filtered->smoothed);
  g_assert_true (filtered->smoothed->is_filter);
  g_assert_cmpstr (filtered->smoothed->kernel, ==, "gauss:2");
  /* A matched filter's noise differs from the map's: the detection was
   * filtered, not lent by the unfiltered run. */
  g_assert_cmpfloat (filtered->stages.result.noise_scale, <, 1.0);
  g_assert_cmpfloat (plain->stages.result.noise_scale, ==, 1.0);

  g_assert_cmpint (sky_kernel_parse (&kernel, "gauss:2"), ==, SKY_OK);
  req.image = &image->image;
  req.params = &params;
  req.method = SKY_METHOD_LOCAL;
  req.backend = SKY_BACKEND_CPU;
  req.until = SKY_STEP_MEASURE;
  req.filter = &kernel;
  req.cpu_repeat = 1;
  g_assert_cmpint (sky_run (&req, &direct), ==, SKY_OK);
  g_assert_cmpint (filtered->catalogue.n, ==, direct.result.catalogue.n);
  g_assert_cmpint (filtered->catalogue.n, >, 0);
  for (gint64 i = 0; i < filtered->catalogue.n; i++)
    g_assert_cmpfloat (filtered->catalogue.sum[i], ==, direct.result.catalogue.sum[i]);
  sky_stages_clear (&direct);
  sky_kernel_clear (&kernel);

  /* The same kernel again takes the kernel along and finds the same
   * sources; none again finds the plain run's. */
  again = sky_pipeline_run_smoothed (image, &params, SKY_METHOD_LOCAL, SKY_BACKEND_CPU,
                                     SKY_STEP_MEASURE, "gauss:2", filtered, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (again->smoothed == filtered->smoothed);
  g_assert_cmpint (again->catalogue.n, ==, filtered->catalogue.n);
  g_assert_cmpfloat (again->stages.result.noise_scale, ==, filtered->stages.result.noise_scale);
  back = sky_pipeline_run_method (image, &params, SKY_METHOD_LOCAL, SKY_BACKEND_CPU,
                                  SKY_STEP_MEASURE, filtered, NULL, &error);
  g_assert_no_error (error);
  g_assert_null (back->smoothed);
  g_assert_cmpint (back->catalogue.n, ==, plain->catalogue.n);
  g_assert_cmpfloat (back->stages.result.noise_scale, ==, 1.0);
}

static void
test_pipeline_local (void)
{
  SkyImageData *image = small_field ();
  const SkyImage *img = &image->image;
  gsize npix = (gsize) (img->nx * img->ny);
  g_autoptr (GError) error = NULL;
  g_autoptr (SkyRun) background = NULL, all = NULL, seed = NULL, box = NULL, lesson = NULL;
  g_autoptr (SkyRun) gpu = NULL;
  g_autofree float *b = g_new (float, npix);
  g_autofree float *r = g_new (float, npix);
  SkyParams params;

  sky_params_init (&params);
  background = sky_pipeline_run_method (image, &params, SKY_METHOD_LOCAL, SKY_BACKEND_CPU,
                                        SKY_STEP_BACKGROUND, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (sky_run_has (background, SKY_STEP_BACKGROUND));
  g_assert_false (sky_run_has (background, SKY_STEP_CLIP));
  g_assert_false (sky_run_has (background, SKY_STEP_MEASURE));
  g_assert_false (sky_run_has_labels (background));
  g_assert_nonnull (background->maps);
  g_assert_null (background->mesh);
  g_assert_cmpint (sky_cpu_background (img, &params, 0, b, r), ==, SKY_OK);
  /* None is made until asked for, then once. */
  for (int k = 0; k < SKY_MAP_COUNT; k++)
    g_assert_null (sky_run_maps_peek (background->maps, k));
  {
    SkyImageData *mb = sky_run_maps_make (background->maps, SKY_MAP_BACKGROUND, &error);
    SkyImageData *mr = sky_run_maps_make (background->maps, SKY_MAP_RMS, &error);
    SkyImageData *mx = sky_run_maps_make (background->maps, SKY_MAP_RESIDUAL, &error);

    g_assert_no_error (error);
    g_assert_true (sky_run_maps_peek (background->maps, SKY_MAP_RMS) == mr);
    g_assert_true (sky_run_maps_make (background->maps, SKY_MAP_RMS, &error) == mr);
    g_assert_cmpmem (mb->image.pixels, npix * sizeof (float), b, npix * sizeof (float));
    g_assert_cmpmem (mr->image.pixels, npix * sizeof (float), r, npix * sizeof (float));
    for (gsize i = 0; i < npix; i++)
      {
        float want = img->pixels[i] - b[i], got = mx->image.pixels[i];
        g_assert_true ((isnan (want) && isnan (got)) || want == got);
      }
  }
  g_assert_cmpint (background->maps->nbx, ==, (img->nx + params.bkg_box - 1) / params.bkg_box);

  /* A run whose maps came whole (the GPU's, brought home; no mesh on the
   * host) shows the same maps, from a copy. */
  {
    g_autoptr (SkyRun) whole = sky_pipeline_run_method (image, &params, SKY_METHOD_LOCAL,
                                                        SKY_BACKEND_CPU, SKY_STEP_BACKGROUND,
                                                        NULL, NULL, &error);
    g_assert_no_error (error);
    g_clear_pointer (&whole->maps, sky_run_maps_unref);
    whole->stages.result.background = g_memdup2 (b, npix * sizeof (float));
    whole->stages.result.rms = g_memdup2 (r, npix * sizeof (float));
    g_assert_true (sky_run_prepare_background (whole, NULL, &error));
    g_assert_nonnull (whole->maps);
    for (int k = 0; k < SKY_MAP_COUNT; k++)
      {
        SkyImageData *from_whole = sky_run_maps_make (whole->maps, k, &error);
        SkyImageData *from_mesh = sky_run_maps_make (background->maps, k, &error);
        g_assert_no_error (error);
        g_assert_cmpmem (from_whole->image.pixels, npix * sizeof (float),
                         from_mesh->image.pixels, npix * sizeof (float));
      }
  }
  /* A run whose every step ran on the device leaves neither: the view's
   * maps come from a CPU mesh made when first asked for, the same. */
  {
    g_autoptr (SkyRun) device = sky_pipeline_run_method (image, &params, SKY_METHOD_LOCAL,
                                                         SKY_BACKEND_CPU, SKY_STEP_BACKGROUND,
                                                         NULL, NULL, &error);
    g_assert_no_error (error);
    g_clear_pointer (&device->maps, sky_run_maps_unref);
    sky_local_state_clear (device->stages.local);
    g_assert_true (sky_run_prepare_background (device, NULL, &error));
    g_assert_nonnull (device->maps);
    for (int k = 0; k < SKY_MAP_COUNT; k++)
      {
        SkyImageData *late = sky_run_maps_make (device->maps, k, &error);
        g_assert_no_error (error);
        g_assert_cmpmem (late->image.pixels, npix * sizeof (float),
                         sky_run_maps_peek (background->maps, k)->image.pixels,
                         npix * sizeof (float));
      }
  }

  all = sky_pipeline_run_method (image, &params, SKY_METHOD_LOCAL, SKY_BACKEND_CPU,
                                 SKY_STEP_MEASURE, background, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (sky_run_has (all, SKY_STEP_MEASURE) && sky_run_has_labels (all));
  g_assert_cmpint (all->nsources, >, 0);
  g_assert_true (all->maps == background->maps);
  params.seed_sigma = 6;
  seed = sky_pipeline_run_method (image, &params, SKY_METHOD_LOCAL, SKY_BACKEND_CPU,
                                  SKY_STEP_MEASURE, all, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (seed->maps == background->maps);
  g_assert_cmpint (seed->nsources, <=, all->nsources);
  params.bkg_box = 32;
  box = sky_pipeline_run_method (image, &params, SKY_METHOD_LOCAL, SKY_BACKEND_CPU,
                                 SKY_STEP_BACKGROUND, seed, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (box->maps != background->maps);
  g_assert_cmpint (box->maps->box, ==, 32);

  lesson = sky_pipeline_run (image, &params, SKY_BACKEND_CPU, SKY_STEP_CLIP, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_null (lesson->maps);
  /* The mesh comes later, made once. */
  g_assert_null (sky_run_get_mesh (lesson));
  g_assert_cmpfloat (sky_run_background_above (lesson), ==, -1);
  g_assert_true (sky_run_make_mesh (lesson, &error));
  g_assert_no_error (error);
  g_assert_nonnull (lesson->mesh);
  {
    SkyRunMesh *first = sky_run_get_mesh (lesson);
    g_assert_true (sky_run_make_mesh (lesson, &error) && sky_run_get_mesh (lesson) == first);
  }
  g_assert_cmpint (lesson->mesh->n, ==, box->maps->nbx * box->maps->nby);
  g_assert_cmpfloat (sky_run_background_above (lesson), >=, 0);
  g_assert_cmpfloat (sky_run_background_above (lesson), <=, 1);
  g_assert_cmpfloat (sky_run_background_above (all), ==, -1);

  /* Asked of the GPU: the CPU's run and the reason (no GPU steps for the
   * method), or the GPU's fault, or the GPU's own run; never the CPU's
   * results with nothing said. */
  params.bkg_box = 64;
  params.seed_sigma = 4.6;
  gpu = sky_pipeline_run_method (image, &params, SKY_METHOD_LOCAL, SKY_BACKEND_GPU,
                                 SKY_STEP_MEASURE, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (gpu->cpu_only != NULL || gpu->gpu_fault != NULL || gpu->has_gpu);
  g_assert_cmpint (gpu->nsources, ==, all->nsources);
  if (gpu->cpu_only != NULL && !gpu->has_gpu)
    g_assert_cmpint (gpu->backend, ==, SKY_BACKEND_CPU);

  /* What the window says of a run whose steps the GPU ran in part. */
  {
    SkyRun part = { 0 };
    g_autofree char *gpu_text = NULL, *both_text = NULL, *lesson_text = NULL;

    part.method = SKY_METHOD_LOCAL;
    part.backend = SKY_BACKEND_GPU;
    part.has_gpu = TRUE;
    part.stages.gpu_steps = 1u << SKY_STEP_BACKGROUND;
    gpu_text = sky_run_cpu_steps_text (&part);
    g_assert_cmpstr (gpu_text, ==, "The GPU ran background; the CPU ran detect, flood, deblend, "
                                   "measure: the GPU has no such steps for the local method yet.");
    part.backend = SKY_BACKEND_BOTH;
    both_text = sky_run_cpu_steps_text (&part);
    g_assert_cmpstr (both_text, ==, "The GPU checked background alone: it has no detect, flood, "
                                    "deblend, measure for the local method yet.");
    part.gpu_fault = "GPU backend: no device";
    g_assert_null (sky_run_cpu_steps_text (&part));
    part.gpu_fault = NULL;
    part.method = SKY_METHOD_LESSON;
    part.stages.gpu_steps = (1u << SKY_STEP_CLIP) | (1u << SKY_STEP_SEGMENT)
                            | (1u << SKY_STEP_LABEL) | (1u << SKY_STEP_MEASURE);
    lesson_text = sky_run_cpu_steps_text (&part);
    g_assert_null (lesson_text);
  }
}

static void
test_pipeline_bad_params (void)
{
  g_autoptr (GError) error = NULL;
  SkyParams params;

  sky_params_init (&params);
  params.connectivity = 6;
  g_assert_null (sky_pipeline_run (small_field (), &params, SKY_BACKEND_CPU, SKY_STEP_MEASURE,
                                   NULL, NULL, &error));
  g_assert_error (error, SKY_UI_ERROR, SKY_ERR_ARGUMENT);
}

/* Both backends: the GPU's results and times next to the CPU's, and they
 * agree; without a GPU, the backend says why and the test skips. */
static void
test_pipeline_gpu (void)
{
  g_autofree char *reason = NULL;
  g_autoptr (SkyRun) both = NULL, gpu = NULL;
  g_autoptr (GError) error = NULL;
  SkyParams params;

  if (!sky_backend_available (SKY_BACKEND_GPU, &reason))
    {
      g_assert_nonnull (reason);
      g_test_skip (reason);
      return;
    }
  sky_params_init (&params);
  both = sky_pipeline_run (small_field (), &params, SKY_BACKEND_BOTH, SKY_STEP_MEASURE, NULL,
                           NULL, &error);
  g_assert_no_error (error);
  g_assert_true (both->has_gpu);
  for (int s = SKY_STEP_CLIP; s <= SKY_STEP_MEASURE; s++)
    {
      if (!both->agree[s])
        g_test_message ("%s differs: %s", sky_step_name (s), both->gpu_note);
      g_assert_true (both->agree[s]);
    }
  g_assert_cmpfloat (both->gpu_total.total, >=, both->gpu_kernel.total);
  /* Timed as skysift-cli find --repeat 10 is: a warm-up, the best of 10,
   * the statistics and catalogue's download in the figures and the mask
   * and labels' (five bytes a pixel) apart, after them. */
  g_assert_cmpint (both->stages.gpu_times.runs, ==, SKY_RUN_GPU_REPEAT);
  g_assert_cmpint (both->stages.cpu_runs, ==, both->stages.gpu_times.runs);
  g_assert_cmpfloat (both->stages.gpu_times.outputs, >, both->stages.gpu_times.download);
  g_test_message ("512 x 512, ms: CPU %.3f; GPU kernels %.3f (clip %.3f segment %.3f label %.3f "
                  "measure %.3f), with transfers %.3f", both->cpu.total, both->gpu_kernel.total,
                  both->gpu_kernel.ms[SKY_STEP_CLIP], both->gpu_kernel.ms[SKY_STEP_SEGMENT],
                  both->gpu_kernel.ms[SKY_STEP_LABEL], both->gpu_kernel.ms[SKY_STEP_MEASURE],
                  both->gpu_total.total);
  assert_same_as_cpu (both, &params, TRUE);

  gpu = sky_pipeline_run (small_field (), &params, SKY_BACKEND_GPU, SKY_STEP_MEASURE, NULL,
                          NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (gpu->done, ==, SKY_STEP_MEASURE);
  g_assert_nonnull (gpu->labels);
  g_assert_false (gpu->cpu.total > 0);   /* nothing ran on the CPU */
  g_assert_cmpint (gpu->stages.gpu_times.runs, ==, SKY_RUN_GPU_REPEAT);
  g_assert_cmpfloat (gpu->stages.gpu_times.outputs, >, gpu->stages.gpu_times.download);
  g_test_message ("512 x 512 GPU alone, best of %d, ms: kernels %.3f, with transfers %.3f; "
                  "mask and labels for the view %.3f", gpu->stages.gpu_times.runs,
                  gpu->gpu_kernel.total, gpu->gpu_total.total, gpu->stages.gpu_times.outputs);
  assert_same_as_cpu (gpu, &params, FALSE);
}

/* The panel says what the GPU's figures are: the best of N after a
 * warm-up, or one run; the view's download of the mask and labels apart. */
static void
test_pipeline_gpu_caption (void)
{
  SkyGpuTimes t = { 0 };
  g_autofree char *best = NULL, *one = NULL;

  t.runs = 10;
  t.outputs = 0.83;
  best = sky_run_describe_gpu (&t);
  g_assert_nonnull (strstr (best, "best of 10 runs after a warm-up run"));
  g_assert_nonnull (strstr (best, "page-locked"));
  g_assert_nonnull (strstr (best, "mask and labels for the view came down after them in 0.83 ms"));
  t.runs = 0;
  t.outputs = -1;
  one = sky_run_describe_gpu (&t);
  g_assert_nonnull (strstr (one, "one run"));
  g_assert_null (strstr (one, "best of"));
  g_assert_null (strstr (one, "mask and labels"));
}

/* A GPU that cannot run (none here; elsewhere, one held under a device
 * memory limit it cannot meet) leaves the whole job to the CPU: the run is
 * complete, equal to the CPU's, and says why in gpu_fault. */
static void
test_pipeline_gpu_fault (void)
{
  g_autoptr (SkyRun) gpu = NULL, both = NULL;
  g_autoptr (GError) error = NULL;
  SkyParams params;

  sky_params_init (&params);
  g_setenv ("SKYSIFT_GPU_MEMORY_LIMIT", "1K", TRUE);
  gpu = sky_pipeline_run (small_field (), &params, SKY_BACKEND_GPU, SKY_STEP_MEASURE, NULL,
                          NULL, &error);
  g_assert_no_error (error);
  both = sky_pipeline_run (small_field (), &params, SKY_BACKEND_BOTH, SKY_STEP_MEASURE, NULL,
                           NULL, &error);
  g_setenv ("SKYSIFT_GPU_MEMORY_LIMIT", "", TRUE);
  g_assert_no_error (error);
  for (SkyRun *run = gpu; run != NULL; run = run == gpu ? both : NULL)
    {
      g_assert_nonnull (run->gpu_fault);
      g_test_message ("%s: %s", run == gpu ? "gpu" : "both", run->gpu_fault);
      g_assert_true (strstr (run->gpu_fault, "GPU") != NULL);
      g_assert_false (run->has_gpu);
      g_assert_cmpint (run->done, ==, SKY_STEP_MEASURE);
      g_assert_cmpfloat (run->cpu.total, >, 0);
      assert_same_as_cpu (run, &params, TRUE);
    }
  /* Both asked the CPU for the GPU's statistic, and it kept to it. */
  g_assert_cmpint (both->stages.cpu_runs, ==, SKY_RUN_GPU_REPEAT);
}

/* The panel's speedup divides the same statistic on both sides: the best
 * of as many runs, or one run each; one CPU run against the GPU's best of
 * ten is no ratio at all (it flatters the GPU). */
static void
test_pipeline_speedup (void)
{
  SkyRun run = { 0 };
  g_autofree char *one = NULL, *best = NULL;
  double ratio = -1;

  run.backend = SKY_BACKEND_BOTH;
  run.has_gpu = TRUE;
  run.cpu.ms[SKY_STEP_LABEL] = 30;
  run.cpu.total = 60;
  run.gpu_total.ms[SKY_STEP_LABEL] = 3;
  run.gpu_total.total = 12;
  run.stages.gpu_times.runs = SKY_RUN_GPU_REPEAT;
  run.stages.cpu_runs = 1;
  g_assert_false (sky_run_speedup (&run, SKY_STEP_LABEL, &ratio));
  g_assert_cmpfloat (ratio, ==, -1);
  one = sky_run_describe_cpu (&run);
  g_assert_cmpstr (one, ==, "CPU: one run.");

  run.stages.cpu_runs = SKY_RUN_GPU_REPEAT;
  g_assert_true (sky_run_speedup (&run, SKY_STEP_LABEL, &ratio));
  g_assert_cmpfloat (ratio, ==, 10);
  g_assert_true (sky_run_speedup (&run, SKY_STEP_NONE, &ratio));
  g_assert_cmpfloat (ratio, ==, 5);
  best = sky_run_describe_cpu (&run);
  g_assert_nonnull (strstr (best, "best of 10 runs"));

  /* One run each is the same statistic too. */
  run.stages.cpu_runs = 1;
  run.stages.gpu_times.runs = 0;
  g_assert_true (sky_run_speedup (&run, SKY_STEP_LABEL, &ratio));
  /* No ratio without both backends' figures. */
  run.backend = SKY_BACKEND_GPU;
  g_assert_false (sky_run_speedup (&run, SKY_STEP_LABEL, &ratio));
  run.backend = SKY_BACKEND_BOTH;
  run.has_gpu = FALSE;
  g_assert_false (sky_run_speedup (&run, SKY_STEP_LABEL, &ratio));
}

/* Every tick is a round value, as its label says, in the bar's one
 * notation, left to right, its label clear of its neighbours': on a linear
 * bar evenly spaced multiples of 1, 2 or 5 times a power of ten, on the
 * others zero or one digit times a power of ten. */
static int
check_ticks (SkyStretch stretch, double lo, double hi, gboolean scientific, SkyTick *ticks)
{
  const double width = 600, char_px = 6.5;
  int n = sky_ticks_choose (stretch, lo, hi, NULL, width, char_px, ticks, 9);
  GString *all = g_string_new (NULL);

  for (int k = 0; k < n; k++)
    {
      double mant = ticks[k].value == 0 ? 0
                    : ticks[k].value / pow (10, floor (log10 (fabs (ticks[k].value))));
      g_string_append_printf (all, " %s", ticks[k].label);
      if (stretch != SKY_STRETCH_LINEAR)
        g_assert_cmpfloat (fabs (mant - round (mant)), <, 1e-9);
      else if (k >= 2)
        g_assert_cmpfloat (fabs ((ticks[k].value - ticks[k - 1].value)
                                 - (ticks[1].value - ticks[0].value)), <,
                           1e-9 * fabs (ticks[1].value - ticks[0].value));
      g_assert_cmpfloat (g_ascii_strtod (ticks[k].label, NULL), ==, ticks[k].value);
      g_assert_true ((strchr (ticks[k].label, 'e') != NULL) == (scientific && ticks[k].value != 0));
      g_assert_cmpfloat (ticks[k].value, >=, lo);
      g_assert_cmpfloat (ticks[k].value, <=, hi);
      if (k > 0)
        {
          double gap = (ticks[k].t - ticks[k - 1].t) * width;
          g_assert_cmpfloat (gap, >=, (strlen (ticks[k].label) + strlen (ticks[k - 1].label))
                                      * char_px / 2);
        }
    }
  g_test_message ("%s %g..%g:%s", sky_stretch_name (stretch), lo, hi, all->str);
  g_string_free (all, TRUE);
  return n;
}

static void
test_color_bar_ticks (void)
{
  SkyTick ticks[9];
  int n;

  /* gc_like_2048.fits's min-max, linear: 0, 1 and 2 among them. */
  n = check_ticks (SKY_STRETCH_LINEAR, -0.0704, 2.52, FALSE, ticks);
  g_assert_cmpint (n, >=, 3);
  for (double want = 0; want <= 2; want++)
    {
      gboolean found = FALSE;
      for (int k = 0; k < n; k++)
        found |= ticks[k].value == want;
      g_assert_true (found);
    }
  /* The same limits in log: more ticks towards the faint end. */
  n = check_ticks (SKY_STRETCH_LOG, -0.0704, 2.52, FALSE, ticks);
  g_assert_cmpint (n, >=, 4);
  g_assert_cmpfloat (ticks[1].value, <, 0.2);
  check_ticks (SKY_STRETCH_ASINH, -3.94, 400.4, FALSE, ticks);
  check_ticks (SKY_STRETCH_SQRT, 0.001, 0.0042, FALSE, ticks);
  /* Junk pixels' range: powers of ten, every label. */
  n = check_ticks (SKY_STRETCH_LINEAR, -3e38, 3e38, TRUE, ticks);
  g_assert_cmpint (n, >=, 3);
  /* A flat or empty range has none. */
  g_assert_cmpint (sky_ticks_choose (SKY_STRETCH_LINEAR, 1, 1, NULL, 600, 6.5, ticks, 9), ==, 0);
}

/* The app's error codes are the core's statuses one for one, and an
 * error made from a status carries the core's message. */
static void
test_ui_error_codes (void)
{
  g_assert_cmpint (sky_ui_error_from_status (SKY_ERR_IO), ==, SKY_UI_ERROR_IO);
  g_assert_cmpint (sky_ui_error_from_status (SKY_ERR_FORMAT), ==, SKY_UI_ERROR_FORMAT);
  g_assert_cmpint (sky_ui_error_from_status (SKY_ERR_MEMORY), ==, SKY_UI_ERROR_MEMORY);
  g_assert_cmpint (sky_ui_error_from_status (SKY_ERR_CANCELLED), ==, SKY_UI_ERROR_CANCELLED);
  g_assert_cmpint (sky_ui_error_from_status (SKY_OK), ==, SKY_UI_ERROR_FAILED);
  g_assert_cmpint (sky_ui_error_from_status (SKY_ERR_CANCELLED + 1), ==, SKY_UI_ERROR_FAILED);

  sky_fail (SKY_ERR_NO_IMAGE, "%s: no image in HDU 3", "x.fits");
  g_autoptr (GError) error = sky_ui_error_new_from_status (SKY_ERR_NO_IMAGE);
  g_assert_error (error, SKY_UI_ERROR, SKY_UI_ERROR_NO_IMAGE);
  g_assert_cmpstr (error->message, ==, "x.fits: no image in HDU 3");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_setenv ("XDG_CACHE_HOME", sky_test_tmpdir (), TRUE);

  g_test_add_func ("/ui/error/codes", test_ui_error_codes);
  g_test_add_func ("/ui/colormap/ends", test_colormap_ends);
  g_test_add_func ("/ui/stretch/inverse", test_stretch_inverse);
  g_test_add_func ("/ui/colorbar/round-ticks", test_color_bar_ticks);
  g_test_add_func ("/ui/display/quantiles", test_display_quantiles);
  g_test_add_func ("/ui/display/negative-and-flat", test_display_negative_and_flat);
  g_test_add_func ("/ui/display/extremes", test_display_extremes);
  g_test_add_func ("/ui/display/zscale", test_zscale);
  g_test_add_func ("/ui/display/pyramid", test_pyramid);
  g_test_add_func ("/ui/display/header-flip", test_header_flip);
  g_test_add_func ("/ui/raster/pixels", test_raster);
  g_test_add_func ("/ui/image/load", test_load);
  g_test_add_func ("/ui/image/read-chunked", test_read_chunked);
  g_test_add_func ("/ui/image/read-fits-cases", read_cases_check);
  g_test_add_func ("/ui/pipeline/steps", test_pipeline_steps);
  g_test_add_func ("/ui/source-table/order", test_source_order);
  g_test_add_func ("/ui/pipeline/cancel", test_pipeline_cancel);
  g_test_add_func ("/ui/pipeline/bad-params", test_pipeline_bad_params);
  g_test_add_func ("/ui/pipeline/local", test_pipeline_local);
  g_test_add_func ("/ui/pipeline/local-smooth", test_pipeline_local_smooth);
  g_test_add_func ("/ui/pipeline/gpu", test_pipeline_gpu);
  g_test_add_func ("/ui/pipeline/gpu-caption", test_pipeline_gpu_caption);
  g_test_add_func ("/ui/pipeline/gpu-fault", test_pipeline_gpu_fault);
  g_test_add_func ("/ui/pipeline/speedup", test_pipeline_speedup);
  return g_test_run ();
}
