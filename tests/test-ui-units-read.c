/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The app's read (sky-image-read.h) against the loader on every BITPIX,
 * with BSCALE, BZERO and BLANK, odd sizes, planes of cubes and extensions:
 * the same pixels to the bit, the same blank and infinity counts, and
 * display statistics counted block by block as the reader hands them over
 * equal to those of the loaded image counted at once: every pixel; or, for
 * a big image's first histogram, the pixels of its reduced view (every
 * 2^k-th pixel of every 2^k-th row, the first k that brings both sides to
 * 1024 or less), or 1 pixel in 16 where it needs none, with the extremes
 * and the blank count of every pixel. */
#include <string.h>
#include <glib/gstdio.h>

#include "sky-display-stats.h"
#include "sky-image-read.h"
#include "sky-test-fits-cases.h"

void read_cases_check (void);

static void
assert_same_stats (const SkyDisplayStats *a, const SkyDisplayStats *b, const char *name)
{
  if (a->sampled != b->sampled || a->nvalid != b->nvalid || a->min != b->min
      || a->max != b->max || memcmp (a->lo, b->lo, sizeof a->lo) != 0
      || memcmp (a->hi, b->hi, sizeof a->hi) != 0
      || memcmp (a->cum, b->cum, (SKY_DISPLAY_NBUCKETS + 1) * sizeof (uint64_t)) != 0)
    g_error ("%s: the display statistics counted while reading (%lld in the histogram, "
             "%g to %g) differ from those of the loaded image (%lld, %g to %g)",
             name, (long long) a->nvalid, a->min, a->max, (long long) b->nvalid, b->min, b->max);
}

/* What the read counts for a big image's first frame, from the loaded image. */
static void
sampled_stats (const SkyImage *ref, SkyDisplayStats *out)
{
  SkyDisplayCounts counts[2] = { { NULL, INFINITY, -INFINITY, 0, 0 } };
  int64_t nx = ref->nx, ny = ref->ny, step = 1;

  g_assert_cmpint (sky_display_counts_init (&counts[1]), ==, SKY_OK);
  while (nx > 1024 || ny > 1024)
    {
      nx = nx > 1 ? nx / 2 : 1;
      ny = ny > 1 ? ny / 2 : 1;
      step *= 2;
    }
  if (step == 1)
    sky_display_counts_add_sampled (&counts[1], ref->pixels, ref->nx * ref->ny, 0, 16);
  else
    {
      sky_display_counts_add_extremes (&counts[0], ref->pixels, ref->nx * ref->ny);
      for (int64_t j = 0; j < ny; j++)
        for (int64_t i = 0; i < nx; i++)
          sky_display_counts_add (&counts[1], ref->pixels + j * step * ref->nx + i * step, 1);
    }
  g_assert_cmpint (sky_display_stats_finish (ref, counts, 2, out), ==, SKY_OK);
  sky_display_counts_clear (&counts[1]);
}

static SkyImageData *
read_case (const char *path, const SkyLoadOptions *opts, gboolean progressive)
{
  g_autoptr (SkyOpenProgress) progress = progressive ? sky_open_progress_new () : NULL;
  SkyImageData *data = g_atomic_rc_box_new0 (SkyImageData);
  g_autoptr (GError) error = NULL;

  g_assert_cmpint (sky_image_read (path, opts, data, progress, NULL, &error), ==,
                   SKY_IMAGE_READ_DONE);
  g_assert_no_error (error);
  if (progress != NULL)
    g_assert_cmpfloat (sky_open_progress_fraction (progress), ==, 1.0);
  return data;
}

void
read_cases_check (void)
{
  /* Three tasks on any machine: chunks taken in turn by more than one. */
  g_setenv ("SKYSIFT_THREADS", "3", TRUE);
  for (int i = 0; i < sky_test_fits_ncases; i++)
    {
      const SkyTestFitsCase *c = &sky_test_fits_cases[i];
      g_autofree char *path = sky_test_fits_case_write (c, 20261124u + (guint32) i);
      SkyLoadOptions opts = { 0, c->plane };
      SkyImage ref;
      SkyDisplayStats every = { 0 }, sampled = { 0 };
      int64_t n;

      g_assert_cmpint (sky_image_load (path, &opts, &ref), ==, SKY_OK);
      n = ref.nx * ref.ny;
      g_assert_cmpint (sky_display_stats_compute (&ref, 1, &every), ==, SKY_OK);
      sampled_stats (&ref, &sampled);

      for (int progressive = 0; progressive < 2; progressive++)
        {
          g_autoptr (SkyImageData) data = NULL;

          /* A reduced view and a sampled histogram for any size. */
          if (progressive)
            g_setenv ("SKYSIFT_PROGRESSIVE_MIN_PIXELS", "1", TRUE);
          data = read_case (path, &opts, progressive);
          g_assert_cmpint (data->image.nx, ==, ref.nx);
          g_assert_cmpint (data->image.ny, ==, ref.ny);
          if (memcmp (data->image.pixels, ref.pixels, (size_t) n * sizeof (float)) != 0)
            g_error ("%s: the app's read gives other pixels than the loader", c->name);
          g_assert_cmpint (data->image.nblank, ==, ref.nblank);
          g_assert_cmpint (data->image.ninf, ==, ref.ninf);
          g_assert_cmpint (data->image.bitpix, ==, ref.bitpix);
          assert_same_stats (&data->stats, progressive ? &sampled : &every, c->name);
        }
      g_unsetenv ("SKYSIFT_PROGRESSIVE_MIN_PIXELS");
      sky_display_stats_clear (&every);
      sky_display_stats_clear (&sampled);
      sky_image_clear (&ref);
      g_remove (path);
    }
  g_unsetenv ("SKYSIFT_THREADS");
}
