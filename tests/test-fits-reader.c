/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The loader's own reader of uncompressed planes against cfitsio's path
 * (SKYSIFT_FITS_READER=cfitsio): the same pixels bit for bit, the same
 * blank and infinity counts, for every BITPIX, with and without scaling and
 * BLANK, on data of random bits (every NaN payload, infinity, denormal and
 * extreme integer turns up), on sizes that end inside a block and span
 * several tasks, on a plane of a cube and an extension, with 1 to 3
 * threads. */
#include "sky-test-fits-cases.h"
#include "sky-test-util.h"

#include <fitsio.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static void
load_with (const char *path, int64_t plane, const char *reader, const char *threads,
           SkyImage *img)
{
  SkyLoadOptions opts = { 0, plane };
  int ret;

  if (reader != NULL)
    g_setenv ("SKYSIFT_FITS_READER", reader, TRUE);
  else
    g_unsetenv ("SKYSIFT_FITS_READER");
  g_setenv ("SKYSIFT_THREADS", threads, TRUE);
  ret = sky_image_load (path, &opts, img);
  g_unsetenv ("SKYSIFT_FITS_READER");
  g_unsetenv ("SKYSIFT_THREADS");
  if (ret != SKY_OK)
    g_error ("loading %s failed (%d): %s", path, ret, sky_last_error ());
}

static void
assert_same_image (const SkyImage *a, const SkyImage *b)
{
  int64_t n = a->nx * a->ny;

  g_assert_cmpint (a->nx, ==, b->nx);
  g_assert_cmpint (a->ny, ==, b->ny);
  g_assert_cmpint (a->bitpix, ==, b->bitpix);
  g_assert_cmpint (a->hdu, ==, b->hdu);
  g_assert_cmpint (a->plane, ==, b->plane);
  g_assert_cmpint (a->nplanes, ==, b->nplanes);
  g_assert_cmpint (a->nblank, ==, b->nblank);
  g_assert_cmpint (a->ninf, ==, b->ninf);
  g_assert_cmpstr (a->bunit, ==, b->bunit);
  if (memcmp (a->pixels, b->pixels, (size_t) n * sizeof (float)) != 0)
    for (int64_t i = 0; i < n; i++)
      {
        uint32_t ua, ub;
        memcpy (&ua, a->pixels + i, 4);
        memcpy (&ub, b->pixels + i, 4);
        if (ua != ub)
          g_error ("pixel %lld differs: 0x%08x (%.9g) from cfitsio, 0x%08x (%.9g) read raw",
                   (long long) i, ua, a->pixels[i], ub, b->pixels[i]);
      }
}

/* Integer planes whose BSCALE carries values past float's range (the
 * reader's classifying loops: the overflows become blank infinities) and
 * one whose largest values stay just inside it (the loops that only look
 * for BLANK). */
typedef struct {
  SkyTestFitsCase c;
  gboolean overflows;
} RangeCase;

static const RangeCase range_cases[] = {
  { { "i16-scaled-overflow.fits", 16, 1e36, 0., TRUE, 5, TRUE, FALSE, SKY_TEST_ODD }, TRUE },
  { { "i32-scaled-overflow.fits", 32, 1e30, 2., FALSE, 0, FALSE, FALSE, SKY_TEST_ODD }, TRUE },
  { { "u8-scaled-overflow.fits", 8, 1e37, -1e36, TRUE, 3, TRUE, FALSE, SKY_TEST_ODD }, TRUE },
  { { "i16-scaled-near-max.fits", 16, 4e33, -1e33, TRUE, 0, TRUE, FALSE, SKY_TEST_ODD },
    FALSE },
  { { "i32-scaled-near-max.fits", 32, 7e28, 0., TRUE, 1, TRUE, FALSE, SKY_TEST_ODD },
    FALSE },
};

/* The plane read into fresh pages (through a block of each thread's own)
 * and into pages already in memory (4-byte values converted in place):
 * the reference's pixels and counts both times. */
static void
check_fresh_and_present_pages (const char *path, int64_t plane, const SkyImage *ref)
{
  SkyLoadOptions opts = { 0, plane };
  SkyImage shape = { 0 };
  SkyPlaneFile *file = NULL;
  int64_t n = ref->nx * ref->ny;
  size_t bytes = (size_t) n * sizeof (float);

  g_assert_cmpint (sky_plane_file_open (path, &opts, &shape, &file), ==, SKY_OK);
  for (int present = 0; present <= 1; present++)
    {
      SkyImage read = *ref;
      int64_t ninf = 0;
      float *pixels = mmap (NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                            -1, 0);
      g_assert_true (pixels != MAP_FAILED);
      if (present)
        memset (pixels, 0xa5, bytes);
      g_assert_cmpint (sky_plane_file_read (file, 0, n, 2, pixels, &ninf), ==, SKY_OK);
      read.pixels = pixels;
      read.ninf = ninf;
      read.nblank = 0;
      for (int64_t i = 0; i < n; i++)
        read.nblank += isnan (pixels[i]);
      assert_same_image (ref, &read);
      /* A part from an odd pixel, into a place one float off a page's
       * start, as a reader of chunks asks for it. */
      if (present)
        memset (pixels, 0xa5, bytes);
      else
        {
          munmap (pixels, bytes);
          pixels = mmap (NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
          g_assert_true (pixels != MAP_FAILED);
        }
      if (n >= 8)
        {
          int64_t first = n / 3 + 1, count = n / 3;
          g_assert_cmpint (sky_plane_file_read (file, first, count, 2, pixels + 1, NULL), ==,
                           SKY_OK);
          g_assert_cmpint (memcmp (pixels + 1, ref->pixels + first,
                                   (size_t) count * sizeof (float)), ==, 0);
        }
      munmap (pixels, bytes);
    }
  sky_plane_file_close (file);
  sky_image_clear (&shape);
}

static void
check_case (gconstpointer data)
{
  const SkyTestFitsCase *c = data;
  g_autofree char *path = sky_test_fits_case_write (c, 20261124u + (guint32) c->bitpix);
  SkyImage ref = { 0 };

  load_with (path, c->plane, "cfitsio", "2", &ref);
  g_test_message ("%s: %lld x %lld, %lld blank, %lld infinite", c->name, (long long) ref.nx,
                  (long long) ref.ny, (long long) ref.nblank, (long long) ref.ninf);
  /* cfitsio ignores a BLANK equal to its own "undefined" mark. */
  if (c->plant_blank && c->blank != 1234554321LL)
    g_assert_cmpint (ref.nblank, >, 0);
  if (c->bitpix > 0 && !(c->plant_blank && c->blank != 1234554321LL))
    g_assert_cmpint (ref.nblank, ==, 0);
  if (c->bitpix < 0)
    {
      /* Random bits hold NaN and Inf patterns: the checks meet both. */
      g_assert_cmpint (ref.ninf, >, 0);
      g_assert_cmpint (ref.nblank, >, ref.ninf);
    }
  for (int t = 1; t <= 3; t++)
    {
      SkyImage raw = { 0 };
      char threads[8];
      g_snprintf (threads, sizeof threads, "%d", t);
      load_with (path, c->plane, NULL, threads, &raw);
      assert_same_image (&ref, &raw);
      sky_image_clear (&raw);
    }
  check_fresh_and_present_pages (path, c->plane, &ref);
  sky_image_clear (&ref);
  g_unlink (path);
}

static void
check_range_case (gconstpointer data)
{
  const RangeCase *rc = data;
  g_autofree char *path = sky_test_fits_case_write (&rc->c, 20261125u);
  SkyImage ref = { 0 };

  load_with (path, 0, "cfitsio", "2", &ref);
  g_test_message ("%s: %lld blank, %lld infinite", rc->c.name, (long long) ref.nblank,
                  (long long) ref.ninf);
  /* The case is what it claims: values past float's range or none. */
  if (rc->overflows)
    g_assert_cmpint (ref.ninf, >, 0);
  else
    g_assert_cmpint (ref.ninf, ==, 0);
  for (int t = 1; t <= 2; t++)
    {
      SkyImage raw = { 0 };
      char threads[8];
      g_snprintf (threads, sizeof threads, "%d", t);
      load_with (path, 0, NULL, threads, &raw);
      assert_same_image (&ref, &raw);
      sky_image_clear (&raw);
    }
  check_fresh_and_present_pages (path, 0, &ref);
  sky_image_clear (&ref);
  g_unlink (path);
}

/* The load ends with every pixel in memory: no page of the image is left
 * to be mapped in later (mincore asks the kernel which pages are there). */
static void
test_pixels_resident (void)
{
  static const SkyTestFitsCase c = { "resident.fits", -32, 1., 0., FALSE, 0, FALSE, FALSE,
                                     SKY_TEST_ODD };
  g_autofree char *path = sky_test_fits_case_write (&c, 7u);
  SkyImage img = { 0 };
  long page = sysconf (_SC_PAGESIZE);
  uintptr_t first, last;
  size_t npages;
  unsigned char *there;

  load_with (path, 0, NULL, "2", &img);
  first = (uintptr_t) img.pixels / (uintptr_t) page * (uintptr_t) page;
  last = (uintptr_t) (img.pixels + img.nx * img.ny - 1) / (uintptr_t) page * (uintptr_t) page;
  npages = (last - first) / (size_t) page + 1;
  there = g_malloc (npages);
  g_assert_cmpint (mincore ((void *) first, (size_t) (last - first) + (size_t) page, there), ==,
                   0);
  for (size_t i = 0; i < npages; i++)
    if (!(there[i] & 1))
      g_error ("page %zu of %zu of the image is not in memory after the load", i, npages);
  g_free (there);
  sky_image_clear (&img);
  g_unlink (path);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  for (int i = 0; i < sky_test_fits_ncases; i++)
    {
      const SkyTestFitsCase *c = &sky_test_fits_cases[i];
      char *name = g_strdup_printf ("/fits-reader/same-as-cfitsio/%s", c->name);
      g_test_add_data_func (name, c, check_case);
      g_free (name);
    }
  for (guint i = 0; i < G_N_ELEMENTS (range_cases); i++)
    {
      char *name = g_strdup_printf ("/fits-reader/same-as-cfitsio/%s", range_cases[i].c.name);
      g_test_add_data_func (name, &range_cases[i], check_range_case);
      g_free (name);
    }
  g_test_add_func ("/fits-reader/pixels-resident", test_pixels_resident);
  return g_test_run ();
}
