/* SPDX-License-Identifier: GPL-3.0-or-later */
/* libFuzzer harness: any bytes as a FITS file, through the loader and, when
 * it loads, the whole CPU pipeline. The loader takes a path (cfitsio reads
 * files), so each input goes through one temporary file. */
#include "sky-cpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* Keeps each run small: the fuzzer looks for crashes, not for big images. */
#define MAX_PIXELS (1 << 20)

/* libFuzzer's entry point, which no header declares. */
int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static char path[64];
  SkyImage img;
  FILE *fp;

  if (path[0] == '\0')
    snprintf (path, sizeof path, "/tmp/skysift-fuzz-%d.fits", (int) getpid ());
  fp = fopen (path, "wb");
  if (fp == NULL)
    abort ();
  fwrite (data, 1, size, fp);
  fclose (fp);

  if (sky_image_load (path, NULL, &img) == SKY_OK)
    {
      if (img.nx * img.ny <= MAX_PIXELS)
        {
          SkyParams params;
          SkyResult res = { 0 };
          sky_params_init (&params);
          params.nthreads = 1;
          for (int conn = 4; conn <= 8; conn += 4)
            {
              params.connectivity = conn;
              if (sky_cpu_run (&img, &params, &res) == SKY_OK && res.nsources > 0
                  && res.catalogue.npix[0] <= 0)
                abort (); /* a source always has pixels */
            }
          sky_result_clear (&res);
        }
      sky_image_clear (&img);
    }
  return 0;
}
