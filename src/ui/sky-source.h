/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-source.h: one row of the source table, a view of one catalogue entry. */
#pragma once

#include <glib-object.h>

#include "sky-source-order.h"

G_BEGIN_DECLS

#define SKY_TYPE_SOURCE (sky_source_get_type ())
G_DECLARE_FINAL_TYPE (SkySource, sky_source, SKY, SOURCE, GObject)

/* "1 source", "2 sources": the count as the status line, the statistics
 * and the table's summary say it. Free with g_free. */
char *sky_source_count_text (gint64 n);

/* The source at catalogue index `index` of rows (label index + 1), with
 * what the export of the run gives it (sky_export_init): the centroid's
 * sky position and int_flux where the header allows; local_rms and snr as
 * the exported columns have them (the clipped σ, the peak over it). Its
 * values are sky_source_rows_value's, which the table sorts by. */
SkySource *sky_source_new (const SkySourceRows *rows, gint64 index);
gint64 sky_source_get_index (SkySource *self);

/* Exchanges what a and b hold (index and values): a row object that a
 * list view has a row for can then stand for another run's row. */
void sky_source_swap (SkySource *a, SkySource *b);
double sky_source_get_value (SkySource *self, SkySourceKey key);

/* The sky position as the table shows it: sexagesimal for RA and Dec,
 * degrees for other systems; "" without one. */
void sky_source_format_lng (SkySource *self, char *buf, gsize size);
void sky_source_format_lat (SkySource *self, char *buf, gsize size);

G_END_DECLS
