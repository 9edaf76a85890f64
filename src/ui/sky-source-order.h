/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-source-order.h: the source table's rows (a run's catalogue as the
 * export has it) and their order, worked out on a worker thread so that
 * sorting or filtering hundreds of thousands of rows never holds up the
 * main loop. GLib only: the table (sky-source-table.c) shows the result. */
#pragma once

#include <gio/gio.h>

#include "sky-pipeline.h"
#include "sky-source-filter.h"
#include "sky-ui-shared.h"

G_BEGIN_DECLS

/* The table's columns, each a number per source. */
typedef enum {
  SKY_SOURCE_KEY_ID,         /* label number: catalogue index + 1 */
  SKY_SOURCE_KEY_X,          /* centroid, 0-based pixels */
  SKY_SOURCE_KEY_Y,
  SKY_SOURCE_KEY_PEAK,
  SKY_SOURCE_KEY_SUM,
  SKY_SOURCE_KEY_NPIX,
  SKY_SOURCE_KEY_LNG,        /* degrees, NaN without a sky position */
  SKY_SOURCE_KEY_LAT,
  SKY_SOURCE_KEY_INT_FLUX,   /* Jy, NaN where unknown */
  SKY_SOURCE_KEY_SNR,        /* peak over the clipped sigma */
  SKY_SOURCE_KEY_LOCAL_RMS,  /* the clipped sigma, NaN where it is 0 */
  SKY_SOURCE_N_KEYS
} SkySourceKey;

/* The key named as SkySource's property ("id", "peak", "int-flux"...), or
 * -1 for no such key. */
int sky_source_key_from_name (const char *name);

/* A run's rows: its catalogue with the sky positions and flux densities
 * of sky_export_init, and a SkySource for each, made on a worker (the
 * export converts every centroid; a column view asks its list for every
 * row's object when the rows change). Shared, read-only once made. */
typedef struct _SkySourceRows {
  SkyRun *run;
  gint64 n;                  /* catalogue entries */
  SkyResult result;          /* borrowed from run, for the export */
  SkyExport export;          /* lng, lat, int_flux, wcs, unit */
  struct _SkySource **sources; /* n, by catalogue index */
} SkySourceRows;

#define SKY_TYPE_SOURCE_ROWS (sky_source_rows_get_type ())
SKY_DECLARE_SHARED_TYPE (SkySourceRows, sky_source_rows)

/* The rows of run (none for NULL or a run before measure). NULL with
 * error where the export fails (out of memory). */
SkySourceRows *sky_source_rows_new (SkyRun *run, GError **error);

/* Drops a reference on a worker thread: the last one frees hundreds of
 * thousands of objects, too long for the main loop. */
void sky_source_rows_unref_later (SkySourceRows *rows);

/* Source index's value of key: what the table shows in that column. */
double sky_source_rows_value (const SkySourceRows *rows, gint64 index, SkySourceKey key);

/* One column of a sort, in order of precedence: ties in the first are
 * broken by the second... and at last by the catalogue index. */
typedef struct {
  SkySourceKey key;
  gboolean descending;
} SkySortTerm;

#define SKY_SORT_MAX_TERMS SKY_SOURCE_N_KEYS

/* The catalogue indices of the rows that pass filter, sorted by terms
 * (n_terms 0: catalogue order); NaN sorts after every number in either
 * direction (an unknown is never "the brightest"). *n_listed is how many;
 * free with g_free. Pure: safe on any thread while rows lives. */
guint32 *sky_source_order (const SkySourceRows *rows, const SkySourceFilter *filter,
                           const SkySortTerm *terms, guint n_terms, guint *n_listed);

/* What a worker made: the rows (those given, or made from the run given)
 * and their order. */
typedef struct {
  SkySourceRows *rows;
  guint32 *order;
  guint n_listed;
  double worker_ms;          /* the worker's time, for the log */
} SkySourceOrder;

void sky_source_order_free (SkySourceOrder *order);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SkySourceOrder, sky_source_order_free)

/* sky_source_order on a worker thread, for rows or, where rows is NULL,
 * for the rows of run made there first. filter and terms are copied. */
void sky_source_order_async (SkySourceRows *rows, SkyRun *run, const SkySourceFilter *filter,
                             const SkySortTerm *terms, guint n_terms,
                             GCancellable *cancellable, GAsyncReadyCallback callback,
                             gpointer user_data);
SkySourceOrder *sky_source_order_finish (GAsyncResult *result, GError **error);

G_END_DECLS
