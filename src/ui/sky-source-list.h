/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-source-list.h: the source table's list model: a run's rows in an
 * order worked out on a worker (sky-source-order.h). Asking it for an item
 * costs a reference: GTK 4.8's list views ask for every row's item when
 * the whole list changes. */
#pragma once

#include <gio/gio.h>

#include "sky-source.h"

G_BEGIN_DECLS

#define SKY_TYPE_SOURCE_LIST (sky_source_list_get_type ())
G_DECLARE_FINAL_TYPE (SkySourceList, sky_source_list, SKY, SOURCE_LIST, GObject)

/* Empty. */
SkySourceList *sky_source_list_new (void);

/* Lists order's rows in its order (taking order), telling the list's
 * watchers in one items-changed of every position. Rows replaced are let
 * go on a worker (sky_source_rows_unref_later). Where they are another
 * run's, the row objects at the old positions from first, as many as
 * count (those a view has rows for), stand for the new rows from the top:
 * a view then rebinds its rows in place of destroying and making them. */
void sky_source_list_set_order (SkySourceList *self, SkySourceOrder *order, guint first,
                                guint count);

/* The rows listed (NULL before any), borrowed. */
SkySourceRows *sky_source_list_get_rows (SkySourceList *self);

/* The position of catalogue index `index`, or G_MAXUINT where it is not
 * listed; the catalogue index at position, or -1. */
guint sky_source_list_find (SkySourceList *self, gint64 index);
gint64 sky_source_list_index_at (SkySourceList *self, guint position);

G_END_DECLS
