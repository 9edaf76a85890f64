/* The matched filter of a point source: the restoring beam (BMAJ, BMIN,
 * BPA) drawn on the pixel grid. */
#include "sky-core.h"

#include <math.h>
#include <stdlib.h>

int
sky_kernel_beam (SkyKernel *k, const SkyImage *img)
{
  SkyWcs *wcs = NULL;
  double scale, lng0, lat0, lng1, lat1, east, pa, smaj, smin, c, s;
  double *values = NULL;
  int half, size, ret;

  k->nx = k->ny = 0;
  k->values = NULL;
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
   * through east. */
  smaj = img->bmaj / scale / (2 * sqrt (2 * log (2.0)));
  smin = img->bmin / scale / (2 * sqrt (2 * log (2.0)));
  pa = img->bpa * M_PI / 180;
  c = cos (pa);
  s = sin (pa);
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
        /* Along the major axis (east * sin pa, cos pa) and across it. */
        double u = x * east * s + y * c, v = -x * east * c + y * s;
        values[(y + half) * size + (x + half)]
          = exp (-0.5 * (u * u / (smaj * smaj) + v * v / (smin * smin)));
      }
  ret = sky_kernel_from_values (k, size, size, values);
  free (values);
  return ret;
}
