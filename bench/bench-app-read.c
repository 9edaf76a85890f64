/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The app's read (sky_image_read, with a progress as the window asks: the
 * reduced view and the display counts of a big image) against the core's
 * load (sky_image_load, the CLI's), alternating in one process, with no
 * window drawing beside them: the read's own cost over the load.
 *
 *   bench-app-read FILE [ROUNDS]    (threads: $SKYSIFT_THREADS)
 *
 * Prints each round's wall, user and system times, then, over the rounds
 * after the first (which pays for the disk), the medians of each and the
 * median of the rounds' own ratios (the load and the read of one round
 * meet the same load on a shared machine). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "sky-image-read.h"
#include "bench-median.h"

static double
cpu_ms (int system)
{
  struct rusage u;
  struct timeval v;

  getrusage (RUSAGE_SELF, &u);
  v = system ? u.ru_stime : u.ru_utime;
  return v.tv_sec * 1e3 + v.tv_usec / 1e3;
}

int
main (int argc, char **argv)
{
  int rounds = argc > 2 ? atoi (argv[2]) : 5;
  double *load_ms, *read_ms, *ratio;

  if (argc < 2 || rounds < 2)
    {
      fprintf (stderr, "usage: %s FILE [ROUNDS >= 2]\n", argv[0]);
      return 2;
    }
  load_ms = calloc ((size_t) rounds, sizeof *load_ms);
  read_ms = calloc ((size_t) rounds, sizeof *read_ms);
  ratio = calloc ((size_t) rounds, sizeof *ratio);
  if (load_ms == NULL || read_ms == NULL || ratio == NULL)
    return 1;
  for (int i = 0; i < rounds; i++)
    {
      SkyImage img;
      g_autoptr (SkyImageData) data = g_atomic_rc_box_new0 (SkyImageData);
      g_autoptr (SkyOpenProgress) progress = sky_open_progress_new ();
      g_autoptr (GError) error = NULL;
      double t = sky_now_ms (), user = cpu_ms (0), sys = cpu_ms (1);

      if (sky_image_load (argv[1], NULL, &img) != SKY_OK)
        {
          fprintf (stderr, "%s\n", sky_last_error ());
          return 1;
        }
      load_ms[i] = sky_now_ms () - t;
      printf ("load %7.1f ms  user %6.1f  system %6.1f\n", load_ms[i], cpu_ms (0) - user,
              cpu_ms (1) - sys);
      sky_image_clear (&img);

      t = sky_now_ms (), user = cpu_ms (0), sys = cpu_ms (1);
      if (sky_image_read (argv[1], NULL, data, progress, NULL, &error) != SKY_IMAGE_READ_DONE)
        {
          fprintf (stderr, "%s: the app's read failed: %s\n", argv[1],
                   error != NULL ? error->message : "not a plane it reads");
          return 1;
        }
      read_ms[i] = sky_now_ms () - t;
      ratio[i] = read_ms[i] / load_ms[i];
      printf ("read %7.1f ms  user %6.1f  system %6.1f\n", read_ms[i], cpu_ms (0) - user,
              cpu_ms (1) - sys);
    }
  {
    double load = sky_bench_median (load_ms + 1, rounds - 1);
    double read = sky_bench_median (read_ms + 1, rounds - 1);
    printf ("medians of rounds 2 to %d: load %.1f ms, the app's read %.1f ms; "
            "the rounds' read / load: %.2fx\n",
            rounds, load, read, sky_bench_median (ratio + 1, rounds - 1));
  }
  free (load_ms);
  free (read_ms);
  free (ratio);
  return 0;
}
