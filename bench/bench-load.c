/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Load throughput from the page cache, in two forms.
 *
 *   bench-load ROUNDS IMAGE.fits...
 *
 * sky_image_load through cfitsio's path (SKYSIFT_FITS_READER=cfitsio, as
 * every load went before the loader's own reader) and through the loader's
 * own reader, in turn, round after round, so that both see the same machine
 * state. Reports per file the median load time of each, file size over that
 * median (GB/s, 1e9 bytes), and the ratio of the medians; the first round
 * only warms the page cache and checks that both give the same pixels bit
 * for bit. Beside them, in the same rounds, what a load is made of: "fresh
 * pages", allocating the image as the loader does and writing every page
 * once on every thread (the kernel zeroes each fresh page before the
 * reader's first write: the floor of any load into new memory), and "warm
 * pages", the own reader alone into an image whose pages are already there
 * (sky_fits_read_raw_plane: pread and conversion, no page faults).
 *
 *   bench-load IMAGE.fits
 *
 * One load with the loader's own reader: its time in ms and the process's
 * peak resident set (VmHWM), the core's side of the app's open where the
 * CLI's find would not fit in memory.
 *
 * Built and run by bench/bench-load.py, or by hand after `ninja -C build`:
 *   cc -O2 -std=c11 -D_GNU_SOURCE -Isrc/core bench/bench-load.c \
 *      build/src/core/libsky-core.a $(pkg-config --libs cfitsio wcslib) -lpthread -lm \
 *      -o /tmp/bench-load
 */
#include "sky-fits-private.h"
#include "bench-median.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

/* The own reader into pixels whose pages are in place; its time in ms. */
static double
timed_warm_read (const char *path, const SkyFitsRawPlane *raw, float *pixels)
{
  int64_t nblank, ninf;
  double t0 = sky_now_ms ();

  if (sky_fits_read_raw_plane (path, raw, 0, pixels, &nblank, &ninf) != SKY_OK)
    {
      fprintf (stderr, "bench-load: %s\n", sky_last_error ());
      exit (1);
    }
  return sky_now_ms () - t0;
}

static int
load_once (const char *path)
{
  SkyImage img;
  double t0;
  char line[256];
  FILE *status;

  t0 = sky_now_ms ();
  if (sky_image_load (path, NULL, &img) != SKY_OK)
    {
      fprintf (stderr, "%s\n", sky_last_error ());
      return 1;
    }
  printf ("load_ms %.1f\n", sky_now_ms () - t0);
  status = fopen ("/proc/self/status", "r");
  while (status != NULL && fgets (line, sizeof line, status) != NULL)
    if (strncmp (line, "VmHWM:", 6) == 0)
      fputs (line, stdout);
  if (status != NULL)
    fclose (status);
  sky_image_clear (&img);
  return 0;
}

/* Both readers on one file, ROUNDS rounds; one row of the table. */
static int
compare_readers (const char *path, int rounds)
{
  double *before = calloc ((size_t) rounds, sizeof *before);
  double *after = calloc ((size_t) rounds, sizeof *after);
  double *fresh = calloc ((size_t) rounds, sizeof *fresh);
  double *warm = calloc ((size_t) rounds, sizeof *warm);
  SkyImage a = { 0 }, b = { 0 }, shape = { 0 };
  SkyPlaneFile *plane = NULL;
  float *warm_pixels;
  struct stat st;
  double mb, tb, ta, tf, tw;
  int bitpix;
  size_t image_bytes;

  if (before == NULL || after == NULL || fresh == NULL || warm == NULL || stat (path, &st) != 0)
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
  /* The warm reads go into the last load's pixels, every page of them there. */
  warm_pixels = b.pixels;
  b.pixels = NULL;
  sky_image_clear (&b);
  if (sky_plane_file_open (path, NULL, &shape, &plane) != SKY_OK)
    {
      fprintf (stderr, "bench-load: %s\n", sky_last_error ());
      return 1;
    }
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
      fresh[r] = timed_touch (image_bytes);
      warm[r] = timed_warm_read (path, sky_plane_file_raw (plane), warm_pixels);
    }
  mb = (double) st.st_size / 1e6;
  tb = sky_bench_median (before, rounds);
  ta = sky_bench_median (after, rounds);
  tf = sky_bench_median (fresh, rounds);
  tw = sky_bench_median (warm, rounds);
  printf ("| %s | %d | %.1f | %.1f | %.1f | %.2f | %.2f | %.2fx | %.1f | %.1f |\n",
          strrchr (path, '/') ? strrchr (path, '/') + 1 : path, bitpix, mb, tb, ta, mb / tb,
          mb / ta, tb / ta, tf, tw);
  fflush (stdout);
  sky_plane_file_close (plane);
  sky_image_clear (&shape);
  free (warm_pixels);
  free (before);
  free (after);
  free (fresh);
  free (warm);
  return 0;
}

int
main (int argc, char **argv)
{
  int rounds = argc > 2 ? atoi (argv[1]) : 0;

  if (argc == 2)
    return load_once (argv[1]);
  if (argc < 3 || rounds < 1)
    {
      fprintf (stderr, "usage: bench-load ROUNDS IMAGE.fits...\n"
                       "       bench-load IMAGE.fits\n");
      return 2;
    }
  printf ("| file | BITPIX | size (MB) | cfitsio (ms) | own reader (ms) | cfitsio (GB/s) "
          "| own reader (GB/s) | speed-up | fresh pages (ms) | warm pages (ms) |\n");
  printf ("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
  for (int f = 2; f < argc; f++)
    if (compare_readers (argv[f], rounds) != 0)
      return 1;
  return 0;
}
