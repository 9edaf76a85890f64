/* SPDX-License-Identifier: GPL-3.0-or-later */
/* How long the core's loader (sky_image_load, the `load` of skysift-cli
 * find's times) takes on one image, alone: the CLI's side of the app's
 * open where `find` itself would not fit in memory (a 32768^2 field's four
 * steps need some 9 GiB). Not built by meson; from the project's root,
 * after `ninja -C build`:
 *
 *   gcc -O2 -std=c11 -D_GNU_SOURCE -Isrc/core bench/bench-load.c -o /tmp/bench-load \
 *     -Wl,--start-group build/src/core/libsky-core.a -lcfitsio -lwcs -lm -pthread \
 *     -Wl,--end-group
 *   SKYSIFT_THREADS=2 /tmp/bench-load IMAGE.fits
 *
 * Prints the load time in ms and the process's peak resident set (VmHWM).
 */
#include "sky-core.h"

#include <stdio.h>
#include <string.h>

int
main (int argc, char **argv)
{
  SkyImage img;
  double t0;
  char line[256];
  FILE *status;

  if (argc != 2)
    {
      fprintf (stderr, "usage: %s IMAGE.fits\n", argv[0]);
      return 2;
    }
  t0 = sky_now_ms ();
  if (sky_image_load (argv[1], NULL, &img) != SKY_OK)
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
