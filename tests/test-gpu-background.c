/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The local method's maps on the GPU against the CPU's, bit for bit: the
 * finished mesh, background, rms, residual = image - background and
 * snr = residual / rms (sky_snr_row), on every shared image and on random
 * fields (odd sizes, sizes that are no multiple of the box, blanks, whole
 * blank boxes and images, gradients, crowded and empty fields, flat and
 * quantized values), under several boxes and median filters. Two floats
 * are the same when their bits are, or when both are NaN (the NaN's
 * payload is the processor's: x86 passes on an operand's, CUDA makes its
 * own). Every test skips, saying why, where there is no usable GPU. */
#include "sky-cpu.h"
#include "sky-gpu.h"
#include "sky-test-gpu.h"
#include "sky-test-util.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static SkyTestGpu device;
/* device's mode kernel runs 256 threads a box, a second context's a warp
 * a box, a third's 128 threads a box (SKYSIFT_GPU_MODE_THREADS=256, 32 and
 * 128): every check runs on each. */
static SkyGpu *warp_gpu, *mid_gpu;
static int checks_passed, checks_failed;
static gboolean quick;

/* ------------------------------------------------------------ comparing */

static int
same_float (float a, float b)
{
  uint32_t ua, ub;

  memcpy (&ua, &a, 4);
  memcpy (&ub, &b, 4);
  return ua == ub || (isnan (a) && isnan (b));
}

/* How many of n values differ; the first one said in the log. */
static int64_t
count_differences (const char *name, const char *what, const float *cpu, const float *gpu,
                   int64_t n, int64_t nx)
{
  int64_t bad = 0;

  for (int64_t i = 0; i < n; i++)
    if (!same_float (cpu[i], gpu[i]))
      {
        if (bad == 0)
          g_test_message ("%s: %s differs first at x %lld y %lld: CPU %.9g (%a), GPU %.9g (%a)",
                          name, what, (long long) (i % nx), (long long) (i / nx), cpu[i], cpu[i],
                          gpu[i], gpu[i]);
        bad++;
      }
  if (bad > 0)
    g_test_message ("%s: %s: %lld of %lld values differ", name, what, (long long) bad,
                    (long long) n);
  return bad;
}

/* The CPU's maps: the whole background and rms, residual as the CPU's
 * detect step makes it, snr by the CPU's own sky_snr_row. */
static void
cpu_maps (const SkyImage *img, const SkyParams *p, float *bkg, float *rms, float *res,
          float *snr)
{
  const int64_t nx = img->nx;
  float *buf = g_new (float, 2 * nx);

  g_assert_cmpint (sky_cpu_background (img, p, 0, bkg, rms), ==, SKY_OK);
  SkyLocalMaps maps = { nx, bkg, rms, NULL };
  SkySnrSource src = { nx, NULL, img, &maps };
  for (int64_t y = 0; y < img->ny; y++)
    {
      for (int64_t x = 0; x < nx; x++)
        res[y * nx + x] = img->pixels[y * nx + x] - bkg[y * nx + x];
      sky_snr_row (&src, y, 0, nx, buf, snr + y * nx);
    }
  g_free (buf);
}

/* GPU (context gpu) against CPU on img with p; counts one check. */
static void
check_maps_on (SkyGpu *gpu, const char *name, const SkyImage *img, const SkyParams *p)
{
  const int64_t n = img->nx * img->ny;
  float *c[4], *g[4];
  const char *what[4] = { "background", "rms", "residual", "snr" };
  SkyBackgroundMesh mesh;
  SkyGpuMapsTimes t;
  int64_t bad = 0;
  char label[256];

  g_snprintf (label, sizeof label, "%s (%lld x %lld, box %d, filter %d%s)", name,
              (long long) img->nx, (long long) img->ny, p->bkg_box, p->bkg_filter,
              gpu == warp_gpu  ? ", mode a warp a box"
              : gpu == mid_gpu ? ", mode 128 threads a box"
                               : "");
  for (int m = 0; m < 4; m++)
    {
      c[m] = g_new (float, n);
      g[m] = g_new (float, n);
    }
  cpu_maps (img, p, c[0], c[1], c[2], c[3]);
  if (sky_gpu_local_maps_host (gpu, img, p, g[0], g[1], g[2], g[3], &t) != SKY_OK)
    {
      g_test_fail_printf ("%s: the GPU failed: %s", label, sky_last_error ());
      checks_failed++;
      goto exit;
    }

  /* The mesh first: a difference there says which phase to look at. */
  g_assert_cmpint (sky_cpu_background_mesh (img, p, 0, &mesh), ==, SKY_OK);
  {
    float *mb = g_new (float, mesh.nbx * mesh.nby), *mr = g_new (float, mesh.nbx * mesh.nby);
    g_assert_cmpint (sky_gpu_local_mesh_download (gpu, mb, mr), ==, SKY_OK);
    bad += count_differences (label, "mesh background", mesh.back, mb, mesh.nbx * mesh.nby,
                              mesh.nbx);
    bad += count_differences (label, "mesh rms", mesh.rms, mr, mesh.nbx * mesh.nby, mesh.nbx);
    g_free (mb);
    g_free (mr);
  }
  sky_background_mesh_clear (&mesh);
  for (int m = 0; m < 4; m++)
    bad += count_differences (label, what[m], c[m], g[m], n, img->nx);
  if (bad > 0)
    {
      g_test_fail_printf ("%s: the GPU's maps differ from the CPU's", label);
      checks_failed++;
    }
  else
    {
      g_test_message ("%s: every map equal; GPU kernels %.3f ms", label, t.kernel_ms);
      checks_passed++;
    }
exit:
  for (int m = 0; m < 4; m++)
    {
      g_free (c[m]);
      g_free (g[m]);
    }
}

static void
check_maps (const char *name, const SkyImage *img, const SkyParams *p)
{
  check_maps_on (device.gpu, name, img, p);
  if (warp_gpu != NULL)
    check_maps_on (warp_gpu, name, img, p);
  if (mid_gpu != NULL)
    check_maps_on (mid_gpu, name, img, p);
}

/* ------------------------------------------------------------- fields */

typedef enum {
  FIELD_NOISE,      /* empty: noise around an offset */
  FIELD_GRADIENT,   /* noise on a tilted, rippled background */
  FIELD_CROWDED,    /* many sources, some overlapping */
  FIELD_BLANKS,     /* scattered NaN, a blank rectangle over whole boxes */
  FIELD_HALF_BLANK, /* the left half NaN: boxes filled from far away */
  FIELD_ALL_BLANK,  /* nothing usable: background 0, rms 1 */
  FIELD_FLAT,       /* one value: no spread anywhere */
  FIELD_QUANTIZED,  /* small integers: sparse histograms */
  FIELD_COUNT
} FieldKind;

static const char *const field_names[FIELD_COUNT] = {
  "noise", "gradient", "crowded", "blanks", "half-blank", "all-blank", "flat", "quantized",
};

static double
gauss (GRand *r)
{
  double u = g_rand_double_range (r, 1e-12, 1.0), v = g_rand_double (r);
  return sqrt (-2.0 * log (u)) * cos (2.0 * G_PI * v);
}

static void
make_field (SkyImage *img, FieldKind kind, int64_t nx, int64_t ny, guint32 seed)
{
  GRand *r = g_rand_new_with_seed (seed);
  float *v = g_new (float, nx * ny);

  for (int64_t y = 0; y < ny; y++)
    for (int64_t x = 0; x < nx; x++)
      {
        double p = 100.0 + gauss (r);
        if (kind == FIELD_GRADIENT)
          p += 0.05 * x - 0.03 * y + 3.0 * sin (x / 37.0) * cos (y / 53.0);
        if (kind == FIELD_FLAT)
          p = 7.25;
        if (kind == FIELD_QUANTIZED)
          p = floor (3.0 + 1.5 * gauss (r));
        v[y * nx + x] = (float) p;
      }
  if (kind == FIELD_CROWDED)
    for (int s = 0; s < (int) (nx * ny / 300) + 1; s++)
      {
        double cx = g_rand_double_range (r, 0, nx), cy = g_rand_double_range (r, 0, ny);
        double amp = 3.0 + 200.0 * pow (g_rand_double (r), 3.0), w = 0.8 + 2.5 * g_rand_double (r);
        for (int64_t y = (int64_t) fmax (0, cy - 4 * w); y < fmin (ny, cy + 4 * w); y++)
          for (int64_t x = (int64_t) fmax (0, cx - 4 * w); x < fmin (nx, cx + 4 * w); x++)
            v[y * nx + x] += (float) (amp * exp (-((x - cx) * (x - cx) + (y - cy) * (y - cy))
                                                 / (2 * w * w)));
      }
  if (kind == FIELD_BLANKS)
    {
      for (int64_t i = 0; i < nx * ny; i++)
        if (g_rand_double (r) < 0.1)
          v[i] = NAN;
      for (int64_t y = ny / 4; y < ny / 2; y++)
        for (int64_t x = nx / 5; x < nx / 2; x++)
          v[y * nx + x] = NAN;
    }
  if (kind == FIELD_HALF_BLANK)
    for (int64_t y = 0; y < ny; y++)
      for (int64_t x = 0; x < nx / 2; x++)
        v[y * nx + x] = NAN;
  if (kind == FIELD_ALL_BLANK)
    for (int64_t i = 0; i < nx * ny; i++)
      v[i] = NAN;
  sky_test_image (img, nx, ny, v);
  g_free (v);
  g_rand_free (r);
}

typedef struct {
  int64_t nx, ny;
} Size;

static const Size sizes[] = {
  { 1, 1 }, { 7, 5 }, { 64, 64 }, { 65, 63 }, { 127, 129 }, { 300, 3 }, { 3, 300 },
  { 1001, 777 }, { 2048, 2048 },
};

typedef struct {
  int box, filter;
} Mesh;

/* The last, one-pixel boxes, only on the small images: meshes of over 128
 * boxes a row or 192 a column take the splines' scratch in global memory. */
static const Mesh meshes[] = { { 64, 3 }, { 32, 5 }, { 17, 1 }, { 50, 9 }, { 200, 3 }, { 1, 3 } };

static void
test_fields (gconstpointer data)
{
  const FieldKind kind = GPOINTER_TO_INT (data);

  if (!sky_test_gpu_ready (&device))
    return;
  for (int s = 0; s < (int) G_N_ELEMENTS (sizes); s++)
    {
      SkyImage img;
      if (quick && sizes[s].nx * sizes[s].ny > 300000)
        continue;
      make_field (&img, kind, sizes[s].nx, sizes[s].ny, 1000 + 17 * s + kind);
      for (int m = 0; m < (int) G_N_ELEMENTS (meshes); m++)
        {
          SkyParams p;
          if ((quick && m > 1 && s % 2) || (meshes[m].box == 1 && sizes[s].nx * sizes[s].ny > 1000))
            continue;
          sky_params_init (&p);
          p.bkg_box = meshes[m].box;
          p.bkg_filter = meshes[m].filter;
          check_maps (field_names[kind], &img, &p);
        }
      sky_image_clear (&img);
    }
}

/* ----------------------------------------------------- shared images */

static void
test_shared_image (gconstpointer data)
{
  const char *path = data;
  SkyImage img;
  SkyParams p;

  if (!sky_test_gpu_ready (&device))
    return;
  if (sky_image_load (path, NULL, &img) != SKY_OK)
    {
      g_test_fail_printf ("%s: %s", path, sky_last_error ());
      return;
    }
  sky_params_init (&p);
  check_maps (path, &img, &p);
  p.bkg_box = 32;
  p.bkg_filter = 5;
  check_maps (path, &img, &p);
  sky_image_clear (&img);
}

/* The device entry's guards: bad parameters and sizes are refused with a
 * message, and a context that made no mesh has none to give. */
static void
test_refusals (void)
{
  SkyGpuLocalMaps maps;
  SkyParams p;
  SkyGpu *fresh = NULL;
  float one = 0;

  if (!sky_test_gpu_ready (&device))
    return;
  sky_params_init (&p);
  p.bkg_filter = 4;
  g_assert_cmpint (sky_gpu_local_maps (device.gpu, NULL, 10, 10, &p, &maps), ==,
                   SKY_ERR_ARGUMENT);
  sky_params_init (&p);
  g_assert_cmpint (sky_gpu_local_maps (device.gpu, NULL, 0, 10, &p, &maps), ==, SKY_ERR_SIZE);
  g_assert_cmpint (sky_gpu_new (&fresh), ==, SKY_OK);
  g_assert_cmpint (sky_gpu_local_mesh_download (fresh, &one, &one), ==, SKY_ERR_ARGUMENT);
  g_assert_nonnull (strstr (sky_last_error (), "no background mesh"));
  sky_gpu_free (fresh);
  checks_passed++;
}

int
main (int argc, char **argv)
{
  int ret;

  g_test_init (&argc, &argv, NULL);
  quick = g_strcmp0 (g_getenv ("SKYSIFT_GPU_TEST_QUICK"), "1") == 0;
  /* The first context 256 threads a box, the second a warp a box, whatever
   * the mesh (by default its size picks one). */
  g_setenv ("SKYSIFT_GPU_MODE_THREADS", "256", TRUE);
  sky_test_gpu_open (&device);
  g_unsetenv ("SKYSIFT_GPU_MODE_THREADS");
  if (device.gpu != NULL)
    {
      g_setenv ("SKYSIFT_GPU_MODE_THREADS", "32", TRUE);
      if (sky_gpu_new (&warp_gpu) != SKY_OK)
        g_error ("a second GPU context: %s", sky_last_error ());
      g_setenv ("SKYSIFT_GPU_MODE_THREADS", "128", TRUE);
      if (sky_gpu_new (&mid_gpu) != SKY_OK)
        g_error ("a third GPU context: %s", sky_last_error ());
      g_unsetenv ("SKYSIFT_GPU_MODE_THREADS");
    }

  sky_test_add_shared_images ("/gpu-background", quick, test_shared_image);
  for (int k = 0; k < FIELD_COUNT; k++)
    {
      char *path = g_strdup_printf ("/gpu-background/random/%s", field_names[k]);
      g_test_add_data_func (path, GINT_TO_POINTER (k), test_fields);
      g_free (path);
    }
  g_test_add_func ("/gpu-background/refusals", test_refusals);
  ret = g_test_run ();
  sky_gpu_free (warp_gpu);
  sky_gpu_free (mid_gpu);

  sky_test_gpu_close (&device, "GPU background parity checks", checks_passed, checks_failed);
  return ret;
}
