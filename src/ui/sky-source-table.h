/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-source-table.h: the catalogue as a sortable table. */
#pragma once

#include <gtk/gtk.h>

#include "sky-pipeline.h"
#include "sky-source-filter.h"

G_BEGIN_DECLS

#define SKY_TYPE_SOURCE_TABLE (sky_source_table_get_type ())
G_DECLARE_FINAL_TYPE (SkySourceTable, sky_source_table, SKY, SOURCE_TABLE, GtkWidget)

GtkWidget *sky_source_table_new (void);

/* Shows run's catalogue (empty for NULL or a run before measure). */
void sky_source_table_set_run (SkySourceTable *self, SkyRun *run);

/* Sorts the rows by the column whose title starts with name (its first
 * word: "id", "peak", "RA", "pixels"...; any case), making them first if
 * the table has not shown the run yet; FALSE for no such column. The rows
 * are made, filtered and sorted on a worker and shown in one change:
 * sort_pending is how many rows wait for that (0 when the table shows
 * the run, filter and order asked for). */
gboolean sky_source_table_sort_by (SkySourceTable *self, const char *name, gboolean descending);
guint sky_source_table_sort_pending (SkySourceTable *self);

/* Selects the row of catalogue index `index` (-1: none) and scrolls to it,
 * without emitting source-selected. */
void sky_source_table_select (SkySourceTable *self, gint64 index);

/* Which sources are listed (the filter's controls follow), the filter,
 * and how many rows it leaves. */
void sky_source_table_set_filter (SkySourceTable *self, const SkySourceFilter *filter);
const SkySourceFilter *sky_source_table_get_filter (SkySourceTable *self);
gint64 sky_source_table_get_n_listed (SkySourceTable *self);

G_END_DECLS
