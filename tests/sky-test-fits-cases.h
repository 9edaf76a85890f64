/* SPDX-License-Identifier: GPL-3.0-or-later */
/* FITS files of every BITPIX for the readers' tests: a header written by
 * cfitsio (BSCALE, BZERO, BLANK as the case says) and data of random bits,
 * with +-Inf, NaNs with payloads and the largest float planted in every
 * plane of float data, and BLANK planted every 97th value where asked. */
#ifndef SKY_TEST_FITS_CASES_H
#define SKY_TEST_FITS_CASES_H

#include <glib.h>
#include <stdint.h>

typedef struct {
  const char *name;
  int bitpix;
  double scale, zero;   /* written as BSCALE/BZERO unless both are 1 and 0 */
  gboolean has_blank;
  long long blank;      /* as written in the header */
  gboolean plant_blank; /* set every 97th stored value to blank */
  gboolean extension;   /* the image in an IMAGE extension after an empty primary */
  int naxis;
  long naxes[4];
  int64_t plane;
} SkyTestFitsCase;

/* 1031 x 1033 pixels: more than one task of 2^20 pixels, and neither ends
 * on a block's edge. */
#define SKY_TEST_ODD 2, { 1031, 1033 }, 0

/* The cases every reader is checked on. */
extern const SkyTestFitsCase sky_test_fits_cases[];
extern const int sky_test_fits_ncases;

/* Writes the case into the test's temporary folder; its path (g_free). */
char *sky_test_fits_case_write (const SkyTestFitsCase *c, guint32 seed);

#endif
