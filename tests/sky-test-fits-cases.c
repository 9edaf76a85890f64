/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "sky-test-fits-cases.h"
#include "sky-test-util.h"

#include <fitsio.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>

static void
fits_ok (int status, const char *what)
{
  char text[FLEN_STATUS];

  if (status == 0)
    return;
  fits_get_errstatus (status, text);
  g_error ("cfitsio failed to %s: %s", what, text);
}

/* Stores value big-endian in bytes bytes at p. */
static void
put_big_endian (unsigned char *p, int bytes, uint64_t value)
{
  for (int i = bytes - 1; i >= 0; i--, value >>= 8)
    p[i] = (unsigned char) (value & 0xff);
}

/* Writes the case's header with cfitsio, then its data as random bits
 * straight into the file where cfitsio put the (zero) data. */
char *
sky_test_fits_case_write (const SkyTestFitsCase *c, guint32 seed)
{
  char *path = sky_test_tmp_path (c->name);
  fitsfile *f = NULL;
  int status = 0, bytes = abs (c->bitpix) / 8;
  long long npix = 1, plane_size = c->naxes[0] * (c->naxis > 1 ? c->naxes[1] : 1);
  LONGLONG head, start, end;
  GRand *rand = g_rand_new_with_seed (seed);
  unsigned char *data;
  FILE *fp;

  for (int i = 0; i < c->naxis; i++)
    npix *= c->naxes[i];
  g_unlink (path);
  fits_create_diskfile (&f, path, &status);
  if (c->extension)
    fits_create_img (f, 8, 0, NULL, &status);
  fits_create_img (f, c->bitpix, c->naxis, (long *) c->naxes, &status);
  if (c->scale != 1. || c->zero != 0.)
    {
      double scale = c->scale, zero = c->zero;
      fits_update_key (f, TDOUBLE, "BSCALE", &scale, NULL, &status);
      fits_update_key (f, TDOUBLE, "BZERO", &zero, NULL, &status);
    }
  if (c->has_blank)
    {
      long long blank = c->blank;
      fits_update_key (f, TLONGLONG, "BLANK", &blank, NULL, &status);
    }
  {
    char bunit[] = "Jy/beam";
    fits_write_key (f, TSTRING, "BUNIT", bunit, NULL, &status);
  }
  fits_set_hdustruc (f, &status);
  fits_ok (status, "write the header");
  /* Make cfitsio write the (zero) data so that the file has its full size. */
  {
    unsigned char zero = 0;
    long long first = npix;
    fits_set_bscale (f, 1., 0., &status);
    fits_write_img (f, TBYTE, first, 1, &zero, &status);
  }
  fits_get_hduaddrll (f, &head, &start, &end, &status);
  fits_close_file (f, &status);
  fits_ok (status, "write the data");

  data = g_malloc ((gsize) (npix * bytes));
  for (long long i = 0; i < npix * bytes; i += 4)
    {
      guint32 r = g_rand_int (rand);
      for (int k = 0; k < 4 && i + k < npix * bytes; k++)
        data[i + k] = (unsigned char) (r >> (8 * k));
    }
  /* Some float patterns in every plane for certain: +-Inf, a quiet and a signalling NaN
   * with payloads, the largest finite value (Inf once scaled up). */
  for (long long at = plane_size / 2; at + 5 <= npix && plane_size > 8; at += plane_size)
    {
      const uint32_t v32[5] = { 0x7f800000u, 0xff800000u, 0x7fc12345u, 0xff812345u,
                                0x7f7fffffu };
      const uint64_t v64[5] = { 0x7ff0000000000000u, 0xfff0000000000000u,
                                0x7ff8000012345678u, 0xfff0000012345678u,
                                0x47efffffe0000000u };
      for (int k = 0; k < 5 && c->bitpix < 0; k++)
        put_big_endian (data + (at + k) * bytes, bytes, bytes == 4 ? v32[k] : v64[k]);
    }
  if (c->plant_blank)
    for (long long i = 0; i < npix; i += 97)
      put_big_endian (data + i * bytes, bytes, (uint64_t) c->blank);

  fp = fopen (path, "r+b");
  g_assert_nonnull (fp);
  g_assert_cmpint (fseeko (fp, (off_t) start, SEEK_SET), ==, 0);
  g_assert_cmpuint (fwrite (data, (size_t) bytes, (size_t) npix, fp), ==, (size_t) npix);
  g_assert_cmpint (fclose (fp), ==, 0);
  g_free (data);
  g_rand_free (rand);
  return path;
}


#define ODD SKY_TEST_ODD

const SkyTestFitsCase sky_test_fits_cases[] = {
  { "f32.fits", -32, 1., 0., FALSE, 0, FALSE, FALSE, ODD },
  { "f32-scaled.fits", -32, 2.5, -3.25, FALSE, 0, FALSE, FALSE, ODD },
  { "f64.fits", -64, 1., 0., FALSE, 0, FALSE, FALSE, ODD },
  { "f64-scaled.fits", -64, 1e-3, 7., FALSE, 0, FALSE, FALSE, ODD },
  { "u8.fits", 8, 1., 0., FALSE, 0, FALSE, FALSE, ODD },
  { "u8-scaled-blank.fits", 8, 0.5, -64., TRUE, 17, TRUE, FALSE, ODD },
  { "u8-signed.fits", 8, 1., -128., TRUE, 0, TRUE, FALSE, ODD },
  { "u8-blank-out-of-range.fits", 8, 1., 0., TRUE, 300, FALSE, FALSE, ODD },
  { "i16.fits", 16, 1., 0., FALSE, 0, FALSE, FALSE, ODD },
  { "i16-blank.fits", 16, 1., 0., TRUE, -32768, TRUE, FALSE, ODD },
  { "i16-unsigned.fits", 16, 1., 32768., TRUE, 7, TRUE, FALSE, ODD },
  { "i16-scaled.fits", 16, 3.0e-5, 1.5, TRUE, -1, TRUE, FALSE, ODD },
  { "i16-blank-out-of-range.fits", 16, 1., 0., TRUE, 40000, FALSE, FALSE, ODD },
  { "i32.fits", 32, 1., 0., FALSE, 0, FALSE, FALSE, ODD },
  { "i32-blank.fits", 32, 1., 0., TRUE, -2147483647 - 1, TRUE, FALSE, ODD },
  { "i32-unsigned.fits", 32, 1., 2147483648., FALSE, 0, FALSE, FALSE, ODD },
  { "i32-scaled-blank.fits", 32, 1e-9, -0.25, TRUE, 123456, TRUE, FALSE, ODD },
  /* A BLANK wider than 32 bits: cfitsio compares it narrowed (to 5). */
  { "i32-blank-wide.fits", 32, 1., 0., TRUE, 4294967301LL, TRUE, FALSE, ODD },
  /* cfitsio's own mark for "no BLANK": a BLANK of that value is ignored. */
  { "i32-blank-undefined.fits", 32, 1., 0., TRUE, 1234554321LL, TRUE, FALSE, ODD },
  { "i64.fits", 64, 1., 0., FALSE, 0, FALSE, FALSE, ODD },
  { "i64-blank.fits", 64, 1., 0., TRUE, -9000000000000000000LL, TRUE, FALSE, ODD },
  { "i64-unsigned.fits", 64, 1., 9223372036854775808., TRUE, 99, TRUE, FALSE, ODD },
  { "i64-scaled.fits", 64, 1e-12, 0.5, FALSE, 0, FALSE, FALSE, ODD },
  /* A plane of a cube and of a 4-D HDU, in an extension. */
  { "cube-f32.fits", -32, 1., 0., FALSE, 0, FALSE, FALSE, 3, { 257, 263, 5 }, 3 },
  { "cube-i16-ext.fits", 16, 2., 1., TRUE, 0, TRUE, TRUE, 4, { 131, 97, 3, 2 }, 4 },
  { "cube-f64-ext.fits", -64, 1., 0., FALSE, 0, FALSE, TRUE, 3, { 1025, 1024, 2 }, 1 },
  /* A single row and a single pixel. */
  { "row-f32.fits", -32, 1., 0., FALSE, 0, FALSE, FALSE, 1, { 4099 }, 0 },
  { "one-i16.fits", 16, 1., 0., FALSE, 0, FALSE, FALSE, 2, { 1, 1 }, 0 },
};

const int sky_test_fits_ncases = (int) G_N_ELEMENTS (sky_test_fits_cases);
