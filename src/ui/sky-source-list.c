/* SPDX-License-Identifier: GPL-3.0-or-later */
/* SkySourceList: the source table's rows as a GListModel
 * (sky-source-list.h). */
#include "sky-source-list.h"

struct _SkySourceList {
  GObject parent_instance;

  SkySourceRows *rows;
  guint32 *order;            /* catalogue index per position */
  guint n;
};

static GType
list_get_item_type (GListModel *model)
{
  return SKY_TYPE_SOURCE;
}

static guint
list_get_n_items (GListModel *model)
{
  return SKY_SOURCE_LIST (model)->n;
}

static gpointer
list_get_item (GListModel *model, guint position)
{
  SkySourceList *self = SKY_SOURCE_LIST (model);

  if (position >= self->n)
    return NULL;
  return g_object_ref (self->rows->sources[self->order[position]]);
}

static void
list_model_init (GListModelInterface *iface)
{
  iface->get_item_type = list_get_item_type;
  iface->get_n_items = list_get_n_items;
  iface->get_item = list_get_item;
}

G_DEFINE_FINAL_TYPE_WITH_CODE (SkySourceList, sky_source_list, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (G_TYPE_LIST_MODEL, list_model_init))

static void
sky_source_list_finalize (GObject *object)
{
  SkySourceList *self = SKY_SOURCE_LIST (object);

  g_clear_pointer (&self->rows, sky_source_rows_unref_later);
  g_free (self->order);
  G_OBJECT_CLASS (sky_source_list_parent_class)->finalize (object);
}

static void
sky_source_list_class_init (SkySourceListClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = sky_source_list_finalize;
}

static void
sky_source_list_init (SkySourceList *self)
{
}

SkySourceList *
sky_source_list_new (void)
{
  return g_object_new (SKY_TYPE_SOURCE_LIST, NULL);
}

/* GTK 4.8's list item manager keeps a row's widgets only for the same
 * item: another run's row objects cost the main loop the destruction of
 * every row widget it had (some 200 rows of cells) and the making of as
 * many (120-140 ms at 110,000 rows on the 2-core machine). The old row
 * objects it has rows for take the new rows' contents at the top, where
 * the new rows are shown, and the new objects there take the old ones'
 * and go with the old rows. */
static void
hand_over_rows (SkySourceList *self, SkySourceOrder *order, guint first, guint count)
{
  SkySourceRows *old_rows = self->rows, *new_rows = order->rows;

  first = MIN (first, self->n);
  count = MIN (MIN (count, self->n - first), order->n_listed);
  for (guint q = 0; q < count; q++)
    {
      guint32 was = self->order[first + q], now = order->order[q];
      SkySource *kept = old_rows->sources[was];

      sky_source_swap (kept, new_rows->sources[now]);
      old_rows->sources[was] = new_rows->sources[now];
      new_rows->sources[now] = kept;
    }
}

void
sky_source_list_set_order (SkySourceList *self, SkySourceOrder *order, guint first, guint count)
{
  guint before = self->n;

  g_return_if_fail (SKY_IS_SOURCE_LIST (self) && order != NULL && order->rows != NULL);

  if (order->rows != self->rows)
    {
      if (self->rows != NULL)
        hand_over_rows (self, order, first, count);
      g_clear_pointer (&self->rows, sky_source_rows_unref_later);
      self->rows = g_steal_pointer (&order->rows);
    }
  g_free (self->order);
  self->order = g_steal_pointer (&order->order);
  self->n = order->n_listed;
  sky_source_order_free (order);
  if (before > 0 || self->n > 0)
    g_list_model_items_changed (G_LIST_MODEL (self), 0, before, self->n);
}

SkySourceRows *
sky_source_list_get_rows (SkySourceList *self)
{
  return self->rows;
}

guint
sky_source_list_find (SkySourceList *self, gint64 index)
{
  for (guint p = 0; p < self->n && index >= 0; p++)
    if (self->order[p] == index)
      return p;
  return G_MAXUINT;
}

gint64
sky_source_list_index_at (SkySourceList *self, guint position)
{
  return position < self->n ? (gint64) self->order[position] : -1;
}
