/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Locked frames: where one image must be looked at to show what another
 * shows, through both WCSs (wcslib's, as the readout reads them) and,
 * between galactic and equatorial images, the core's conversion. */
#include "sky-frame-lock.h"

#include <math.h>

#include "sky-overlay.h"

static SkyOverlayFrame
sky_frame_of (SkyWcs *wcs)
{
  switch (sky_wcs_system (wcs))
    {
    case SKY_COORD_EQUATORIAL:
      return SKY_FRAME_EQUATORIAL;
    case SKY_COORD_GALACTIC:
      return SKY_FRAME_GALACTIC;
    default:
      return SKY_FRAME_PIXEL;   /* no conversion known: only to the same system */
    }
}

/* The angle between two positions, in degrees (haversine). */
static double
separation (double lng1, double lat1, double lng2, double lat2)
{
  double d2r = G_PI / 180, dlat = (lat2 - lat1) * d2r, dlng = (lng2 - lng1) * d2r;
  double a = sin (dlat / 2) * sin (dlat / 2)
             + cos (lat1 * d2r) * cos (lat2 * d2r) * sin (dlng / 2) * sin (dlng / 2);
  return 2 * asin (MIN (1.0, sqrt (a))) / d2r;
}

/* The image's angular size of a pixel at (x, y), degrees: the geometric
 * mean of a step along each axis there. */
static double
pixel_scale_at (SkyWcs *wcs, double x, double y)
{
  double l0, b0, l1, b1, l2, b2;

  if (sky_wcs_pix2world (wcs, x, y, &l0, &b0) != SKY_OK
      || sky_wcs_pix2world (wcs, x + 1, y, &l1, &b1) != SKY_OK
      || sky_wcs_pix2world (wcs, x, y + 1, &l2, &b2) != SKY_OK)
    return NAN;
  return sqrt (separation (l0, b0, l1, b1) * separation (l0, b0, l2, b2));
}

gboolean
sky_frame_lock_view (SkyImageData *a, SkyImageData *b, gboolean on_sky, double zoom, double x,
                     double y, double *tzoom, double *tx, double *ty)
{
  double lng, lat, scale_a, scale_b;
  SkyOverlayFrame fa, fb;

  if (!on_sky)
    {
      *tzoom = zoom;
      *tx = x;
      *ty = y;
      return TRUE;
    }
  if (a == NULL || b == NULL || !a->has_wcs || !b->has_wcs)
    return FALSE;
  fa = sky_frame_of (a->wcs);
  fb = sky_frame_of (b->wcs);
  if ((fa == SKY_FRAME_PIXEL || fb == SKY_FRAME_PIXEL) && sky_wcs_system (a->wcs) != sky_wcs_system (b->wcs))
    return FALSE;
  if (sky_wcs_pix2world (a->wcs, x, y, &lng, &lat) != SKY_OK)
    return FALSE;
  if (fa != fb)
    sky_frame_convert (fa, fb, lng, lat, &lng, &lat);
  if (sky_wcs_world2pix (b->wcs, lng, lat, tx, ty) != SKY_OK)
    return FALSE;
  scale_a = pixel_scale_at (a->wcs, x, y);
  scale_b = pixel_scale_at (b->wcs, *tx, *ty);
  /* The same angle per screen pixel: zoom / scale alike. */
  *tzoom = isfinite (scale_a) && isfinite (scale_b) && scale_a > 0 ? zoom * scale_b / scale_a : zoom;
  return TRUE;
}

