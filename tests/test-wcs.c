/* SPDX-License-Identifier: GPL-3.0-or-later */
/* World coordinates, sexagesimal text and the catalogue export's fluxes, on
 * headers written here card by card: every check holds on any machine.
 * (Positions against astropy.wcs on real images: test-catalogue.py.) */
#include "sky-test-util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- headers */

/* Gives img the header cards (NULL-terminated "KEY = value" texts, each
 * padded to 80 characters) and END, as the loader would keep them. */
static void
set_header (SkyImage *img, const char *const *cards)
{
  int n = 0;
  char *h;

  while (cards[n] != NULL)
    n++;
  h = malloc ((size_t) (n + 1) * 80 + 1);
  g_assert_nonnull (h);
  for (int i = 0; i < n; i++)
    {
      g_assert_cmpuint (strlen (cards[i]), <=, 80);
      memset (h + 80 * i, ' ', 80);
      memcpy (h + 80 * i, cards[i], strlen (cards[i]));
    }
  memset (h + 80 * n, ' ', 80);
  memcpy (h + 80 * n, "END", 3);
  h[80 * (n + 1)] = '\0';
  free (img->header);
  img->header = h;
  img->nheader_cards = n + 1;
}

/* A 100 x 80 image of zeros with the given header. */
static void
image_with_header (SkyImage *img, const char *const *cards)
{
  g_assert_cmpint (sky_image_alloc (img, 100, 80), ==, SKY_OK);
  set_header (img, cards);
}

static SkyWcs *
wcs_of (const char *const *cards)
{
  SkyImage img;
  SkyWcs *wcs = NULL;
  int ret;

  image_with_header (&img, cards);
  ret = sky_wcs_new (&img, &wcs);
  if (ret != SKY_OK)
    g_error ("sky_wcs_new: %s", sky_last_error ());
  sky_image_clear (&img); /* the WCS keeps nothing of the image */
  return wcs;
}

/* The status and message of sky_wcs_new on a header that has no usable WCS. */
static int
wcs_failure (const char *const *cards, const char *must_say)
{
  SkyImage img;
  SkyWcs *wcs = (SkyWcs *) &img; /* must come back NULL */
  int ret;

  image_with_header (&img, cards);
  img.path = g_strdup ("field.fits");
  ret = sky_wcs_new (&img, &wcs);
  g_assert_null (wcs);
  g_assert_cmpint (ret, !=, SKY_OK);
  g_assert_nonnull (strstr (sky_last_error (), "field.fits"));
  if (strstr (sky_last_error (), must_say) == NULL)
    g_error ("message '%s' does not say '%s'", sky_last_error (), must_say);
  sky_image_clear (&img);
  return ret;
}

#define TAN_HEADER(extra)                                                     \
  "NAXIS   = 2", "NAXIS1  = 100", "NAXIS2  = 80",                             \
  "CTYPE1  = 'RA---TAN'", "CTYPE2  = 'DEC--TAN'",                             \
  "CRPIX1  = 51.0", "CRPIX2  = 41.0", "CRVAL1  = 150.0", "CRVAL2  = 2.5",     \
  "CDELT1  = -0.000277777777777778", "CDELT2  = 0.000277777777777778", extra

/* ---------------------------------------------------------------- systems */

static void
test_tan_reference_pixel (void)
{
  const char *const cards[] = { TAN_HEADER ("EQUINOX = 2000.0"), NULL };
  SkyWcs *wcs = wcs_of (cards);
  double ra, dec;

  /* CRPIX is a FITS (1-based) pixel: skysift's 0-based pixel is one less. */
  g_assert_cmpint (sky_wcs_pix2world (wcs, 50.0, 40.0, &ra, &dec), ==, SKY_OK);
  g_assert_cmpfloat_with_epsilon (ra, 150.0, 1e-12);
  g_assert_cmpfloat_with_epsilon (dec, 2.5, 1e-12);
  g_assert_cmpint (sky_wcs_system (wcs), ==, SKY_COORD_EQUATORIAL);
  g_assert_cmpstr (sky_wcs_lng_name (wcs), ==, "ra");
  g_assert_cmpstr (sky_wcs_lat_name (wcs), ==, "dec");
  g_assert_cmpstr (sky_wcs_frame (wcs), ==, "FK5"); /* EQUINOX 2000, no RADESYS */
  g_assert_cmpfloat (sky_wcs_equinox (wcs), ==, 2000.0);
  g_assert_cmpstr (sky_wcs_projection (wcs), ==, "TAN");
  g_assert_cmpstr (sky_wcs_ctype (wcs, 0), ==, "RA---TAN");
  g_assert_cmpfloat_with_epsilon (sky_wcs_pixel_area (wcs), pow (1 / 3600.0, 2), 1e-20);
  sky_wcs_free (wcs);
}

/* The gnomonic projection's inverse by hand, at the equator: a pixel dx
 * from the reference along x lies at atan(dx * cdelt) of longitude. */
static void
test_tan_analytic (void)
{
  const char *const cards[] = {
    "NAXIS   = 2", "NAXIS1  = 100", "NAXIS2  = 80",
    "CTYPE1  = 'RA---TAN'", "CTYPE2  = 'DEC--TAN'", "RADESYS = 'ICRS'",
    "CRPIX1  = 11.0", "CRPIX2  = 21.0", "CRVAL1  = 0.0", "CRVAL2  = 0.0",
    "CDELT1  = -0.01", "CDELT2  = 0.01", NULL
  };
  SkyWcs *wcs = wcs_of (cards);
  double ra, dec, expect;

  /* 0-based (10 + 100, 20) is 100 pixels, -1 degree of x, from CRPIX. */
  g_assert_cmpint (sky_wcs_pix2world (wcs, 110.0, 20.0, &ra, &dec), ==, SKY_OK);
  expect = 360.0 + atan (-1.0 * G_PI / 180) * 180 / G_PI;
  g_assert_cmpfloat_with_epsilon (ra, expect, 1e-10);
  g_assert_cmpfloat_with_epsilon (dec, 0.0, 1e-12);
  /* Along y at the reference meridian: dec = atan(dy). */
  g_assert_cmpint (sky_wcs_pix2world (wcs, 10.0, 70.0, &ra, &dec), ==, SKY_OK);
  g_assert_cmpfloat_with_epsilon (dec, atan (0.5 * G_PI / 180) * 180 / G_PI, 1e-10);
  g_assert_cmpstr (sky_wcs_frame (wcs), ==, "ICRS");
  g_assert_true (isnan (sky_wcs_equinox (wcs))); /* ICRS has none */
  sky_wcs_free (wcs);
}

static void
test_galactic (void)
{
  const char *const cards[] = {
    "NAXIS   = 2", "NAXIS1  = 100", "NAXIS2  = 80",
    "CTYPE1  = 'GLON-CAR'", "CTYPE2  = 'GLAT-CAR'", "EQUINOX = 2000.0",
    "CRPIX1  = 50.5", "CRPIX2  = 40.5", "CRVAL1  = 0.0", "CRVAL2  = 0.0",
    "CD1_1   = -0.002", "CD2_2   = 0.002", NULL
  };
  SkyWcs *wcs = wcs_of (cards);
  double l, b;

  g_assert_cmpint (sky_wcs_system (wcs), ==, SKY_COORD_GALACTIC);
  g_assert_cmpstr (sky_wcs_lng_name (wcs), ==, "glon"); /* never ra */
  g_assert_cmpstr (sky_wcs_lat_name (wcs), ==, "glat");
  g_assert_cmpstr (sky_wcs_frame (wcs), ==, "galactic");
  g_assert_true (isnan (sky_wcs_equinox (wcs)));
  g_assert_cmpstr (sky_wcs_projection (wcs), ==, "CAR");
  g_assert_cmpfloat_with_epsilon (sky_wcs_pixel_area (wcs), 4e-6, 1e-18);
  /* CAR is linear: 10 pixels right of CRPIX is 0.02 degrees less longitude,
   * wrapped to [0, 360). */
  g_assert_cmpint (sky_wcs_pix2world (wcs, 59.5, 39.5, &l, &b), ==, SKY_OK);
  g_assert_cmpfloat_with_epsilon (l, 359.98, 1e-10);
  g_assert_cmpfloat_with_epsilon (b, 0.0, 1e-12);
  sky_wcs_free (wcs);
}

static void
test_ecliptic_and_others (void)
{
  const char *const ecl[] = {
    "CTYPE1  = 'ELON-TAN'", "CTYPE2  = 'ELAT-TAN'", "CRPIX1  = 1", "CRPIX2  = 1",
    "CRVAL1  = 10.0", "CRVAL2  = 5.0", "CDELT1  = -0.01", "CDELT2  = 0.01", NULL
  };
  const char *const sgal[] = {
    "CTYPE1  = 'SLON-SIN'", "CTYPE2  = 'SLAT-SIN'", "CRPIX1  = 1", "CRPIX2  = 1",
    "CRVAL1  = 10.0", "CRVAL2  = 5.0", "CDELT1  = -0.01", "CDELT2  = 0.01", NULL
  };
  const char *const sun[] = {
    "CTYPE1  = 'HPLN-TAN'", "CTYPE2  = 'HPLT-TAN'", "CUNIT1  = 'arcsec'",
    "CUNIT2  = 'arcsec'", "CRPIX1  = 1", "CRPIX2  = 1", "CRVAL1  = 0.0", "CRVAL2  = 0.0",
    "CDELT1  = 2.0", "CDELT2  = 2.0", NULL
  };
  SkyWcs *wcs = wcs_of (ecl);

  g_assert_cmpint (sky_wcs_system (wcs), ==, SKY_COORD_ECLIPTIC);
  g_assert_cmpstr (sky_wcs_lng_name (wcs), ==, "elon");
  g_assert_cmpstr (sky_wcs_lat_name (wcs), ==, "elat");
  g_assert_cmpstr (sky_wcs_frame (wcs), ==, "ecliptic");
  g_assert_cmpfloat (sky_wcs_equinox (wcs), ==, 2000.0);
  sky_wcs_free (wcs);

  wcs = wcs_of (sgal);
  g_assert_cmpint (sky_wcs_system (wcs), ==, SKY_COORD_SUPERGALACTIC);
  g_assert_cmpstr (sky_wcs_lng_name (wcs), ==, "slon");
  g_assert_cmpstr (sky_wcs_frame (wcs), ==, "supergalactic");
  sky_wcs_free (wcs);

  /* Helioprojective: named after its own axes; arcsec made degrees. */
  wcs = wcs_of (sun);
  g_assert_cmpint (sky_wcs_system (wcs), ==, SKY_COORD_OTHER);
  g_assert_cmpstr (sky_wcs_lng_name (wcs), ==, "hpln");
  g_assert_cmpstr (sky_wcs_lat_name (wcs), ==, "hplt");
  g_assert_cmpstr (sky_wcs_frame (wcs), ==, "HPLN/HPLT");
  g_assert_cmpfloat_with_epsilon (sky_wcs_pixel_area (wcs), pow (2.0 / 3600, 2), 1e-18);
  sky_wcs_free (wcs);
}

static void
test_equatorial_frames (void)
{
  const char *const fk4[] = { TAN_HEADER ("EQUINOX = 1950.0"), NULL };
  const char *const icrs[] = { TAN_HEADER ("COMMENT no EQUINOX, no RADESYS"), NULL };
  const char *const fk5_1975[] = { TAN_HEADER ("RADESYS = 'FK5'"), "EQUINOX = 1975.0", NULL };
  SkyWcs *wcs = wcs_of (fk4);

  g_assert_cmpstr (sky_wcs_frame (wcs), ==, "FK4"); /* FITS: before 1984 is FK4 */
  g_assert_cmpfloat (sky_wcs_equinox (wcs), ==, 1950.0);
  sky_wcs_free (wcs);
  wcs = wcs_of (icrs);
  g_assert_cmpstr (sky_wcs_frame (wcs), ==, "ICRS");
  sky_wcs_free (wcs);
  wcs = wcs_of (fk5_1975);
  g_assert_cmpstr (sky_wcs_frame (wcs), ==, "FK5");
  g_assert_cmpfloat (sky_wcs_equinox (wcs), ==, 1975.0);
  sky_wcs_free (wcs);
}

/* ------------------------------------------------------- linear transforms */

/* One rotated WCS three ways: CD matrix, PC + CDELT, and CROTA2. */
static void
test_cd_pc_crota_agree (void)
{
  const double theta = 30.0 * G_PI / 180, s = 0.001;
  char cd[4][40], pc[4][40];
  const char *const crota[] = {
    "CTYPE1  = 'RA---SIN'", "CTYPE2  = 'DEC--SIN'", "CRPIX1  = 30", "CRPIX2  = 20",
    "CRVAL1  = 83.6", "CRVAL2  = 22.0", "CDELT1  = -0.001", "CDELT2  = 0.001",
    "CROTA2  = 30.0", NULL
  };
  SkyWcs *w[3];
  double lng[3], lat[3];

  g_snprintf (cd[0], 40, "CD1_1   = %.17g", -s * cos (theta));
  g_snprintf (cd[1], 40, "CD1_2   = %.17g", -s * sin (theta));
  g_snprintf (cd[2], 40, "CD2_1   = %.17g", -s * sin (theta));
  g_snprintf (cd[3], 40, "CD2_2   = %.17g", s * cos (theta));
  g_snprintf (pc[0], 40, "PC1_1   = %.17g", cos (theta));
  /* CROTA2 as PC when CDELT1 = -CDELT2 (FITS WCS paper II, CROTA2). */
  g_snprintf (pc[1], 40, "PC1_2   = %.17g", sin (theta));
  g_snprintf (pc[2], 40, "PC2_1   = %.17g", -sin (theta));
  g_snprintf (pc[3], 40, "PC2_2   = %.17g", cos (theta));
  {
    const char *const with_cd[] = {
      "CTYPE1  = 'RA---SIN'", "CTYPE2  = 'DEC--SIN'", "CRPIX1  = 30", "CRPIX2  = 20",
      "CRVAL1  = 83.6", "CRVAL2  = 22.0", cd[0], cd[1], cd[2], cd[3], NULL
    };
    const char *const with_pc[] = {
      "CTYPE1  = 'RA---SIN'", "CTYPE2  = 'DEC--SIN'", "CRPIX1  = 30", "CRPIX2  = 20",
      "CRVAL1  = 83.6", "CRVAL2  = 22.0", "CDELT1  = -0.001", "CDELT2  = 0.001",
      pc[0], pc[1], pc[2], pc[3], NULL
    };
    w[0] = wcs_of (with_cd);
    w[1] = wcs_of (with_pc);
    w[2] = wcs_of (crota);
  }
  for (int k = 0; k < 3; k++)
    {
      g_assert_cmpint (sky_wcs_pix2world (w[k], 77.25, 3.5, &lng[k], &lat[k]), ==, SKY_OK);
      /* A rotation keeps the pixel's area. */
      g_assert_cmpfloat_with_epsilon (sky_wcs_pixel_area (w[k]), s * s, 1e-17);
    }
  for (int k = 1; k < 3; k++)
    {
      g_assert_cmpfloat_with_epsilon (lng[k], lng[0], 1e-11);
      g_assert_cmpfloat_with_epsilon (lat[k], lat[0], 1e-11);
    }
  for (int k = 0; k < 3; k++)
    sky_wcs_free (w[k]);
}

/* Axes in the other order (DEC first): still ra, dec, and a pixel area. */
static void
test_transposed_axes (void)
{
  const char *const normal[] = { TAN_HEADER ("EQUINOX = 2000.0"), NULL };
  const char *const swapped[] = {
    "NAXIS   = 2", "NAXIS1  = 80", "NAXIS2  = 100",
    "CTYPE1  = 'DEC--TAN'", "CTYPE2  = 'RA---TAN'", "EQUINOX = 2000.0",
    "CRPIX1  = 41.0", "CRPIX2  = 51.0", "CRVAL1  = 2.5", "CRVAL2  = 150.0",
    "CDELT1  = 0.000277777777777778", "CDELT2  = -0.000277777777777778", NULL
  };
  SkyWcs *a = wcs_of (normal), *b = wcs_of (swapped);
  double ra1, dec1, ra2, dec2;

  g_assert_cmpint (sky_wcs_pix2world (a, 12.5, 70.25, &ra1, &dec1), ==, SKY_OK);
  g_assert_cmpint (sky_wcs_pix2world (b, 70.25, 12.5, &ra2, &dec2), ==, SKY_OK);
  g_assert_cmpfloat_with_epsilon (ra1, ra2, 1e-12);
  g_assert_cmpfloat_with_epsilon (dec1, dec2, 1e-12);
  g_assert_cmpfloat_with_epsilon (sky_wcs_pixel_area (b), sky_wcs_pixel_area (a), 1e-20);
  sky_wcs_free (a);
  sky_wcs_free (b);
}

/* A cube's third axis (frequency) leaves the sky alone; the plane is used. */
static void
test_cube_axes (void)
{
  const char *const flat[] = { TAN_HEADER ("EQUINOX = 2000.0"), NULL };
  const char *const cube[] = {
    "NAXIS   = 3", "NAXIS1  = 100", "NAXIS2  = 80", "NAXIS3  = 4",
    "CTYPE1  = 'RA---TAN'", "CTYPE2  = 'DEC--TAN'", "CTYPE3  = 'FREQ'",
    "CRPIX1  = 51.0", "CRPIX2  = 41.0", "CRPIX3  = 1.0", "CRVAL1  = 150.0",
    "CRVAL2  = 2.5", "CRVAL3  = 1.4E9", "CDELT1  = -0.000277777777777778",
    "CDELT2  = 0.000277777777777778", "CDELT3  = 1E6", "EQUINOX = 2000.0", NULL
  };
  SkyImage img;
  SkyWcs *a = wcs_of (flat), *b = NULL;
  double ra1, dec1, ra2, dec2;

  image_with_header (&img, cube);
  img.plane = 3;
  img.nplanes = 4;
  g_assert_cmpint (sky_wcs_new (&img, &b), ==, SKY_OK);
  g_assert_cmpint (sky_wcs_pix2world (a, 3.0, 77.0, &ra1, &dec1), ==, SKY_OK);
  g_assert_cmpint (sky_wcs_pix2world (b, 3.0, 77.0, &ra2, &dec2), ==, SKY_OK);
  g_assert_cmpfloat_with_epsilon (ra1, ra2, 1e-12);
  g_assert_cmpfloat_with_epsilon (dec1, dec2, 1e-12);
  g_assert_cmpfloat_with_epsilon (sky_wcs_pixel_area (b), sky_wcs_pixel_area (a), 1e-20);
  sky_wcs_free (a);
  sky_wcs_free (b);
  sky_image_clear (&img);
}

static void
test_outside_projection (void)
{
  const char *const sin_cards[] = {
    "CTYPE1  = 'RA---SIN'", "CTYPE2  = 'DEC--SIN'", "CRPIX1  = 1", "CRPIX2  = 1",
    "CRVAL1  = 0.0", "CRVAL2  = 0.0", "CDELT1  = -1.0", "CDELT2  = 1.0", NULL
  };
  SkyWcs *wcs = wcs_of (sin_cards);
  double lng = 0, lat = 0, x[2] = { 10.0, 200.0 }, y[2] = { 10.0, 0.0 }, l[2], b[2];

  /* 200 degrees of SIN plane is outside the unit disc: no sky there. */
  g_assert_cmpint (sky_wcs_pix2world (wcs, 200.0, 0.0, &lng, &lat), ==, SKY_ERR_ARGUMENT);
  g_assert_true (isnan (lng) && isnan (lat));
  g_assert_cmpint (sky_wcs_pix2world (wcs, NAN, 0.0, &lng, &lat), ==, SKY_ERR_ARGUMENT);
  g_assert_cmpint (sky_wcs_pix2world_n (wcs, 2, x, y, l, b), ==, 1);
  g_assert_true (isfinite (l[0]) && isnan (l[1]) && isnan (b[1]));
  sky_wcs_free (wcs);
}

/* ------------------------------------------------------ no usable WCS */

static void
test_no_wcs (void)
{
  const char *const bare[] = { "NAXIS   = 2", "NAXIS1  = 100", "NAXIS2  = 80", NULL };
  const char *const linear[] = {
    "CTYPE1  = 'LINEAR'", "CTYPE2  = 'LINEAR'", "CRPIX1  = 1", "CDELT1  = 1.0", NULL
  };
  const char *const bad_projection[] = {
    "CTYPE1  = 'RA---XYZ'", "CTYPE2  = 'DEC--XYZ'", "CRPIX1  = 1", NULL
  };
  const char *const half[] = { "CTYPE1  = 'RA---TAN'", "CTYPE2  = 'FREQ'", NULL };
  SkyImage img;
  SkyWcs *wcs = NULL;

  g_assert_cmpint (sky_image_alloc (&img, 10, 10), ==, SKY_OK);
  g_assert_cmpint (sky_wcs_new (&img, &wcs), ==, SKY_ERR_UNAVAILABLE); /* no header at all */
  g_assert_null (wcs);
  g_assert_nonnull (strstr (sky_last_error (), "no header"));
  sky_image_clear (&img);

  g_assert_cmpint (wcs_failure (bare, "no world coordinates"), ==, SKY_ERR_UNAVAILABLE);
  g_assert_cmpint (wcs_failure (linear, "not celestial"), ==, SKY_ERR_UNAVAILABLE);
  g_assert_cmpint (wcs_failure (bad_projection, "XYZ"), ==, SKY_ERR_FORMAT);
  g_assert_cmpint (wcs_failure (half, "celestial"), ==, SKY_ERR_FORMAT);
  sky_wcs_free (NULL);
}

/* ------------------------------------------------------------ sexagesimal */

static void
test_format_ra (void)
{
  char buf[SKY_SEXAGESIMAL_SIZE];
  /* 1h 59m 59.996s: rounds to 0.01 s and carries into the hours. */
  double carry = 15.0 * (1.0 + 59.0 / 60 + 59.996 / 3600);

  g_assert_cmpstr (sky_format_ra (0.0, buf, sizeof buf), ==, "00:00:00.00");
  g_assert_cmpstr (sky_format_ra (15.0, buf, sizeof buf), ==, "01:00:00.00");
  g_assert_cmpstr (sky_format_ra (266.416833, buf, sizeof buf), ==, "17:45:40.04");
  g_assert_cmpstr (sky_format_ra (carry, buf, sizeof buf), ==, "02:00:00.00");
  g_assert_cmpstr (sky_format_ra (359.99999999, buf, sizeof buf), ==, "00:00:00.00");
  g_assert_cmpstr (sky_format_ra (-15.0, buf, sizeof buf), ==, "23:00:00.00");
  g_assert_cmpstr (sky_format_ra (375.0, buf, sizeof buf), ==, "01:00:00.00");
  g_assert_cmpstr (sky_format_ra (NAN, buf, sizeof buf), ==, "");
}

static void
test_format_dec (void)
{
  char buf[SKY_SEXAGESIMAL_SIZE];

  g_assert_cmpstr (sky_format_dec (-29.007806, buf, sizeof buf), ==, "-29:00:28.1");
  g_assert_cmpstr (sky_format_dec (0.0, buf, sizeof buf), ==, "+00:00:00.0");
  g_assert_cmpstr (sky_format_dec (5.5, buf, sizeof buf), ==, "+05:30:00.0");
  /* 89:59:59.96 rounds to 0.1": the carry reaches the degrees. */
  g_assert_cmpstr (sky_format_dec (89.99999, buf, sizeof buf), ==, "+90:00:00.0");
  /* South of the equator by less than the last digit: still south. */
  g_assert_cmpstr (sky_format_dec (-0.00001, buf, sizeof buf), ==, "-00:00:00.0");
  g_assert_cmpstr (sky_format_dec (-90.0, buf, sizeof buf), ==, "-90:00:00.0");
  g_assert_cmpstr (sky_format_dec (NAN, buf, sizeof buf), ==, "");
}

/* --------------------------------------------------------- export fluxes */

/* A 40 x 30 field with two square sources, run through the CPU pipeline. */
static void
run_field (SkyImage *img, const char *const *cards, SkyParams *params, SkyResult *res)
{
  float values[40 * 30];

  for (int i = 0; i < 40 * 30; i++)
    values[i] = (float) ((i * 7919 % 101) / 100.0 - 0.5); /* bounded noise */
  for (int y = 5; y < 8; y++)
    for (int x = 5; x < 8; x++)
      values[y * 40 + x] = 20.0f;
  for (int y = 20; y < 22; y++)
    for (int x = 30; x < 34; x++)
      values[y * 40 + x] = 10.0f + x;
  sky_test_image (img, 40, 30, values);
  set_header (img, cards);
  img->path = g_strdup ("field.fits");
  sky_params_init (params);
  sky_test_run_cpu (img, params, res);
  g_assert_cmpint (res->nsources, ==, 2);
}

static void
export_field (const char *const *cards, const char *bunit, int beam, SkyImage *img,
              SkyParams *params, SkyResult *res, SkyExport *ex)
{
  SkyRunInfo info = { 0 };

  run_field (img, cards, params, res);
  g_strlcpy (img->bunit, bunit, sizeof img->bunit);
  img->has_beam = beam;
  img->bmaj = 20.0 / 3600;
  img->bmin = 15.0 / 3600;
  info.image = img;
  info.params = params;
  info.backend = "cpu";
  g_assert_cmpint (sky_export_init (ex, &info, res), ==, SKY_OK);
}

static const char *const field_cards[] = {
  "NAXIS   = 2", "NAXIS1  = 40", "NAXIS2  = 30",
  "CTYPE1  = 'RA---SIN'", "CTYPE2  = 'DEC--SIN'", "RADESYS = 'FK5'", "EQUINOX = 2000.0",
  "CRPIX1  = 20.0", "CRPIX2  = 15.0", "CRVAL1  = 266.4", "CRVAL2  = -29.0",
  "CDELT1  = -0.0013888888888889", "CDELT2  = 0.0013888888888889", NULL
};

static void
test_int_flux_formula (void)
{
  SkyImage img;
  SkyParams params;
  SkyResult res = { 0 };
  SkyExport ex;
  double pixel = 0.0013888888888889;
  double beam = G_PI * (20.0 / 3600) * (15.0 / 3600) / (4 * log (2.0)) / (pixel * pixel);

  export_field (field_cards, "JY/BEAM", 1, &img, &params, &res, &ex);
  g_assert_nonnull (ex.wcs);
  g_assert_cmpstr (ex.unit, ==, "Jy/beam");
  g_assert_cmpstr (ex.flux_note, ==, "");
  g_assert_cmpstr (ex.sky_note, ==, "");
  g_assert_cmpfloat_with_epsilon (ex.beam_area / beam, 1.0, 1e-12);
  g_assert_nonnull (ex.int_flux);
  for (int64_t i = 0; i < res.nsources; i++)
    {
      double lng, lat;
      g_assert_cmpfloat_with_epsilon (ex.int_flux[i] / (res.catalogue.sum[i] / beam), 1.0, 1e-12);
      /* The export's positions are the WCS's for the centroid. */
      g_assert_cmpint (sky_wcs_pix2world (ex.wcs, res.catalogue.x[i], res.catalogue.y[i], &lng,
                                          &lat), ==, SKY_OK);
      g_assert_cmpfloat (ex.lng[i], ==, lng);
      g_assert_cmpfloat (ex.lat[i], ==, lat);
    }
  sky_export_clear (&ex);
  sky_result_clear (&res);
  sky_image_clear (&img);

  /* mJy/beam: int_flux is still in Jy. */
  export_field (field_cards, "mJy/beam", 1, &img, &params, &res, &ex);
  g_assert_nonnull (ex.int_flux);
  g_assert_cmpfloat_with_epsilon (ex.int_flux[0] / (res.catalogue.sum[0] / beam * 1e-3), 1.0,
                                  1e-12);
  sky_export_clear (&ex);
  sky_result_clear (&res);
  sky_image_clear (&img);
}

static void
test_int_flux_missing (void)
{
  const char *const no_wcs[] = { "NAXIS   = 2", "NAXIS1  = 40", "NAXIS2  = 30", NULL };
  SkyImage img;
  SkyParams params;
  SkyResult res = { 0 };
  SkyExport ex;

  export_field (field_cards, "JY/BEAM", 0, &img, &params, &res, &ex);
  g_assert_null (ex.int_flux);
  g_assert_nonnull (strstr (ex.flux_note, "no beam (BMAJ, BMIN)"));
  g_assert_nonnull (strstr (ex.flux_note, "field.fits"));
  g_assert_nonnull (ex.lng); /* positions do not need a beam */
  sky_export_clear (&ex);
  sky_result_clear (&res);
  sky_image_clear (&img);

  export_field (field_cards, "K", 1, &img, &params, &res, &ex);
  g_assert_null (ex.int_flux);
  g_assert_nonnull (strstr (ex.flux_note, "not a flux density per beam"));
  sky_export_clear (&ex);
  sky_result_clear (&res);
  sky_image_clear (&img);

  export_field (field_cards, "", 1, &img, &params, &res, &ex);
  g_assert_null (ex.int_flux);
  g_assert_nonnull (strstr (ex.flux_note, "no BUNIT"));
  sky_export_clear (&ex);
  sky_result_clear (&res);
  sky_image_clear (&img);

  /* A beam but no WCS: no pixel scale, so no beam area in pixels. */
  export_field (no_wcs, "JY/BEAM", 1, &img, &params, &res, &ex);
  g_assert_null (ex.wcs);
  g_assert_null (ex.lng);
  g_assert_null (ex.int_flux);
  g_assert_true (isnan (ex.beam_area));
  g_assert_nonnull (strstr (ex.sky_note, "no world coordinates"));
  g_assert_nonnull (strstr (ex.flux_note, "pixel scale"));
  sky_export_clear (&ex);
  sky_result_clear (&res);
  sky_image_clear (&img);
}

/* The CSV's columns follow the WCS's system: galactic is glon/glat. */
static void
test_csv_columns (void)
{
  const char *const galactic[] = {
    "NAXIS   = 2", "NAXIS1  = 40", "NAXIS2  = 30", "CTYPE1  = 'GLON-CAR'",
    "CTYPE2  = 'GLAT-CAR'", "CRPIX1  = 20.0", "CRPIX2  = 15.0", "CRVAL1  = 0.0",
    "CRVAL2  = 0.0", "CDELT1  = -0.002", "CDELT2  = 0.002", NULL
  };
  const char *const pixel_columns =
    "source_id,x_centroid,y_centroid,sum_flux,npix,peak_flux,peak_x,peak_y,xmin,xmax,ymin,ymax";
  SkyImage img;
  SkyParams params;
  SkyResult res = { 0 };
  SkyExport ex;
  char *path = sky_test_tmp_path ("columns.csv"), *text = NULL, *header;

  export_field (galactic, "Jy/beam", 1, &img, &params, &res, &ex);
  g_assert_cmpint (sky_export_csv (path, &ex), ==, SKY_OK);
  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  header = g_strndup (text, strcspn (text, "\n"));
  g_assert_cmpstr (header, ==, "source_id,x_centroid,y_centroid,sum_flux,npix,peak_flux,"
                               "peak_x,peak_y,xmin,xmax,ymin,ymax,glon,glat,int_flux,"
                               "local_rms,snr");
  g_free (header);
  g_free (text);

  /* An export of the catalogue alone, with no image, keeps the pixel
   * columns alone. */
  sky_export_clear (&ex);
  {
    SkyResult bare = { 0 };
    SkyRunInfo none = { 0 };
    bare.catalogue = res.catalogue;
    bare.nsources = res.catalogue.n;
    g_assert_cmpint (sky_export_init (&ex, &none, &bare), ==, SKY_OK);
  }
  g_assert_cmpint (sky_export_csv (path, &ex), ==, SKY_OK);
  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  header = g_strndup (text, strcspn (text, "\n"));
  g_assert_cmpstr (header, ==, pixel_columns);
  g_free (header);
  g_free (text);

  sky_export_clear (&ex);
  sky_result_clear (&res);
  sky_image_clear (&img);
  g_free (path);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/wcs/tan/reference-pixel", test_tan_reference_pixel);
  g_test_add_func ("/wcs/tan/analytic", test_tan_analytic);
  g_test_add_func ("/wcs/system/galactic", test_galactic);
  g_test_add_func ("/wcs/system/ecliptic-supergalactic-helioprojective",
                   test_ecliptic_and_others);
  g_test_add_func ("/wcs/system/equatorial-frames", test_equatorial_frames);
  g_test_add_func ("/wcs/linear/cd-pc-crota-agree", test_cd_pc_crota_agree);
  g_test_add_func ("/wcs/linear/transposed-axes", test_transposed_axes);
  g_test_add_func ("/wcs/cube/frequency-axis", test_cube_axes);
  g_test_add_func ("/wcs/outside-projection", test_outside_projection);
  g_test_add_func ("/wcs/none/clear-messages", test_no_wcs);
  g_test_add_func ("/wcs/format/ra", test_format_ra);
  g_test_add_func ("/wcs/format/dec", test_format_dec);
  g_test_add_func ("/export/int-flux/formula", test_int_flux_formula);
  g_test_add_func ("/export/int-flux/missing-beam-unit-or-wcs", test_int_flux_missing);
  g_test_add_func ("/export/csv/columns-follow-the-system", test_csv_columns);
  return g_test_run ();
}
