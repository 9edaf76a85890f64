/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-geometry.h: the core's drawing geometry, part of its public API
 * (sky-core.h includes it): a coordinate grid from an image's WCS and
 * contour lines of an image. Plain C, no GLib; the app draws them. */
#ifndef SKY_GEOMETRY_H
#define SKY_GEOMETRY_H

#include <stdint.h>

typedef struct SkyWcs SkyWcs;

/* ------------------------------------------------ coordinate grid */

/* Which edge of a pixel rectangle (skysift's 0-based pixel coordinates,
 * not the screen's): x = x0, x = x1, y = y0, y = y1. */
typedef enum {
  SKY_EDGE_X0,
  SKY_EDGE_X1,
  SKY_EDGE_Y0,
  SKY_EDGE_Y1,
} SkyEdge;

#define SKY_GRID_TEXT_SIZE 64

/* One line of constant longitude (axis 0, a meridian) or latitude (axis
 * 1, a parallel) at a round value, in degrees (longitudes in [0, 360)),
 * with its label: right ascension in hours ("17h45m", "0h00m30s"),
 * declination in sexagesimal degrees ("-29°30′"), other systems in
 * decimal degrees ("359.5°", "-0.25°"); UTF-8. */
typedef struct {
  int axis;
  double value;
  char text[SKY_GRID_TEXT_SIZE];
} SkyGridLine;

/* Where a line meets the rectangle's edge: found on the edge itself by
 * bisection of the WCS's pixel-to-world (to 1e-6 pixel), not from the
 * drawn path. */
typedef struct {
  int line;             /* index into SkyGrid.lines */
  SkyEdge edge;
  double x, y;          /* 0-based pixels, on the edge */
} SkyGridCrossing;

/* A coordinate grid over a pixel rectangle. Each line's visible pieces
 * are polylines: path p belongs to line path_line[p] and has the points
 * px, py [path_start[p] .. path_start[p + 1]), clipped to the rectangle. */
typedef struct {
  SkyGridLine *lines;
  int nlines;
  int *path_line;
  int64_t *path_start;  /* npaths + 1 entries */
  int npaths;
  double *px, *py;
  SkyGridCrossing *crossings;
  int ncrossings;
  double step[2];       /* the spacing of longitude and latitude lines, degrees */
  int lng_hours;        /* longitudes are labelled in hours (equatorial) */
  int pole_inside;      /* +1 / -1: the north / south pole is in the rectangle;
                         * 2: both (an all-sky map) */
} SkyGrid;

/* The grid of the WCS's own system over the pixel rectangle [x0, x1] x
 * [y0, y1] (0-based pixel coordinates; the whole image of nx x ny pixels
 * is -0.5, -0.5, nx - 0.5, ny - 0.5): between about 3 and 7 lines of each
 * coordinate at round spacings (hours, minutes and seconds of time for
 * right ascension; sexagesimal degrees for declination; 1, 2, 5 times a
 * power of ten degrees otherwise), traced through wcslib's world-to-pixel
 * for any projection, across longitude 0 and around a pole in the
 * rectangle. Free with sky_grid_free. SKY_ERR_ARGUMENT where no pixel of
 * the rectangle has a sky position. */
int sky_wcs_grid (SkyWcs *wcs, double x0, double y0, double x1, double y1, SkyGrid *grid);
void sky_grid_free (SkyGrid *grid);

/* Unit vectors in pixel space pointing north and east on the sky at pixel
 * (x, y) (0-based), for a compass; SKY_ERR_ARGUMENT where the pixel has no
 * sky position. */
int sky_wcs_north_east (SkyWcs *wcs, double x, double y, double north[2], double east[2]);

/* ------------------------------------------------------ contours */

/* Contour lines of an image at one level by marching squares: pixel
 * centres are the grid's nodes (pixel i at coordinate i), crossings are
 * interpolated linearly along cell edges, and a saddle cell is split by
 * the mean of its four corners (as matplotlib's contour does). Cells with
 * a blank (NaN) corner have no line. Path p has the points px, py
 * [path_start[p] .. path_start[p + 1]); closed[p] is 1 for a closed path
 * (its last point repeats its first). */
typedef struct {
  int64_t npaths;
  int64_t *path_start;  /* npaths + 1 entries */
  uint8_t *closed;
  double *px, *py;
} SkyContour;

/* The contour of the nx x ny float image at level. SKY_ERR_MEMORY on
 * allocation failure. Free with sky_contour_free. */
int sky_contour_trace (const float *pixels, int64_t nx, int64_t ny, double level,
                       SkyContour *contour);
void sky_contour_free (SkyContour *contour);

#endif /* SKY_GEOMETRY_H */
