/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests of the local method's steps on small hand-made images:
 * seed-and-flood islands, deblending, the local measures, and the whole
 * method on a field with a sky level. */
#include "sky-test-util.h"
#include "sky-runner.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Adds a circular Gaussian of peak amp and sigma s at (x0, y0). */
static void
add_gauss (float *p, int64_t nx, int64_t ny, double x0, double y0, double amp, double s)
{
  for (int64_t y = 0; y < ny; y++)
    for (int64_t x = 0; x < nx; x++)
      p[y * nx + x] += (float) (amp * exp (-((x - x0) * (x - x0) + (y - y0) * (y - y0))
                                           / (2 * s * s)));
}

static int64_t
count_label (const int32_t *labels, int64_t n, int32_t l)
{
  int64_t c = 0;
  for (int64_t i = 0; i < n; i++)
    c += labels[i] == l;
  return c;
}

/* ------------------------------------------------------------------ flood */

static void
test_flood_seed_and_area (void)
{
  /* Three islands above flood 2: one with a seed (> 5), one without, and a
   * one-pixel island with a seed that min_area 2 drops. A NaN splits the
   * first island's row from a fourth piece that has no seed of its own. */
  const float nan = NAN;
  const float snr[6 * 8] = {
    3, 6, 3, 0, 0, 0, 0, 9,
    3, 3, nan, 3, 0, 4, 4, 0,
    0, 0, 0, 0, 0, 4, 4, 0,
    0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 3, 3, 0, 0, 0, 0,
    0, 0, 3, 2, 0, 0, 0, 0,
  };
  uint8_t mask[48];
  int32_t labels[48];
  int64_t n = -1;

  g_assert_cmpint (sky_cpu_flood (snr, 8, 6, 5, 2, 1, 4, 1, mask, labels, &n, NULL), ==, SKY_OK);
  /* min_area 1: the seeded 5-pixel island and the single 9. */
  g_assert_cmpint (n, ==, 2);
  g_assert_cmpint (labels[0], ==, 1);
  g_assert_cmpint (labels[7], ==, 2);
  g_assert_cmpint (count_label (labels, 48, 1), ==, 5);
  g_assert_cmpint (labels[1 * 8 + 3], ==, 0); /* behind the NaN: its own seedless island */
  g_assert_cmpint (labels[1 * 8 + 5], ==, 0); /* 4 is no seed */
  g_assert_cmpint (labels[4 * 8 + 2], ==, 0);
  g_assert_cmpint (labels[5 * 8 + 3], ==, 0); /* 2 is not above the flood level */
  g_assert_cmpint (mask[1 * 8 + 5], ==, 0);   /* dropped islands leave the mask */
  g_assert_cmpint (mask[0], ==, 1);

  g_assert_cmpint (sky_cpu_flood (snr, 8, 6, 5, 2, 2, 4, 1, mask, labels, &n, NULL), ==, SKY_OK);
  g_assert_cmpint (n, ==, 1);
  g_assert_cmpint (labels[7], ==, 0);

  /* The islands' measures, on two threads (two bands merged). */
  SkyIslands is = { 0 };
  g_assert_cmpint (sky_cpu_flood (snr, 8, 6, 5, 2, 1, 4, 2, mask, labels, &n, &is), ==, SKY_OK);
  g_assert_cmpint (is.n, ==, 2);
  g_assert_cmpfloat (is.peak[1], ==, 6);
  g_assert_cmpint (is.area[1], ==, 5);
  g_assert_cmpint (is.first[1], ==, 0);
  g_assert_cmpint (is.box[4], ==, 0);
  g_assert_cmpint (is.box[5], ==, 2);
  g_assert_cmpint (is.box[6], ==, 0);
  g_assert_cmpint (is.box[7], ==, 1);
  g_assert_cmpfloat (is.peak[2], ==, 9);
  g_assert_cmpint (is.first[2], ==, 7);
  sky_islands_clear (&is);

  /* 8-connectivity joins the single 9 to the 4s diagonally: one more seed
   * for that island, which now has 5 pixels. */
  g_assert_cmpint (sky_cpu_flood (snr, 8, 6, 5, 2, 2, 8, 1, mask, labels, &n, NULL), ==, SKY_OK);
  g_assert_cmpint (n, ==, 2);
  g_assert_cmpint (labels[7], ==, 2);
  g_assert_cmpint (count_label (labels, 48, 2), ==, 5);
}

/* ---------------------------------------------------------------- deblend */

/* The islands of snr, into the file's one SkyIslands. */
static SkyIslands isl;

static void
island_of (const float *snr, int64_t nx, int64_t ny, const SkyParams *p, int32_t *labels,
           int64_t *n)
{
  uint8_t *mask = g_new (uint8_t, nx * ny);
  sky_islands_clear (&isl);
  g_assert_cmpint (sky_cpu_flood (snr, nx, ny, p->seed_sigma, p->flood_sigma, 1,
                                  p->connectivity, 1, mask, labels, n, &isl), ==, SKY_OK);
  g_assert_cmpint (isl.n, ==, *n);
  g_free (mask);
}

static void
test_deblend_two_peaks (void)
{
  int64_t nx = 40, ny = 20, n, nsplit;
  float *snr = g_new0 (float, nx * ny);
  int32_t *labels = g_new (int32_t, nx * ny);
  uint8_t *deblended = NULL;
  SkyParams p;

  sky_params_init (&p);
  p.nthreads = 1;
  /* Two sources of 40 and 20 rms, 10 pixels apart: one island at 2.5. */
  add_gauss (snr, nx, ny, 14, 10, 40, 2.5);
  add_gauss (snr, nx, ny, 24, 10, 20, 2.5);
  island_of (snr, nx, ny, &p, labels, &n);
  g_assert_cmpint (n, ==, 1);
  int64_t island = count_label (labels, nx * ny, 1);

  g_assert_cmpint (sky_cpu_deblend (snr, nx, ny, &p, &isl, labels, &n, &nsplit, &deblended), ==,
                   SKY_OK);
  g_assert_cmpint (n, ==, 2);
  g_assert_cmpint (nsplit, ==, 1);
  g_assert_nonnull (deblended);
  g_assert_true (deblended[1] && deblended[2]);
  /* Every island pixel went to one of the two, each peak to its own. */
  g_assert_cmpint (count_label (labels, nx * ny, 1) + count_label (labels, nx * ny, 2), ==,
                   island);
  g_assert_cmpint (labels[10 * nx + 14], !=, labels[10 * nx + 24]);
  g_assert_cmpint (labels[10 * nx + 14], !=, 0);
  /* The saddle is nearer the fainter peak. */
  g_assert_cmpint (labels[10 * nx + 19], ==, labels[10 * nx + 14]);
  free (deblended);

  /* Without deblending (0) the island stays whole. */
  island_of (snr, nx, ny, &p, labels, &n);
  p.deblend_nthresh = 0;
  g_assert_cmpint (sky_cpu_deblend (snr, nx, ny, &p, &isl, labels, &n, &nsplit, &deblended), ==,
                   SKY_OK);
  g_assert_cmpint (n, ==, 1);
  g_assert_cmpint (nsplit, ==, 0);
  free (deblended);

  /* A companion under mincont of the island's flux stays part of it. */
  island_of (snr, nx, ny, &p, labels, &n);
  p.deblend_nthresh = 32;
  p.deblend_mincont = 0.45;
  g_assert_cmpint (sky_cpu_deblend (snr, nx, ny, &p, &isl, labels, &n, &nsplit, &deblended), ==,
                   SKY_OK);
  g_assert_cmpint (n, ==, 1);
  free (deblended);
  g_free (snr);
  g_free (labels);
}

static void
test_deblend_bump_below_height (void)
{
  /* A broad blob of 12 rms with a bump rising 3 rms above its saddle: with
   * --deblend-sigma 5 the bump is noise on extended emission, with 2 it is
   * a source. */
  int64_t nx = 48, ny = 48, n, nsplit;
  float *snr = g_new0 (float, nx * ny);
  int32_t *labels = g_new (int32_t, nx * ny);
  uint8_t *deblended = NULL;
  SkyParams p;

  sky_params_init (&p);
  p.nthreads = 1;
  p.deblend_mincont = 0.001;
  add_gauss (snr, nx, ny, 24, 24, 12, 8);
  add_gauss (snr, nx, ny, 34, 24, 6, 1.2);
  island_of (snr, nx, ny, &p, labels, &n);
  g_assert_cmpint (n, ==, 1);
  g_assert_cmpint (sky_cpu_deblend (snr, nx, ny, &p, &isl, labels, &n, &nsplit, &deblended), ==,
                   SKY_OK);
  g_assert_cmpint (n, ==, 1);
  free (deblended);

  island_of (snr, nx, ny, &p, labels, &n);
  p.deblend_sigma = 2;
  g_assert_cmpint (sky_cpu_deblend (snr, nx, ny, &p, &isl, labels, &n, &nsplit, &deblended), ==,
                   SKY_OK);
  g_assert_cmpint (n, ==, 2);
  free (deblended);
  g_free (snr);
  g_free (labels);
}

static void
test_deblend_raster_order (void)
{
  /* Two islands; the second splits in two whose first pixels come before
   * and after the first island's: labels stay in raster order of first
   * pixels. */
  int64_t nx = 60, ny = 30, n, nsplit;
  float *snr = g_new0 (float, nx * ny);
  int32_t *labels = g_new (int32_t, nx * ny);
  uint8_t *deblended = NULL;
  SkyParams p;

  sky_params_init (&p);
  p.nthreads = 2;
  add_gauss (snr, nx, ny, 10, 15, 30, 2);          /* island A, first pixel row ~9 */
  add_gauss (snr, nx, ny, 40, 8, 30, 2);           /* island B top part, row ~2 */
  add_gauss (snr, nx, ny, 40, 22, 30, 2);          /* island B bottom part, row ~16 */
  for (int64_t y = 8; y <= 22; y++)                /* joined by a ridge of 4 rms */
    snr[y * nx + 40] = fmaxf (snr[y * nx + 40], 4.0f);
  island_of (snr, nx, ny, &p, labels, &n);
  g_assert_cmpint (n, ==, 2);
  g_assert_cmpint (sky_cpu_deblend (snr, nx, ny, &p, &isl, labels, &n, &nsplit, &deblended), ==,
                   SKY_OK);
  g_assert_cmpint (n, ==, 3);
  g_assert_cmpint (labels[8 * nx + 40], ==, 1);
  g_assert_cmpint (labels[15 * nx + 10], ==, 2);
  g_assert_cmpint (labels[22 * nx + 40], ==, 3);
  g_assert_true (deblended[1] && !deblended[2] && deblended[3]);
  free (deblended);
  g_free (snr);
  g_free (labels);
}

/* -------------------------------------------------------- local measures */

static void
test_measure_local_hand_made (void)
{
  int64_t nx = 30, ny = 20, n = 30 * 20;
  SkyImage img, residual;
  float *bkg = g_new (float, n), *rms = g_new (float, n), *snr = g_new (float, n);
  float *pix = g_new0 (float, n);
  int32_t *labels = g_new (int32_t, n);
  uint8_t *mask = g_new (uint8_t, n);
  SkyCatalogue cat;
  SkyLocalMaps maps;
  int64_t nl;

  /* A Gaussian at (9.3, 8.6) off the edge, one cut by the left edge, and
   * one beside a blank pixel; sky 100 + 0.5 x, rms 2. */
  add_gauss (pix, nx, ny, 9.3, 8.6, 50, 1.5);
  add_gauss (pix, nx, ny, 0, 15, 50, 1.5);
  add_gauss (pix, nx, ny, 22, 6, 50, 1.5);
  for (int64_t y = 0; y < ny; y++)
    for (int64_t x = 0; x < nx; x++)
      {
        int64_t i = y * nx + x;
        bkg[i] = (float) (100 + 0.5 * x);
        rms[i] = 2;
        pix[i] += bkg[i];
      }
  pix[6 * nx + 24] = NAN;
  sky_test_image (&img, nx, ny, pix);
  sky_test_image (&residual, nx, ny, pix);
  for (int64_t i = 0; i < n; i++)
    {
      residual.pixels[i] = img.pixels[i] - bkg[i];
      snr[i] = residual.pixels[i] / rms[i];
    }
  g_assert_cmpint (sky_cpu_flood (snr, nx, ny, 5, 2.5, 1, 4, 1, mask, labels, &nl, NULL), ==,
                   SKY_OK);
  g_assert_cmpint (nl, ==, 3);
  g_assert_cmpint (sky_cpu_measure (&residual, labels, nl, 1, &cat), ==, SKY_OK);
  maps = (SkyLocalMaps) { nx, bkg, rms, NULL };
  g_assert_cmpint (sky_cpu_measure_local (&img, &maps, snr, labels, 5, 0, NULL, &cat, 2), ==,
                   SKY_OK);
  for (int64_t k = 0; k < 3; k++)
    {
      int64_t npix = cat.npix[k];
      g_assert_cmpfloat_with_epsilon (cat.sum_err[k], 2 * sqrt ((double) npix), 1e-9);
      g_assert_cmpfloat (cat.peak_err[k], ==, 2);
      g_assert_cmpfloat (cat.rms[k], ==, 2);
      g_assert_cmpfloat_with_epsilon (cat.background[k], 100 + 0.5 * cat.peak_x[k], 1e-4);
    }
  /* Labels in raster order: (22, 6) first, then (9.3, 8.6), then the edge. */
  g_assert_cmpint (cat.peak_x[0], ==, 22);
  g_assert_cmpuint (cat.flags[0], ==, SKY_FLAG_BLANK | SKY_FLAG_TRUNCATED);
  g_assert_cmpuint (cat.flags[1], ==, 0);
  g_assert_cmpuint (cat.flags[2], ==, SKY_FLAG_EDGE | SKY_FLAG_TRUNCATED);
  /* The windowed centroid finds the Gaussian's centre to a small fraction
   * of a pixel. */
  g_assert_cmpfloat (fabs (cat.x_win[1] - 9.3), <, 0.02);
  g_assert_cmpfloat (fabs (cat.y_win[1] - 8.6), <, 0.02);
  sky_catalogue_clear (&cat);
  sky_image_clear (&img);
  sky_image_clear (&residual);
  g_free (bkg);
  g_free (rms);
  g_free (snr);
  g_free (pix);
  g_free (labels);
  g_free (mask);
}

static void
test_windowed_centroid_point_on_blob (void)
{
  /* A point of 40 on a blob of 15 that extends to one side: the
   * intensity-weighted centroid lands between them, the windowed one on
   * the point. */
  int64_t nx = 64, ny = 64, n = 64 * 64, nl;
  float *pix = g_new0 (float, n), *zero = g_new0 (float, n), *rms = g_new (float, n);
  int32_t *labels = g_new (int32_t, n);
  uint8_t *mask = g_new (uint8_t, n);
  SkyImage img;
  SkyCatalogue cat;
  SkyLocalMaps maps;

  add_gauss (pix, nx, ny, 30.4, 32.2, 40, 1.6);
  add_gauss (pix, nx, ny, 38, 32, 15, 7);
  for (int64_t i = 0; i < n; i++)
    rms[i] = 1;
  sky_test_image (&img, nx, ny, pix);
  g_assert_cmpint (sky_cpu_flood (pix, nx, ny, 5, 2.5, 1, 4, 1, mask, labels, &nl, NULL), ==,
                   SKY_OK);
  g_assert_cmpint (nl, ==, 1);
  g_assert_cmpint (sky_cpu_measure (&img, labels, nl, 1, &cat), ==, SKY_OK);
  maps = (SkyLocalMaps) { nx, zero, rms, NULL };
  g_assert_cmpint (sky_cpu_measure_local (&img, &maps, pix, labels, 5, 0, NULL, &cat, 1), ==,
                   SKY_OK);
  g_assert_cmpfloat (fabs (cat.x[0] - 30.4), >, 3);
  g_assert_cmpfloat (fabs (cat.x_win[0] - 30.4), <, 0.5);
  g_assert_cmpfloat (fabs (cat.y_win[0] - 32.2), <, 0.5);
  sky_catalogue_clear (&cat);
  sky_image_clear (&img);
  g_free (pix);
  g_free (zero);
  g_free (rms);
  g_free (labels);
  g_free (mask);
}

/* -------------------------------------------------------------- pipeline */

/* A sky of 529 with a gradient, deterministic noise of rms 1 and four
 * sources of 30 at `at`. */
static const double at[4][2] = { { 40, 50 }, { 200, 60 }, { 120, 130 }, { 70, 210 } };

static void
sky_level_image (SkyImage *img)
{
  int64_t nx = 256, ny = 256, n = 256 * 256;
  float *pix = g_new (float, n);
  uint64_t state = 12345;

  for (int64_t i = 0; i < n; i++)
    {
      double u1, u2;
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      u1 = ((state >> 11) + 0.5) / 9007199254740992.0;
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      u2 = ((state >> 11) + 0.5) / 9007199254740992.0;
      pix[i] = (float) (529 + 0.02 * (i % nx) + sqrt (-2 * log (u1)) * cos (2 * M_PI * u2));
    }
  for (int k = 0; k < 4; k++)
    add_gauss (pix, nx, ny, at[k][0], at[k][1], 30, 1.5);
  sky_test_image (img, nx, ny, pix);
  g_free (pix);
}

static void
test_local_runner (void)
{
  SkyImage img;
  SkyParams p;
  SkyResult direct = { 0 };
  SkyStages st = { 0 };
  SkyRunRequest req = { 0 };
  const SkyStep *steps;
  int64_t n = 256 * 256;

  sky_level_image (&img);
  sky_params_init (&p);
  p.nthreads = 2;
  g_assert_cmpint (sky_method_steps (SKY_METHOD_LOCAL, &steps), ==, 5);
  g_assert_cmpstr (sky_method_name (SKY_METHOD_LOCAL), ==, "local");
  g_assert_cmpstr (sky_step_name (steps[0]), ==, "background");
  g_assert_cmpstr (sky_step_name (steps[4]), ==, "measure");
  g_assert_cmpint (sky_cpu_run_local (&img, &p, NULL, NULL, NULL, &direct), ==, SKY_OK);

  req.image = &img;
  req.params = &p;
  req.method = SKY_METHOD_LOCAL;
  req.backend = SKY_BACKEND_CPU;
  req.until = SKY_STEP_MEASURE;
  g_assert_cmpint (sky_run (&req, &st), ==, SKY_OK);
  g_assert_cmpint (st.result.method, ==, SKY_METHOD_LOCAL);
  g_assert_cmpint (st.result.nsources, ==, direct.nsources);
  for (int64_t k = 0; k < direct.nsources; k++)
    {
      g_assert_cmpfloat (st.result.catalogue.x[k], ==, direct.catalogue.x[k]);
      g_assert_cmpfloat (st.result.catalogue.x_win[k], ==, direct.catalogue.x_win[k]);
      g_assert_cmpuint (st.result.catalogue.flags[k], ==, direct.catalogue.flags[k]);
    }
  g_assert_cmpmem (st.result.labels, n * 4, direct.labels, n * 4);
  g_assert_cmpfloat (st.result.times.ms[SKY_STEP_CLIP], ==, 0);
  g_assert_cmpfloat (st.result.times.ms[SKY_STEP_BACKGROUND], >, 0);

  /* A run that repeats it keeps nothing (the local method is computed
   * anew), and finds the same. */
  SkyStages again = { 0 };
  req.previous = &st;
  g_assert_false (sky_run_is_current (&st, &req));
  g_assert_cmpint (sky_run (&req, &again), ==, SKY_OK);
  g_assert_cmpint (again.kept, ==, SKY_STEP_NONE);
  g_assert_cmpint (again.result.nsources, ==, direct.nsources);
  sky_stages_clear (&again);
  req.previous = NULL;

  /* Given maps go through the request; both or neither. */
  sky_stages_clear (&st);
  req.background = direct.background;
  g_assert_cmpint (sky_run (&req, &st), ==, SKY_ERR_ARGUMENT);
  sky_stages_clear (&st);
  req.rms = direct.rms;
  g_assert_cmpint (sky_run (&req, &st), ==, SKY_OK);
  g_assert_cmpint (st.result.nsources, ==, direct.nsources);
  g_assert_true (st.result.background != direct.background);
  g_assert_cmpmem (st.result.background, n * 4, direct.background, n * 4);
  sky_stages_clear (&st);

  /* On the GPU: the device's run (the same sources, docs/contract.md),
   * or, where there is none, the CPU's with the reason kept. */
  req.backend = SKY_BACKEND_GPU;
  g_assert_cmpint (sky_run (&req, &st), ==, SKY_OK);
  g_assert_true (st.gpu_fault != NULL || st.has_gpu);
  g_assert_cmpint (st.result.nsources, ==, direct.nsources);
  g_assert_cmpint (st.done, ==, SKY_STEP_MEASURE);
  sky_stages_clear (&st);
  sky_result_clear (&direct);
  sky_image_clear (&img);
}

static void
test_local_sky_level (void)
{
  /* The global method sees one source covering the sky, the local one the
   * four, with the background map computed. */
  int64_t nx = 256, n = 256 * 256;
  SkyImage img;
  SkyParams p;
  SkyResult res = { 0 };

  sky_level_image (&img);
  sky_params_init (&p);
  sky_test_run_cpu (&img, &p, &res);
  g_assert_cmpint (res.nsources, <=, 1);
  sky_result_clear (&res);

  g_assert_cmpint (sky_cpu_run_local (&img, &p, NULL, NULL, NULL, &res), ==, SKY_OK);
  g_assert_cmpint (res.nsources, ==, 4);
  g_assert_nonnull (res.background);
  g_assert_nonnull (res.rms);
  g_assert_cmpfloat (fabs (res.background[128 * nx + 128] - (529 + 0.02 * 128)), <, 0.3);
  g_assert_cmpfloat (fabs (res.rms[128 * nx + 128] - 1), <, 0.15);
  for (int64_t k = 0; k < res.nsources; k++)
    {
      int found = 0;
      for (int j = 0; j < 4; j++)
        found |= fabs (res.catalogue.x[k] - at[j][0]) < 0.3
                 && fabs (res.catalogue.y[k] - at[j][1]) < 0.3;
      g_assert_true (found);
      g_assert_cmpfloat (fabs (res.catalogue.peak[k] / res.catalogue.rms[k] - 30), <, 5);
    }
  sky_result_clear (&res);

  /* Given maps are used as they are: a background of 0 leaves the sky. */
  float *zero = calloc ((size_t) n, sizeof *zero), *one = malloc ((size_t) n * sizeof *one);
  for (int64_t i = 0; i < n; i++)
    one[i] = 1;
  g_assert_cmpint (sky_cpu_run_local (&img, &p, NULL, zero, one, &res), ==, SKY_OK);
  g_assert_cmpint (res.nsources, ==, 1);
  sky_result_clear (&res);
  sky_image_clear (&img);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/flood/seed-and-area", test_flood_seed_and_area);
  g_test_add_func ("/deblend/two-peaks", test_deblend_two_peaks);
  g_test_add_func ("/deblend/bump-below-height", test_deblend_bump_below_height);
  g_test_add_func ("/deblend/raster-order", test_deblend_raster_order);
  g_test_add_func ("/measure-local/hand-made", test_measure_local_hand_made);
  g_test_add_func ("/measure-local/point-on-blob", test_windowed_centroid_point_on_blob);
  g_test_add_func ("/local/sky-level", test_local_sky_level);
  g_test_add_func ("/local/runner", test_local_runner);
  int status = g_test_run ();
  sky_islands_clear (&isl);
  return status;
}
