/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-overlay-set.h: the catalogues and region files shown over the image
 * (sky-overlay.h reads them), each with its colour, placed on the image's
 * pixels through its WCS, and cross-matched with the run's sources. GLib
 * only: the view draws it (sky-image-view-catalogues.c), the window owns
 * it and describes it in its state. */
#pragma once

#include <glib.h>

#include "sky-image-data.h"
#include "sky-overlay.h"
#include "sky-pipeline.h"

G_BEGIN_DECLS

typedef struct {
  SkyOverlay overlay;
  double rgb[3];
  /* Each shape's centre in image pixels (0-based; NaN: not on this image's
   * projection) and, where it has one, its size in pixels per arcsecond
   * (1 for pixel frames). */
  double *px, *py;
  double pixel_scale;
  double *vpx, *vpy;         /* polygon vertices in pixels, shape after shape */
  double *pangle;            /* each shape's angle on the pixel grid, degrees
                              * from +x: a sky frame's angle turned by where
                              * its north points, as astropy's regions do */
  gint64 nvertices;
  gint64 on_image;           /* centres inside the image */
  /* The cross-match with the run's catalogue, where there is one: the
   * shapes with a centre on the image (not text, not excluded) against
   * the sources. */
  gboolean matched_run;      /* there was a measured run to match */
  gint64 *match_theirs;      /* per shape: the catalogue index, or -1 */
  gint64 *match_ours;        /* per source: the shape, or -1 */
  gint64 nours;
  gint64 matched, only_ours, only_theirs;
} SkyOverlayEntry;

struct _SkyOverlaySet {
  GPtrArray *entries;        /* SkyOverlayEntry, in the order loaded */
  double radius_arcsec;      /* the match radius (pixels where the image has no WCS) */
  double radius_px;          /* the same in pixels */
  gboolean radius_in_pixels; /* the image has no celestial WCS */
};
typedef struct _SkyOverlaySet SkyOverlaySet;

SkyOverlaySet *sky_overlay_set_new (void);
void sky_overlay_set_free (SkyOverlaySet *set);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SkyOverlaySet, sky_overlay_set_free)

/* Reads path and places it on image; FALSE with error (the file and why)
 * where it cannot be read or image cannot place it (sky positions on an
 * image with no celestial WCS). */
gboolean sky_overlay_set_add (SkyOverlaySet *set, const char *path, SkyImageData *image,
                              GError **error);
void sky_overlay_set_clear (SkyOverlaySet *set);

/* Places every overlay again on a new image (shapes that cannot be placed
 * stay unplaced), then matches with run. */
void sky_overlay_set_place (SkyOverlaySet *set, SkyImageData *image);

/* Matches every catalogue overlay with run's sources within the radius;
 * run NULL or not measured: no match. */
void sky_overlay_set_match (SkyOverlaySet *set, SkyRun *run);

/* The match radius in arcseconds (> 0); refused where not finite. */
gboolean sky_overlay_set_radius (SkyOverlaySet *set, SkyImageData *image, double arcsec,
                                 GError **error);

/* The state's "overlays" value: a JSON array of objects. */
void sky_overlay_set_describe (const SkyOverlaySet *set, GString *out);

G_END_DECLS
