/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-export-private.h: the columns and metadata every catalogue format
 * shares, so that CSV, ECSV and VOTable hold the same table with the same
 * text in each cell. Not installed: only the writers in this folder use it.
 */
#ifndef SKY_EXPORT_PRIVATE_H
#define SKY_EXPORT_PRIVATE_H

#include "sky-core.h"

#include <stdio.h>

typedef enum {
  SKY_COL_SOURCE_ID,
  SKY_COL_X, SKY_COL_Y,
  SKY_COL_SUM, SKY_COL_NPIX, SKY_COL_PEAK,
  SKY_COL_PEAK_X, SKY_COL_PEAK_Y,
  SKY_COL_XMIN, SKY_COL_XMAX, SKY_COL_YMIN, SKY_COL_YMAX,
  SKY_COL_LNG, SKY_COL_LAT,         /* named after the system: ra/dec, glon/glat... */
  SKY_COL_LNG_STR, SKY_COL_LAT_STR, /* equatorial only: ra_str, dec_str */
  SKY_COL_INT_FLUX, SKY_COL_LOCAL_RMS, SKY_COL_SNR,
  SKY_COL_BACKGROUND, SKY_COL_SUM_ERR, SKY_COL_PEAK_ERR, SKY_COL_X_WIN, SKY_COL_Y_WIN,
  SKY_COL_FLAGS, /* local method */
} SkyColumnId;

typedef enum { SKY_TYPE_INT, SKY_TYPE_DOUBLE, SKY_TYPE_STRING } SkyValueType;

typedef struct {
  SkyColumnId id;
  char name[16];
  SkyValueType type;
  char unit[72];        /* astropy/VOUnit text, "" for none */
  const char *ucd;      /* IVOA UCD1+ word list */
  char description[200];
} SkyColumn;

#define SKY_MAX_COLUMNS 32

/* The columns ex has (cols holds SKY_MAX_COLUMNS), in file order: the
 * twelve pixel columns always, then the sky columns where there is a
 * celestial WCS, then int_flux, local_rms and snr where the image is
 * known, then background, sum_flux_err, peak_flux_err, x_win, y_win and
 * flags for the local
 * method. Returns the count. */
int sky_export_columns (const SkyExport *ex, SkyColumn *cols);

/* The text of column col for source index i (label i + 1) into buf. Returns
 * 0 and leaves "" where the value is missing (no beam, no world position). */
int sky_export_cell (const SkyExport *ex, const SkyColumn *col, int64_t i, char *buf,
                     size_t size);

/* The table of a delimited text format: a line of column names, then a
 * line per source in label order, fields joined by separator. The format's
 * quoting: a field that holds a character of special, or is empty where
 * quote_empty, is written in double quotes with its quotes doubled (CSV:
 * RFC 4180's ",\"\r\n"; ECSV: " \t\"" and "" for a missing value). A
 * missing value of a floating-point column is written missing_double ("" or
 * "NaN"). */
void sky_export_put_table (const SkyExport *ex, const SkyColumn *cols, int ncols, FILE *fp,
                           char separator, const char *special, int quote_empty,
                           const char *missing_double);

/* One item of the run's provenance, as ECSV metadata or a VOTable PARAM. */
typedef struct {
  const char *key;      /* a static name, e.g. "clip_kappa" */
  SkyValueType type;    /* INT or DOUBLE: text is a number; STRING: raw text */
  int is_bool;          /* with SKY_TYPE_INT: 0 or 1 */
  char text[600];
  const char *unit;     /* NULL for none */
  const char *description;
} SkyMeta;

#define SKY_MAX_META 48

/* The provenance of ex (meta holds SKY_MAX_META): image, HDU, plane, parameters, statistics,
 * backend, device, software version, WCS and beam, and the notes on what
 * was left out. Items that do not apply are left out. Returns the count. */
int sky_export_meta (const SkyExport *ex, SkyMeta *meta);

/* text (a BUNIT) as a unit that FITS, VOUnit and astropy all read, into
 * out: "Jy/beam" for JY/BEAM, "W/(m2.sr)" for W/m^2-sr, "" for an empty
 * text. Returns 0, with out "", where text is not a product of known
 * symbols with integer powers. */
int sky_unit_normalise (const char *text, char *out, size_t size);

/* The shortest text that reads back as v ("%.17g" at most). */
void sky_format_double (double v, char *buf, size_t size);

/* Writes s with XML's five entities escaped and control characters dropped. */
void sky_put_xml (FILE *fp, const char *s);

#endif /* SKY_EXPORT_PRIVATE_H */
