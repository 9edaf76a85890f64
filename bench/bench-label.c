/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The label step on adversarial masks against the GC-like field's mask, all
 * of the same size, in one process. Each round labels every mask once, in
 * turn, so that all of them see the same machine state (a noisy, shared
 * two-core machine); the report gives each mask's median over rounds and
 * the median over rounds of its time divided by the field's time, with the
 * same connectivity, in the same round.
 *
 * Built by bench/bench-label.py, which also records the report:
 *   bench/bench-label.py [--build build-label] [--rounds 201] [--threads 0,1]
 * or by hand:
 *   cc -O2 -std=c11 -D_GNU_SOURCE -Isrc/core -Isrc/cpu bench/bench-label.c \
 *      BUILD/src/cpu/libsky-cpu.a BUILD/src/core/libsky-core.a \
 *      $(pkg-config --libs cfitsio wcslib) -lpthread -lm -o bench-label
 *   ./bench-label IMAGE.fits THREADS ROUNDS   (THREADS 0: the CLI's default)
 */
#include "sky-core.h"
#include "sky-cpu.h"
#include "bench-median.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { FIELD, FIELD8, CHECKER4, CHECKER8, STRIPES, ROWS, NOISE4, NOISE8, FULL, NMASKS };

static const char *const names[NMASKS] = {
  "GC-like field, 4-conn", "GC-like field, 8-conn",
  "checkerboard, 4-conn", "checkerboard, 8-conn",
  "vertical stripes (every other column), 4-conn", "every other row, 4-conn",
  "random 50% noise, 4-conn", "random 50% noise, 8-conn", "all source, 4-conn",
};
static const int conn_of[NMASKS] = { 4, 8, 4, 8, 4, 4, 4, 8, 4 };

/* The GC-like field's mask as the CLI makes it with the lesson's defaults. */
static uint8_t *
field_mask (const char *path, int nthreads, int64_t *nx, int64_t *ny)
{
  SkyImage img = { 0 };
  SkyParams params;
  SkyResult res = { 0 };
  uint8_t *mask;

  sky_params_init (&params);
  params.nthreads = nthreads;
  if (sky_image_load (path, NULL, &img) != SKY_OK || sky_cpu_run (&img, &params, &res) != SKY_OK)
    {
      fprintf (stderr, "bench-label: %s\n", sky_last_error ());
      exit (1);
    }
  *nx = img.nx;
  *ny = img.ny;
  mask = malloc ((size_t) (img.nx * img.ny));
  memcpy (mask, res.mask, (size_t) (img.nx * img.ny));
  sky_result_clear (&res);
  sky_image_clear (&img);
  return mask;
}

static void
make_mask (int which, uint8_t *m, int64_t nx, int64_t ny)
{
  uint64_t state = 0x9e3779b97f4a7c15u; /* a fixed xorshift stream: the same noise each run */

  for (int64_t y = 0; y < ny; y++)
    for (int64_t x = 0; x < nx; x++)
      {
        uint8_t v = 0;
        switch (which)
          {
          case CHECKER4:
          case CHECKER8: v = (x + y) % 2 == 0; break;
          case STRIPES: v = x % 2 == 0; break;
          case ROWS: v = y % 2 == 0; break;
          case NOISE4:
          case NOISE8:
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            v = (state >> 40) & 1;
            break;
          case FULL: v = 1; break;
          }
        m[y * nx + x] = v;
      }
}

int
main (int argc, char **argv)
{
  int64_t nx, ny, n[NMASKS];
  uint8_t *masks[NMASKS];
  int nthreads, rounds;
  int32_t *labels;
  double *t[NMASKS], *ratio[NMASKS];

  if (argc != 4)
    {
      fprintf (stderr, "usage: %s IMAGE.fits THREADS ROUNDS\n", argv[0]);
      return 2;
    }
  nthreads = atoi (argv[2]);
  rounds = atoi (argv[3]);
  masks[FIELD] = field_mask (argv[1], nthreads, &nx, &ny);
  masks[FIELD8] = masks[FIELD];
  for (int k = FIELD8 + 1; k < NMASKS; k++)
    {
      masks[k] = malloc ((size_t) (nx * ny));
      make_mask (k, masks[k], nx, ny);
    }
  /* The pipeline reuses its label buffer between runs: pre-fault it too. */
  labels = sky_alloc_large ((size_t) (nx * ny) * sizeof *labels);
  memset (labels, 0, (size_t) (nx * ny) * sizeof *labels);
  for (int k = 0; k < NMASKS; k++)
    {
      t[k] = malloc ((size_t) rounds * sizeof *t[k]);
      ratio[k] = malloc ((size_t) rounds * sizeof *ratio[k]);
    }

  for (int r = -3; r < rounds; r++) /* three warm-up rounds */
    for (int k = 0; k < NMASKS; k++)
      {
        double t0 = sky_now_ms ();
        if (sky_cpu_label (masks[k], nx, ny, conn_of[k], nthreads, labels, &n[k]) != SKY_OK)
          {
            fprintf (stderr, "bench-label: %s\n", sky_last_error ());
            return 1;
          }
        if (r >= 0)
          t[k][r] = sky_now_ms () - t0;
      }
  for (int r = 0; r < rounds; r++)
    for (int k = 0; k < NMASKS; k++)
      ratio[k][r] = t[k][r] / t[conn_of[k] == 4 ? FIELD : FIELD8][r];

  printf ("%lld x %lld pixels, threads %d (%d in use), %d rounds\n\n", (long long) nx,
          (long long) ny, nthreads, nthreads > 0 ? nthreads : sky_default_threads (), rounds);
  printf ("| mask | components | median (ms) | ratio to the field, same connectivity |\n");
  printf ("| --- | ---: | ---: | ---: |\n");
  for (int k = 0; k < NMASKS; k++)
    printf ("| %s | %lld | %.3f | %.2fx |\n", names[k], (long long) n[k],
            sky_bench_median (t[k], rounds), sky_bench_median (ratio[k], rounds));
  return 0;
}
