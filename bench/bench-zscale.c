/* SPDX-License-Identifier: GPL-3.0-or-later */
/* How long the display's zscale limits take on one image, three times.
 * Not built by meson; from the project's root, after `ninja -C build`:
 *
 *   gcc -O3 -std=c11 -D_GNU_SOURCE -Isrc/ui -Isrc/core -Isrc/pipeline -Isrc/cpu \
 *     -I/usr/include/wcslib $(pkg-config --cflags gio-2.0) bench/bench-zscale.c \
 *     src/ui/sky-display-stats.c -o /tmp/bench-zscale -Wl,--start-group \
 *     build/src/core/libsky-core.a -lcfitsio -lwcs -lm -pthread \
 *     $(pkg-config --libs gio-2.0) -Wl,--end-group
 *   /tmp/bench-zscale IMAGE.fits
 */
#include "sky-display-stats.h"

#include <stdio.h>

int
main (int argc, char **argv)
{
  SkyImage img;
  double lo, hi, t0;

  if (argc != 2 || sky_image_load (argv[1], NULL, &img) != SKY_OK)
    {
      fprintf (stderr, "usage: bench-zscale IMAGE.fits (%s)\n", argc == 2 ? sky_last_error () : "");
      return 1;
    }
  for (int r = 0; r < 3; r++)
    {
      t0 = sky_now_ms ();
      sky_zscale (&img, 1000, &lo, &hi);
      printf ("zscale %.1f ms: %.9g .. %.9g\n", sky_now_ms () - t0, lo, hi);
    }
  sky_image_clear (&img);
  return 0;
}
