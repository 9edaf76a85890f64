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

void
sky_source_list_set_order (SkySourceList *self, SkySourceOrder *order)
{
  guint before = self->n;

  g_return_if_fail (SKY_IS_SOURCE_LIST (self) && order != NULL && order->rows != NULL);

  if (order->rows != self->rows)
    {
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
