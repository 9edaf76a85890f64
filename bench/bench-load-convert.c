/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The reader's conversion alone, in cache: one block of stored values (as
 * the reader preads them) converted again and again on one thread, for
 * each kind of plane the loader meets; the best time in ns a pixel. What a
 * change to the conversion loops does, without the page cache's copy and
 * the image's fresh pages around it (bench-load.c and bench-load-ab.c time
 * those). The reader's static functions are reached by including its
 * source: SKY_READER_C names another version of it to compare with.
 *
 * From the project's root, after `ninja -C build`:
 *   cc -O3 -std=c11 -D_GNU_SOURCE -Isrc/core bench/bench-load-convert.c \
 *      build/src/core/libsky-core.a $(pkg-config --libs cfitsio wcslib) -lpthread -lm \
 *      -o /tmp/bench-load-convert
 *   /tmp/bench-load-convert [REPEATS]
 * For another version add -DSKY_READER_C='"/tmp/other-sky-fits-read.c"', and
 * -DSKY_READER_HAS_FINITE where that version has finite_range (main's of
 * 2026-11-24 does not: its integer loops all test for infinities).
 */
#ifndef SKY_READER_C
#define SKY_READER_C "../src/core/sky-fits-read.c"
#define SKY_READER_HAS_FINITE 1
#endif
#include SKY_READER_C

#include <stdio.h>
#include <time.h>

static double
thread_ns (void)
{
  struct timespec t;

  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &t);
  return (double) t.tv_sec * 1e9 + (double) t.tv_nsec;
}

typedef struct {
  const char *name;
  int bitpix;
  double scale, zero;
  int check_blank;
  int64_t blank;
} Case;

static const Case cases[] = {
  { "-32", -32, 1., 0., 0, 0 },
  { "-32 scaled", -32, 2., 1., 0, 0 },
  { "-64", -64, 1., 0., 0, 0 },
  { "-64 scaled", -64, 2., 1., 0, 0 },
  { "8", 8, 1., 0., 0, 0 },
  { "8 scaled, BLANK", 8, 0.5, -10., 1, 255 },
  { "16", 16, 1., 0., 0, 0 },
  { "16 scaled, BLANK", 16, 3.3333333333333e-4, 0., 1, -32768 },
  /* Scaled past float's range: the loop that classifies every value. */
  { "16 scaled to overflow, BLANK", 16, 1e36, 0., 1, -32768 },
  { "32", 32, 1., 0., 0, 0 },
  { "32 scaled, BLANK", 32, 1e-6, 0., 1, INT32_MIN },
};

int
main (int argc, char **argv)
{
  int repeats = argc > 1 ? atoi (argv[1]) : 300;
  int64_t n = BLOCK_PIXELS;
  uint64_t *stored = aligned_alloc (64, (size_t) n * 8);
  uint64_t *raw = aligned_alloc (64, (size_t) n * 8);
  Bits *out = aligned_alloc (64, (size_t) n * 4);
  float nan_value = NAN;

  if (repeats < 1 || stored == NULL || raw == NULL || out == NULL)
    return 2;
  /* Finite values of every size (the exponent kept below the top). */
  for (int64_t i = 0; i < n * 2; i++)
    ((uint32_t *) stored)[i] = ((uint32_t) i * 2654435761u) & 0x3f7fffffu;
  printf ("| plane | ns a pixel |\n| --- | --- |\n");
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
    {
      const Case *c = &cases[k];
      SkyFitsRawPlane plane = { 0, n, c->bitpix, c->scale, c->zero, c->check_blank, c->blank };
      Reader r = { 0 };
      double best = 1e30;

      r.plane = &plane;
      r.bytes = abs (c->bitpix) / 8;
      r.scaled = !(c->scale == 1. && c->zero == 0.);
#ifdef SKY_READER_HAS_FINITE
      r.finite = finite_range (c->bitpix, c->scale, c->zero);
#endif
      memcpy (&r.blank_bits, &nan_value, sizeof nan_value);
      for (int i = 0; i < repeats; i++)
        {
          BlockCounts counts;
          double t0;
          /* The stored values afresh: 4-byte ones are converted in place. */
          memcpy (raw, stored, (size_t) (n * r.bytes));
          t0 = thread_ns ();
          convert_block (&r, raw, r.bytes == 4 ? (Bits *) raw : out, n, &counts);
          t0 = thread_ns () - t0;
          if (t0 < best)
            best = t0;
        }
      printf ("| %s | %.3f |\n", c->name, best / (double) n);
    }
  free (stored);
  free (raw);
  free (out);
  return 0;
}
