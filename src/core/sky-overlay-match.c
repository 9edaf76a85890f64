/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Overlay positions onto the image's pixels, and the one-to-one
 * cross-match of two lists of positions. */
#include "sky-overlay-private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <wcslib/sph.h>

/* Equatorial (FK5 J2000) to galactic as a rotation of the sphere, the
 * native system being the galactic one: the north galactic pole and the
 * galactic longitude of the north celestial pole in FK5 J2000, the values
 * astropy's Galactic frame is defined by. */
#define NGP_RA 192.8594812065348
#define NGP_DEC 27.12825118085622
#define NCP_GLON 122.9319185680026

void
sky_frame_convert (SkyOverlayFrame from, SkyOverlayFrame to, double lng, double lat,
                   double *out_lng, double *out_lat)
{
  const double eul[5] = { NGP_RA, 90.0 - NGP_DEC, NCP_GLON, cos ((90.0 - NGP_DEC) * M_PI / 180.0),
                          sin ((90.0 - NGP_DEC) * M_PI / 180.0) };

  *out_lng = lng;
  *out_lat = lat;
  if (from == to || from == SKY_FRAME_PIXEL || to == SKY_FRAME_PIXEL)
    return;
  if (from == SKY_FRAME_EQUATORIAL)
    sphs2x (eul, 1, 1, 1, 1, &lng, &lat, out_lng, out_lat);
  else
    sphx2s (eul, 1, 1, 1, 1, &lng, &lat, out_lng, out_lat);
  *out_lng = fmod (*out_lng, 360.0);
  if (*out_lng < 0)
    *out_lng += 360.0;
}

int
sky_overlay_to_pixel (SkyWcs *wcs, SkyOverlayFrame frame, double lng, double lat, double *x,
                      double *y)
{
  SkyOverlayFrame image_frame;

  if (frame == SKY_FRAME_PIXEL)
    {
      *x = lng;
      *y = lat;
      return SKY_OK;
    }
  *x = *y = NAN;
  if (wcs == NULL)
    return sky_fail (SKY_ERR_UNAVAILABLE, "sky positions need an image with a celestial WCS");
  switch (sky_wcs_system (wcs))
    {
    case SKY_COORD_EQUATORIAL:
      image_frame = SKY_FRAME_EQUATORIAL;
      break;
    case SKY_COORD_GALACTIC:
      image_frame = SKY_FRAME_GALACTIC;
      break;
    default:
      return sky_fail (SKY_ERR_UNAVAILABLE, "the image's sky system (%s) is neither "
                       "equatorial nor galactic", sky_wcs_frame (wcs));
    }
  sky_frame_convert (frame, image_frame, lng, lat, &lng, &lat);
  return sky_wcs_world2pix (wcs, lng, lat, x, y);
}

double
sky_wcs_pixels_per_arcsec (const SkyWcs *wcs)
{
  double area = wcs ? sky_wcs_pixel_area (wcs) : NAN;   /* square degrees */
  return area > 0 ? 1.0 / (sqrt (area) * 3600.0) : NAN;
}

typedef struct {
  double d2;
  int64_t a, b;
} Pair;

static int
pair_order (const void *p, const void *q)
{
  const Pair *x = p, *y = q;
  if (x->d2 != y->d2)
    return x->d2 < y->d2 ? -1 : 1;
  if (x->a != y->a)
    return x->a < y->a ? -1 : 1;
  return (x->b > y->b) - (x->b < y->b);
}

/* Cell of a position on a grid of radius-sized cells. */
static int64_t
cell_of (double v, double radius)
{
  return (int64_t) floor (v / radius);
}

typedef struct {
  int64_t key_x, key_y, index;
} Entry;

static int
entry_order (const void *p, const void *q)
{
  const Entry *x = p, *y = q;
  if (x->key_y != y->key_y)
    return x->key_y < y->key_y ? -1 : 1;
  if (x->key_x != y->key_x)
    return x->key_x < y->key_x ? -1 : 1;
  return (x->index > y->index) - (x->index < y->index);
}

int64_t
sky_crossmatch (const double *ax, const double *ay, int64_t na, const double *bx,
                const double *by, int64_t nb, double radius, int64_t *match_a,
                int64_t *match_b)
{
  Entry *grid = NULL;
  Pair *pairs = NULL;
  int64_t ngrid = 0, npairs = 0, cap = 0, nmatched = 0;
  double r2 = radius * radius;

  for (int64_t i = 0; i < na; i++)
    match_a[i] = -1;
  for (int64_t j = 0; j < nb; j++)
    match_b[j] = -1;
  if (na == 0 || nb == 0 || !(radius > 0))
    return 0;
  /* The b positions in cells of the radius, sorted by cell: each a then
   * looks in its cell and the eight around it. */
  grid = malloc ((size_t) nb * sizeof *grid);
  if (grid == NULL)
    return -1;
  for (int64_t j = 0; j < nb; j++)
    if (isfinite (bx[j]) && isfinite (by[j]))
      grid[ngrid++] = (Entry) { cell_of (bx[j], radius), cell_of (by[j], radius), j };
  qsort (grid, (size_t) ngrid, sizeof *grid, entry_order);
  for (int64_t i = 0; i < na; i++)
    {
      int64_t cx, cy;
      if (!isfinite (ax[i]) || !isfinite (ay[i]))
        continue;
      cx = cell_of (ax[i], radius);
      cy = cell_of (ay[i], radius);
      for (int64_t gy = cy - 1; gy <= cy + 1; gy++)
        for (int64_t gx = cx - 1; gx <= cx + 1; gx++)
          {
            /* The first entry of cell (gx, gy), by binary search. */
            int64_t lo = 0, hi = ngrid;
            Entry key = { gx, gy, -1 };
            while (lo < hi)
              {
                int64_t mid = lo + (hi - lo) / 2;
                if (entry_order (&grid[mid], &key) < 0)
                  lo = mid + 1;
                else
                  hi = mid;
              }
            for (int64_t k = lo; k < ngrid && grid[k].key_x == gx && grid[k].key_y == gy; k++)
              {
                int64_t j = grid[k].index;
                double dx = ax[i] - bx[j], dy = ay[i] - by[j], d2 = dx * dx + dy * dy;
                if (d2 > r2)
                  continue;
                if (npairs == cap)
                  {
                    Pair *grown;
                    cap = cap ? 2 * cap : 1024;
                    grown = realloc (pairs, (size_t) cap * sizeof *pairs);
                    if (grown == NULL)
                      {
                        free (pairs);
                        free (grid);
                        return -1;
                      }
                    pairs = grown;
                  }
                pairs[npairs++] = (Pair) { d2, i, j };
              }
          }
    }
  /* Closest pairs first, each position used once. */
  qsort (pairs, (size_t) npairs, sizeof *pairs, pair_order);
  for (int64_t k = 0; k < npairs; k++)
    if (match_a[pairs[k].a] < 0 && match_b[pairs[k].b] < 0)
      {
        match_a[pairs[k].a] = pairs[k].b;
        match_b[pairs[k].b] = pairs[k].a;
        nmatched++;
      }
  free (pairs);
  free (grid);
  return nmatched;
}
