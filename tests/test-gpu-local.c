/* SPDX-License-Identifier: GPL-3.0-or-later */
/* GPU parity of the local method's detection: flood, deblend and measure
 * on the device from the CPU's own maps (background, rms, and the filtered
 * detection image where a matched filter made one) against the CPU's
 * steps, as docs/contract.md says for the local method: the same islands,
 * the same label image and mask, the same sources, and the catalogue with
 * its local columns. On every shared image and on random fields drawn
 * afresh each run (GTest's seed; `--seed` replays one): odd sizes, blanks,
 * gradients, crowded and empty fields, islands on the edges, a huge
 * extended island. Without a usable GPU every test skips and says why.
 *
 * SKYSIFT_GPU_TEST_QUICK=1 keeps the fields small, for compute-sanitizer;
 * --keep-going (-k) runs every test past a failure. */
#include "sky-gpu.h"
#include "sky-test-gpu.h"
#include "sky-test-util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static SkyTestGpu device;
static gboolean quick;
static int checks_passed, checks_failed;

/* The CPU's local method step by step, keeping what the GPU takes as its
 * input: the whole maps (res->background, res->rms, as sky_cpu_run_local
 * leaves them) and the filtered detection image (*snr, NULL unfiltered). */
static int
cpu_local (const SkyImage *img, const SkyParams *params, const SkyKernel *filter, SkyResult *res,
           float **snr)
{
  int64_t n = img->nx * img->ny;
  SkyLocalState ls = { 0 };
  int ret;

  *snr = NULL;
  memset (res, 0, sizeof *res);
  res->method = SKY_METHOD_LOCAL;
  res->nx = img->nx;
  res->ny = img->ny;
  res->threshold_value = NAN;
  res->noise_scale = 1.0;
  res->mask = sky_alloc_large ((size_t) n);
  res->labels = sky_alloc_large ((size_t) n * sizeof *res->labels);
  res->background = sky_alloc_large ((size_t) n * sizeof (float));
  res->rms = sky_alloc_large ((size_t) n * sizeof (float));
  g_assert_nonnull (res->mask);
  g_assert_nonnull (res->labels);
  g_assert_nonnull (res->background);
  g_assert_nonnull (res->rms);
  /* The maps are made whole after the mesh, as sky_cpu_run_local makes
   * them: the steps then read them rather than the interpolator. */
  float *bkg = res->background, *rms = res->rms;
  res->background = res->rms = NULL;
  ret = sky_cpu_local_background (img, params, res, &ls);
  if (ret == SKY_OK)
    ret = sky_cpu_background_rows (ls.mesh, 0, img->ny, params->nthreads, bkg, rms);
  res->background = bkg;
  res->rms = rms;
  if (ret == SKY_OK)
    ret = sky_cpu_local_detect (img, params, filter, res, &ls);
  if (ret == SKY_OK)
    ret = sky_cpu_local_flood (img, params, res, &ls);
  if (ret == SKY_OK)
    ret = sky_cpu_local_deblend (img, params, res, &ls);
  if (ret == SKY_OK)
    ret = sky_cpu_local_measure (img, params, res, &ls);
  if (ret == SKY_OK && ls.snr != NULL)
    {
      *snr = ls.snr;
      ls.snr = NULL;
    }
  sky_local_state_clear (&ls);
  return ret;
}

/* Both backends on img; every part of the contract, the mask too. */
static void
check_local_from (const char *what, const SkyImage *img, const SkyParams *params,
                  const SkyKernel *filter, gboolean maps_on_device)
{
  SkyResult cpu, res = { 0 };
  SkyGpuDetectInput in;
  SkyGpuTimes t;
  char diff[2048] = "", cpu_err[512];
  float *snr = NULL;
  int rc = cpu_local (img, params, filter, &cpu, &snr), rg = SKY_OK;

  g_snprintf (cpu_err, sizeof cpu_err, "%s", sky_last_error ());
  if (rc == SKY_OK)
    {
      in.background = cpu.background;
      in.rms = cpu.rms;
      in.snr = snr;
      rg = sky_gpu_run_local_on (device.gpu, img, params, maps_on_device ? NULL : &in,
                                 SKY_GPU_WANT_MASK | SKY_GPU_WANT_LABELS, &res, &t);
      if (rg != SKY_OK)
        g_snprintf (diff, sizeof diff, "GPU failed: %s", sky_last_error ());
      else
        {
          sky_result_compare (img, &cpu, &res, diff, sizeof diff);
          if (strcmp (diff, "agree") == 0)
            {
              diff[0] = '\0';
              if (memcmp (cpu.mask, res.mask, (size_t) (img->nx * img->ny)) != 0)
                g_snprintf (diff, sizeof diff, "mask differs");
            }
        }
    }
  else
    g_snprintf (diff, sizeof diff, "CPU failed: %s", cpu_err);
  if (diff[0] == '\0')
    {
      checks_passed++;
      g_test_message ("%s%s: %lld islands, %lld split, %lld sources; GPU ms flood %.3f deblend "
                      "%.3f measure %.3f", what, maps_on_device ? " (maps on the GPU)" : "",
                      (long long) cpu.nislands,
                      (long long) cpu.ndeblended, (long long) cpu.nsources,
                      t.ms[SKY_STEP_FLOOD], t.ms[SKY_STEP_DEBLEND], t.ms[SKY_STEP_MEASURE]);
    }
  else
    {
      checks_failed++;
      /* Every failure is told (the test's own message keeps only the last). */
      g_test_message ("FAILED %s%s: %s", what, maps_on_device ? " (maps on the GPU)" : "", diff);
      g_test_fail_printf ("%s%s (%lld x %lld, seed %g, flood %g, min_area %lld, %d levels, %d-"
                          "connected%s): %s",
                          what, maps_on_device ? " (maps on the GPU)" : "", (long long) img->nx, (long long) img->ny, params->seed_sigma,
                          params->flood_sigma, (long long) params->min_area,
                          params->deblend_nthresh, params->connectivity,
                          filter != NULL ? ", filtered" : "", diff);
    }
  free (snr);
  sky_result_clear (&cpu);
  sky_result_clear (&res);
}

/* From the CPU's maps, and, unfiltered, every step on the device (its own
 * maps, which equal the CPU's bit for bit). */
static void
check_local (const char *what, const SkyImage *img, const SkyParams *params,
             const SkyKernel *filter)
{
  check_local_from (what, img, params, filter, FALSE);
  if (filter == NULL)
    check_local_from (what, img, params, filter, TRUE);
}

/* The defaults, 8-connectivity, no deblending, a minimum area, and a
 * matched filter. */
static void
check_variants (const char *what, const SkyImage *img, const SkyParams *base, gboolean filtered)
{
  SkyParams p = *base;
  SkyKernel k = { 0 };

  check_local (what, img, &p, NULL);
  p.connectivity = 8;
  check_local (what, img, &p, NULL);
  p.connectivity = 4;
  p.deblend_nthresh = 1;
  check_local (what, img, &p, NULL);
  p = *base;
  p.min_area = 5;
  p.deblend_nthresh = 64;
  check_local (what, img, &p, NULL);
  if (!filtered)
    return;
  p = *base;
  g_assert_cmpint (sky_kernel_gaussian (&k, 1.5, 7), ==, SKY_OK);
  check_local (what, img, &p, &k);
  sky_kernel_clear (&k);
}

/* ------------------------------------------------------------ random fields */

static void
add_gauss (float *p, int64_t nx, int64_t ny, double x0, double y0, double amp, double s)
{
  int64_t r = (int64_t) ceil (6 * s);
  int64_t xa = MAX (0, (int64_t) x0 - r), xb = MIN (nx - 1, (int64_t) x0 + r);
  int64_t ya = MAX (0, (int64_t) y0 - r), yb = MIN (ny - 1, (int64_t) y0 + r);

  for (int64_t y = ya; y <= yb; y++)
    for (int64_t x = xa; x <= xb; x++)
      p[y * nx + x] += (float) (amp * exp (-((x - x0) * (x - x0) + (y - y0) * (y - y0))
                                           / (2 * s * s)));
}

typedef struct {
  const char *path;
  int64_t nx, ny;
  int nsources;
  double gradient;      /* sky change across the field, in noise sigmas */
  double blank;         /* share of pixels blank: a block and scattered ones */
  int edges;            /* sources centred on the edges and corners */
  double extended;      /* sigma of one huge extended source (0: none) */
  int flat;             /* a constant image: no rms, no islands */
  int grid;             /* one-pixel sources every this many pixels (0: none) */
} FieldCase;

static const FieldCase field_cases[] = {
  { "/gpu-local/random/odd-size", 257, 131, 40, 3, 0, 0, 0, 0, 0 },
  { "/gpu-local/random/gradient-blanks", 301, 203, 60, 20, 0.05, 0, 0, 0, 0 },
  { "/gpu-local/random/crowded", 320, 288, 900, 0, 0, 0, 0, 0, 0 },
  { "/gpu-local/random/empty", 199, 151, 0, 0, 0, 0, 0, 0, 0 },
  { "/gpu-local/random/flat", 64, 48, 0, 0, 0, 0, 0, 1, 0 },
  { "/gpu-local/random/edges", 211, 173, 30, 2, 0.02, 1, 0, 0, 0 },
  { "/gpu-local/random/huge-island", 509, 467, 80, 0, 0, 0, 70, 0, 0 },
  { "/gpu-local/random/large", 2049, 1537, 3000, 10, 0.01, 1, 150, 0, 0 },
  /* More sources than the device's first catalogue buffer holds (10,000
   * against 4,096): it grows on the device's word and measures again. */
  { "/gpu-local/random/many-sources", 300, 300, 0, 0, 0, 0, 0, 0, 3 },
};

static void
make_field (const FieldCase *fc, GRand *rng, SkyImage *img)
{
  const int64_t nx = fc->nx, ny = fc->ny, n = nx * ny;
  float *pix = g_new0 (float, n);

  for (int64_t i = 0; i < n && !fc->flat; i++)
    {
      /* Box-Muller noise of sigma 1, and the gradient. */
      double u = g_rand_double_range (rng, 1e-12, 1), v = g_rand_double (rng);
      int64_t x = i % nx, y = i / nx;
      pix[i] = (float) (sqrt (-2 * log (u)) * cos (2 * G_PI * v)
                        + fc->gradient * (0.7 * x / nx + 0.3 * y / ny) + 10);
    }
  if (fc->flat)
    for (int64_t i = 0; i < n; i++)
      pix[i] = 3.5f;
  for (int s = 0; s < fc->nsources; s++)
    {
      double x = g_rand_double_range (rng, 0, nx), y = g_rand_double_range (rng, 0, ny);
      double amp = 3 * exp (g_rand_double_range (rng, 0, 4)), sig = g_rand_double_range (rng, 0.8, 3);
      add_gauss (pix, nx, ny, x, y, amp, sig);
    }
  for (int64_t y = 1; fc->grid > 0 && y < ny; y += fc->grid)
    for (int64_t x = 1; x < nx; x += fc->grid)
      pix[y * nx + x] += 60;
  if (fc->edges)
    {
      const double at[][2] = { { 0, 0 }, { nx - 1, 0 }, { 0, ny - 1 }, { nx - 1, ny - 1 },
                               { nx / 2.0, 0 }, { 0, ny / 2.0 }, { nx - 1, ny / 3.0 },
                               { nx / 3.0, ny - 1 } };
      for (int k = 0; k < (int) G_N_ELEMENTS (at); k++)
        add_gauss (pix, nx, ny, at[k][0], at[k][1], 40, 2.5);
    }
  if (fc->extended > 0)
    {
      /* A wide blob with points on it: one island spanning much of the
       * field, which deblending must split. */
      add_gauss (pix, nx, ny, nx * 0.45, ny * 0.55, 30, fc->extended);
      for (int k = 0; k < 12; k++)
        add_gauss (pix, nx, ny, nx * 0.45 + g_rand_double_range (rng, -1, 1) * fc->extended,
                   ny * 0.55 + g_rand_double_range (rng, -1, 1) * fc->extended, 25, 1.8);
    }
  if (fc->blank > 0)
    {
      int64_t bw = nx / 5, bh = ny / 6, bx = nx / 3, by = ny / 2;
      for (int64_t y = by; y < by + bh; y++)
        for (int64_t x = bx; x < bx + bw; x++)
          pix[y * nx + x] = NAN;
      for (int64_t k = 0; k < (int64_t) (fc->blank * n / 2); k++)
        pix[g_rand_int_range (rng, 0, (gint32) n)] = NAN;
    }
  sky_test_image (img, nx, ny, pix);
  g_free (pix);
}

static void
test_field (gconstpointer data)
{
  const FieldCase *fc = data;
  GRand *rng;
  SkyImage img;
  SkyParams p;

  if (!sky_test_gpu_ready (&device))
    return;
  if (quick && fc->nx * fc->ny > 400 * 400)
    {
      g_test_skip ("SKYSIFT_GPU_TEST_QUICK: large field left out");
      return;
    }
  rng = g_rand_new_with_seed (g_test_rand_int ());
  make_field (fc, rng, &img);
  /* A flat image has no rms: the filtered noise scale the CPU measures on
   * it has no pixel to clip, and the CPU refuses the filtered run (clip:
   * every pixel is blank); the unfiltered runs find nothing on both. */
  if (fc->flat)
    g_test_message ("%s: no matched-filter variant (the CPU refuses it: no rms)", fc->path);
  sky_params_init (&p);
  check_variants (fc->path, &img, &p, !fc->flat);
  sky_image_clear (&img);
  g_rand_free (rng);
}

/* Twice on one context, and after a larger image: buffers kept between
 * runs give the same answer as fresh ones. */
static void
test_reuse (void)
{
  GRand *rng;
  SkyImage a, b;
  SkyParams p;

  if (!sky_test_gpu_ready (&device))
    return;
  rng = g_rand_new_with_seed (g_test_rand_int ());
  make_field (&field_cases[6], rng, &a);
  make_field (&field_cases[0], rng, &b);
  sky_params_init (&p);
  check_local ("reuse: a huge island", &a, &p, NULL);
  check_local ("reuse: small after large", &b, &p, NULL);
  check_local ("reuse: small again", &b, &p, NULL);
  sky_image_clear (&a);
  sky_image_clear (&b);
  g_rand_free (rng);
}

/* A second context made with one switch set: the switches are read when a
 * context is made (sky-gpu-switches.cu), so a test of another way needs
 * its own. */
static SkyGpu *
context_with (const char *variable, const char *value)
{
  SkyGpu *gpu = NULL;

  g_setenv (variable, value, TRUE);
  if (sky_gpu_new (&gpu) != SKY_OK)
    g_error ("a second GPU context (%s=%s): %s", variable, value, sky_last_error ());
  g_unsetenv (variable);
  return gpu;
}

/* The switches' other ways, each on a context of its own (the switches
 * are read when a context is made, sky-gpu-switches.cu), checked against
 * the CPU on a crowded field and, unless the run is quick or huge_too is
 * off, a huge island. The labels read "WAY: crowded" and "WAY: a huge
 * island". */
typedef struct {
  const char *path, *variable, *value, *way;
  gboolean huge_too;
} SwitchCase;

static const SwitchCase switch_cases[] = {
  /* The deblending's other ways: every island climbing the levels (0), and
   * the component tree answering only whether an island splits (1); each
   * decides as the CPU does. */
  { "/gpu-local/deblend-climb", "SKYSIFT_GPU_DEBLEND_TREE", "0", "climb only", TRUE },
  { "/gpu-local/deblend-tree-split-only", "SKYSIFT_GPU_DEBLEND_TREE", "1", "tree for no split",
    TRUE },
  /* The small islands deblended by the large islands' blocks too, where
   * otherwise blocks of their own take them beside the large ones, on a
   * second stream. */
  { "/gpu-local/deblend-small", "SKYSIFT_GPU_DEBLEND_SMALL", "one",
    "small islands by the large blocks", TRUE },
  /* The local measures' other blocks: 256 threads a source, which many
   * sources get, and 1024; the crowded field's some 900 sources get 256 with
   * warps for the small ones. */
  { "/gpu-local/measure-blocks/256", "SKYSIFT_GPU_MEASURE_THREADS", "256",
    "measures 256 threads a source", FALSE },
  { "/gpu-local/measure-blocks/1024", "SKYSIFT_GPU_MEASURE_THREADS", "1024",
    "measures 1024 threads a source", FALSE },
  /* The small sources measured by the other sources' blocks too, where
   * otherwise, when the sources are many, those whose box is at most 10 a
   * side take a warp each, on a second stream. */
  { "/gpu-local/measure-small", "SKYSIFT_GPU_MEASURE_SMALL", "one",
    "small sources by the large blocks", TRUE },
  /* The core walked by a queue in global memory for every source, where by
   * default a source whose box fits the bitmap is grown in shared memory
   * and only the larger ones take the queue. */
  { "/gpu-local/core-walk", "SKYSIFT_GPU_CORE_WALK", "queue", "core walked by a queue", TRUE },
};

static void
test_switch (gconstpointer data)
{
  const SwitchCase *sc = data;
  const gboolean huge_too = sc->huge_too && !quick;
  SkyGpu *own = device.gpu, *other;
  GRand *rng;
  SkyImage a, b;
  SkyParams p;
  char what[96];

  if (!sky_test_gpu_ready (&device))
    return;
  rng = g_rand_new_with_seed (g_test_rand_int ());
  make_field (&field_cases[2], rng, &a);
  sky_params_init (&p);
  if (huge_too)
    make_field (&field_cases[6], rng, &b);
  other = context_with (sc->variable, sc->value);
  device.gpu = other;
  g_snprintf (what, sizeof what, "%s: crowded", sc->way);
  check_local (what, &a, &p, NULL);
  if (huge_too)
    {
      g_snprintf (what, sizeof what, "%s: a huge island", sc->way);
      check_local (what, &b, &p, NULL);
      sky_image_clear (&b);
    }
  device.gpu = own;
  sky_gpu_free (other);
  sky_image_clear (&a);
  g_rand_free (rng);
}

/* ------------------------------------------------------------ shared images */

static void
test_shared_image (gconstpointer data)
{
  const char *path = data;
  SkyImage img;

  if (!sky_test_gpu_ready (&device))
    return;
  if (sky_image_load (path, NULL, &img) != SKY_OK)
    {
      g_test_fail_printf ("%s: %s", path, sky_last_error ());
      return;
    }
  SkyParams p;
  sky_params_init (&p);
  check_variants (path, &img, &p, TRUE);
  sky_image_clear (&img);
}

int
main (int argc, char **argv)
{
  int ret;

  g_test_init (&argc, &argv, NULL);
  quick = g_strcmp0 (g_getenv ("SKYSIFT_GPU_TEST_QUICK"), "1") == 0;
  sky_test_gpu_open (&device);
  sky_test_add_shared_images ("/gpu-local", quick, test_shared_image);
  for (int i = 0; i < (int) G_N_ELEMENTS (field_cases); i++)
    g_test_add_data_func (field_cases[i].path, &field_cases[i], test_field);
  g_test_add_func ("/gpu-local/reuse", test_reuse);
  for (int k = 0; k < (int) G_N_ELEMENTS (switch_cases); k++)
    g_test_add_data_func (switch_cases[k].path, &switch_cases[k], test_switch);
  ret = g_test_run ();
  sky_test_gpu_close (&device, "GPU local-method parity checks", checks_passed, checks_failed);
  return ret;
}
