/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Two versions of the loader's reader (sky-fits-read.c) in one process,
 * in turn on the same files, so that a change to the reader is measured on
 * the same machine state as what it changes (on a shared machine two runs a
 * minute apart differ by more than most changes). A is the core library's
 * reader; B is another sky-fits-read.c compiled with its two entry points
 * renamed. Per file and round, each version reads the plane into fresh
 * pages (allocated as the loader allocates an image: a load's read) and
 * into pages already there; medians in ms and B / A. Both versions' pixels
 * and counts are checked equal first.
 *
 * From the project's root, after `ninja -C build`, with B.c the other version
 * (for instance `git show main:src/core/sky-fits-read.c > /tmp/B.c`):
 *   cc -O3 -std=c11 -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -DNDEBUG -pthread \
 *      -Isrc/core -Dsky_fits_read_raw_plane=sky_fits_read_raw_plane_b \
 *      -Dsky_fits_pread=sky_fits_pread_b -c /tmp/B.c -o /tmp/b.o
 *   cc -O2 -std=c11 -D_GNU_SOURCE -Isrc/core bench/bench-load-ab.c /tmp/b.o \
 *      build/src/core/libsky-core.a $(pkg-config --libs cfitsio wcslib) -lpthread -lm \
 *      -o /tmp/bench-load-ab
 *   /tmp/bench-load-ab ROUNDS IMAGE.fits...
 */
#include "sky-fits-private.h"
#include "bench-median.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sky_fits_read_raw_plane_b (const char *path, const SkyFitsRawPlane *plane, int nthreads,
                               float *pixels, int64_t *nblank, int64_t *ninf);

typedef int (*ReadFn) (const char *path, const SkyFitsRawPlane *plane, int nthreads,
                       float *pixels, int64_t *nblank, int64_t *ninf);

static void
read_or_exit (ReadFn read, const char *path, const SkyFitsRawPlane *raw, float *pixels,
              int64_t *nblank, int64_t *ninf)
{
  if (read (path, raw, 0, pixels, nblank, ninf) != SKY_OK)
    {
      fprintf (stderr, "bench-load-ab: %s\n", sky_last_error ());
      exit (1);
    }
}

static int
compare_file (const char *path, int rounds)
{
  const ReadFn reads[2] = { sky_fits_read_raw_plane, sky_fits_read_raw_plane_b };
  SkyImage shape = { 0 };
  SkyPlaneFile *plane = NULL;
  const SkyFitsRawPlane *raw;
  double *t = calloc ((size_t) (4 * rounds), sizeof *t);
  float *a, *b;
  int64_t nblank[2], ninf[2];
  size_t bytes;

  if (t == NULL || sky_plane_file_open (path, NULL, &shape, &plane) != SKY_OK)
    return 1;
  raw = sky_plane_file_raw (plane);
  bytes = (size_t) raw->npixels * sizeof (float);
  a = sky_alloc_large (bytes);
  b = sky_alloc_large (bytes);
  if (a == NULL || b == NULL)
    return 1;
  read_or_exit (reads[0], path, raw, a, &nblank[0], &ninf[0]);
  read_or_exit (reads[1], path, raw, b, &nblank[1], &ninf[1]);
  if (nblank[0] != nblank[1] || ninf[0] != ninf[1] || memcmp (a, b, bytes) != 0)
    {
      fprintf (stderr, "bench-load-ab: %s: the versions differ\n", path);
      return 1;
    }
  for (int r = 0; r < rounds; r++)
    for (int k = 0; k < 2; k++)
      {
        int v = (r + k) % 2; /* alternate which goes first */
        double t0 = sky_now_ms ();
        float *fresh = sky_alloc_large (bytes);
        if (fresh == NULL)
          return 1;
        read_or_exit (reads[v], path, raw, fresh, &nblank[v], &ninf[v]);
        t[v * rounds + r] = sky_now_ms () - t0;
        free (fresh);
        t0 = sky_now_ms ();
        read_or_exit (reads[v], path, raw, a, &nblank[v], &ninf[v]);
        t[(2 + v) * rounds + r] = sky_now_ms () - t0;
      }
  {
    double fa = sky_bench_median (t, rounds);
    double fb = sky_bench_median (t + rounds, rounds);
    double wa = sky_bench_median (t + 2 * rounds, rounds);
    double wb = sky_bench_median (t + 3 * rounds, rounds);
    printf ("| %s | %.1f | %.1f | %.2f | %.1f | %.1f | %.2f |\n",
            strrchr (path, '/') ? strrchr (path, '/') + 1 : path, fa, fb, fb / fa, wa, wb,
            wb / wa);
    fflush (stdout);
  }
  free (a);
  free (b);
  free (t);
  sky_plane_file_close (plane);
  sky_image_clear (&shape);
  return 0;
}

int
main (int argc, char **argv)
{
  int rounds = argc > 2 ? atoi (argv[1]) : 0;

  if (rounds < 1)
    {
      fprintf (stderr, "usage: bench-load-ab ROUNDS IMAGE.fits...\n");
      return 2;
    }
  printf ("| file | A, fresh pages (ms) | B, fresh pages (ms) | B / A "
          "| A, pages there (ms) | B, pages there (ms) | B / A |\n");
  printf ("| --- | --- | --- | --- | --- | --- | --- |\n");
  for (int f = 2; f < argc; f++)
    if (compare_file (argv[f], rounds) != 0)
      return 1;
  return 0;
}
