/* SPDX-License-Identifier: GPL-3.0-or-later */
/* FITS loading: every fixture is written with cfitsio at test time, so the
 * checks hold on any machine; damaged files are valid ones patched by hand. */
#include "sky-test-util.h"

#include <fitsio.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---------------------------------------------------------------- fixtures */

static void
fits_ok (int status, const char *what)
{
  char text[FLEN_STATUS];

  if (status == 0)
    return;
  fits_get_errstatus (status, text);
  g_error ("cfitsio failed to %s: %s", what, text);
}

/* A new FITS file under the test folder; the name is taken literally. */
static fitsfile *
fixture_create (const char *path)
{
  fitsfile *f = NULL;
  int status = 0;

  g_unlink (path);
  fits_create_diskfile (&f, path, &status);
  fits_ok (status, "create a fixture");
  return f;
}

static void
fixture_image (fitsfile *f, int bitpix, int naxis, const long *naxes)
{
  int status = 0;

  fits_create_img (f, bitpix, naxis, (long *) naxes, &status);
  fits_ok (status, "create an image HDU");
}

static void
fixture_key_double (fitsfile *f, const char *name, double value)
{
  int status = 0;

  fits_update_key (f, TDOUBLE, name, &value, NULL, &status);
  fits_ok (status, "write a keyword");
}

static void
fixture_key_string (fitsfile *f, const char *name, const char *value)
{
  int status = 0;

  fits_update_key (f, TSTRING, name, (void *) value, NULL, &status);
  fits_ok (status, "write a keyword");
}

static void
fixture_key_int (fitsfile *f, const char *name, long long value)
{
  int status = 0;

  fits_update_key (f, TLONGLONG, name, &value, NULL, &status);
  fits_ok (status, "write a keyword");
}

/* Makes the keywords written so far take effect, then turns off cfitsio's
 * own scaling, so that the data written next are the raw stored values. */
static void
fixture_raw (fitsfile *f)
{
  int status = 0;

  fits_set_hdustruc (f, &status);
  fits_set_bscale (f, 1.0, 0.0, &status);
  fits_ok (status, "switch to raw values");
}

static void
fixture_pixels (fitsfile *f, int datatype, long long n, const void *data)
{
  int status = 0;

  fits_write_img (f, datatype, 1, n, (void *) data, &status);
  fits_ok (status, "write pixels");
}

static void
fixture_close (fitsfile *f)
{
  int status = 0;

  fits_close_file (f, &status);
  fits_ok (status, "close a fixture");
}

/* A plain float32 image whose pixel (x, y), 0-based, is 10 * y + x. */
static char *
fixture_gradient (const char *name, long nx, long ny)
{
  char *path = sky_test_tmp_path (name);
  long naxes[2] = { nx, ny };
  float *v = g_new (float, nx * ny);
  fitsfile *f = fixture_create (path);

  for (long i = 0; i < nx * ny; i++)
    v[i] = (float) (10 * (i / nx) + i % nx);
  fixture_image (f, FLOAT_IMG, 2, naxes);
  fixture_pixels (f, TFLOAT, nx * ny, v);
  fixture_close (f);
  g_free (v);
  return path;
}

/* Replaces the value of one header card (columns 11-30, right-justified) in
 * the first header of a file, as a damaged or lying writer would leave it. */
static void
patch_card (const char *path, const char *keyword, const char *value)
{
  char *data = NULL;
  gsize len = 0;
  char card[81];
  gboolean found = FALSE;

  g_assert_true (g_file_get_contents (path, &data, &len, NULL));
  g_snprintf (card, sizeof card, "%-8s= %20s", keyword, value);
  for (gsize at = 0; at + 80 <= len && !found; at += 80)
    {
      if (strncmp (data + at, "END     ", 8) == 0)
        break;
      if (strncmp (data + at, card, 10) == 0)
        {
          memcpy (data + at, card, 30);
          found = TRUE;
        }
    }
  g_assert_true (found);
  g_assert_true (g_file_set_contents (path, data, (gssize) len, NULL));
  g_free (data);
}

static void
load_ok (const char *path, const SkyLoadOptions *opts, SkyImage *img)
{
  int ret = sky_image_load (path, opts, img);

  if (ret != SKY_OK)
    g_error ("loading %s failed (%d): %s", path, ret, sky_last_error ());
  g_assert_nonnull (img->pixels);
  g_assert_cmpstr (img->path, ==, path);
}

/* A failed load returns the expected status, leaves *img all zero (it was
 * filled with garbage first) and gives a message with the path and why. */
static void
assert_load_fails (const char *path, const SkyLoadOptions *opts, int expected)
{
  SkyImage img;
  const unsigned char *bytes = (const unsigned char *) &img;
  const char *msg;
  int ret;

  memset (&img, 0x5a, sizeof img);
  ret = sky_image_load (path, opts, &img);
  msg = sky_last_error ();
  g_test_message ("%s -> %d (%s): %s", path, ret, sky_status_string (ret), msg);
  g_assert_cmpint (ret, ==, expected);
  g_assert_null (img.pixels);
  for (size_t i = 0; i < sizeof img; i++)
    g_assert_cmpuint (bytes[i], ==, 0);
  g_assert_nonnull (strstr (msg, path));
  /* A reason besides the path: "PATH: something". */
  g_assert_cmpuint (strlen (msg), >, strlen (path) + 5);
  g_assert_null (strchr (msg, '\n'));
}

/* ----------------------------------------------------------- BITPIX, scale */

#define NRAW 8

/* Writes raw stored integers with BSCALE/BZERO (and BLANK when has_blank),
 * loads the file and checks every pixel against raw * bscale + bzero, or
 * NaN for BLANK, exactly as float32. */
static void
check_integer_image (const char *name, int bitpix, const long long raw[NRAW], double bscale,
                     double bzero, gboolean has_blank, long long blank)
{
  g_autofree char *path = sky_test_tmp_path (name);
  long naxes[2] = { 4, 2 };
  fitsfile *f = fixture_create (path);
  SkyImage img;
  int64_t nblank = 0;

  fixture_image (f, bitpix, 2, naxes);
  fixture_key_double (f, "BSCALE", bscale);
  fixture_key_double (f, "BZERO", bzero);
  if (has_blank)
    fixture_key_int (f, "BLANK", blank);
  fixture_raw (f);
  fixture_pixels (f, TLONGLONG, NRAW, raw);
  fixture_close (f);

  load_ok (path, NULL, &img);
  g_assert_cmpint (img.nx, ==, 4);
  g_assert_cmpint (img.ny, ==, 2);
  g_assert_cmpint (img.bitpix, ==, bitpix);
  g_assert_cmpint (img.hdu, ==, 1);
  for (int i = 0; i < NRAW; i++)
    {
      if (has_blank && raw[i] == blank)
        {
          g_assert_true (isnan (img.pixels[i]));
          nblank++;
        }
      else
        g_assert_cmpfloat (img.pixels[i], ==, (float) ((double) raw[i] * bscale + bzero));
    }
  g_assert_cmpint (img.nblank, ==, nblank);
  g_assert_cmpint (img.ninf, ==, 0);
  sky_image_clear (&img);
}

static void
test_bitpix_8 (void)
{
  const long long raw[NRAW] = { 0, 1, 2, 127, 128, 254, 255, 17 };
  check_integer_image ("b8.fits", BYTE_IMG, raw, 2.0, -10.0, FALSE, 0);
}

static void
test_bitpix_16 (void)
{
  const long long raw[NRAW] = { -32768, -1, 0, 1, 12345, 32767, -200, 7 };
  check_integer_image ("b16.fits", SHORT_IMG, raw, 0.5, 100.0, FALSE, 0);
}

/* The usual way to store unsigned 16-bit data: BZERO = 32768. */
static void
test_bitpix_16_unsigned (void)
{
  const long long raw[NRAW] = { -32768, -32767, -1, 0, 1, 32766, 32767, 100 };
  check_integer_image ("b16u.fits", SHORT_IMG, raw, 1.0, 32768.0, FALSE, 0);
}

static void
test_bitpix_32 (void)
{
  const long long raw[NRAW] = { INT32_MIN, -1, 0, 1, 123456789, INT32_MAX, -7, 42 };
  check_integer_image ("b32.fits", LONG_IMG, raw, 0.25, 1000.0, FALSE, 0);
}

static void
test_bitpix_64 (void)
{
  const long long raw[NRAW] = { INT64_MIN + 1, -1, 0, 1, 1LL << 40, INT64_MAX, -(1LL << 33), 99 };
  check_integer_image ("b64.fits", LONGLONG_IMG, raw, 2.0, 0.5, FALSE, 0);
}

static void
test_bitpix_minus32 (void)
{
  g_autofree char *path = sky_test_tmp_path ("bm32.fits");
  const float raw[NRAW] = { 1.5f, -2.25f, 0.0f, 1e30f, -1e-30f, 3.0f, 7.75f, 100.0f };
  long naxes[2] = { 4, 2 };
  fitsfile *f = fixture_create (path);
  SkyImage img;

  fixture_image (f, FLOAT_IMG, 2, naxes);
  fixture_key_double (f, "BSCALE", 2.0);
  fixture_key_double (f, "BZERO", 1.0);
  fixture_raw (f);
  fixture_pixels (f, TFLOAT, NRAW, raw);
  fixture_close (f);

  load_ok (path, NULL, &img);
  g_assert_cmpint (img.bitpix, ==, -32);
  for (int i = 0; i < NRAW; i++)
    g_assert_cmpfloat (img.pixels[i], ==, (float) ((double) raw[i] * 2.0 + 1.0));
  g_assert_cmpint (img.nblank, ==, 0);
  sky_image_clear (&img);
}

static void
test_bitpix_minus64 (void)
{
  g_autofree char *path = sky_test_tmp_path ("bm64.fits");
  const double raw[NRAW] = { 0.1, -2.25, 1e10, 123.456, -1e-5, 3.0, 1e20, -7.125 };
  long naxes[2] = { 4, 2 };
  fitsfile *f = fixture_create (path);
  SkyImage img;

  fixture_image (f, DOUBLE_IMG, 2, naxes);
  fixture_key_double (f, "BSCALE", 0.5);
  fixture_key_double (f, "BZERO", -3.0);
  fixture_raw (f);
  fixture_pixels (f, TDOUBLE, NRAW, raw);
  fixture_close (f);

  load_ok (path, NULL, &img);
  g_assert_cmpint (img.bitpix, ==, -64);
  for (int i = 0; i < NRAW; i++)
    g_assert_cmpfloat (img.pixels[i], ==, (float) (raw[i] * 0.5 - 3.0));
  sky_image_clear (&img);
}

/* ------------------------------------------------------------------ blanks */

static void
test_blank_integer (void)
{
  const long long raw8[NRAW] = { 255, 1, 2, 3, 255, 5, 6, 255 };
  const long long raw16[NRAW] = { -999, 1, 2, 3, 4, -999, 6, 7 };
  const long long raw32[NRAW] = { 0, 1, -2147483647, 3, 4, 5, 6, -2147483647 };
  const long long raw64[NRAW] = { 0, 1, 2, 3, -1, 5, 6, 7 };

  check_integer_image ("blank8.fits", BYTE_IMG, raw8, 1.0, 0.0, TRUE, 255);
  check_integer_image ("blank16.fits", SHORT_IMG, raw16, 2.0, 1.0, TRUE, -999);
  check_integer_image ("blank32.fits", LONG_IMG, raw32, 0.5, -4.0, TRUE, -2147483647);
  check_integer_image ("blank64.fits", LONGLONG_IMG, raw64, 1.0, 0.0, TRUE, -1);
}

static void
test_blank_nan (void)
{
  g_autofree char *p32 = sky_test_tmp_path ("nan32.fits");
  g_autofree char *p64 = sky_test_tmp_path ("nan64.fits");
  const float v32[6] = { NAN, 1, 2, NAN, 4, NAN };
  const double v64[6] = { 0, NAN, 2, 3, 4, 5 };
  long naxes[2] = { 3, 2 };
  fitsfile *f;
  SkyImage img;

  f = fixture_create (p32);
  fixture_image (f, FLOAT_IMG, 2, naxes);
  fixture_pixels (f, TFLOAT, 6, v32);
  fixture_close (f);
  f = fixture_create (p64);
  fixture_image (f, DOUBLE_IMG, 2, naxes);
  fixture_pixels (f, TDOUBLE, 6, v64);
  fixture_close (f);

  load_ok (p32, NULL, &img);
  g_assert_cmpint (img.nblank, ==, 3);
  g_assert_cmpint (img.ninf, ==, 0);
  for (int i = 0; i < 6; i++)
    if (isnan (v32[i]))
      g_assert_true (isnan (img.pixels[i]));
    else
      g_assert_cmpfloat (img.pixels[i], ==, v32[i]);
  sky_image_clear (&img);

  load_ok (p64, NULL, &img);
  g_assert_cmpint (img.nblank, ==, 1);
  g_assert_true (isnan (img.pixels[1]));
  g_assert_cmpfloat (img.pixels[5], ==, 5.0f);
  sky_image_clear (&img);
}

static void
test_blank_inf (void)
{
  g_autofree char *path = sky_test_tmp_path ("inf.fits");
  const float v[6] = { INFINITY, 1, -INFINITY, NAN, 4, 5 };
  long naxes[2] = { 3, 2 };
  fitsfile *f = fixture_create (path);
  SkyImage img;

  fixture_image (f, FLOAT_IMG, 2, naxes);
  fixture_pixels (f, TFLOAT, 6, v);
  fixture_close (f);

  load_ok (path, NULL, &img);
  g_assert_cmpint (img.ninf, ==, 2);
  g_assert_cmpint (img.nblank, ==, 3);
  for (int i = 0; i < 4; i++)
    if (i != 1)
      g_assert_true (isnan (img.pixels[i]));
  g_assert_cmpfloat (img.pixels[1], ==, 1.0f);
  g_assert_cmpfloat (img.pixels[5], ==, 5.0f);
  sky_image_clear (&img);
}

/* -------------------------------------------------------- layout and axes */

static void
test_row_order (void)
{
  g_autofree char *path = fixture_gradient ("rows.fits", 5, 4);
  SkyImage img;

  load_ok (path, NULL, &img);
  g_assert_cmpint (img.nx, ==, 5);
  g_assert_cmpint (img.ny, ==, 4);
  /* Array row 0 is FITS y = 1, the first row in the file. */
  for (int y = 0; y < 4; y++)
    for (int x = 0; x < 5; x++)
      g_assert_cmpfloat (img.pixels[y * 5 + x], ==, (float) (10 * y + x));
  sky_image_clear (&img);
}

static void
test_degenerate_axes (void)
{
  g_autofree char *path = sky_test_tmp_path ("naxis4.fits");
  long naxes[4] = { 5, 4, 1, 1 };
  float v[20];
  fitsfile *f = fixture_create (path);
  SkyImage img;

  for (int i = 0; i < 20; i++)
    v[i] = (float) i;
  fixture_image (f, FLOAT_IMG, 4, naxes);
  fixture_pixels (f, TFLOAT, 20, v);
  fixture_close (f);

  load_ok (path, NULL, &img);
  g_assert_cmpint (img.nx, ==, 5);
  g_assert_cmpint (img.ny, ==, 4);
  g_assert_cmpint (img.nplanes, ==, 1);
  g_assert_cmpint (img.plane, ==, 0);
  for (int i = 0; i < 20; i++)
    g_assert_cmpfloat (img.pixels[i], ==, v[i]);
  sky_image_clear (&img);
}

/* A cube whose plane p holds 1000 * p + 10 * y + x. */
static char *
fixture_cube (const char *name, int naxis, const long *naxes)
{
  char *path = sky_test_tmp_path (name);
  long n = 1;
  float *v;
  fitsfile *f = fixture_create (path);

  for (int i = 0; i < naxis; i++)
    n *= naxes[i];
  v = g_new (float, n);
  for (long i = 0; i < n; i++)
    {
      long plane = i / (naxes[0] * naxes[1]), in_plane = i % (naxes[0] * naxes[1]);
      v[i] = (float) (1000 * plane + 10 * (in_plane / naxes[0]) + in_plane % naxes[0]);
    }
  fixture_image (f, FLOAT_IMG, naxis, naxes);
  fixture_pixels (f, TFLOAT, n, v);
  fixture_close (f);
  g_free (v);
  return path;
}

static void
check_plane (const SkyImage *img, int64_t plane)
{
  g_assert_cmpint (img->plane, ==, plane);
  for (int64_t i = 0; i < img->nx * img->ny; i++)
    g_assert_cmpfloat (img->pixels[i], ==,
                       (float) (1000 * plane + 10 * (i / img->nx) + i % img->nx));
}

static void
test_cube_planes (void)
{
  long naxes[3] = { 4, 3, 3 };
  g_autofree char *path = fixture_cube ("cube.fits", 3, naxes);
  SkyLoadOptions opts = { 0, 0 };
  SkyImage img;

  load_ok (path, NULL, &img);
  g_assert_cmpint (img.nx, ==, 4);
  g_assert_cmpint (img.ny, ==, 3);
  g_assert_cmpint (img.nplanes, ==, 3);
  check_plane (&img, 0);
  sky_image_clear (&img);

  opts.plane = 2;
  load_ok (path, &opts, &img);
  g_assert_cmpint (img.nplanes, ==, 3);
  check_plane (&img, 2);
  sky_image_clear (&img);

  opts.plane = 1;
  load_ok (path, &opts, &img);
  check_plane (&img, 1);
  sky_image_clear (&img);
}

static void
test_cube_plane_out_of_range (void)
{
  long naxes[3] = { 4, 3, 3 };
  g_autofree char *path = fixture_cube ("cube-range.fits", 3, naxes);
  SkyLoadOptions opts = { 0, 3 };

  assert_load_fails (path, &opts, SKY_ERR_ARGUMENT);
  opts.plane = -1;
  assert_load_fails (path, &opts, SKY_ERR_ARGUMENT);
}

/* Axes 3 and 4 both count planes, axis 3 fastest, as in the file. */
static void
test_cube_4d (void)
{
  long naxes[4] = { 4, 3, 2, 3 };
  g_autofree char *path = fixture_cube ("cube4d.fits", 4, naxes);
  SkyLoadOptions opts = { 0, 5 };
  SkyImage img;

  load_ok (path, &opts, &img);
  g_assert_cmpint (img.nplanes, ==, 6);
  check_plane (&img, 5);
  sky_image_clear (&img);
  opts.plane = 6;
  assert_load_fails (path, &opts, SKY_ERR_ARGUMENT);
}

static void
test_one_pixel_and_line (void)
{
  g_autofree char *p11 = sky_test_tmp_path ("1x1.fits");
  g_autofree char *pcol = sky_test_tmp_path ("1x7.fits");
  g_autofree char *pline = sky_test_tmp_path ("naxis1.fits");
  long n11[2] = { 1, 1 }, ncol[2] = { 1, 7 }, nline[1] = { 7 };
  float one = 3.5f, seven[7] = { 0, 1, 2, 3, 4, 5, 6 };
  fitsfile *f;
  SkyImage img;

  f = fixture_create (p11);
  fixture_image (f, FLOAT_IMG, 2, n11);
  fixture_pixels (f, TFLOAT, 1, &one);
  fixture_close (f);
  f = fixture_create (pcol);
  fixture_image (f, FLOAT_IMG, 2, ncol);
  fixture_pixels (f, TFLOAT, 7, seven);
  fixture_close (f);
  f = fixture_create (pline);
  fixture_image (f, FLOAT_IMG, 1, nline);
  fixture_pixels (f, TFLOAT, 7, seven);
  fixture_close (f);

  load_ok (p11, NULL, &img);
  g_assert_cmpint (img.nx, ==, 1);
  g_assert_cmpint (img.ny, ==, 1);
  g_assert_cmpfloat (img.pixels[0], ==, 3.5f);
  sky_image_clear (&img);

  load_ok (pcol, NULL, &img);
  g_assert_cmpint (img.nx, ==, 1);
  g_assert_cmpint (img.ny, ==, 7);
  g_assert_cmpfloat (img.pixels[6], ==, 6.0f);
  sky_image_clear (&img);

  load_ok (pline, NULL, &img);
  g_assert_cmpint (img.nx, ==, 7);
  g_assert_cmpint (img.ny, ==, 1);
  g_assert_cmpfloat (img.pixels[6], ==, 6.0f);
  sky_image_clear (&img);
}

/* -------------------------------------------------------------------- HDUs */

/* A primary header without data, a small table, then the image. */
static char *
fixture_image_in_extension (const char *name)
{
  char *path = sky_test_tmp_path (name);
  long naxes[2] = { 3, 2 };
  const float v[6] = { 1, 2, 3, 4, 5, 6 };
  char *ttype[1] = { (char *) "FLUX" }, *tform[1] = { (char *) "1E" };
  fitsfile *f = fixture_create (path);
  int status = 0;

  fixture_image (f, FLOAT_IMG, 0, NULL);
  fixture_key_string (f, "BUNIT", "WRONG");
  fits_create_tbl (f, BINARY_TBL, 0, 1, ttype, tform, NULL, "SOURCES", &status);
  fits_ok (status, "create a table");
  fixture_image (f, FLOAT_IMG, 2, naxes);
  fixture_key_string (f, "BUNIT", "Jy/beam");
  fixture_pixels (f, TFLOAT, 6, v);
  fixture_close (f);
  return path;
}

static void
test_hdu_extension_auto (void)
{
  g_autofree char *path = fixture_image_in_extension ("ext.fits");
  SkyImage img;

  load_ok (path, NULL, &img);
  g_assert_cmpint (img.hdu, ==, 3);
  g_assert_cmpint (img.nx, ==, 3);
  g_assert_cmpint (img.ny, ==, 2);
  g_assert_cmpfloat (img.pixels[5], ==, 6.0f);
  /* The header values come from the image's own HDU. */
  g_assert_cmpstr (img.bunit, ==, "Jy/beam");
  sky_image_clear (&img);
}

static void
test_hdu_option (void)
{
  g_autofree char *path = fixture_image_in_extension ("ext-opt.fits");
  SkyLoadOptions opts = { 3, 0 };
  SkyImage img;

  load_ok (path, &opts, &img);
  g_assert_cmpint (img.hdu, ==, 3);
  g_assert_cmpfloat (img.pixels[0], ==, 1.0f);
  sky_image_clear (&img);

  opts.hdu = 1; /* the primary header has no data */
  assert_load_fails (path, &opts, SKY_ERR_NO_IMAGE);
  opts.hdu = 2; /* a table */
  assert_load_fails (path, &opts, SKY_ERR_NO_IMAGE);
  opts.hdu = 4; /* past the end */
  assert_load_fails (path, &opts, SKY_ERR_NO_IMAGE);
  opts.hdu = -1;
  assert_load_fails (path, &opts, SKY_ERR_ARGUMENT);
}

/* A primary HDU with NAXIS = 2 but NAXIS1 = NAXIS2 = 0 holds no data (some
 * writers make their empty primary that way): the image after it is found. */
static void
test_hdu_zero_size_primary (void)
{
  g_autofree char *path = sky_test_tmp_path ("zero-primary.fits");
  long zero[2] = { 0, 0 }, naxes[2] = { 3, 2 };
  const float v[6] = { 1, 2, 3, 4, 5, 6 };
  fitsfile *f = fixture_create (path);
  SkyImage img;

  fixture_image (f, FLOAT_IMG, 2, zero);
  fixture_image (f, FLOAT_IMG, 2, naxes);
  fixture_pixels (f, TFLOAT, 6, v);
  fixture_close (f);

  load_ok (path, NULL, &img);
  g_assert_cmpint (img.hdu, ==, 2);
  g_assert_cmpint (img.nx, ==, 3);
  g_assert_cmpfloat (img.pixels[5], ==, 6.0f);
  sky_image_clear (&img);
}

static void
test_tables_only (void)
{
  g_autofree char *path = sky_test_tmp_path ("tables.fits");
  char *ttype[2] = { (char *) "X", (char *) "Y" }, *tform[2] = { (char *) "1D", (char *) "1D" };
  double x[3] = { 1, 2, 3 };
  fitsfile *f = fixture_create (path);
  int status = 0;

  fixture_image (f, FLOAT_IMG, 0, NULL);
  fits_create_tbl (f, BINARY_TBL, 3, 2, ttype, tform, NULL, "CAT", &status);
  fits_write_col (f, TDOUBLE, 1, 1, 1, 3, x, &status);
  fits_write_col (f, TDOUBLE, 2, 1, 1, 3, x, &status);
  fits_ok (status, "write a table");
  fixture_close (f);

  assert_load_fails (path, NULL, SKY_ERR_NO_IMAGE);
}

/* ------------------------------------------------------ tile compression */

static void
test_compressed_rice_integer (void)
{
  g_autofree char *path = sky_test_tmp_path ("rice.fits");
  long naxes[2] = { 37, 23 }, tile[2] = { 10, 10 };
  short v[37 * 23];
  fitsfile *f = fixture_create (path);
  int status = 0;
  SkyImage img;

  for (int i = 0; i < 37 * 23; i++)
    v[i] = (short) ((i * 7919) % 20011 - 10000);
  v[5] = -32768; /* the BLANK value */
  fits_set_compression_type (f, RICE_1, &status);
  fits_set_tile_dim (f, 2, tile, &status);
  fits_ok (status, "choose Rice compression");
  fixture_image (f, SHORT_IMG, 2, naxes);
  fixture_key_double (f, "BSCALE", 0.5);
  fixture_key_double (f, "BZERO", 2.0);
  fixture_key_int (f, "BLANK", -32768);
  fixture_key_string (f, "CTYPE1", "RA---SIN");
  fixture_raw (f);
  fixture_pixels (f, TSHORT, 37 * 23, v);
  fixture_close (f);

  load_ok (path, NULL, &img);
  g_assert_cmpint (img.hdu, ==, 2); /* cfitsio puts it after an empty primary */
  g_assert_cmpint (img.nx, ==, 37);
  g_assert_cmpint (img.ny, ==, 23);
  g_assert_cmpint (img.bitpix, ==, 16);
  g_assert_cmpint (img.nblank, ==, 1);
  g_assert_true (isnan (img.pixels[5]));
  for (int i = 0; i < 37 * 23; i++)
    if (i != 5)
      g_assert_cmpfloat (img.pixels[i], ==, (float) (v[i] * 0.5 + 2.0));
  g_assert_nonnull (img.header);
  g_assert_nonnull (strstr (img.header, "CTYPE1"));
  sky_image_clear (&img);
}

static void
test_compressed_gzip_float (void)
{
  g_autofree char *path = sky_test_tmp_path ("gzip.fits");
  long naxes[2] = { 40, 30 };
  float v[40 * 30];
  fitsfile *f = fixture_create (path);
  int status = 0;
  SkyImage img;

  for (int i = 0; i < 40 * 30; i++)
    v[i] = (float) sin (i * 0.37) * 1e-3f + (float) i * 1.25e-7f;
  v[17] = NAN;
  v[100] = NAN;
  fits_set_compression_type (f, GZIP_1, &status);
  fits_set_quantize_level (f, 0.0f, &status); /* 0: no quantizing, lossless */
  fits_ok (status, "choose lossless GZIP compression");
  fixture_image (f, FLOAT_IMG, 2, naxes);
  fixture_pixels (f, TFLOAT, 40 * 30, v);
  fixture_close (f);

  load_ok (path, NULL, &img);
  g_assert_cmpint (img.hdu, ==, 2);
  g_assert_cmpint (img.nx, ==, 40);
  g_assert_cmpint (img.ny, ==, 30);
  g_assert_cmpint (img.bitpix, ==, -32);
  g_assert_cmpint (img.nblank, ==, 2);
  for (int i = 0; i < 40 * 30; i++)
    if (isnan (v[i]))
      g_assert_true (isnan (img.pixels[i]));
    else
      g_assert_cmpfloat (img.pixels[i], ==, v[i]);
  sky_image_clear (&img);
}

/* cfitsio's default for float images: quantized, values close but not
 * exact; NaN and +-Inf still come back as blanks, the infinities counted. */
static void
test_compressed_rice_float_quantized (void)
{
  g_autofree char *path = sky_test_tmp_path ("rice-float.fits");
  long naxes[2] = { 50, 20 };
  float v[50 * 20];
  fitsfile *f = fixture_create (path);
  int status = 0;
  SkyImage img;

  for (int i = 0; i < 50 * 20; i++)
    v[i] = (float) sin (i * 0.7) * 0.01f;
  v[3] = NAN;
  v[4] = INFINITY;
  v[999] = -INFINITY;
  fits_set_compression_type (f, RICE_1, &status);
  fits_ok (status, "choose Rice compression");
  fixture_image (f, FLOAT_IMG, 2, naxes);
  fixture_pixels (f, TFLOAT, 50 * 20, v);
  fixture_close (f);

  load_ok (path, NULL, &img);
  g_assert_cmpint (img.bitpix, ==, -32);
  g_assert_cmpint (img.nblank, ==, 3);
  g_assert_cmpint (img.ninf, ==, 2);
  for (int i = 0; i < 50 * 20; i++)
    if (isfinite (v[i]))
      g_assert_cmpfloat_with_epsilon (img.pixels[i], v[i], 1e-3);
    else
      g_assert_true (isnan (img.pixels[i]));
  sky_image_clear (&img);
}

/* ------------------------------------------------------------------ header */

static void
test_header_values (void)
{
  g_autofree char *path = sky_test_tmp_path ("header.fits");
  g_autofree char *plain = fixture_gradient ("no-header.fits", 3, 3);
  long naxes[2] = { 3, 3 };
  float v[9] = { 0 };
  fitsfile *f = fixture_create (path);
  SkyImage img;

  fixture_image (f, FLOAT_IMG, 2, naxes);
  fixture_key_string (f, "BUNIT", "Jy/beam");
  fixture_key_double (f, "BMAJ", 0.0125);
  fixture_key_double (f, "BMIN", 0.0075);
  fixture_key_double (f, "BPA", -32.5);
  fixture_key_string (f, "CTYPE1", "RA---SIN");
  fixture_key_string (f, "CTYPE2", "DEC--SIN");
  fixture_key_double (f, "CRVAL1", 266.4168);
  fixture_key_double (f, "CDELT1", -0.0011);
  v[4] = 1;
  fixture_pixels (f, TFLOAT, 9, v);
  fixture_close (f);

  load_ok (path, NULL, &img);
  g_assert_cmpstr (img.bunit, ==, "Jy/beam");
  g_assert_true (img.has_beam);
  g_assert_cmpfloat (img.bmaj, ==, 0.0125);
  g_assert_cmpfloat (img.bmin, ==, 0.0075);
  g_assert_cmpfloat (img.bpa, ==, -32.5);
  g_assert_nonnull (img.header);
  g_assert_cmpint (img.nheader_cards, >=, 13);
  g_assert_cmpuint (strlen (img.header), ==, (size_t) img.nheader_cards * 80);
  g_assert_nonnull (strstr (img.header, "CTYPE1  = 'RA---SIN'"));
  g_assert_nonnull (strstr (img.header, "CTYPE2  = 'DEC--SIN'"));
  g_assert_nonnull (strstr (img.header, "CRVAL1  ="));
  sky_image_clear (&img);

  load_ok (plain, NULL, &img);
  g_assert_cmpstr (img.bunit, ==, "");
  g_assert_false (img.has_beam);
  sky_image_clear (&img);
}

/* The name is a plain path: brackets and spaces are not cfitsio syntax. */
static void
test_literal_file_name (void)
{
  g_autofree char *path = fixture_gradient ("field [2] +x.fits", 4, 3);
  SkyImage img;

  load_ok (path, NULL, &img);
  g_assert_cmpint (img.nx, ==, 4);
  g_assert_cmpfloat (img.pixels[11], ==, 23.0f);
  sky_image_clear (&img);
}

/* ------------------------------------------------------------- bad input */

static void
test_bad_text_file (void)
{
  g_autofree char *path = sky_test_tmp_path ("notes.fits");

  g_assert_true (g_file_set_contents (path, "SIMPLE? no, just a text file\n", -1, NULL));
  assert_load_fails (path, NULL, SKY_ERR_FORMAT);
}

static void
test_bad_empty_file (void)
{
  g_autofree char *path = sky_test_tmp_path ("empty.fits");

  g_assert_true (g_file_set_contents (path, "", 0, NULL));
  assert_load_fails (path, NULL, SKY_ERR_FORMAT);
}

static void
test_bad_truncated (void)
{
  g_autofree char *path = fixture_gradient ("truncated.fits", 64, 64);

  /* One header block, then half of the 16 KiB of data. */
  g_assert_cmpint (truncate (path, 2880 + 64 * 64 * 4 / 2), ==, 0);
  assert_load_fails (path, NULL, SKY_ERR_FORMAT);
}

static void
test_bad_header_only (void)
{
  g_autofree char *path = fixture_gradient ("header-only.fits", 64, 64);

  g_assert_cmpint (truncate (path, 2880), ==, 0);
  assert_load_fails (path, NULL, SKY_ERR_FORMAT);
}

static void
test_bad_lying_header (void)
{
  g_autofree char *path = fixture_gradient ("lying.fits", 64, 64);

  patch_card (path, "NAXIS2", "128");
  assert_load_fails (path, NULL, SKY_ERR_FORMAT);
}

/* path gzipped by gzip, as an archive's download is, into gz_name. */
static char *
gzip_copy (const char *path, const char *gz_name)
{
  char *gz = sky_test_tmp_path (gz_name);
  g_autofree char *quoted_in = g_shell_quote (path);
  g_autofree char *quoted_out = g_shell_quote (gz);
  g_autofree char *cmd = g_strdup_printf ("gzip -c -n %s > %s", quoted_in, quoted_out);
  const char *argv[] = { "/bin/sh", "-c", cmd, NULL };
  g_autoptr (GError) error = NULL;
  int wait_status = 0;

  g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, 0, NULL, NULL, NULL, NULL,
                               &wait_status, &error));
  g_assert_no_error (error);
  g_assert_true (g_spawn_check_wait_status (wait_status, &error));
  return gz;
}

/* A gzipped file is smaller on disk than its data: it loads, pixel for
 * pixel the plain file's (the size check was made against the compressed
 * size, and refused every .fits.gz as truncated). */
static void
test_gzip_whole_file (void)
{
  g_autofree char *path = fixture_gradient ("plain.fits", 300, 200);
  g_autofree char *gz = gzip_copy (path, "plain.fits.gz");
  SkyImage plain, zipped;
  GStatBuf st;

  g_assert_cmpint (g_stat (gz, &st), ==, 0);
  g_assert_cmpint (st.st_size, <, 300 * 200 * 4);
  load_ok (path, NULL, &plain);
  load_ok (gz, NULL, &zipped);
  g_assert_cmpint (zipped.nx, ==, 300);
  g_assert_cmpint (zipped.ny, ==, 200);
  g_assert_cmpmem (zipped.pixels, 300 * 200 * sizeof (float), plain.pixels,
                   300 * 200 * sizeof (float));
  sky_image_clear (&plain);
  sky_image_clear (&zipped);
}

/* The header's promise is checked against the decompressed data. */
static void
test_gzip_lying_header (void)
{
  g_autofree char *path = fixture_gradient ("lying-gz.fits", 64, 64);
  g_autofree char *gz = NULL;

  patch_card (path, "NAXIS2", "128");
  gz = gzip_copy (path, "lying.fits.gz");
  assert_load_fails (gz, NULL, SKY_ERR_FORMAT);
  g_assert_nonnull (strstr (sky_last_error (), "decompressed"));
}

/* The name is taken literally: a plain file named .gz is read as it is. */
static void
test_plain_named_gz (void)
{
  g_autofree char *path = fixture_gradient ("named.fits.gz", 16, 8);
  SkyImage img;

  load_ok (path, NULL, &img);
  g_assert_cmpfloat (img.pixels[16 * 7 + 3], ==, 73.0f);
  sky_image_clear (&img);
}

/* Plane 0 is in the file, but the header promises a million more. */
static void
test_bad_lying_cube (void)
{
  long naxes[3] = { 8, 8, 2 };
  g_autofree char *path = fixture_cube ("lying-cube.fits", 3, naxes);

  patch_card (path, "NAXIS3", "1000000");
  assert_load_fails (path, NULL, SKY_ERR_FORMAT);
}

static void
test_bad_bitpix (void)
{
  g_autofree char *path = fixture_gradient ("bitpix17.fits", 8, 8);

  patch_card (path, "BITPIX", "17");
  assert_load_fails (path, NULL, SKY_ERR_FORMAT);
}

static void
test_bad_zero_axis (void)
{
  g_autofree char *path = fixture_gradient ("naxis0.fits", 8, 8);

  patch_card (path, "NAXIS1", "0");
  assert_load_fails (path, NULL, SKY_ERR_SIZE);
}

static void
test_bad_all_blank (void)
{
  g_autofree char *pfloat = sky_test_tmp_path ("all-nan.fits");
  g_autofree char *pint = sky_test_tmp_path ("all-blank.fits");
  long naxes[2] = { 4, 3 };
  float nan[12];
  short blank[12];
  fitsfile *f;

  for (int i = 0; i < 12; i++)
    {
      nan[i] = (i % 2) ? NAN : (i % 3 ? INFINITY : -INFINITY);
      blank[i] = -1;
    }
  f = fixture_create (pfloat);
  fixture_image (f, FLOAT_IMG, 2, naxes);
  fixture_pixels (f, TFLOAT, 12, nan);
  fixture_close (f);
  f = fixture_create (pint);
  fixture_image (f, SHORT_IMG, 2, naxes);
  fixture_key_int (f, "BLANK", -1);
  fixture_raw (f);
  fixture_pixels (f, TSHORT, 12, blank);
  fixture_close (f);

  assert_load_fails (pfloat, NULL, SKY_ERR_EMPTY);
  assert_load_fails (pint, NULL, SKY_ERR_EMPTY);
}

/* 10^7 x 10^7 float32 pixels would be 400 TB: refused from the header
 * alone, at once, before anything is allocated. */
static void
test_bad_huge (void)
{
  g_autofree char *path = fixture_gradient ("huge.fits", 64, 64);
  gint64 t0;
  int ret;
  SkyImage img;

  patch_card (path, "NAXIS1", "10000000");
  patch_card (path, "NAXIS2", "10000000");
  t0 = g_get_monotonic_time ();
  ret = sky_image_load (path, NULL, &img);
  g_assert_cmpint (g_get_monotonic_time () - t0, <, G_USEC_PER_SEC);
  g_assert_true (ret == SKY_ERR_SIZE || ret == SKY_ERR_FORMAT);
  assert_load_fails (path, NULL, ret);
}

/* Wider than any image skysift handles (more than 2^31 columns). */
static void
test_bad_too_wide (void)
{
  g_autofree char *path = fixture_gradient ("wide.fits", 64, 1);

  patch_card (path, "NAXIS1", "3000000000");
  assert_load_fails (path, NULL, SKY_ERR_SIZE);
}

static void
test_bad_directory (void)
{
  g_autofree char *path = sky_test_tmp_path ("a-folder.fits");

  g_assert_cmpint (g_mkdir (path, 0755), ==, 0);
  assert_load_fails (path, NULL, SKY_ERR_IO);
}

static void
test_bad_missing (void)
{
  g_autofree char *path = sky_test_tmp_path ("no-such-file.fits");

  assert_load_fails (path, NULL, SKY_ERR_IO);
}

/* --------------------------------------------------------------- pipeline */

/* A 2 x 3 image from a file through the four steps, with numbers worked by
 * hand: kappa 2 clips the 100 in the first pass (|100 - 3.5| > 2 * 36.17),
 * the second pass keeps 1..5 (median 3, sigma sqrt 2) and clips nothing.
 * Threshold 1 sigma keeps 2, 3, 4, 5, 100: one 4-connected source. */
static void
test_pipeline_2x3 (void)
{
  g_autofree char *path = sky_test_tmp_path ("2x3.fits");
  const float v[6] = { 1, 2,
                       3, 4,
                       5, 100 };
  long naxes[2] = { 2, 3 };
  fitsfile *f = fixture_create (path);
  SkyParams params;
  SkyResult res = { 0 };
  SkyImage img;

  fixture_image (f, FLOAT_IMG, 2, naxes);
  fixture_pixels (f, TFLOAT, 6, v);
  fixture_close (f);
  load_ok (path, NULL, &img);

  sky_params_init (&params);
  params.clip_kappa = 2;
  params.threshold = 1;
  sky_test_run_cpu (&img, &params, &res);

  g_assert_cmpfloat (res.stats.median, ==, 3.0);
  g_assert_cmpfloat_with_epsilon (res.stats.sigma, sqrt (2.0), 1e-12);
  g_assert_cmpfloat_with_epsilon (res.stats.mean, 3.0, 1e-12);
  g_assert_cmpint (res.stats.n, ==, 5);
  g_assert_cmpint (res.stats.ninput, ==, 6);
  g_assert_cmpint (res.stats.iterations, ==, 2);
  g_assert_true (res.stats.converged);
  g_assert_false (res.stats.flat);
  g_assert_cmpfloat_with_epsilon (res.threshold_value, sqrt (2.0), 1e-12);

  g_assert_cmpint (res.nsources, ==, 1);
  g_assert_cmpint (res.catalogue.n, ==, 1);
  g_assert_cmpint (res.catalogue.npix[0], ==, 5);
  g_assert_cmpfloat (res.catalogue.sum[0], ==, 114.0);
  g_assert_cmpfloat_with_epsilon (res.catalogue.x[0], 106.0 / 114.0, 1e-12);
  g_assert_cmpfloat_with_epsilon (res.catalogue.y[0], 217.0 / 114.0, 1e-12);
  g_assert_cmpfloat (res.catalogue.peak[0], ==, 100.0f);
  g_assert_cmpint (res.catalogue.peak_x[0], ==, 1);
  g_assert_cmpint (res.catalogue.peak_y[0], ==, 2);
  g_assert_cmpint (res.catalogue.xmin[0], ==, 0);
  g_assert_cmpint (res.catalogue.xmax[0], ==, 1);
  g_assert_cmpint (res.catalogue.ymin[0], ==, 0);
  g_assert_cmpint (res.catalogue.ymax[0], ==, 2);
  for (int i = 0; i < 6; i++)
    g_assert_cmpint (res.labels[i], ==, i == 0 ? 0 : 1);

  /* The lesson's defaults: nothing clipped, 5 sigma is above every pixel. */
  sky_params_init (&params);
  sky_test_run_cpu (&img, &params, &res);
  g_assert_cmpfloat (res.stats.median, ==, 3.5);
  g_assert_cmpint (res.stats.n, ==, 6);
  g_assert_cmpint (res.stats.iterations, ==, 1);
  g_assert_cmpint (res.nsources, ==, 0);

  sky_result_clear (&res);
  sky_image_clear (&img);
}

/* Every writer's file gets the mode any new file gets, 0666 less the
 * umask, the synthetic image by name (through cfitsio) as the catalogues
 * through a stream. */
static void
test_output_mode_follows_umask (void)
{
  g_autofree char *text_path = sky_test_tmp_path ("mode.json");
  g_autofree char *fits_path = sky_test_tmp_path ("mode.fits");
  g_autofree char *truth_path = sky_test_tmp_path ("mode-truth.csv");
  SkySynthOptions opts;
  struct stat st;
  mode_t old = umask (027);

  sky_synth_options_init (&opts);
  opts.size = 32;
  g_assert_cmpint (sky_write_text (text_path, "{}\n"), ==, SKY_OK);
  g_assert_cmpint (sky_synth_write (fits_path, truth_path, &opts), ==, SKY_OK);
  umask (old);
  g_assert_cmpint (stat (text_path, &st), ==, 0);
  g_assert_cmpint (st.st_mode & 0777, ==, 0640);
  g_assert_cmpint (stat (fits_path, &st), ==, 0);
  g_assert_cmpint (st.st_mode & 0777, ==, 0640);
  g_assert_cmpint (stat (truth_path, &st), ==, 0);
  g_assert_cmpint (st.st_mode & 0777, ==, 0640);
  g_remove (text_path);
  g_remove (fits_path);
  g_remove (truth_path);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/fits/bitpix/8", test_bitpix_8);
  g_test_add_func ("/fits/bitpix/16", test_bitpix_16);
  g_test_add_func ("/fits/bitpix/16-unsigned", test_bitpix_16_unsigned);
  g_test_add_func ("/fits/bitpix/32", test_bitpix_32);
  g_test_add_func ("/fits/bitpix/64", test_bitpix_64);
  g_test_add_func ("/fits/bitpix/-32", test_bitpix_minus32);
  g_test_add_func ("/fits/bitpix/-64", test_bitpix_minus64);
  g_test_add_func ("/fits/blank/integer-blank", test_blank_integer);
  g_test_add_func ("/fits/blank/nan", test_blank_nan);
  g_test_add_func ("/fits/blank/inf", test_blank_inf);
  g_test_add_func ("/fits/layout/row-order", test_row_order);
  g_test_add_func ("/fits/layout/degenerate-axes", test_degenerate_axes);
  g_test_add_func ("/fits/layout/one-pixel-and-line", test_one_pixel_and_line);
  g_test_add_func ("/fits/cube/planes", test_cube_planes);
  g_test_add_func ("/fits/cube/plane-out-of-range", test_cube_plane_out_of_range);
  g_test_add_func ("/fits/cube/4d", test_cube_4d);
  g_test_add_func ("/fits/hdu/extension-auto", test_hdu_extension_auto);
  g_test_add_func ("/fits/hdu/option", test_hdu_option);
  g_test_add_func ("/fits/hdu/zero-size-primary", test_hdu_zero_size_primary);
  g_test_add_func ("/fits/hdu/tables-only", test_tables_only);
  g_test_add_func ("/fits/compressed/gzip-whole-file", test_gzip_whole_file);
  g_test_add_func ("/fits/compressed/gzip-lying-header", test_gzip_lying_header);
  g_test_add_func ("/fits/compressed/plain-named-gz", test_plain_named_gz);
  g_test_add_func ("/fits/compressed/rice-integer", test_compressed_rice_integer);
  g_test_add_func ("/fits/compressed/gzip-float", test_compressed_gzip_float);
  g_test_add_func ("/fits/compressed/rice-float-quantized", test_compressed_rice_float_quantized);
  g_test_add_func ("/fits/header/values", test_header_values);
  g_test_add_func ("/fits/path/literal-name", test_literal_file_name);
  g_test_add_func ("/fits/bad/text-file", test_bad_text_file);
  g_test_add_func ("/fits/bad/empty-file", test_bad_empty_file);
  g_test_add_func ("/fits/bad/truncated", test_bad_truncated);
  g_test_add_func ("/fits/bad/header-only", test_bad_header_only);
  g_test_add_func ("/fits/bad/lying-header", test_bad_lying_header);
  g_test_add_func ("/fits/bad/lying-cube", test_bad_lying_cube);
  g_test_add_func ("/fits/bad/bitpix-17", test_bad_bitpix);
  g_test_add_func ("/fits/bad/zero-axis", test_bad_zero_axis);
  g_test_add_func ("/fits/bad/all-blank", test_bad_all_blank);
  g_test_add_func ("/fits/output/mode-follows-umask", test_output_mode_follows_umask);
  g_test_add_func ("/fits/bad/huge", test_bad_huge);
  g_test_add_func ("/fits/bad/too-wide", test_bad_too_wide);
  g_test_add_func ("/fits/bad/directory", test_bad_directory);
  g_test_add_func ("/fits/bad/missing", test_bad_missing);
  g_test_add_func ("/fits/pipeline/2x3", test_pipeline_2x3);

  return g_test_run ();
}
