/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Load throughput from the page cache: sky_image_load through cfitsio's
 * path (SKYSIFT_FITS_READER=cfitsio, as every load went before the
 * loader's own reader) and through the loader's own reader, in turn, round
 * after round, so that both see the same machine state. Reports per file
 * the median load time of each, file size over that median (GB/s, 1e9
 * bytes), and the ratio of the medians; the first round only warms the page
 * cache and checks that both give the same pixels bit for bit. Beside them,
 * the floor no reader can go below: allocating the image and writing every
 * page of it once, on every thread (the kernel zeroes each fresh page
 * before the reader's first write), in the same rounds.
 *
 * Built and run by bench/bench-load.py, or by hand:
 *   cc -O2 -std=c11 -D_GNU_SOURCE -Isrc/core bench/bench-load.c \
 *      BUILD/src/core/libsky-core.a $(pkg-config --libs cfitsio wcslib) -lpthread -lm
 *   ./a.out ROUNDS IMAGE.fits...
 */
#include "sky-core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int
compare_doubles (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

static double
median (double *v, int n)
{
  qsort (v, (size_t) n, sizeof *v, compare_doubles);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

typedef struct {
  unsigned char *bytes;
  size_t size;
  int ntasks;
} Touch;

static void
touch_task (void *data, int task)
{
  Touch *t = data;
  size_t start = t->size / (size_t) t->ntasks * (size_t) task;
  size_t end = task == t->ntasks - 1 ? t->size : t->size / (size_t) t->ntasks * (size_t) (task + 1);

  memset (t->bytes + start, 1, end - start);
}

/* Allocates an image's pixels as the loader does and writes each byte once
 * across the threads; its time in ms. */
static double
timed_touch (size_t size)
{
  Touch t = { NULL, size, sky_default_threads () };
  double t0 = sky_now_ms ();

  t.bytes = sky_alloc_large (size);
  if (t.bytes == NULL)
    exit (1);
  sky_parallel_for (t.ntasks, t.ntasks, touch_task, &t);
  t0 = sky_now_ms () - t0;
  free (t.bytes);
  return t0;
}

/* One load with the reader named (NULL: the loader's own); its time in ms. */
static double
timed_load (const char *path, const char *reader, SkyImage *img)
{
  double t0;

  if (reader != NULL)
    setenv ("SKYSIFT_FITS_READER", reader, 1);
  else
    unsetenv ("SKYSIFT_FITS_READER");
  t0 = sky_now_ms ();
  if (sky_image_load (path, NULL, img) != SKY_OK)
    {
      fprintf (stderr, "bench-load: %s\n", sky_last_error ());
      exit (1);
    }
  return sky_now_ms () - t0;
}

int
main (int argc, char **argv)
{
  int rounds = argc > 1 ? atoi (argv[1]) : 0;

  if (argc < 3 || rounds < 1)
    {
      fprintf (stderr, "usage: bench-load ROUNDS IMAGE.fits...\n");
      return 2;
    }
  printf ("| file | BITPIX | size (MB) | cfitsio (ms) | own reader (ms) | cfitsio (GB/s) "
          "| own reader (GB/s) | speed-up | fresh pages (ms) | reader / fresh pages |\n");
  printf ("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
  for (int f = 2; f < argc; f++)
    {
      const char *path = argv[f];
      double *before = calloc ((size_t) rounds, sizeof *before);
      double *after = calloc ((size_t) rounds, sizeof *after);
      double *floor = calloc ((size_t) rounds, sizeof *floor);
      SkyImage a = { 0 }, b = { 0 };
      struct stat st;
      double mb, tb, ta, tf;
      int bitpix;
      size_t image_bytes;

      if (before == NULL || after == NULL || floor == NULL || stat (path, &st) != 0)
        return 1;
      /* Warm-up, and the same pixels from both readers. */
      timed_load (path, "cfitsio", &a);
      timed_load (path, NULL, &b);
      if (a.nblank != b.nblank || a.ninf != b.ninf
          || memcmp (a.pixels, b.pixels, (size_t) (a.nx * a.ny) * sizeof (float)) != 0)
        {
          fprintf (stderr, "bench-load: %s: the readers differ\n", path);
          return 1;
        }
      bitpix = a.bitpix;
      image_bytes = (size_t) (a.nx * a.ny) * sizeof (float);
      sky_image_clear (&a);
      sky_image_clear (&b);
      for (int r = 0; r < rounds; r++)
        {
          /* Alternate which goes first, so neither always follows the other. */
          if (r % 2 == 0)
            {
              before[r] = timed_load (path, "cfitsio", &a);
              sky_image_clear (&a);
              after[r] = timed_load (path, NULL, &b);
              sky_image_clear (&b);
            }
          else
            {
              after[r] = timed_load (path, NULL, &b);
              sky_image_clear (&b);
              before[r] = timed_load (path, "cfitsio", &a);
              sky_image_clear (&a);
            }
          floor[r] = timed_touch (image_bytes);
        }
      mb = (double) st.st_size / 1e6;
      tb = median (before, rounds);
      ta = median (after, rounds);
      tf = median (floor, rounds);
      printf ("| %s | %d | %.1f | %.1f | %.1f | %.2f | %.2f | %.2fx | %.1f | %.2f |\n",
              strrchr (path, '/') ? strrchr (path, '/') + 1 : path, bitpix, mb, tb, ta,
              mb / tb, mb / ta, tb / ta, tf, ta / tf);
      fflush (stdout);
      free (before);
      free (after);
      free (floor);
    }
  return 0;
}
