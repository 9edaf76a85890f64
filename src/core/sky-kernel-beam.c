/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The matched filter of a point source: the restoring beam (BMAJ, BMIN,
 * BPA) drawn on the pixel grid. */
#include "sky-core.h"

#include <math.h>
#include <stdlib.h>

int
sky_image_beam_pixels (const SkyImage *img, double *sigma_major, double *sigma_minor,
                       double *angle)
{
  SkyWcs *wcs = NULL;
  double scale, lng0, lat0, lng1, lat1, east;
  int ret;

  if (!img->has_beam || !(img->bmaj > 0) || !(img->bmin > 0))
    return sky_fail (SKY_ERR_ARGUMENT, "%s: no beam in the header (BMAJ, BMIN)",
                     img->path ? img->path : "image");
  ret = sky_wcs_new (img, &wcs);
  if (ret != SKY_OK)
    return sky_fail (ret, "%s: the beam needs the pixel scale, and there is no celestial WCS",
                     img->path ? img->path : "image");
  scale = sqrt (sky_wcs_pixel_area (wcs));
  /* Which way east lies along x, from the WCS itself (CDELT1 < 0 puts it
   * to the left, as radio images have it). */
  sky_wcs_pix2world (wcs, img->nx / 2.0, img->ny / 2.0, &lng0, &lat0);
  sky_wcs_pix2world (wcs, img->nx / 2.0 + 1, img->ny / 2.0, &lng1, &lat1);
  sky_wcs_free (wcs);
  if (!(scale > 0) || !isfinite (lng0) || !isfinite (lng1))
    return sky_fail (SKY_ERR_ARGUMENT, "%s: no pixel scale at the image centre for the beam",
                     img->path ? img->path : "image");
  east = remainder (lng1 - lng0, 360.0) > 0 ? 1.0 : -1.0;

  /* FWHM to sigma, in pixels; the position angle runs from north (+y)
   * through east, which lies along +x or -x. */
  *sigma_major = img->bmaj / scale / (2 * sqrt (2 * log (2.0)));
  *sigma_minor = img->bmin / scale / (2 * sqrt (2 * log (2.0)));
  *angle = atan2 (cos (img->bpa * M_PI / 180), east * sin (img->bpa * M_PI / 180));
  return SKY_OK;
}

int
sky_kernel_beam (SkyKernel *k, const SkyImage *img)
{
  double smaj, smin, angle, c, s;
  double *values = NULL;
  int half, size, ret;

  k->nx = k->ny = 0;
  k->values = NULL;
  ret = sky_image_beam_pixels (img, &smaj, &smin, &angle);
  if (ret != SKY_OK)
    return ret;
  /* (c, s): the major axis's direction on the pixel grid. */
  c = cos (angle);
  s = sin (angle);
  half = (int) ceil (4 * smaj);
  if (half > 512)
    return sky_fail (SKY_ERR_ARGUMENT, "%s: the beam is %.0f pixels wide, too wide to filter with",
                     img->path ? img->path : "image", 2 * smaj);
  size = 2 * half + 1;
  values = malloc ((size_t) size * size * sizeof *values);
  if (values == NULL)
    return sky_fail (SKY_ERR_MEMORY, "no memory for a beam kernel of %d pixels", size);
  for (int y = -half; y <= half; y++)
    for (int x = -half; x <= half; x++)
      {
        double u = x * c + y * s, v = -x * s + y * c;
        values[(y + half) * size + (x + half)]
          = exp (-0.5 * (u * u / (smaj * smaj) + v * v / (smin * smin)));
      }
  ret = sky_kernel_from_values (k, size, size, values);
  free (values);
  return ret;
}
