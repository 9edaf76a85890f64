/* SPDX-License-Identifier: GPL-3.0-or-later */
/* GPU parity: the CUDA backend against the CPU backend, as the contract in
 * docs/contract.md says (statistics to 1e-6 relative with the same
 * counts, the same label image, centroids within 1e-4 pixel, sums within
 * 1e-6 relative, peaks and boxes exact), on every shared test image and on
 * random fields drawn afresh each run (GTest's seed; `--seed` replays one).
 * Without a usable GPU every test skips and says why.
 *
 * SKYSIFT_GPU_TEST_QUICK=1 keeps the fields small, for compute-sanitizer. */
#include "sky-gpu.h"
#include "sky-test-gpu.h"
#include "sky-test-util.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static SkyTestGpu device;
static SkyGpu *gpu;   /* device.gpu, or a test's own context */
static gboolean quick;
static int checks_passed, checks_failed;

static gboolean
have_gpu (void)
{
  return sky_test_gpu_ready (&device);
}

/* Runs both backends and checks every part of the contract, the mask too. */
static void
check_parity (const char *what, const SkyImage *img, const SkyParams *params)
{
  SkyResult cpu = { 0 }, res = { 0 };
  char diff[2048] = "";
  int rc = sky_cpu_run (img, params, &cpu), rg;
  char cpu_err[512];

  g_snprintf (cpu_err, sizeof cpu_err, "%s", sky_last_error ());
  rg = sky_gpu_run_on (gpu, img, params, SKY_GPU_WANT_MASK | SKY_GPU_WANT_LABELS, &res, NULL);
  if (rc != rg)
    g_snprintf (diff, sizeof diff, "status: CPU %s (%s), GPU %s (%s)", sky_status_string (rc),
                cpu_err, sky_status_string (rg), rg ? sky_last_error () : "");
  else if (rc == SKY_OK)
    {
      sky_result_compare (img, &cpu, &res, diff, sizeof diff);
      if (strcmp (diff, "agree") == 0)
        {
          diff[0] = '\0';
          if (memcmp (cpu.mask, res.mask, (size_t) (img->nx * img->ny)) != 0)
            g_snprintf (diff, sizeof diff, "mask differs");
        }
    }
  if (diff[0] == '\0')
    checks_passed++;
  else
    {
      checks_failed++;
      g_test_fail_printf ("%s (%lld x %lld, kappa %g, threshold %g%s, %d-connected, max_iter %d): "
                          "%s",
                          what, (long long) img->nx, (long long) img->ny, params->clip_kappa,
                          params->threshold, params->relative ? " relative" : "",
                          params->connectivity, params->max_iter, diff);
    }
  sky_result_clear (&cpu);
  sky_result_clear (&res);
}

/* Each parameter variant the contract names: 4 and 8 neighbours, and a
 * relative threshold. */
static void
check_variants (const char *what, const SkyImage *img, const SkyParams *base)
{
  SkyParams p = *base;

  p.connectivity = 4;
  check_parity (what, img, &p);
  p.connectivity = 8;
  check_parity (what, img, &p);
  p.connectivity = 4;
  p.relative = !base->relative;
  check_parity (what, img, &p);
}

/* ------------------------------------------------------- random fields */

static double
gauss (void)
{
  double u = g_test_rand_double_range (1e-12, 1.0), v = g_test_rand_double ();
  return sqrt (-2.0 * log (u)) * cos (2.0 * G_PI * v);
}

/* Noise smoothed over a (2r + 1)^2 box, as a beam correlates it, plus
 * Gaussian sources: a sky-like field with sources of many sizes. */
static void
make_sky (SkyImage *img, int64_t nx, int64_t ny, int r, int nsources, double offset)
{
  float *raw = g_new (float, nx * ny);

  sky_test_image (img, nx, ny, NULL);
  for (int64_t i = 0; i < nx * ny; i++)
    raw[i] = (float) gauss ();
  for (int64_t y = 0; y < ny; y++)
    for (int64_t x = 0; x < nx; x++)
      {
        double s = 0;
        int k = 0;
        for (int64_t v = y - r; v <= y + r; v++)
          for (int64_t u = x - r; u <= x + r; u++)
            if (u >= 0 && u < nx && v >= 0 && v < ny)
              {
                s += raw[v * nx + u];
                k++;
              }
        img->pixels[y * nx + x] = (float) (offset + s / sqrt ((double) k));
      }
  for (int k = 0; k < nsources; k++)
    {
      double cx = g_test_rand_double_range (0, (double) nx), cy = g_test_rand_double_range (0, (double) ny);
      double amp = 5 + 200 * pow (g_test_rand_double (), 4), w = g_test_rand_double_range (0.5, 6);
      int64_t rad = (int64_t) (4 * w) + 1;
      for (int64_t y = (int64_t) cy - rad; y <= (int64_t) cy + rad; y++)
        for (int64_t x = (int64_t) cx - rad; x <= (int64_t) cx + rad; x++)
          if (x >= 0 && x < nx && y >= 0 && y < ny)
            img->pixels[y * nx + x] += (float) (amp * exp (-((x - cx) * (x - cx) + (y - cy) * (y - cy))
                                                          / (2 * w * w)));
    }
  g_free (raw);
  sky_image_count_blanks (img);
}

typedef struct {
  int64_t nx, ny;
} Size;

/* Sizes that are multiples of no block or tile size, and a few that are. */
static const Size sizes[] = {
  { 1, 1 }, { 1, 257 }, { 257, 1 }, { 33, 31 }, { 127, 129 }, { 640, 479 },
  { 1023, 1025 }, { 2049, 2047 }, { 4096, 1024 },
};

static int
nsizes (void)
{
  return quick ? 6 : (int) G_N_ELEMENTS (sizes);
}

/* Sky-like fields of each kind over the sizes: each case makes its field
 * (and may set parameters), then checks it (check_variants unless it says
 * otherwise). */
typedef struct {
  const char *path;      /* /gpu/random/... */
  const char *what;
  int first, step;       /* sizes[first], sizes[first + step], ... */
  void (*make) (SkyImage *img, int64_t nx, int64_t ny, SkyParams *p);
  void (*check) (const char *what, SkyImage *img, SkyParams *p);
  int full_clip;         /* on a context that always takes the clip's full path */
} FieldCase;

static void
make_sparse (SkyImage *img, int64_t nx, int64_t ny, SkyParams *p)
{
  (void) p;
  make_sky (img, nx, ny, 1, (int) (nx * ny / 5000) + 1, 0);
}

/* A low threshold makes most of the field one tangle of sources: long
 * union-find chains, sources across every tile and block edge. */
static void
make_dense (SkyImage *img, int64_t nx, int64_t ny, SkyParams *p)
{
  make_sky (img, nx, ny, 2, 3, 0);
  p->threshold = g_test_rand_double_range (-0.5, 0.7);
}

/* Blanks: scattered NaN, whole NaN rows and a NaN block; they take no part
 * in the statistics and never belong to a source. */
static void
make_blanks (SkyImage *img, int64_t nx, int64_t ny, SkyParams *p)
{
  double frac = g_test_rand_double_range (0.01, 0.5);

  (void) p;
  make_sky (img, nx, ny, 1, (int) (nx * ny / 3000) + 1, 0);
  for (int64_t k = 0; k < nx * ny; k++)
    if (g_test_rand_double () < frac)
      img->pixels[k] = NAN;
  for (int64_t x = 0; x < nx; x++)
    img->pixels[(ny / 2) * nx + x] = NAN;
  for (int64_t y = ny / 4; y < ny / 3; y++)
    for (int64_t x = nx / 5; x < nx / 2; x++)
      img->pixels[y * nx + x] = NAN;
  sky_image_count_blanks (img);
}

/* Integer-valued fields: many equal values, medians between two equal
 * ones, bounds landing on values. */
static void
make_quantized (SkyImage *img, int64_t nx, int64_t ny, SkyParams *p)
{
  (void) p;
  make_sky (img, nx, ny, 1, 20, 0);
  double scale = g_test_rand_double_range (0.5, 8);
  for (int64_t k = 0; k < img->nx * img->ny; k++)
    img->pixels[k] = floorf (img->pixels[k] * (float) scale);
}

/* A large offset (sums must not lose sigma to it). */
static void
make_offset (SkyImage *img, int64_t nx, int64_t ny, SkyParams *p)
{
  (void) p;
  make_sky (img, nx, ny, 1, 30, g_test_rand_double_range (-2e4, 2e4));
}

/* Then huge outliers of both signs, an iteration cap, another kappa. */
static void
check_outliers (const char *what, SkyImage *img, SkyParams *p)
{
  const int64_t n = img->nx * img->ny;

  check_variants (what, img, p);
  for (int k = 0; k < 20; k++)
    img->pixels[g_test_rand_int_range (0, (gint32) n)] = (k & 1 ? 1 : -1) * 1e30f;
  check_variants ("outliers", img, p);
  p->max_iter = g_test_rand_int_range (1, 4);
  check_parity ("iteration cap", img, p);
  p->max_iter = 0;
  p->clip_kappa = g_test_rand_double_range (1.5, 5);
  check_parity ("kappa", img, p);
  p->clip_kappa = 3;
}

/* Every 13th pixel blank, on an offset of either sign. */
static void
make_full_clip (SkyImage *img, int64_t nx, int64_t ny, SkyParams *p)
{
  (void) p;
  make_sky (img, nx, ny, 1, 20, g_test_rand_double_range (-10, 10));
  for (int64_t k = 0; k < img->nx * img->ny; k += 13)
    img->pixels[k] = NAN;
  sky_image_count_blanks (img);
}

static const FieldCase field_cases[] = {
  { "/gpu/random/sparse-sky", "sparse sky", 0, 1, make_sparse, NULL, 0 },
  { "/gpu/random/dense-mask", "dense mask", 3, 1, make_dense, NULL, 0 },
  { "/gpu/random/nan-blanks", "NaN blanks", 2, 1, make_blanks, NULL, 0 },
  { "/gpu/random/quantized", "quantized", 3, 1, make_quantized, NULL, 0 },
  { "/gpu/random/offsets-and-outliers", "offset", 4, 1, make_offset, check_outliers, 0 },
  /* The clip's full path (all values scattered by bucket), which runs only
   * when the gather's plan misses, forced on sky-like fields. */
  { "/gpu/random/full-clip-path", "full clip path", 0, 2, make_full_clip, NULL, 1 },
};

static void
test_field_case (gconstpointer data)
{
  const FieldCase *c = data;
  SkyParams p;

  if (!have_gpu ())
    return;
  if (c->full_clip)
    {
      /* The switch is read when a context is made: a context of its own. */
      g_setenv ("SKYSIFT_GPU_FULL_CLIP", "1", TRUE);
      gpu = NULL;
      g_assert_cmpint (sky_gpu_new (&gpu), ==, SKY_OK);
      g_unsetenv ("SKYSIFT_GPU_FULL_CLIP");
    }
  sky_params_init (&p);
  for (int i = c->first; i < nsizes (); i += c->step)
    {
      SkyImage img;
      c->make (&img, sizes[i].nx, sizes[i].ny, &p);
      if (c->check != NULL)
        c->check (c->what, &img, &p);
      else
        check_variants (c->what, &img, &p);
      sky_image_clear (&img);
    }
  if (c->full_clip)
    {
      sky_gpu_free (gpu);
      gpu = device.gpu;
    }
}

/* A flat field has no spread and no sources; an all-blank one is an error
 * on both backends; a field of one value plus blanks is flat too. */
static void
test_flat_and_blank (void)
{
  SkyParams p;
  SkyImage img;
  float v = (float) g_test_rand_double_range (-100, 100);

  if (!have_gpu ())
    return;
  sky_params_init (&p);
  sky_test_image (&img, 301, 203, NULL);
  for (int64_t k = 0; k < img.nx * img.ny; k++)
    img.pixels[k] = v;
  check_variants ("flat", &img, &p);
  for (int64_t k = 0; k < img.nx * img.ny; k += 7)
    img.pixels[k] = NAN;
  sky_image_count_blanks (&img);
  check_variants ("flat with blanks", &img, &p);
  for (int64_t k = 0; k < img.nx * img.ny; k++)
    img.pixels[k] = NAN;
  sky_image_count_blanks (&img);
  check_parity ("all blank", &img, &p);
  sky_image_clear (&img);

  /* Zeros of both signs: -0 and +0 have different keys, one value. */
  sky_test_image (&img, 257, 129, NULL);
  for (int64_t k = 0; k < img.nx * img.ny; k++)
    img.pixels[k] = g_test_rand_bit () ? 0.0f : -0.0f;
  for (int k = 0; k < 50; k++)
    img.pixels[g_test_rand_int_range (0, (gint32) (img.nx * img.ny))] = (float) gauss ();
  check_variants ("signed zeros", &img, &p);
  sky_image_clear (&img);
}

/* Checkerboards: with 4 neighbours every source pixel is its own source,
 * more sources than the measure buffer first holds; with 8, one source. */
static void
test_checkerboard (void)
{
  SkyParams p;
  SkyImage img;
  const int64_t nx = quick ? 97 : 301, ny = quick ? 95 : 299;

  if (!have_gpu ())
    return;
  sky_params_init (&p);
  sky_test_image (&img, nx, ny, NULL);
  for (int64_t y = 0; y < ny; y++)
    for (int64_t x = 0; x < nx; x++)
      img.pixels[y * nx + x] = (float) (((x + y) & 1) ? 100 + g_test_rand_double ()
                                                     : -1 - fabs (gauss ()));
  p.threshold = 0; /* pixel > 0: the odd squares only */
  check_parity ("checkerboard", &img, &p);
  p.connectivity = 8;
  check_parity ("checkerboard", &img, &p);
  sky_image_clear (&img);
}

/* One context across sizes: buffers grown, reused for smaller images
 * (stale mask padding, block histograms), grown again. */
static void
test_context_reuse (void)
{
  static const Size order[] = { { 1500, 1300 }, { 17, 3 }, { 700, 900 }, { 2100, 1400 }, { 5, 5 } };
  SkyParams p;

  if (!have_gpu ())
    return;
  sky_params_init (&p);
  for (int i = 0; i < (int) G_N_ELEMENTS (order); i++)
    {
      SkyImage img;
      if (quick && order[i].nx * order[i].ny > 1000000)
        continue;
      make_sky (&img, order[i].nx, order[i].ny, 1, 40, 0);
      check_parity ("context reuse", &img, &p);
      sky_image_clear (&img);
    }
}

/* sky_gpu_run: the shared context, no mask or labels downloaded. */
static void
test_simple_api (void)
{
  SkyParams p;
  SkyImage img;
  SkyResult cpu = { 0 }, res = { 0 };
  SkyGpuTimes t;
  char diff[2048];

  if (!have_gpu ())
    return;
  sky_params_init (&p);
  make_sky (&img, 513, 385, 1, 30, 0);
  sky_test_run_cpu (&img, &p, &cpu);
  g_assert_cmpint (sky_gpu_run (&img, &p, &res, &t), ==, SKY_OK);
  g_assert_null (res.labels);
  g_assert_null (res.mask);
  g_assert_true (t.kernels > 0 && t.total >= t.kernels);
  if (sky_result_compare (&img, &cpu, &res, diff, sizeof diff) == 0)
    checks_passed++;
  else
    {
      checks_failed++;
      g_test_fail_printf ("sky_gpu_run: %s", diff);
    }
  sky_result_clear (&cpu);
  sky_result_clear (&res);
  sky_image_clear (&img);
  sky_gpu_shutdown ();
}

/* sky_gpu_run_best, as every front end times the GPU: a warm-up, the best
 * of the repeats, the image page-locked only while it runs, and the mask
 * and labels the same as a plain run's, their download timed apart. */
static void
test_run_best (void)
{
  SkyParams p;
  SkyImage img;
  SkyResult plain = { 0 }, best = { 0 };
  SkyGpuTimes t, tp;
  SkyGpu *ctx = NULL;
  size_t n;
  int locked;

  if (!have_gpu ())
    return;
  sky_params_init (&p);
  make_sky (&img, 1024, 768, 1, 60, 0);
  n = (size_t) (img.nx * img.ny);
  g_assert_cmpint (sky_gpu_new (&ctx), ==, SKY_OK);
  g_assert_cmpint (sky_gpu_run_on (ctx, &img, &p, SKY_GPU_WANT_MASK | SKY_GPU_WANT_LABELS, &plain,
                                   &tp), ==, SKY_OK);
  g_assert_cmpint (sky_gpu_run_best (ctx, &img, &p, SKY_GPU_WANT_MASK | SKY_GPU_WANT_LABELS, 4,
                                     &best, &t), ==, SKY_OK);
  g_assert_cmpint (t.runs, ==, 4);
  g_assert_true (t.kernels > 0 && t.total >= t.kernels);
  /* Five bytes a pixel against a few kilobytes of catalogue. */
  g_assert_cmpfloat (t.outputs, >, t.download);
  g_assert_cmpint (best.nsources, ==, plain.nsources);
  g_assert_true (memcmp (best.mask, plain.mask, n) == 0);
  g_assert_true (memcmp (best.labels, plain.labels, n * sizeof (int32_t)) == 0);
  /* Left as it was found: not page-locked (locking it again succeeds and
   * says there is something to undo). */
  locked = sky_gpu_lock_host (img.pixels, n * sizeof (float));
  g_assert_true (locked);
  sky_gpu_unlock_host (img.pixels, locked);
  g_test_message ("1024 x 768, ms: one cold run kernels %.3f total %.3f; best of 4 after a "
                  "warm-up kernels %.3f total %.3f, mask and labels %.3f",
                  tp.kernels, tp.total, t.kernels, t.total, t.outputs);
  checks_passed++;
  sky_result_clear (&plain);
  sky_result_clear (&best);
  sky_image_clear (&img);
  sky_gpu_free (ctx);
}

/* ------------------------------------------------------- shared images */

static void
test_shared_image (gconstpointer data)
{
  const char *path = data;
  SkyImage img;
  SkyParams p;

  if (!have_gpu ())
    return;
  if (sky_image_load (path, NULL, &img) != SKY_OK)
    {
      g_test_fail_printf ("%s: %s", path, sky_last_error ());
      return;
    }
  sky_params_init (&p);
  check_variants (path, &img, &p);
  sky_image_clear (&img);
}

/* The device the tests run on, named in the log: a second look agrees it
 * is usable, and the context holds its fixed buffers. */
static void
test_device (void)
{
  char again[512] = "";

  if (!have_gpu ())
    return;
  g_test_message ("device: %s", device.why);
  g_assert_cmpint (sky_gpu_available (again, sizeof again), ==, SKY_OK);
  g_assert_cmpstr (again, !=, "");
  g_assert_cmpuint (sky_gpu_device_bytes (gpu), >, 0);
}

/* --------------------------------------------------- hand-made labelling */

/* The CPU's hand-made labelling cases (test-cpu-steps.c) through the whole
 * pipeline: '#' pixels distinct positive values, '.' blank, an absolute
 * threshold of 0, so that the mask is the drawing. (Its 1 x 1 case has no
 * spread to clip against: the pipeline calls such a field flat.) */
typedef struct {
  const char *what;
  const char *rows[5];
  int nx, ny, conn;
  int64_t nsources;
  int npixels;
  int pixel[5], label[5];   /* labels of a few pixels (raster index) */
} LabelCase;

static const LabelCase label_cases[] = {
  { "staircase, 4-connected", { "#....", ".#...", "..#..", "...#.", "....#" }, 5, 5, 4, 5,
    5, { 0, 6, 12, 18, 24 }, { 1, 2, 3, 4, 5 } },
  { "staircase, 8-connected", { "#....", ".#...", "..#..", "...#.", "....#" }, 5, 5, 8, 1,
    5, { 0, 6, 12, 18, 24 }, { 1, 1, 1, 1, 1 } },
  /* The U's arms start two ids; the one on the right joins later. The
   * small source at row 1 starts after the U's first pixel, so it is
   * number 2 even though the U's last pixels come after it. */
  { "raster order", { "#...#..", "#...#.#", "#####.." }, 7, 3, 4, 2,
    5, { 0, 4, 13, 18, 5 }, { 1, 1, 2, 1, 0 } },
  { "edges and corners", { "#..#", "....", "#..#" }, 4, 3, 8, 4,
    4, { 0, 3, 8, 11 }, { 1, 2, 3, 4 } },
  { "a column", { "#", "#", ".", "#" }, 1, 4, 4, 2, 1, { 3 }, { 2 } },
};

static void
test_hand_made_labels (void)
{
  if (!have_gpu ())
    return;
  for (int c = 0; c < (int) G_N_ELEMENTS (label_cases); c++)
    {
      const LabelCase *lc = &label_cases[c];
      SkyResult res = { 0 };
      SkyParams p;
      SkyImage img;
      int k = 0;

      sky_params_init (&p);
      p.threshold = 0;
      p.connectivity = lc->conn;
      sky_test_image (&img, lc->nx, lc->ny, NULL);
      for (int y = 0; y < lc->ny; y++)
        for (int x = 0; x < lc->nx; x++)
          img.pixels[y * lc->nx + x] = lc->rows[y][x] == '#' ? (float) (10 + k++) : NAN;
      sky_image_count_blanks (&img);
      check_parity (lc->what, &img, &p);
      g_assert_cmpint (sky_gpu_run_on (gpu, &img, &p, SKY_GPU_WANT_LABELS, &res, NULL), ==,
                       SKY_OK);
      g_assert_cmpint (res.nsources, ==, lc->nsources);
      for (int i = 0; i < lc->npixels; i++)
        g_assert_cmpint (res.labels[lc->pixel[i]], ==, lc->label[i]);
      sky_result_clear (&res);
      sky_image_clear (&img);
    }
}

/* More rows than a grid's y dimension could hold in blocks of 8 rows
 * (65535 x 8 = 524,280): every launch of the pipeline must take any
 * number of rows. */
static void
test_tall_image (void)
{
  SkyParams p;
  SkyImage img;

  if (!have_gpu ())
    return;
  sky_params_init (&p);
  make_sky (&img, quick ? 1 : 8, 600000, 1, 400, 0);
  check_variants ("600,000 rows", &img, &p);
  sky_image_clear (&img);
}

int
main (int argc, char **argv)
{
  int ret;

  g_test_init (&argc, &argv, NULL);
  quick = g_strcmp0 (g_getenv ("SKYSIFT_GPU_TEST_QUICK"), "1") == 0;
  sky_test_gpu_open (&device);
  gpu = device.gpu;

  g_test_add_func ("/gpu/device", test_device);
  sky_test_add_shared_images ("/gpu", quick, test_shared_image);
  for (int i = 0; i < (int) G_N_ELEMENTS (field_cases); i++)
    g_test_add_data_func (field_cases[i].path, &field_cases[i], test_field_case);
  g_test_add_func ("/gpu/random/flat-and-blank", test_flat_and_blank);
  g_test_add_func ("/gpu/random/checkerboard", test_checkerboard);
  g_test_add_func ("/gpu/hand-made-labels", test_hand_made_labels);
  g_test_add_func ("/gpu/tall-image", test_tall_image);
  g_test_add_func ("/gpu/context-reuse", test_context_reuse);
  g_test_add_func ("/gpu/simple-api", test_simple_api);
  g_test_add_func ("/gpu/run-best", test_run_best);
  ret = g_test_run ();

  sky_test_gpu_close (&device, "GPU parity checks", checks_passed, checks_failed);
  return ret;
}
