/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests of the background mesh and maps on hand-made data: the
 * histogram's mode against SExtractor's bin-by-bin walk written out
 * plainly, box statistics, blank boxes, the median filter, the spline on
 * constant and linear meshes, thread counts and tiles. The comparison with
 * SEP itself is tests/test-background.py. */
#include "sky-test-util.h"
#include "sky-cpu-background-private.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------- plain reference */

/* SExtractor's estimate from a histogram, walking the bins one at a time
 * exactly as its description reads (median from both ends, sums in double
 * bin by bin). The library finds the same numbers from prefix sums. */
static int
plain_histogram_mode (const int64_t *histo, int nlevels, float qzero, float qscale,
                      float box_mean, float *back, float *rms)
{
  int crowded = 0;

  const int top = nlevels - 1;
  int lcut = 0, hcut = top;
  double sig = 10.0 * top, sig1 = 1.0, mea = box_mean, med = box_mean;

  for (int n = 100; n-- && sig >= 0.1 && fabs (sig / sig1 - 1.0) > 1e-4;)
    {
      unsigned long lowsum = 0, highsum = 0, sum = 0;
      int lo = lcut, hi = hcut;
      double t;
      sig1 = sig;
      mea = sig = 0.0;
      for (int i = lcut; i <= hcut; i++)
        {
          if (lowsum < highsum)
            lowsum += (unsigned long) histo[lo++];
          else
            highsum += (unsigned long) histo[hi--];
          sum += (unsigned long) histo[i];
          mea += (double) histo[i] * i;
          sig += (double) histo[i] * i * i;
        }
      med = hi >= 0 ? hi + 0.5 + ((double) highsum - (double) lowsum)
                                     / (2.0 * (double) (histo[lo] > histo[hi] ? histo[lo]
                                                                              : histo[hi]))
                    : 0.0;
      if (sum)
        {
          mea /= (double) sum;
          sig = sig / (double) sum - mea * mea;
        }
      sig = sig > 0.0 ? sqrt (sig) : 0.0;
      t = med - 3.0 * sig;
      lcut = t > 0.0 ? (int) (t + 0.5) : 0;
      t = med + 3.0 * sig;
      hcut = t < top ? (int) (t > 0.0 ? t + 0.5 : t - 0.5) : top;
    }
  if (fabs (sig) > 0.0)
    {
      crowded = !(fabs ((mea - med) / sig) < 0.3);
      *back = (float) (crowded ? qzero + med * qscale : qzero + (2.5 * med - 1.5 * mea) * qscale);
    }
  else
    *back = (float) (qzero + mea * qscale);
  *rms = (float) (sig * qscale);
  return crowded; /* 1 where the median stood in for the mode */
}

static void
fast_histogram_mode (const int64_t *histo, int nlevels, float qzero, float qscale, float mean,
                     float *back, float *rms)
{
  SkyHistogramWork *work = g_new (SkyHistogramWork, 1);
  int32_t *h = g_new (int32_t, nlevels);
  for (int i = 0; i < nlevels; i++)
    h[i] = (int32_t) histo[i];
  sky_background_histogram_mode (h, nlevels, qzero, qscale, mean, work, back, rms);
  g_free (h);
  g_free (work);
}

/* A normal deviate (Box-Muller) from GLib's generator. */
static double
gauss (GRand *rng)
{
  double u = g_rand_double_range (rng, 1e-12, 1.0), v = g_rand_double (rng);
  return sqrt (-2.0 * log (u)) * cos (2.0 * G_PI * v);
}

static void
test_mode_matches_walk (void)
{
  GRand *rng = g_rand_new_with_seed (g_test_rand_int ());
  int crowded = 0, clean = 0;

  for (int trial = 0; trial < 3000; trial++)
    {
      int nlevels = g_rand_int_range (rng, 1, SKY_BACKGROUND_MAX_LEVELS + 1);
      int64_t *histo = g_new0 (int64_t, nlevels);
      int npix = g_rand_int_range (rng, 0, 20000);
      double centre = g_rand_double_range (rng, 0.2, 0.8) * nlevels;
      double width = g_rand_double_range (rng, 0.3, 0.2 * nlevels + 1);
      double tail = g_rand_double_range (rng, 0.0, 0.5); /* sources: a skewed tail */
      float a_back, a_rms, b_back, b_rms;

      for (int k = 0; k < npix; k++)
        {
          double x = centre + width * gauss (rng);
          if (g_rand_double (rng) < tail)
            x += fabs (gauss (rng)) * 4 * width;
          if (trial % 7 == 0)
            x = floor (x / 5) * 5; /* gaps: empty bins between full ones */
          if (x >= 0 && x < nlevels)
            histo[(int) x]++;
        }
      fast_histogram_mode (histo, nlevels, -3.5f, 0.25f, 1.0f, &a_back, &a_rms);
      if (plain_histogram_mode (histo, nlevels, -3.5f, 0.25f, 1.0f, &b_back, &b_rms))
        crowded++;
      else
        clean++;
      if (memcmp (&a_back, &b_back, sizeof a_back) != 0 || memcmp (&a_rms, &b_rms, sizeof a_rms) != 0)
        g_error ("trial %d (nlevels %d, %d pixels): mode %.9g rms %.9g, the walk gives %.9g %.9g",
                 trial, nlevels, npix, a_back, a_rms, b_back, b_rms);
      g_free (histo);
    }
  g_assert_cmpint (crowded, >, 0);
  g_assert_cmpint (clean, >, 0);
  g_rand_free (rng);
}

/* Hand-made histograms: the mode formula on a symmetric one, the median
 * where the tail makes |mean - median| >= 0.3 sigma. */
static void
test_mode_hand_made (void)
{
  int64_t histo[101] = { 0 };
  float back, rms;

  /* Symmetric about bin 50: median = mean = 50 (bin 50's centre), mode too. */
  for (int i = 40; i <= 60; i++)
    histo[i] = 11 - abs (i - 50);
  fast_histogram_mode (histo, 101, 10.0f, 0.5f, 35.0f, &back, &rms);
  g_assert_cmpfloat_with_epsilon (back, 10.0f + 50 * 0.5f, 1e-4);
  g_assert_cmpfloat (rms, >, 0.0f);

  /* Heavy tail to the right: 2.5 med - 1.5 mean would overshoot; the
   * mean is 0.3 sigma or more off the median, so the median is taken. */
  memset (histo, 0, sizeof histo);
  for (int i = 0; i < 5; i++)
    histo[i] = 200;
  for (int i = 5; i < 61; i++)
    histo[i] = 20;
  {
    float plain_back, plain_rms;
    fast_histogram_mode (histo, 101, 0.0f, 1.0f, 0.0f, &back, &rms);
    g_assert_true (plain_histogram_mode (histo, 101, 0.0f, 1.0f, 0.0f, &plain_back, &plain_rms));
    g_assert_cmpfloat (back, ==, plain_back);
    g_assert_cmpfloat (rms, ==, plain_rms);
  }

  /* One pixel value: no spread, the mean bin. */
  memset (histo, 0, sizeof histo);
  histo[0] = 500;
  fast_histogram_mode (histo, 101, 7.25f, 1.0f, 7.25f, &back, &rms);
  g_assert_cmpfloat (back, ==, 7.25f);
  g_assert_cmpfloat (rms, ==, 0.0f);
}

/* SEP's fill, literally: for every unusable box, every usable box of the
 * mesh at the least float squared distance, summed in raster order. */
static void
plain_fill (int64_t nbx, int64_t nby, const float *back, const float *rms, float *bout,
            float *rout)
{
  for (int64_t py = 0; py < nby; py++)
    for (int64_t px = 0; px < nbx; px++)
      {
        int64_t i = py * nbx + px, nmin = 0;
        float d2min = 1e30f, val = 0.0f, sval = 0.0f;
        bout[i] = back[i];
        rout[i] = rms[i];
        if ((double) back[i] > -1e30)
          continue;
        for (int64_t y = 0; y < nby; y++)
          for (int64_t x = 0; x < nbx; x++)
            if ((double) back[y * nbx + x] > -1e30)
              {
                float d2 = (float) (x - px) * (float) (x - px) + (float) ((y - py) * (y - py));
                if (d2 < d2min)
                  {
                    val = back[y * nbx + x];
                    sval = rms[y * nbx + x];
                    nmin = 1;
                    d2min = d2;
                  }
                else if (d2 == d2min)
                  {
                    val += back[y * nbx + x];
                    sval += rms[y * nbx + x];
                    nmin++;
                  }
              }
        bout[i] = nmin ? val / (float) nmin : 0.0f;
        rout[i] = nmin ? sval / (float) nmin : 1.0f;
      }
}

/* The fill from a distance transform against SEP's search over the whole
 * mesh, on random meshes: scattered unusable boxes, large blank blocks,
 * single usable boxes, none at all. */
static void
test_fill_matches_sep_search (void)
{
  GRand *rng = g_rand_new_with_seed (g_test_rand_int ());
  SkyParams p;

  sky_params_init (&p);
  p.bkg_box = 4;
  for (int trial = 0; trial < 400; trial++)
    {
      SkyBackgroundMesh m;
      int64_t nbx = g_rand_int_range (rng, 1, 45), nby = g_rand_int_range (rng, 1, 45), nb;
      double density = g_rand_double_range (rng, 0.0, 1.0);
      float *b1, *r1, *b2, *r2;

      g_assert_cmpint (sky_background_mesh_init (&m, nbx * 4, nby * 4, &p), ==, SKY_OK);
      nb = nbx * nby;
      for (int64_t i = 0; i < nb; i++)
        {
          int bad = g_rand_double (rng) < density;
          m.back[i] = bad ? -1e30f : (float) g_rand_double_range (rng, -5, 5);
          m.rms[i] = bad ? -1e30f : (float) g_rand_double_range (rng, 0.1, 3);
        }
      if (trial % 3 == 0) /* a large blank block */
        for (int64_t y = nby / 4; y < nby; y++)
          for (int64_t x = 0; x < 3 * nbx / 4; x++)
            m.back[y * nbx + x] = m.rms[y * nbx + x] = -1e30f;
      if (trial % 5 == 0) /* only one usable box */
        {
          for (int64_t i = 0; i < nb; i++)
            m.back[i] = m.rms[i] = -1e30f;
          m.back[g_rand_int_range (rng, 0, (int) nb)] = 1.5f;
        }
      b1 = g_new (float, nb);
      r1 = g_new (float, nb);
      b2 = g_new (float, nb);
      r2 = g_new (float, nb);
      g_assert_cmpint (sky_background_fill_bad (&m, b1, r1), ==, SKY_OK);
      plain_fill (nbx, nby, m.back, m.rms, b2, r2);
      g_assert_cmpmem (b1, nb * sizeof (float), b2, nb * sizeof (float));
      g_assert_cmpmem (r1, nb * sizeof (float), r2, nb * sizeof (float));
      g_free (b1);
      g_free (r1);
      g_free (b2);
      g_free (r2);
      sky_background_mesh_clear (&m);
    }
  g_rand_free (rng);
}

/* ------------------------------------------------------------- the maps */

static void
maps (const SkyImage *img, int box, int filter, int nthreads, float **back, float **rms)
{
  SkyParams p;
  sky_params_init (&p);
  p.bkg_box = box;
  p.bkg_filter = filter;
  *back = g_new (float, img->nx * img->ny);
  *rms = g_new (float, img->nx * img->ny);
  if (sky_cpu_background (img, &p, nthreads, *back, *rms) != SKY_OK)
    g_error ("background failed: %s", sky_last_error ());
}

/* A constant image: every box is that value with no spread, and the
 * spline through a constant mesh is the constant, to float rounding: SEP
 * weighs the two nodes as (1 - t) a + t a in float, and so does skysift. */
static void
test_constant_image (void)
{
  SkyImage img;
  float *back, *rms;

  sky_test_image (&img, 150, 97, NULL);
  for (int64_t i = 0; i < img.nx * img.ny; i++)
    img.pixels[i] = 12.5f;
  maps (&img, 32, 3, 2, &back, &rms);
  for (int64_t i = 0; i < img.nx * img.ny; i++)
    {
      g_assert_cmpfloat_with_epsilon (back[i], 12.5f, 12.5f * 4 * FLT_EPSILON);
      g_assert_cmpfloat (rms[i], ==, 0.0f);
    }
  g_free (back);
  g_free (rms);
  sky_image_clear (&img);
}

/* One box on its own (the image is the box, so the maps are its values):
 * symmetric data give their centre; Gaussian noise with bright outliers
 * gives the noise's mean and sigma, the outliers clipped away. */
static void
test_box_statistics (void)
{
  GRand *rng = g_rand_new_with_seed (20261124);
  SkyImage img;
  SkyParams p;
  SkyBackgroundMesh m;

  sky_params_init (&p);
  sky_test_image (&img, 64, 64, NULL);
  for (int64_t y = 0; y < 64; y++)
    for (int64_t x = 0; x < 64; x++)
      img.pixels[y * 64 + x] = (float) (7.0 + 0.01 * (x - 31.5) + 0.01 * (y - 31.5));
  g_assert_cmpint (sky_cpu_background_mesh (&img, &p, 1, &m), ==, SKY_OK);
  g_assert_cmpfloat_with_epsilon (m.back[0], 7.0f, 1e-3);
  /* A triangular distribution, nothing beyond 3 sigma: sigma itself,
   * 0.01 sqrt (2 (64^2 - 1) / 12). */
  g_assert_cmpfloat_with_epsilon (m.rms[0], 0.01 * sqrt (2 * (64.0 * 64.0 - 1) / 12), 0.003);
  sky_background_mesh_clear (&m);

  for (int64_t i = 0; i < 64 * 64; i++)
    img.pixels[i] = (float) (3.0 + 2.0 * gauss (rng));
  for (int k = 0; k < 200; k++)   /* 5% of the pixels far above the noise */
    img.pixels[g_rand_int_range (rng, 0, 64 * 64)] = (float) (3.0 + 2.0 * (8 + 20 * g_rand_double (rng)));
  g_assert_cmpint (sky_cpu_background_mesh (&img, &p, 1, &m), ==, SKY_OK);
  g_assert_cmpfloat_with_epsilon (m.back[0], 3.0f, 0.15f);  /* 0.075 sigma */
  g_assert_cmpfloat_with_epsilon (m.rms[0], 2.0f, 0.12f);   /* 6% */
  g_assert_cmpint (m.nbad, ==, 0);
  sky_background_mesh_clear (&m);
  sky_image_clear (&img);
  g_rand_free (rng);
}

/* A linear mesh: the natural spline's curvature is zero, the median
 * filter keeps it (a centred window on a plane), and the maps are the
 * plane through the nodes, extrapolated past the outer ones. The nodes sit
 * where SEP puts them: (k + 1/2) box - 1/2 across, (k + 1/2) box down. */
static void
test_spline_linear_mesh (void)
{
  SkyParams p;
  SkyBackgroundMesh m;
  const int64_t nx = 300, ny = 170;
  const int box = 40;
  float *back = g_new (float, nx * ny), *rms = g_new (float, nx * ny);

  sky_params_init (&p);
  p.bkg_box = box;
  g_assert_cmpint (sky_background_mesh_init (&m, nx, ny, &p), ==, SKY_OK);
  g_assert_cmpint (m.nbx, ==, 8);
  g_assert_cmpint (m.nby, ==, 5);
  for (int64_t by = 0; by < m.nby; by++)
    for (int64_t bx = 0; bx < m.nbx; bx++)
      {
        m.back[by * m.nbx + bx] = 100.0f + 2.0f * bx - 3.0f * by;
        m.rms[by * m.nbx + bx] = 5.0f + 0.5f * bx + 0.25f * by;
      }
  g_assert_cmpint (sky_background_mesh_finish (&m, 2), ==, SKY_OK);
  g_assert_cmpint (sky_cpu_background_rows (&m, 0, ny, 3, back, rms), ==, SKY_OK);
  for (int64_t y = 0; y < ny; y++)
    for (int64_t x = 0; x < nx; x++)
      {
        double u = (x - (box - 1) / 2.0) / box, v = (y - box / 2.0) / box;
        g_assert_cmpfloat_with_epsilon (back[y * nx + x], 100.0 + 2.0 * u - 3.0 * v, 1e-4);
        g_assert_cmpfloat_with_epsilon (rms[y * nx + x], 5.0 + 0.5 * u + 0.25 * v, 1e-4);
      }
  sky_background_mesh_clear (&m);
  g_free (back);
  g_free (rms);
}

/* Boxes of distinct constants, one of them blank: the blank box takes the
 * mean of its four nearest neighbours; a box half blank still counts, one
 * more than half blank does not; every pixel of the maps is finite. */
static void
test_blank_boxes (void)
{
  SkyImage img;
  SkyParams p;
  SkyBackgroundMesh m;
  const int box = 10;
  float *back, *rms;

  sky_test_image (&img, 40, 30, NULL);
  for (int64_t y = 0; y < img.ny; y++)
    for (int64_t x = 0; x < img.nx; x++)
      img.pixels[y * img.nx + x] = (float) (10 * (y / box) + x / box);
  for (int64_t y = 10; y < 20; y++)
    for (int64_t x = 10; x < 20; x++)
      img.pixels[y * img.nx + x] = NAN;               /* box (1, 1): all blank */
  for (int64_t y = 0; y < 5; y++)
    for (int64_t x = 30; x < 40; x++)
      img.pixels[y * img.nx + x] = NAN;               /* box (3, 0): half blank */
  for (int64_t y = 20; y < 26; y++)
    for (int64_t x = 30; x < 40; x++)
      img.pixels[y * img.nx + x] = NAN;               /* box (3, 2): 60% blank */
  sky_image_count_blanks (&img);

  sky_params_init (&p);
  p.bkg_box = box;
  p.bkg_filter = 1;
  g_assert_cmpint (sky_cpu_background_mesh (&img, &p, 2, &m), ==, SKY_OK);
  g_assert_cmpint (m.nbad, ==, 2);
  g_assert_cmpfloat (m.back[1 * 4 + 1], ==, (1.0f + 21.0f + 10.0f + 12.0f) / 4.0f);
  g_assert_cmpfloat (m.back[0 * 4 + 3], ==, 3.0f);
  /* (3, 2)'s nearest usable boxes: (2, 2) and (3, 1). */
  g_assert_cmpfloat (m.back[2 * 4 + 3], ==, (22.0f + 13.0f) / 2.0f);
  g_assert_cmpfloat (m.rms[1 * 4 + 1], ==, 0.0f);
  sky_background_mesh_clear (&m);

  maps (&img, box, 3, 1, &back, &rms);
  for (int64_t i = 0; i < img.nx * img.ny; i++)
    g_assert_true (isfinite (back[i]) && isfinite (rms[i]));
  g_free (back);
  g_free (rms);

  /* Nothing usable at all: background 0 and rms 1, as SEP. */
  for (int64_t i = 0; i < img.nx * img.ny; i++)
    img.pixels[i] = NAN;
  sky_image_count_blanks (&img);
  maps (&img, box, 3, 1, &back, &rms);
  for (int64_t i = 0; i < img.nx * img.ny; i++)
    {
      g_assert_cmpfloat (back[i], ==, 0.0f);
      g_assert_cmpfloat_with_epsilon (rms[i], 1.0f, 4 * FLT_EPSILON);
    }
  g_free (back);
  g_free (rms);
  sky_image_clear (&img);
}

/* The median filter: one outlying box among equal ones is replaced by
 * the median of its 3 x 3 window; a corner box keeps its own value (the
 * window shrinks to stay centred). */
static void
test_median_filter (void)
{
  SkyParams p;
  SkyBackgroundMesh m;

  sky_params_init (&p);
  p.bkg_box = 8;
  g_assert_cmpint (sky_background_mesh_init (&m, 40, 40, &p), ==, SKY_OK);
  for (int i = 0; i < 25; i++)
    {
      m.back[i] = 1.0f;
      m.rms[i] = 2.0f;
    }
  m.back[2 * 5 + 2] = 50.0f;   /* a bright source in the middle box */
  m.rms[2 * 5 + 2] = 9.0f;
  m.back[0] = -4.0f;           /* a corner */
  g_assert_cmpint (sky_background_mesh_finish (&m, 2), ==, SKY_OK);
  g_assert_cmpfloat (m.back[2 * 5 + 2], ==, 1.0f);
  g_assert_cmpfloat (m.rms[2 * 5 + 2], ==, 2.0f);
  g_assert_cmpfloat (m.back[0], ==, -4.0f);
  g_assert_cmpfloat (m.back[1], ==, 1.0f); /* top edge: median of -4, 1, 1 */
  g_assert_cmpfloat (m.global_back, ==, 1.0f);
  g_assert_cmpfloat (m.global_rms, ==, 2.0f);
  sky_background_mesh_clear (&m);
}

/* A noisy field with a gradient and sources: the maps do not depend on the
 * thread count, and a run in tiles (box rows one by one, the maps in bands
 * of rows) is the whole-image run to the bit. */
/* The interpolator on random rows and column ranges, among them single
 * columns and whole rows, gives the whole maps' floats exactly. */
static void
check_interpolator (const SkyBackgroundMesh *m, const float *back, const float *rms,
                    GRand *rng)
{
  SkyBackgroundInterp bi;
  float *b = g_new (float, m->nx), *r = g_new (float, m->nx);

  g_assert_cmpint (sky_background_interp_init (&bi, m), ==, SKY_OK);
  for (int k = 0; k < 300; k++)
    {
      int64_t y = g_rand_int_range (rng, 0, (int) m->ny);
      int64_t x0 = g_rand_int_range (rng, 0, (int) m->nx);
      int64_t x1 = k % 3 == 0 ? x0 + 1 : g_rand_int_range (rng, (int) x0 + 1, (int) m->nx + 1);
      if (k % 10 == 0)
        x0 = 0, x1 = m->nx;
      sky_background_interp_row (&bi, y, x0, x1, b, k % 5 == 0 ? NULL : r);
      g_assert_cmpmem (b, (x1 - x0) * sizeof (float), back + y * m->nx + x0,
                       (x1 - x0) * sizeof (float));
      if (k % 5 != 0)
        g_assert_cmpmem (r, (x1 - x0) * sizeof (float), rms + y * m->nx + x0,
                         (x1 - x0) * sizeof (float));
    }
  sky_background_interp_clear (&bi);
  g_free (b);
  g_free (r);
}

static void
test_threads_and_tiles (void)
{
  GRand *rng = g_rand_new_with_seed (g_test_rand_int ());
  SkyImage img;
  SkyParams p;
  SkyBackgroundMesh m;
  const int box = 24;
  float *back1, *rms1, *back, *rms;

  sky_test_image (&img, 203, 157, NULL);
  for (int64_t y = 0; y < img.ny; y++)
    for (int64_t x = 0; x < img.nx; x++)
      img.pixels[y * img.nx + x] = (float) (5.0 + 0.02 * x - 0.01 * y + gauss (rng));
  for (int s = 0; s < 40; s++)
    {
      int64_t cx = g_rand_int_range (rng, 0, (int) img.nx), cy = g_rand_int_range (rng, 0, (int) img.ny);
      for (int64_t y = cy - 3; y <= cy + 3; y++)
        for (int64_t x = cx - 3; x <= cx + 3; x++)
          if (x >= 0 && y >= 0 && x < img.nx && y < img.ny)
            img.pixels[y * img.nx + x] += 30.0f * expf (-(float) ((x - cx) * (x - cx) + (y - cy) * (y - cy)) / 4.0f);
    }
  for (int k = 0; k < 500; k++)
    img.pixels[g_rand_int_range (rng, 0, (int) (img.nx * img.ny))] = NAN;
  sky_image_count_blanks (&img);

  maps (&img, box, 3, 1, &back1, &rms1);
  for (int t = 2; t <= 7; t += 5)
    {
      maps (&img, box, 3, t, &back, &rms);
      g_assert_cmpmem (back, img.nx * img.ny * sizeof (float), back1, img.nx * img.ny * sizeof (float));
      g_assert_cmpmem (rms, img.nx * img.ny * sizeof (float), rms1, img.nx * img.ny * sizeof (float));
      g_free (back);
      g_free (rms);
    }

  /* Tiles: each row of boxes from a copy of just its own rows. */
  sky_params_init (&p);
  p.bkg_box = box;
  g_assert_cmpint (sky_background_mesh_init (&m, img.nx, img.ny, &p), ==, SKY_OK);
  for (int64_t by = m.nby - 1; by >= 0; by--)
    {
      int64_t y0 = by * box, h = MIN (box, img.ny - y0);
      float *band = g_new (float, h * img.nx);
      memcpy (band, img.pixels + y0 * img.nx, (size_t) (h * img.nx) * sizeof (float));
      sky_cpu_background_box_row (&m, by, band);
      g_free (band);
    }
  g_assert_cmpint (sky_background_mesh_finish (&m, 2), ==, SKY_OK);
  back = g_new (float, img.nx * img.ny);
  rms = g_new (float, img.nx * img.ny);
  for (int64_t y0 = 0; y0 < img.ny; y0 += 37)
    {
      int64_t n = MIN (37, img.ny - y0);
      g_assert_cmpint (sky_cpu_background_rows (&m, y0, n, 2, back + y0 * img.nx, rms + y0 * img.nx), ==, SKY_OK);
    }
  g_assert_cmpmem (back, img.nx * img.ny * sizeof (float), back1, img.nx * img.ny * sizeof (float));
  g_assert_cmpmem (rms, img.nx * img.ny * sizeof (float), rms1, img.nx * img.ny * sizeof (float));
  g_assert_cmpint (sky_cpu_background_rows (&m, 150, 8, 1, back, rms), ==, SKY_ERR_ARGUMENT);
  check_interpolator (&m, back1, rms1, rng);

  sky_background_mesh_clear (&m);
  g_free (back);
  g_free (rms);
  g_free (back1);
  g_free (rms1);
  sky_image_clear (&img);
  g_rand_free (rng);
}

/* Images smaller than a box, one box high, one box wide: finite maps and
 * the documented special cases (one row of boxes is linear along x). */
static void
test_small_shapes (void)
{
  static const int64_t shapes[][2] = { { 1, 1 }, { 7, 3 }, { 130, 20 }, { 20, 130 }, { 65, 65 } };
  GRand *rng = g_rand_new_with_seed (g_test_rand_int ());

  for (size_t s = 0; s < G_N_ELEMENTS (shapes); s++)
    {
      SkyImage img;
      float *back, *rms;
      sky_test_image (&img, shapes[s][0], shapes[s][1], NULL);
      for (int64_t i = 0; i < img.nx * img.ny; i++)
        img.pixels[i] = (float) (3.0 + 0.01 * (i % img.nx) + gauss (rng));
      maps (&img, 32, 3, 2, &back, &rms);
      for (int64_t i = 0; i < img.nx * img.ny; i++)
        g_assert_true (isfinite (back[i]) && isfinite (rms[i]));
      SkyParams p;
      SkyBackgroundMesh m;
      sky_params_init (&p);
      p.bkg_box = 32;
      p.bkg_filter = 3;
      g_assert_cmpint (sky_cpu_background_mesh (&img, &p, 1, &m), ==, SKY_OK);
      check_interpolator (&m, back, rms, rng);
      sky_background_mesh_clear (&m);
      g_free (back);
      g_free (rms);
      sky_image_clear (&img);
    }
  g_rand_free (rng);
}

static void
test_params_checked (void)
{
  SkyParams p;
  SkyImage img;
  float v = 1.0f;

  sky_test_image (&img, 1, 1, &v);
  sky_params_init (&p);
  g_assert_cmpint (p.bkg_box, ==, 64);
  g_assert_cmpint (p.bkg_filter, ==, 3);
  p.bkg_filter = 4;
  g_assert_cmpint (sky_cpu_background (&img, &p, 1, &v, &v), ==, SKY_ERR_ARGUMENT);
  g_assert_nonnull (strstr (sky_last_error (), "filter"));
  p.bkg_filter = 3;
  p.bkg_box = 0;
  g_assert_cmpint (sky_params_check (&p), ==, SKY_ERR_ARGUMENT);
  g_assert_nonnull (strstr (sky_last_error (), "box"));
  sky_image_clear (&img);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/background/mode/matches-sextractor-walk", test_mode_matches_walk);
  g_test_add_func ("/background/mode/hand-made", test_mode_hand_made);
  g_test_add_func ("/background/constant-image", test_constant_image);
  g_test_add_func ("/background/box-statistics", test_box_statistics);
  g_test_add_func ("/background/spline/linear-mesh", test_spline_linear_mesh);
  g_test_add_func ("/background/blank-boxes", test_blank_boxes);
  g_test_add_func ("/background/fill/matches-sep-search", test_fill_matches_sep_search);
  g_test_add_func ("/background/median-filter", test_median_filter);
  g_test_add_func ("/background/threads-and-tiles", test_threads_and_tiles);
  g_test_add_func ("/background/small-shapes", test_small_shapes);
  g_test_add_func ("/background/params-checked", test_params_checked);
  return g_test_run ();
}
