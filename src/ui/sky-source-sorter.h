/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-source-sorter.h: a column's sorter in the source table, and the sort
 * that the column view's sorter describes, read from it. */
#pragma once

#include <gtk/gtk.h>

#include "sky-source-order.h"

G_BEGIN_DECLS

/* Orders SkySource items by one of their values ("key": the property's
 * name, "peak", "int-flux"...). The table sorts on a worker by the keys,
 * not through this: it is what the column view's header keeps. */
#define SKY_TYPE_SOURCE_SORTER (sky_source_sorter_get_type ())
G_DECLARE_FINAL_TYPE (SkySourceSorter, sky_source_sorter, SKY, SOURCE_SORTER, GtkSorter)

/* The sort that view_sorter (a column view's, over SkySourceSorter
 * columns) stands for: its columns' keys in order of precedence, each
 * ascending or descending, up to max; returns how many. */
guint sky_source_sorter_read_terms (GtkSorter *view_sorter, SkySortTerm *terms, guint max);

G_END_DECLS
