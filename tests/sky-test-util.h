/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Helpers shared by the C tests. */
#ifndef SKY_TEST_UTIL_H
#define SKY_TEST_UTIL_H

#include <glib.h>

#include "sky-cpu.h"

/* The folder of shared test images, or NULL (and a reason in *why) when this
 * checkout has none beside it. */
const char *sky_test_shared_data (const char **why);

/* Adds a test PREFIX/shared/NAME for each FITS image of the shared data
 * (its folder, then external/, each in name order), func getting the
 * image's path; the 2048-pixel images are left out where skip_2048 (a
 * quick run). Without the shared data, one test PREFIX/shared-images that
 * skips with the reason. */
void sky_test_add_shared_images (const char *prefix, gboolean skip_2048, GTestDataFunc func);

/* A new empty folder under the system's temporary folder, removed with
 * everything in it when the test program ends. */
const char *sky_test_tmpdir (void);

/* A path in sky_test_tmpdir (); free with g_free. */
char *sky_test_tmp_path (const char *name);

/* An nx x ny image filled from values (row-major), blanks counted. */
void sky_test_image (SkyImage *img, int64_t nx, int64_t ny, const float *values);

/* Runs the whole CPU pipeline, failing the test on an error. */
void sky_test_run_cpu (const SkyImage *img, const SkyParams *params, SkyResult *res);

#endif
