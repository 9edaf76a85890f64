/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-overlay-private.h: what the overlay readers share: the choice of the
 * position columns by name and unit, and adding shapes. */
#ifndef SKY_OVERLAY_PRIVATE_H
#define SKY_OVERLAY_PRIVATE_H

#include "sky-overlay.h"

/* How the two position columns are read. */
typedef struct SkyColumnPick {
  int x, y;                  /* column indices */
  SkyOverlayFrame frame;
  double x_scale, y_scale;   /* to degrees (15 for hours) or 1 for pixels */
  double offset;             /* added to pixels: -1 for FITS 1-based columns */
  int x_hours;               /* sexagesimal text of x is hours */
} SkyColumnPick;

/* Picks the position columns from the columns' names and units (units may
 * be NULL or hold NULLs). SKY_ERR_FORMAT naming the file and the columns
 * it has where no pair is recognised. */
int sky_overlay_pick_columns (const char *file, const char *const *names,
                              const char *const *units, int ncols, int prefer_sky,
                              SkyColumnPick *pick, SkyOverlay *out);

/* Adds a catalogue row from the text of its two cells; rows with an empty
 * or NaN position are skipped (returns SKY_OK). SKY_ERR_FORMAT where a cell
 * is not a number or a position, naming file and line. */
int sky_overlay_add_row (SkyOverlay *o, const SkyColumnPick *pick, const char *xs,
                         const char *ys, const char *file, int64_t line);

/* A new zeroed shape at the end of o's list, or NULL (memory). */
SkyShape *sky_overlay_push (SkyOverlay *o);

#endif
