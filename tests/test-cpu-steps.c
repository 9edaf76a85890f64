/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests of the four CPU steps on small hand-made images, and of the
 * fast implementations against plain, obviously correct ones on random
 * fields (single and several threads, several band counts). The random
 * fields change with every run; `--seed` replays the one GTest reports. */
#include "sky-test-util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------ plain references */

static int
compare_floats (const void *a, const void *b)
{
  float x = *(const float *) a, y = *(const float *) b;
  return (x > y) - (x < y);
}

/* The lesson's loop, literally: sort for the median, two-pass sigma. */
static void
naive_clip (const float *pixels, int64_t n, double kappa, SkyClipStats *out)
{
  float *cur = g_new (float, n > 0 ? n : 1), *next = g_new (float, n > 0 ? n : 1);
  int64_t m = 0;

  memset (out, 0, sizeof *out);
  for (int64_t i = 0; i < n; i++)
    if (!isnan (pixels[i]))
      cur[m++] = pixels[i];
  out->ninput = m;
  for (;;)
    {
      double sum = 0, ss = 0, median, sigma, lo, hi;
      int64_t k = 0;
      qsort (cur, (size_t) m, sizeof *cur, compare_floats);
      median = m % 2 ? cur[m / 2] : 0.5 * ((double) cur[m / 2 - 1] + cur[m / 2]);
      for (int64_t i = 0; i < m; i++)
        sum += cur[i];
      for (int64_t i = 0; i < m; i++)
        ss += (cur[i] - sum / m) * (cur[i] - sum / m);
      sigma = sqrt (ss / m);
      out->iterations++;
      out->median = median;
      out->sigma = sigma;
      out->n = m;
      lo = median - kappa * sigma;
      hi = median + kappa * sigma;
      for (int64_t i = 0; i < m; i++)
        if (cur[i] > lo && cur[i] < hi)
          next[k++] = cur[i];
      if (k == m)
        break;
      if (k == 0)
        {
          out->flat = 1;
          break;
        }
      memcpy (cur, next, (size_t) k * sizeof *cur);
      m = k;
    }
  g_free (cur);
  g_free (next);
}

/* Flood fill in raster order: components numbered by their first pixel. */
static int64_t
naive_label (const uint8_t *mask, int64_t nx, int64_t ny, int conn, int32_t *labels)
{
  int64_t *stack = g_new (int64_t, nx * ny + 1), count = 0;

  memset (labels, 0, (size_t) (nx * ny) * sizeof *labels);
  for (int64_t start = 0; start < nx * ny; start++)
    {
      int64_t top = 0;
      if (!mask[start] || labels[start])
        continue;
      labels[start] = (int32_t) ++count;
      stack[top++] = start;
      while (top > 0)
        {
          int64_t p = stack[--top], x = p % nx, y = p / nx;
          for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++)
              {
                int64_t qx = x + dx, qy = y + dy, q;
                if ((dx == 0 && dy == 0) || (conn == 4 && dx != 0 && dy != 0))
                  continue;
                if (qx < 0 || qy < 0 || qx >= nx || qy >= ny)
                  continue;
                q = qy * nx + qx;
                if (mask[q] && !labels[q])
                  {
                    labels[q] = (int32_t) count;
                    stack[top++] = q;
                  }
              }
        }
    }
  g_free (stack);
  return count;
}

/* Breadth-first search with an explicit queue, seeded column by column (a
 * different order from the labeller's), then renumbered by each
 * component's first pixel in raster order: the numbering scipy gives. */
static int64_t
bfs_label (const uint8_t *mask, int64_t nx, int64_t ny, int conn, int32_t *labels)
{
  int64_t *queue = g_new (int64_t, nx * ny + 1), count = 0, next = 0;
  int32_t *renumber;

  memset (labels, 0, (size_t) (nx * ny) * sizeof *labels);
  for (int64_t sx = 0; sx < nx; sx++)
    for (int64_t sy = 0; sy < ny; sy++)
      {
        int64_t head = 0, tail = 0;
        if (!mask[sy * nx + sx] || labels[sy * nx + sx])
          continue;
        labels[sy * nx + sx] = (int32_t) ++count;
        queue[tail++] = sy * nx + sx;
        while (head < tail)
          {
            int64_t p = queue[head++], x = p % nx, y = p / nx;
            for (int dy = -1; dy <= 1; dy++)
              for (int dx = -1; dx <= 1; dx++)
                {
                  int64_t qx = x + dx, qy = y + dy, q = qy * nx + qx;
                  if ((dx == 0 && dy == 0) || (conn == 4 && dx != 0 && dy != 0)
                      || qx < 0 || qy < 0 || qx >= nx || qy >= ny)
                    continue;
                  if (mask[q] && !labels[q])
                    {
                      labels[q] = (int32_t) count;
                      queue[tail++] = q;
                    }
                }
          }
      }
  renumber = g_new0 (int32_t, count + 1);
  for (int64_t i = 0; i < nx * ny; i++)
    if (labels[i])
      {
        if (renumber[labels[i]] == 0)
          renumber[labels[i]] = (int32_t) ++next;
        labels[i] = renumber[labels[i]];
      }
  g_free (renumber);
  g_free (queue);
  return count;
}

/* ------------------------------------------------------------------- clip */

static void
assert_clip_equal (const SkyClipStats *got, const SkyClipStats *want)
{
  g_assert_cmpint (got->flat, ==, want->flat);
  g_assert_cmpint (got->n, ==, want->n);
  g_assert_cmpint (got->iterations, ==, want->iterations);
  g_assert_cmpint (got->ninput, ==, want->ninput);
  g_assert_cmpfloat_with_epsilon (got->median, want->median,
                                  1e-12 + 1e-9 * fabs (want->median));
  g_assert_cmpfloat_with_epsilon (got->sigma, want->sigma, 1e-12 + 1e-9 * want->sigma);
}

static void
test_clip_hand_made (void)
{
  /* 1..9 and one outlier: the outlier goes in the first pass, then the
   * remaining nine are all within 3 sigma. */
  float v[10] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 1000 };
  SkyImage img;
  SkyParams p;
  SkyClipStats s;

  sky_params_init (&p);
  sky_test_image (&img, 10, 1, v);
  g_assert_cmpint (sky_cpu_clip (&img, &p, &s), ==, SKY_OK);
  g_assert_cmpint (s.n, ==, 9);
  g_assert_cmpint (s.iterations, ==, 2);
  g_assert_true (s.converged);
  g_assert_false (s.flat);
  g_assert_cmpfloat (s.median, ==, 5.0);
  g_assert_cmpfloat_with_epsilon (s.sigma, sqrt (60.0 / 9.0), 1e-12);
  g_assert_cmpfloat_with_epsilon (s.mean, 5.0, 1e-12);
  sky_image_clear (&img);
}

static void
test_clip_blanks_take_no_part (void)
{
  float v[6] = { NAN, 1, 2, NAN, 3, 4 };
  SkyImage img;
  SkyParams p;
  SkyClipStats s;

  sky_params_init (&p);
  sky_test_image (&img, 3, 2, v);
  g_assert_cmpint (img.nblank, ==, 2);
  g_assert_cmpint (sky_cpu_clip (&img, &p, &s), ==, SKY_OK);
  g_assert_cmpint (s.ninput, ==, 4);
  g_assert_cmpint (s.n, ==, 4);
  g_assert_cmpfloat (s.median, ==, 2.5);
  sky_image_clear (&img);
}

static void
test_clip_flat_image (void)
{
  SkyImage img;
  SkyParams p;
  SkyResult res = { 0 };

  sky_params_init (&p);
  sky_test_image (&img, 7, 5, NULL);
  for (int i = 0; i < 35; i++)
    img.pixels[i] = 2.5f;
  sky_test_run_cpu (&img, &p, &res);
  g_assert_true (res.stats.flat);
  g_assert_cmpfloat (res.stats.median, ==, 2.5);
  g_assert_cmpfloat (res.stats.sigma, ==, 0.0);
  g_assert_true (isnan (res.threshold_value));
  g_assert_cmpint (res.nsources, ==, 0);
  for (int i = 0; i < 35; i++)
    g_assert_cmpint (res.mask[i], ==, 0);
  sky_result_clear (&res);
  sky_image_clear (&img);
}

static void
test_clip_all_blank_is_an_error (void)
{
  float v[4] = { NAN, NAN, NAN, NAN };
  SkyImage img;
  SkyParams p;
  SkyClipStats s;

  sky_params_init (&p);
  sky_test_image (&img, 2, 2, v);
  g_assert_cmpint (sky_cpu_clip (&img, &p, &s), ==, SKY_ERR_EMPTY);
  sky_image_clear (&img);
}

static void
test_clip_iteration_cap (void)
{
  float v[10] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 1000 };
  SkyImage img;
  SkyParams p;
  SkyClipStats s;

  sky_params_init (&p);
  p.max_iter = 1;
  sky_test_image (&img, 10, 1, v);
  g_assert_cmpint (sky_cpu_clip (&img, &p, &s), ==, SKY_OK);
  g_assert_cmpint (s.iterations, ==, 1);
  g_assert_false (s.converged);
  g_assert_cmpint (s.n, ==, 10); /* the statistics of the set they describe */
  g_assert_cmpfloat (s.median, ==, 5.5);
  sky_image_clear (&img);
}

/* A pixel source over an image in memory, as a file would give it. */
static int
read_from_image (void *ctx, int64_t first, int64_t n, int nthreads, float *out, int64_t *ninf)
{
  const SkyImage *img = ctx;

  (void) nthreads;
  (void) ninf;
  memcpy (out, img->pixels + first, (size_t) n * sizeof *out);
  return SKY_OK;
}

/* sky_cpu_clip_source (which counts buckets rather than fetching them)
 * gives sky_cpu_clip's statistics bit for bit, read a few pixels at a time. */
static void
assert_clip_source_same (const SkyImage *img, const SkyParams *p, const SkyClipStats *want)
{
  SkyPixelSource src = { img->nx, img->ny, read_from_image, (void *) img, 997 };
  SkyClipStats got;

  g_assert_cmpint (sky_cpu_clip_source (&src, p, &got), ==, SKY_OK);
  g_assert_cmpint (got.iterations, ==, want->iterations);
  g_assert_cmpint (got.n, ==, want->n);
  g_assert_cmpint (got.ninput, ==, want->ninput);
  g_assert_cmpint (got.converged, ==, want->converged);
  g_assert_cmpint (got.flat, ==, want->flat);
  g_assert_true (memcmp (&got.median, &want->median, sizeof got.median) == 0);
  g_assert_true (memcmp (&got.sigma, &want->sigma, sizeof got.sigma) == 0);
  g_assert_true (memcmp (&got.mean, &want->mean, sizeof got.mean) == 0);
}

/* Random fields of several shapes against the lesson's literal loop, and
 * the clip from a pixel source against the clip in memory. */
static void
test_clip_matches_naive (void)
{
  GRand *rng = g_rand_new_with_seed (g_test_rand_int ());
  const int sizes[][2] = { { 1, 1 }, { 3, 1 }, { 17, 13 }, { 300, 301 }, { 700, 650 } };

  for (unsigned s = 0; s < G_N_ELEMENTS (sizes); s++)
    for (int kind = 0; kind < 7; kind++)
      for (int threads = 1; threads <= 3; threads += 2)
        {
          int64_t nx = sizes[s][0], ny = sizes[s][1], n = nx * ny;
          SkyImage img;
          SkyParams p;
          SkyClipStats got, want;

          sky_test_image (&img, nx, ny, NULL);
          for (int64_t i = 0; i < n; i++)
            {
              double g = 0;
              for (int k = 0; k < 4; k++)
                g += g_rand_double (rng) - 0.5;
              switch (kind)
                {
                case 0: img.pixels[i] = (float) g; break;                       /* noise */
                case 1: img.pixels[i] = (float) (g + (i % 97 == 0 ? 50 : 0)); break; /* sources */
                case 2: img.pixels[i] = (float) g_rand_int_range (rng, -3, 4); break; /* ties */
                case 3: img.pixels[i] = (float) (6000 + 30 * g); break;          /* offset */
                case 4: img.pixels[i] = i % 5 == 0 ? NAN : (float) (1e-6 * g); break;
                case 5: img.pixels[i] = (float) (g_rand_boolean (rng) ? -0.0 : 0.0)
                           + (i % 7 == 0 ? (float) g : 0.0f); break;    /* signed zeros */
                default: img.pixels[i] = 0.1f * (float) g_rand_int_range (rng, -40, 41)
                           + (i % 11 == 0 ? (float) g : 0.0f); break;   /* inexact ties */
                }
            }
          if (n == 1 && kind == 4)
            img.pixels[0] = 1.0f;
          sky_image_count_blanks (&img);
          sky_params_init (&p);
          p.nthreads = threads;
          if (kind == 2)
            p.clip_kappa = 1.5;
          g_assert_cmpint (sky_cpu_clip (&img, &p, &got), ==, SKY_OK);
          assert_clip_source_same (&img, &p, &got);
          naive_clip (img.pixels, n, p.clip_kappa, &want);
          assert_clip_equal (&got, &want);
          sky_image_clear (&img);
        }
  g_rand_free (rng);
}

/* ---------------------------------------------------------------- segment */

static void
test_segment_is_strict_and_exact (void)
{
  /* 0.1 is not a float: the float nearest 0.1 lies above it and counts;
   * a pixel exactly at a float threshold does not. */
  float v[6] = { 0.1f, nextafterf (0.1f, 0), 0.5f, NAN, -1.0f, 0.25f };
  uint8_t mask[6];
  SkyImage img;

  sky_test_image (&img, 6, 1, v);
  g_assert_cmpint (sky_cpu_segment (&img, 0.1, 1, mask), ==, SKY_OK);
  g_assert_cmpint (mask[0], ==, 1);
  g_assert_cmpint (mask[1], ==, 0);
  g_assert_cmpint (mask[2], ==, 1);
  g_assert_cmpint (mask[3], ==, 0);
  g_assert_cmpint (mask[4], ==, 0);
  g_assert_cmpint (sky_cpu_segment (&img, 0.25, 1, mask), ==, SKY_OK);
  g_assert_cmpint (mask[5], ==, 0);
  g_assert_cmpint (sky_cpu_segment (&img, NAN, 1, mask), ==, SKY_OK);
  for (int i = 0; i < 6; i++)
    g_assert_cmpint (mask[i], ==, 0);
  sky_image_clear (&img);
}

static void
test_segment_relative_threshold (void)
{
  SkyParams p;
  SkyClipStats s = { .median = 10, .sigma = 2, .n = 5 };

  sky_params_init (&p);
  g_assert_cmpfloat (sky_threshold_value (&p, &s), ==, 10.0);
  p.relative = 1;
  g_assert_cmpfloat (sky_threshold_value (&p, &s), ==, 20.0);
  s.flat = 1;
  g_assert_true (isnan (sky_threshold_value (&p, &s)));
}

/* ------------------------------------------------------------------ label */

static int64_t
label_of (const char *rows[], int64_t nx, int64_t ny, int conn, int32_t *labels)
{
  uint8_t *mask = g_new (uint8_t, nx * ny);
  int64_t n;

  for (int64_t y = 0; y < ny; y++)
    for (int64_t x = 0; x < nx; x++)
      mask[y * nx + x] = rows[y][x] == '#';
  g_assert_cmpint (sky_cpu_label (mask, nx, ny, conn, 1, labels, &n), ==, SKY_OK);
  g_free (mask);
  return n;
}

static void
test_label_staircase_4_vs_8 (void)
{
  const char *rows[] = { "#....", ".#...", "..#..", "...#.", "....#" };
  int32_t labels[25];

  g_assert_cmpint (label_of (rows, 5, 5, 4, labels), ==, 5);
  for (int i = 0; i < 5; i++)
    g_assert_cmpint (labels[i * 5 + i], ==, i + 1);
  g_assert_cmpint (label_of (rows, 5, 5, 8, labels), ==, 1);
  for (int i = 0; i < 5; i++)
    g_assert_cmpint (labels[i * 5 + i], ==, 1);
}

static void
test_label_raster_order (void)
{
  /* The U's arms start two ids; the one on the right joins later. The small
   * source at row 1 starts after the U's first pixel, so it is number 2
   * even though the U's last pixels come after it. */
  const char *rows[] = {
    "#...#..",
    "#...#.#",
    "#####..",
  };
  int32_t labels[21];

  g_assert_cmpint (label_of (rows, 7, 3, 4, labels), ==, 2);
  g_assert_cmpint (labels[0], ==, 1);
  g_assert_cmpint (labels[4], ==, 1);
  g_assert_cmpint (labels[13], ==, 2);
  g_assert_cmpint (labels[18], ==, 1);
  g_assert_cmpint (labels[5], ==, 0);
}

static void
test_label_edges_and_corners (void)
{
  const char *rows[] = { "#..#", "....", "#..#" };
  const char *one[] = { "#" };
  const char *column[] = { "#", "#", ".", "#" };
  int32_t labels[12];

  g_assert_cmpint (label_of (rows, 4, 3, 8, labels), ==, 4);
  g_assert_cmpint (labels[0], ==, 1);
  g_assert_cmpint (labels[3], ==, 2);
  g_assert_cmpint (labels[8], ==, 3);
  g_assert_cmpint (labels[11], ==, 4);
  g_assert_cmpint (label_of (one, 1, 1, 4, labels), ==, 1);
  g_assert_cmpint (label_of (column, 1, 4, 4, labels), ==, 2);
  g_assert_cmpint (labels[3], ==, 2);
}

/* Random masks of several densities against the flood fill, with enough
 * pixels that the image is cut into bands. */
static void
test_label_matches_naive (void)
{
  GRand *rng = g_rand_new_with_seed (g_test_rand_int ());
  const int64_t nx = 613, ny = 517;
  uint8_t *mask = g_new (uint8_t, nx * ny);
  int32_t *got = g_new (int32_t, nx * ny), *want = g_new (int32_t, nx * ny);
  const double densities[] = { 0.0, 0.02, 0.3, 0.5, 0.59, 0.8, 1.0 };

  for (unsigned d = 0; d < G_N_ELEMENTS (densities); d++)
    for (int conn = 4; conn <= 8; conn += 4)
      for (int threads = 1; threads <= 5; threads += 2)
        {
          int64_t n_got, n_want;
          for (int64_t i = 0; i < nx * ny; i++)
            mask[i] = g_rand_double (rng) < densities[d];
          g_assert_cmpint (sky_cpu_label (mask, nx, ny, conn, threads, got, &n_got), ==, SKY_OK);
          n_want = naive_label (mask, nx, ny, conn, want);
          g_assert_cmpint (n_got, ==, n_want);
          g_assert_cmpmem (got, nx * ny * sizeof *got, want, nx * ny * sizeof *want);
        }
  g_free (mask);
  g_free (got);
  g_free (want);
  g_rand_free (rng);
}

/* Masks built to defeat a labeller: one-pixel components everywhere, one
 * component snaking through every row, runs ending on and across 64-pixel
 * word edges, merges that come late, single rows and columns, empty and
 * full; at sizes on and off multiples of 64, large enough to be cut into
 * bands, with 1 to 7 threads; each against the breadth-first reference. */
static uint8_t
adversarial_pixel (int shape, int64_t x, int64_t y, int64_t nx, GRand *rng)
{
  switch (shape)
    {
    case 0: return (x + y) % 2 == 0;                  /* checkerboard */
    case 1: return (x + y) % 2 == 1;                  /* its complement */
    case 2: return x % 2 == 0;                        /* one-pixel columns */
    case 3: return y % 2 == 0;                        /* every other row */
    case 4: return (x / 2 + y / 2) % 2 == 0;          /* 2x2 checkerboard */
    case 5: return x % 64 == 63 || x % 64 == 0;       /* runs across word edges */
    case 6: return y % 2 == 0 || x == (y / 2 % 2 ? 0 : nx - 1); /* one snake */
    case 7: return x % 3 != 1 && (y % 5 != 4 || x % 3 == 0); /* combs: late merges */
    case 8: return (x * 7 + y * 3) % 11 < 5;          /* slanted stripes */
    case 9: return g_rand_boolean (rng);              /* 50% noise */
    case 10: return 0;
    default: return 1;
    }
}

static void
test_label_adversarial_masks (void)
{
  GRand *rng = g_rand_new_with_seed (g_test_rand_int ());
  const int64_t sizes[][2] = { { 613, 517 }, { 64, 4100 }, { 129, 2049 }, { 1, 300000 },
                               { 300000, 1 }, { 1, 1 }, { 7, 3 }, { 63, 65 } };
  const int threads[] = { 1, 2, 3, 7 };

  for (unsigned z = 0; z < G_N_ELEMENTS (sizes); z++)
    {
      int64_t nx = sizes[z][0], ny = sizes[z][1];
      uint8_t *mask = g_new (uint8_t, nx * ny);
      int32_t *got = g_new (int32_t, nx * ny), *want = g_new (int32_t, nx * ny);
      for (int shape = 0; shape <= 11; shape++)
        {
          for (int64_t y = 0; y < ny; y++)
            for (int64_t x = 0; x < nx; x++)
              mask[y * nx + x] = adversarial_pixel (shape, x, y, nx, rng);
          for (int conn = 4; conn <= 8; conn += 4)
            {
              int64_t n_want = bfs_label (mask, nx, ny, conn, want);
              for (unsigned t = 0; t < G_N_ELEMENTS (threads); t++)
                {
                  int64_t n_got = -1;
                  g_assert_cmpint (sky_cpu_label (mask, nx, ny, conn, threads[t], got, &n_got),
                                   ==, SKY_OK);
                  if (n_got != n_want || memcmp (got, want, (size_t) (nx * ny) * sizeof *got))
                    g_error ("%lld x %lld, shape %d, %d-connected, %d threads: %lld labels "
                             "(want %lld) or a pixel's label differs", (long long) nx, (long long) ny, shape, conn,
                             threads[t], (long long) n_got, (long long) n_want);
                }
            }
        }
      g_free (mask);
      g_free (got);
      g_free (want);
    }
  g_rand_free (rng);
}

/* SkyBandJoin, which both backends' runs in bands use: each band labelled
 * alone, the bands joined, every pixel's joined label equal to the
 * whole-image labeller's, on the adversarial masks (a snake through every
 * row, late merges, checkerboards, noise) cut into bands of 1, 2, 7 and 64
 * rows and at random heights, 4- and 8-connected. */
static void
test_label_band_join (void)
{
  GRand *rng = g_rand_new_with_seed (g_test_rand_int ());
  const int64_t nx = 131, ny = 203;
  const int64_t heights[] = { 1, 2, 7, 64, 0 };   /* 0: random heights */
  uint8_t *mask = g_new (uint8_t, nx * ny);
  int32_t *whole = g_new (int32_t, nx * ny), *band = g_new (int32_t, nx * ny);
  int32_t *joined = g_new (int32_t, nx * ny);

  for (int shape = 0; shape <= 11; shape++)
    {
      for (int64_t y = 0; y < ny; y++)
        for (int64_t x = 0; x < nx; x++)
          mask[y * nx + x] = adversarial_pixel (shape, x, y, nx, rng);
      for (int conn = 4; conn <= 8; conn += 4)
        for (unsigned h = 0; h < G_N_ELEMENTS (heights); h++)
          {
            int64_t n_whole, n_joined = -1, y0s[256], nbands = 0;
            SkyBandJoin *j = NULL;
            const int32_t *final;

            g_assert_cmpint (sky_cpu_label (mask, nx, ny, conn, 2, whole, &n_whole), ==, SKY_OK);
            for (int64_t y0 = 0; y0 < ny; nbands++)
              {
                y0s[nbands] = y0;
                y0 += heights[h] > 0 ? heights[h] : g_rand_int_range (rng, 1, 20);
              }
            y0s[nbands] = ny;
            g_assert_cmpint (sky_band_join_new (nx, nbands, conn, &j), ==, SKY_OK);
            for (int64_t b = 0; b < nbands; b++)
              {
                const int64_t rows = (y0s[b + 1] < ny ? y0s[b + 1] : ny) - y0s[b];
                int32_t *lab = band + y0s[b] * nx;
                int64_t n = -1;
                g_assert_cmpint (sky_cpu_label (mask + y0s[b] * nx, nx, rows, conn, 1, lab, &n),
                                 ==, SKY_OK);
                g_assert_cmpint (sky_band_join_add (j, lab, lab + (rows - 1) * nx, n), ==,
                                 SKY_OK);
              }
            g_assert_cmpint (sky_band_join_finish (j, &n_joined), ==, SKY_OK);
            final = sky_band_join_final (j);
            for (int64_t b = 0; b < nbands; b++)
              for (int64_t i = y0s[b] * nx; i < (y0s[b + 1] < ny ? y0s[b + 1] : ny) * nx; i++)
                joined[i] = band[i] != 0 ? final[sky_band_join_base (j, b) + band[i]] : 0;
            if (n_joined != n_whole
                || memcmp (joined, whole, (size_t) (nx * ny) * sizeof *whole) != 0)
              g_error ("shape %d, %d-connected, bands of %lld rows: %lld labels joined (want "
                       "%lld) or a pixel's label differs", shape, conn, (long long) heights[h],
                       (long long) n_joined, (long long) n_whole);
            g_assert_cmpint (sky_band_join_count (j), ==, sky_band_join_base (j, nbands));
            sky_band_join_free (j);
          }
    }
  g_free (mask);
  g_free (whole);
  g_free (band);
  g_free (joined);
  g_rand_free (rng);
}

static void
test_label_checkerboard (void)
{
  const int64_t nx = 1001, ny = 999;
  uint8_t *mask = g_new (uint8_t, nx * ny);
  int32_t *labels = g_new (int32_t, nx * ny);
  int64_t n;

  for (int64_t y = 0; y < ny; y++)
    for (int64_t x = 0; x < nx; x++)
      mask[y * nx + x] = (x + y) % 2 == 0;
  g_assert_cmpint (sky_cpu_label (mask, nx, ny, 4, 2, labels, &n), ==, SKY_OK);
  g_assert_cmpint (n, ==, (nx * ny + 1) / 2);
  g_assert_cmpint (labels[nx * ny - 1], ==, n);
  g_assert_cmpint (sky_cpu_label (mask, nx, ny, 8, 2, labels, &n), ==, SKY_OK);
  g_assert_cmpint (n, ==, 1);
  g_free (mask);
  g_free (labels);
}

/* ---------------------------------------------------------------- measure */

static void
test_measure_hand_made (void)
{
  /* Two sources: a 2x2 block and one pixel, with a tie for the peak. */
  float v[12] = { 1, 3, 0, 0,
                  3, 1, 0, 0,
                  0, 0, 0, 5 };
  int32_t labels[12] = { 1, 1, 0, 0,
                         1, 1, 0, 0,
                         0, 0, 0, 2 };
  SkyImage img;
  SkyCatalogue cat;

  sky_test_image (&img, 4, 3, v);
  g_assert_cmpint (sky_cpu_measure (&img, labels, 2, 1, &cat), ==, SKY_OK);
  g_assert_cmpint (cat.n, ==, 2);
  g_assert_cmpfloat (cat.sum[0], ==, 8.0);
  g_assert_cmpint (cat.npix[0], ==, 4);
  g_assert_cmpfloat_with_epsilon (cat.x[0], 0.5, 1e-15);
  g_assert_cmpfloat_with_epsilon (cat.y[0], 0.5, 1e-15);
  g_assert_cmpfloat (cat.peak[0], ==, 3.0f);
  g_assert_cmpint (cat.peak_x[0], ==, 1); /* the first of the tie in raster order */
  g_assert_cmpint (cat.peak_y[0], ==, 0);
  g_assert_cmpint (cat.xmin[0], ==, 0);
  g_assert_cmpint (cat.xmax[0], ==, 1);
  g_assert_cmpint (cat.ymax[0], ==, 1);
  g_assert_cmpfloat (cat.x[1], ==, 3.0);
  g_assert_cmpfloat (cat.y[1], ==, 2.0);
  g_assert_cmpint (cat.npix[1], ==, 1);
  sky_catalogue_clear (&cat);
  sky_image_clear (&img);
}

/* Banded measurement against a single plain pass on labelled noise. */
static void
test_measure_matches_naive (void)
{
  GRand *rng = g_rand_new_with_seed (g_test_rand_int ());
  const int64_t nx = 777, ny = 691;
  SkyImage img;
  uint8_t *mask = g_new (uint8_t, nx * ny);
  int32_t *labels = g_new (int32_t, nx * ny);
  int64_t n;

  sky_test_image (&img, nx, ny, NULL);
  for (int64_t i = 0; i < nx * ny; i++)
    {
      img.pixels[i] = (float) g_rand_double_range (rng, -1, 3);
      mask[i] = img.pixels[i] > 1.5f;
    }
  g_assert_cmpint (sky_cpu_label (mask, nx, ny, 8, 3, labels, &n), ==, SKY_OK);
  g_assert_cmpint (n, >, 10);

  for (int threads = 1; threads <= 4; threads++)
    {
      SkyCatalogue cat;
      double *sum = g_new0 (double, n), *sx = g_new0 (double, n), *sy = g_new0 (double, n);
      int64_t *npix = g_new0 (int64_t, n);

      g_assert_cmpint (sky_cpu_measure (&img, labels, n, threads, &cat), ==, SKY_OK);
      for (int64_t i = 0; i < nx * ny; i++)
        if (labels[i])
          {
            int64_t k = labels[i] - 1;
            sum[k] += img.pixels[i];
            sx[k] += (double) img.pixels[i] * (i % nx);
            sy[k] += (double) img.pixels[i] * (i / nx);
            npix[k]++;
          }
      for (int64_t k = 0; k < n; k++)
        {
          g_assert_cmpint (cat.npix[k], ==, npix[k]);
          g_assert_cmpfloat_with_epsilon (cat.sum[k], sum[k], 1e-9 * fabs (sum[k]));
          g_assert_cmpfloat_with_epsilon (cat.x[k], sx[k] / sum[k], 1e-9);
          g_assert_cmpfloat_with_epsilon (cat.y[k], sy[k] / sum[k], 1e-9);
          g_assert_cmpfloat (cat.peak[k], ==, img.pixels[cat.peak_y[k] * nx + cat.peak_x[k]]);
          g_assert_cmpint (labels[cat.peak_y[k] * nx + cat.peak_x[k]], ==, k + 1);
        }
      sky_catalogue_clear (&cat);
      g_free (sum);
      g_free (sx);
      g_free (sy);
      g_free (npix);
    }
  g_free (mask);
  g_free (labels);
  sky_image_clear (&img);
  g_rand_free (rng);
}

/* ---------------------------------------------------------------- pipeline */

static void
test_pipeline_one_pixel_and_rerun (void)
{
  /* Noise with one bright pixel: one source, and a rerun into the same
   * result buffers gives the same answer. */
  const int64_t nx = 64, ny = 48;
  SkyImage img;
  SkyParams p;
  SkyResult res = { 0 };
  GRand *rng = g_rand_new_with_seed (11);

  sky_test_image (&img, nx, ny, NULL);
  for (int64_t i = 0; i < nx * ny; i++)
    img.pixels[i] = (float) g_rand_double_range (rng, -0.01, 0.01);
  img.pixels[10 * nx + 20] = 100.0f;
  sky_params_init (&p);
  for (int run = 0; run < 2; run++)
    {
      sky_test_run_cpu (&img, &p, &res);
      g_assert_cmpint (res.nsources, ==, 1);
      g_assert_cmpfloat (res.catalogue.x[0], ==, 20.0);
      g_assert_cmpfloat (res.catalogue.y[0], ==, 10.0);
      g_assert_cmpint (res.labels[10 * nx + 20], ==, 1);
      g_assert_cmpfloat (res.times.total, >=, 0.0);
    }
  sky_result_clear (&res);
  sky_image_clear (&img);
  g_rand_free (rng);
}

/* sky_allclose is numpy.allclose (rtol 1e-5, atol 1e-8, b the reference):
 * the bounds on both sides, equal infinities, NaN, the first far index and
 * the largest difference, in both element types. */
static void
test_allclose (void)
{
  const double want[] = { 1.0, 1e6, 0.0, INFINITY, -2.0 };
  double got[] = { 1.0 + 0.5e-5, 1e6 + 10, 1e-8, INFINITY, -2.0 };
  float want32[] = { 1.0f, 100.0f }, got32[] = { 1.0f, 100.001f };
  int64_t far = 0;
  double diff = 0;

  g_assert_true (sky_allclose (got, want, 5, 1, &far, &diff));
  g_assert_cmpint (far, ==, -1);
  g_assert_cmpfloat (diff, ==, 10);
  got[1] = 1e6 + 10.5;   /* beyond 1e-8 + 1e-5 * 1e6 */
  g_assert_false (sky_allclose (got, want, 5, 1, &far, &diff));
  g_assert_cmpint (far, ==, 1);
  got[1] = 1e6;
  got[2] = 2e-8;         /* atol alone holds near zero */
  g_assert_false (sky_allclose (got, want, 5, 1, &far, NULL));
  g_assert_cmpint (far, ==, 2);
  got[2] = 0;
  got[3] = -INFINITY;
  g_assert_false (sky_allclose (got, want, 5, 1, &far, NULL));
  g_assert_cmpint (far, ==, 3);
  got[3] = 1e300;        /* a finite value is never close to an infinity */
  g_assert_false (sky_allclose (got, want, 5, 1, &far, NULL));
  g_assert_cmpint (far, ==, 3);
  got[3] = NAN;
  g_assert_false (sky_allclose (got, want, 5, 1, &far, NULL));
  g_assert_cmpint (far, ==, 3);
  g_assert_true (sky_allclose (got32, want32, 2, 0, &far, &diff));
  g_assert_cmpfloat_with_epsilon (diff, 0.001, 1e-5);
  got32[1] = 100.01f;
  g_assert_false (sky_allclose (got32, want32, 2, 0, &far, NULL));
  g_assert_cmpint (far, ==, 1);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/clip/hand-made", test_clip_hand_made);
  g_test_add_func ("/clip/blanks-take-no-part", test_clip_blanks_take_no_part);
  g_test_add_func ("/clip/flat-image-has-no-sources", test_clip_flat_image);
  g_test_add_func ("/clip/all-blank-is-an-error", test_clip_all_blank_is_an_error);
  g_test_add_func ("/clip/iteration-cap", test_clip_iteration_cap);
  g_test_add_func ("/clip/matches-lesson-loop-on-random-fields", test_clip_matches_naive);
  g_test_add_func ("/segment/strict-and-exact", test_segment_is_strict_and_exact);
  g_test_add_func ("/segment/relative-threshold", test_segment_relative_threshold);
  g_test_add_func ("/label/staircase-4-vs-8", test_label_staircase_4_vs_8);
  g_test_add_func ("/label/raster-order", test_label_raster_order);
  g_test_add_func ("/label/edges-and-corners", test_label_edges_and_corners);
  g_test_add_func ("/label/matches-flood-fill-on-random-masks", test_label_matches_naive);
  g_test_add_func ("/label/checkerboard", test_label_checkerboard);
  g_test_add_func ("/label/adversarial-masks-match-bfs", test_label_adversarial_masks);
  g_test_add_func ("/label/bands-joined-match-whole-image", test_label_band_join);
  g_test_add_func ("/measure/hand-made", test_measure_hand_made);
  g_test_add_func ("/measure/matches-plain-pass", test_measure_matches_naive);
  g_test_add_func ("/pipeline/one-pixel-and-rerun", test_pipeline_one_pixel_and_rerun);
  g_test_add_func ("/convolve/allclose", test_allclose);
  return g_test_run ();
}
