/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-export.h: the catalogue's export, part of the core's public API
 * (sky-core.h includes it): a run's catalogue with sky positions and flux
 * densities, and the writers of CSV, ECSV, VOTable and DS9 regions. */
#ifndef SKY_EXPORT_H
#define SKY_EXPORT_H

#include "sky-core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A run's catalogue as an astronomer reads it: the pixel measures with the
 * sky positions and flux densities the image's header allows, and the
 * run's provenance. sky_export_init fills it; the writers below and the
 * app's table read it. */
typedef struct SkyExport {
  const SkyImage *image;        /* borrowed, as are params and result; image */
  const SkyParams *params;      /* NULL gives the pixel columns only */
  const SkyResult *result;
  const char *backend;          /* "cpu", "gpu"... from the run info */
  const char *smooth;           /* the matched filter, from the run info */
  char device[160];             /* what ran the steps; set for the CPU backend,
                                 * others fill it in; "" when unknown */

  SkyWcs *wcs;                  /* NULL: no celestial WCS (sky_note says why) */
  double *lng, *lat;            /* per source: the centroid's world position in
                                 * degrees, NaN where it has none; NULL
                                 * without a WCS */
  double beam_area;             /* beam solid angle in pixels: pi BMAJ BMIN /
                                 * (4 ln 2) / pixel area; NaN when unknown */
  double *int_flux;             /* per source, Jy: sum / beam_area (scaled
                                 * from mJy or uJy per beam); NULL when the
                                 * header has no beam, no pixel scale, or a
                                 * unit that is not per beam (flux_note) */
  char unit[72];                /* the image unit as unit-aware formats write
                                 * it ("Jy/beam" for JY/BEAM); "" when none or
                                 * when BUNIT is not a unit (unit_note) */
  char unit_note[512];          /* how BUNIT was respelled or why it was
                                 * left out, or "" */
  char sky_note[512];           /* why there are no sky positions, or "" */
  char flux_note[512];          /* why int_flux is empty, or "" */
} SkyExport;

/* Prepares the export of res, which came from info->image with
 * info->params on info->backend: converts every centroid to the sky and
 * every sum to a flux density where the header allows, and says in the
 * notes what it could not do and why (no WCS, a WCS wcslib refuses, no
 * beam: none is a failure). Fails only when out of memory. Without image
 * or params the export has the pixel columns only. Clear with
 * sky_export_clear, even after a failure. */
int sky_export_init (SkyExport *ex, const SkyRunInfo *info, const SkyResult *res);
void sky_export_clear (SkyExport *ex);

/* The catalogue writers. Every file is written beside its final name and
 * renamed into place, so a failure never leaves a partial file; the error
 * names the path.
 *
 * CSV: a header row, then one row per source in label order: source_id,
 * x_centroid, y_centroid, sum_flux, npix, peak_flux, peak_x, peak_y, xmin,
 * xmax, ymin, ymax; then, with a celestial WCS, the centroid's two world
 * coordinates named after the system (ra, dec, ra_str, dec_str for
 * equatorial; glon, glat for galactic...); then int_flux, local_rms, snr.
 * Pixel coordinates are 0-based. A missing number is NaN (a typed
 * value every CSV reader reads as a float), a missing text an empty field.
 *
 * ECSV: the same table as ECSV 1.0 (astropy's Table.read reads it), with
 * a unit and a description per column and the provenance in its metadata.
 *
 * Regions: a DS9 version 4.2 region file, one circle per source (the area
 * of the source's pixels, centred on the centroid) with text={id}; in the
 * WCS's frame (fk5, fk4, icrs, galactic, ecliptic) where DS9 has it, else
 * in the image frame with 1-based FITS pixel coordinates.
 *
 * VOTable: the same table as VOTable 1.4 TABLEDATA with units, UCDs, a
 * COOSYS and the provenance as PARAMs (TOPCAT, CARTA, astropy). */
int sky_export_csv (const char *path, const SkyExport *ex);
int sky_export_ecsv (const char *path, const SkyExport *ex);
int sky_export_regions (const char *path, const SkyExport *ex);
int sky_export_votable (const char *path, const SkyExport *ex);

/* The catalogue formats, and the one a file name asks for by its
 * extension: .ecsv, .xml/.vot/.votable, .reg, anything else CSV (case
 * ignored). sky_export_write writes ex in format f with that writer. */
typedef enum {
  SKY_CATALOGUE_CSV,
  SKY_CATALOGUE_ECSV,
  SKY_CATALOGUE_VOTABLE,
  SKY_CATALOGUE_REGIONS,
} SkyCatalogueFormat;

SkyCatalogueFormat sky_catalogue_format_for_path (const char *path);
int sky_catalogue_format_known (const char *path); /* 1 if its extension names a format */
const char *sky_catalogue_format_extension (SkyCatalogueFormat f); /* "csv", "ecsv", "xml", "reg" */
int sky_export_write (const char *path, SkyCatalogueFormat f, const SkyExport *ex);

#ifdef __cplusplus
}
#endif

#endif /* SKY_EXPORT_H */
