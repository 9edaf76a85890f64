/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The device loader (sky_gpu_load_plane: the stored values from the file
 * to the device, converted there) against the host reader: the image
 * brought back from the device has the host's float bits, for every
 * BITPIX, scaling and BLANK of the readers' cases (random bits: every NaN
 * payload, infinity and extreme integer turns up), in chunks from a few
 * KiB (many per thread, ending mid-pixel-row) to the default, on 1 to 3
 * threads; the same blank and infinity counts; runs on the loaded image
 * agree with a run uploaded from the host (the contract's check, and to
 * the bit all but the GPU's atomic sums). Without
 * a usable GPU every test skips and says why. */
#include "sky-test-fits-cases.h"
#include "sky-test-gpu.h"
#include "sky-test-util.h"

#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static SkyTestGpu dev;
static int passed, failed;

static void
assert_same_bits (const char *what, const float *host, const float *device, int64_t n)
{
  if (memcmp (host, device, (size_t) n * sizeof (float)) == 0)
    return;
  for (int64_t i = 0; i < n; i++)
    {
      uint32_t a, b;
      memcpy (&a, host + i, 4);
      memcpy (&b, device + i, 4);
      if (a != b)
        {
          failed++;
          g_error ("%s: pixel %lld differs: 0x%08x (%.9g) read on the host, 0x%08x (%.9g) "
                   "converted on the device", what, (long long) i, a, host[i], b, device[i]);
        }
    }
}

/* Loads path's plane to the device in chunks of chunk_bytes on nthreads
 * threads and checks it against ref. */
static void
check_load (const char *path, int64_t plane, const SkyImage *ref, int nthreads,
            size_t chunk_bytes)
{
  SkyLoadOptions opts = { 0, plane };
  SkyPlaneFile *f = NULL;
  SkyImage img;
  SkyGpuLoadTimes t;
  float *back;
  int64_t n = ref->nx * ref->ny;
  char what[256];

  g_snprintf (what, sizeof what, "%s, %d threads, chunks of %zu bytes", path, nthreads,
              chunk_bytes);
  g_assert_cmpint (sky_plane_file_open (path, &opts, &img, &f), ==, SKY_OK);
  if (sky_gpu_load_plane (dev.gpu, f, &img, nthreads, chunk_bytes, &t) != SKY_OK)
    g_error ("%s: %s", what, sky_last_error ());
  sky_plane_file_close (f);
  g_assert_null (img.pixels);
  g_assert_cmpint (img.nx, ==, ref->nx);
  g_assert_cmpint (img.ny, ==, ref->ny);
  g_assert_cmpint (img.nblank, ==, ref->nblank);
  g_assert_cmpint (img.ninf, ==, ref->ninf);
  g_assert_cmpint (t.nchunks, >=, 1);
  back = g_malloc ((gsize) n * sizeof (float));
  /* Poisoned: every pixel must come from the device. */
  memset (back, 0xa5, (size_t) n * sizeof (float));
  g_assert_cmpint (sky_gpu_image_download (dev.gpu, back, n), ==, SKY_OK);
  assert_same_bits (what, ref->pixels, back, n);
  passed++;
  g_free (back);
  sky_image_clear (&img);
}

static void
check_case (gconstpointer data)
{
  const SkyTestFitsCase *c = data;
  g_autofree char *path = NULL;
  SkyLoadOptions opts;
  SkyImage ref = { 0 };
  int bytes = abs (c->bitpix) / 8;

  if (!sky_test_gpu_ready (&dev))
    return;
  path = sky_test_fits_case_write (c, 20261124u + (guint32) c->bitpix);
  opts.hdu = 0;
  opts.plane = c->plane;
  if (sky_image_load (path, &opts, &ref) != SKY_OK)
    g_error ("%s: %s", path, sky_last_error ());
  /* The default chunks; chunks of a few KiB (997 pixels' worth, rounded
   * down to 8 bytes: an odd number of pixels for most values). */
  check_load (path, c->plane, &ref, 0, 0);
  for (int threads = 1; threads <= 3; threads++)
    check_load (path, c->plane, &ref, threads, (size_t) (997 * bytes));
  check_load (path, c->plane, &ref, 2, 40008);
  sky_image_clear (&ref);
  g_unlink (path);
}

/* Every pixel blank: the loader says so, as sky_image_load does. */
static void
test_all_blank (void)
{
  static const SkyTestFitsCase c = { "all-blank.fits", 16, 1., 0., TRUE, 0, FALSE, FALSE,
                                     2, { 300, 200 }, 0 };
  g_autofree char *path = NULL;
  SkyLoadOptions opts = { 0, 0 };
  SkyPlaneFile *f = NULL;
  SkyImage img;
  FILE *fp;
  unsigned char zeros[300 * 200 * 2] = { 0 };

  if (!sky_test_gpu_ready (&dev))
    return;
  path = sky_test_fits_case_write (&c, 1u);
  g_assert_cmpint (sky_plane_file_open (path, &opts, &img, &f), ==, SKY_OK);
  /* Every stored value 0, which is BLANK. */
  fp = fopen (path, "r+b");
  g_assert_nonnull (fp);
  g_assert_cmpint (fseeko (fp, 2880, SEEK_SET), ==, 0);
  g_assert_cmpuint (fwrite (zeros, 1, sizeof zeros, fp), ==, sizeof zeros);
  g_assert_cmpint (fclose (fp), ==, 0);
  g_assert_cmpint (sky_gpu_load_plane (dev.gpu, f, &img, 0, 0, NULL), ==, SKY_ERR_EMPTY);
  g_assert_nonnull (strstr (sky_last_error (), "every pixel"));
  g_assert_nonnull (strstr (sky_last_error (), path));
  sky_plane_file_close (f);
  sky_image_clear (&img);
  passed++;
}

/* Two device runs on the same pixels agree as docs/contract.md says (the
 * clip's band sums and the measure's sums are atomic double additions,
 * whose order, and so whose last bits, may change from run to run), and
 * to the bit in everything that is counted or chosen rather than summed. */
static void
compare_runs (const SkyImage *img, const SkyResult *a, const SkyResult *b)
{
  const SkyCatalogue *x = &a->catalogue, *y = &b->catalogue;
  int64_t n = a->nsources;
  char why[2048];

  if (sky_result_compare (img, a, b, why, sizeof why) != 0)
    g_error ("a loaded run differs from an uploaded one: %s", why);
  g_assert_cmpint (a->nsources, ==, b->nsources);
  g_assert_cmpint (a->stats.n, ==, b->stats.n);
  g_assert_cmpint (a->stats.ninput, ==, b->stats.ninput);
  g_assert_cmpint (a->stats.iterations, ==, b->stats.iterations);
  g_assert_true (memcmp (x->npix, y->npix, (size_t) n * sizeof *x->npix) == 0);
  g_assert_true (memcmp (x->peak, y->peak, (size_t) n * sizeof *x->peak) == 0);
  g_assert_true (memcmp (x->peak_x, y->peak_x, (size_t) n * sizeof *x->peak_x) == 0);
  g_assert_true (memcmp (x->xmin, y->xmin, (size_t) n * sizeof *x->xmin) == 0);
  g_assert_true (memcmp (x->ymax, y->ymax, (size_t) n * sizeof *x->ymax) == 0);
  g_assert_true (memcmp (a->labels, b->labels, (size_t) (img->nx * img->ny) * 4) == 0);
}

/* A shared image: runs on the loaded image, the best of a few as the CLI
 * takes them, give the catalogue of a run uploaded from the host image. */
static void
test_catalogue (void)
{
  const char *why = NULL, *dir = sky_test_shared_data (&why);
  g_autofree char *path = NULL;
  SkyLoadOptions opts = { 0, 0 };
  SkyPlaneFile *f = NULL;
  SkyImage host = { 0 }, img;
  SkyParams params;
  SkyResult uploaded = { 0 }, loaded = { 0 };
  SkyGpuTimes t;

  if (!sky_test_gpu_ready (&dev))
    return;
  if (dir == NULL)
    {
      g_test_skip (why);
      return;
    }
  path = g_build_filename (dir, "gc_like_2048.fits", NULL);
  sky_params_init (&params);
  g_assert_cmpint (sky_image_load (path, &opts, &host), ==, SKY_OK);
  g_assert_cmpint (sky_gpu_run_on (dev.gpu, &host, &params, SKY_GPU_WANT_LABELS, &uploaded, &t),
                   ==, SKY_OK);
  /* After a host upload the context holds no loaded image. */
  g_assert_cmpint (sky_gpu_run_on (dev.gpu, &host, &params, SKY_GPU_IMAGE_LOADED, &loaded, &t),
                   ==, SKY_ERR_ARGUMENT);
  g_assert_cmpint (sky_plane_file_open (path, &opts, &img, &f), ==, SKY_OK);
  g_assert_cmpint (sky_gpu_load_plane (dev.gpu, f, &img, 0, 0, NULL), ==, SKY_OK);
  sky_plane_file_close (f);
  g_assert_cmpint (img.nblank, ==, host.nblank);
  g_assert_cmpint (sky_gpu_run_best (dev.gpu, &img, &params,
                                     SKY_GPU_IMAGE_LOADED | SKY_GPU_WANT_LABELS, 3, &loaded, &t),
                   ==, SKY_OK);
  g_assert_cmpint (loaded.nsources, ==, 344);
  compare_runs (&host, &uploaded, &loaded);
  passed++;
  sky_result_clear (&uploaded);
  sky_result_clear (&loaded);
  sky_image_clear (&img);
  sky_image_clear (&host);
}

int
main (int argc, char **argv)
{
  int ret;

  g_test_init (&argc, &argv, NULL);
  sky_test_gpu_open (&dev);
  for (int i = 0; i < sky_test_fits_ncases; i++)
    {
      const SkyTestFitsCase *c = &sky_test_fits_cases[i];
      char *name = g_strdup_printf ("/gpu-load/same-as-host/%s", c->name);
      g_test_add_data_func (name, c, check_case);
      g_free (name);
    }
  g_test_add_func ("/gpu-load/all-blank", test_all_blank);
  g_test_add_func ("/gpu-load/catalogue", test_catalogue);
  ret = g_test_run ();
  sky_test_gpu_close (&dev, "gpu-load", passed, failed);
  return ret;
}
