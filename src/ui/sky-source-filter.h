/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-source-filter.h: which sources the table lists: a minimum area,
 * SNR and summed flux, and leaving out those on the image's edge or with
 * flags. GLib only, for the table, the scripts and the tests alike. */
#pragma once

#include <glib.h>

#include "sky-pipeline.h"

G_BEGIN_DECLS

typedef struct {
  gint64 min_area;     /* pixels; 0: any */
  double min_snr;      /* peak over the noise (the rms map's at the peak for
                        * the local method, the clipped sigma else); 0: any */
  double min_flux;     /* summed pixel values, in the image's unit; -inf: any */
  gboolean no_edge;    /* leave out sources with a pixel on the image's edge */
  gboolean no_flags;   /* leave out sources with any flag (the local method's
                        * flags; the edge alone for the global method) */
} SkySourceFilter;

/* Everything passes. */
void sky_source_filter_init (SkySourceFilter *filter);
gboolean sky_source_filter_is_empty (const SkySourceFilter *filter);

/* Whether catalogue index i of run passes. */
gboolean sky_source_filter_passes (const SkySourceFilter *filter, const SkyRun *run, gint64 i);

/* "area=5,snr=10,flux=0.5,edge=off,flags=off" (any subset, in any order;
 * "" or "none": everything passes). A key or value it cannot take is
 * refused by name, and filter is left as it was. */
gboolean sky_source_filter_parse (SkySourceFilter *filter, const char *text, GError **error);

/* The filter as sky_source_filter_parse reads it ("none" when empty). */
char *sky_source_filter_to_string (const SkySourceFilter *filter);

G_END_DECLS
