/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-overlay.h: catalogues and region files read to be drawn over an
 * image, and their cross-match with a run's catalogue.
 *
 * Plain C11 (libxml2 reads VOTables): the app draws what this reads, and
 * the tests read it with no display. Kept apart from sky-core.h in a
 * library of its own so that the CLI and libskysift do not link libxml2.
 * Functions return SKY_OK or a status whose sky_last_error() names the
 * file, the line or column, and the reason. */
#ifndef SKY_OVERLAY_H
#define SKY_OVERLAY_H

#include "sky-core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The frame a shape's positions are in. Equatorial covers ICRS, FK5 and
 * J2000 alike (they differ by under 0.03 arcsec); FK4/B1950 is refused. */
typedef enum SkyOverlayFrame {
  SKY_FRAME_PIXEL,        /* skysift's 0-based image pixels */
  SKY_FRAME_EQUATORIAL,   /* ra, dec in degrees */
  SKY_FRAME_GALACTIC,     /* glon, glat in degrees */
} SkyOverlayFrame;

typedef enum SkyShapeKind {
  SKY_SHAPE_POINT,        /* a catalogue row, or a DS9 point */
  SKY_SHAPE_CIRCLE,       /* radius a */
  SKY_SHAPE_ELLIPSE,      /* semi-axes a, b, angle */
  SKY_SHAPE_BOX,          /* full sides a, b, angle */
  SKY_SHAPE_POLYGON,      /* vertices vx, vy */
  SKY_SHAPE_TEXT,         /* text at (x, y) */
} SkyShapeKind;

/* One shape. Sizes (a, b) are pixels in the pixel frame and arcseconds in
 * a sky frame; angle is degrees from the first axis (DS9's convention). */
typedef struct SkyShape {
  SkyShapeKind kind;
  SkyOverlayFrame frame;
  double x, y;            /* centre (first vertex of a polygon's list) */
  double a, b, angle;
  int nvertices;
  double *vx, *vy;        /* polygon vertices, in frame */
  char *text;             /* the shape's text={...}, or NULL */
  int exclude;            /* DS9's leading '-' */
} SkyShape;

typedef struct SkyOverlay {
  char *path;
  int is_regions;          /* a DS9 region file; else a catalogue */
  int64_t n;
  SkyShape *shapes;
  int64_t nskipped;        /* region shapes not drawn (vector, ruler...) */
  /* Catalogues: the columns the positions came from, with their units as
   * read ("deg", "hourangle", "sexagesimal", "pixel (1-based)"...). */
  char x_column[64], y_column[64];
  char units[64];
} SkyOverlay;

/* Reads path by its contents: a DS9 region file ("# Region file format",
 * or a line that starts with a frame or shape), a VOTable (XML), an ECSV
 * ("# %ECSV"), a SExtractor ASCII catalogue ("#   1 NUMBER") or a CSV with
 * a header line. Catalogue positions come from the first pair of columns
 * found, sky before pixels where prefer_sky is set (an image with a
 * celestial WCS), else pixels first:
 *   ra/dec, raj2000/dej2000 (decj2000), ra_icrs/de_icrs, alpha_j2000/
 *   delta_j2000, ra_deg/dec_deg, _raj2000/_dej2000: equatorial;
 *   glon/glat, _glon/_glat: galactic;
 *   x_image/y_image, xwin_image/ywin_image (SExtractor, FITS 1-based);
 *   x/y, x_centroid/y_centroid, xcentroid/ycentroid, x_pix0/y_pix0
 *   (0-based, as photutils, astropy and skysift write them).
 * Names are matched without regard to case. An RA column in hours
 * (unit "h", "hour", "hourangle") is multiplied by 15; text values
 * "hh:mm:ss.s" or "hh mm ss.s" are sexagesimal (RA in hours, the others in
 * degrees); a unit in radians is converted. Rows whose position is empty
 * or NaN are skipped. */
int sky_overlay_load (const char *path, int prefer_sky, SkyOverlay *out);
void sky_overlay_clear (SkyOverlay *overlay);

/* The table readers behind sky_overlay_load, for text already read
 * (name is used in messages). */
int sky_overlay_parse_regions (const char *name, const char *text, SkyOverlay *out);
int sky_overlay_parse_table (const char *name, const char *text, int prefer_sky,
                             SkyOverlay *out);
int sky_overlay_parse_votable (const char *name, const char *text, size_t size,
                               int prefer_sky, SkyOverlay *out);

/* Text "12:34:56.7", "12 34 56.7", "-29d00m28s" or a plain number to
 * degrees; hours (RA) multiplies by 15. NaN where it is not a position. */
double sky_parse_sexagesimal (const char *text, int hours);

/* (lng, lat) in degrees from one frame to another (equatorial <->
 * galactic through wcslib's sphs2x and sphx2s, with the galactic pole and
 * origin in FK5 J2000 that astropy's Galactic frame is defined by). Pixel
 * frames are not converted. */
void sky_frame_convert (SkyOverlayFrame from, SkyOverlayFrame to, double lng, double lat,
                        double *out_lng, double *out_lat);

/* The shape's point (x, y) as image pixels (0-based) through wcs, which
 * may be NULL for pixel frames. SKY_ERR_UNAVAILABLE for a sky frame with
 * no wcs, SKY_ERR_ARGUMENT where the projection has no pixel. */
int sky_overlay_to_pixel (SkyWcs *wcs, SkyOverlayFrame frame, double lng, double lat,
                          double *x, double *y);

/* The pixels of one arcsecond at the image's reference point (from
 * sky_wcs_pixel_area), NaN without a celestial WCS. */
double sky_wcs_pixels_per_arcsec (const SkyWcs *wcs);

/* One-to-one cross-match of two lists of pixel positions within radius
 * pixels (a distance equal to the radius matches), closest pairs first,
 * ties in order of a then b: for each a, match_a[i] is its b or -1; for
 * each b, match_b[j] its a or -1. NaN positions match nothing. Returns the
 * number of pairs, or -1 where memory ran out. */
int64_t sky_crossmatch (const double *ax, const double *ay, int64_t na,
                        const double *bx, const double *by, int64_t nb, double radius,
                        int64_t *match_a, int64_t *match_b);

#ifdef __cplusplus
}
#endif

#endif
