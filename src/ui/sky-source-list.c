/* SPDX-License-Identifier: GPL-3.0-or-later */
/* SkySourceList: the source table's rows as a GListModel
 * (sky-source-list.h). */
#include "sky-source-list.h"

struct _SkySourceList {
  GObject parent_instance;

  SkySourceRows *rows;
  guint32 *order;            /* catalogue index per position */
  guint n;
  /* While a new order is told in parts (sky_source_list_set_order), the
   * positions [old_lo, old_hi) still hold old_rows' old_order. */
  SkySourceRows *old_rows;
  const guint32 *old_order;
  guint old_lo, old_hi;
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
  if (position >= self->old_lo && position < self->old_hi)
    return g_object_ref (self->old_rows->sources[self->old_order[position]]);
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

/* The positions [lo, hi) are told last: a GTK 4.8 list view asks for
 * every new item of a change that removes the row it is anchored to (or
 * another it tracks), and only for those it shows otherwise. */
void
sky_source_list_set_order (SkySourceList *self, SkySourceOrder *order, guint lo, guint hi)
{
  guint n_old = self->n, n_new = order->n_listed;
  SkySourceRows *old_rows = self->rows;
  guint32 *old_order = self->order;

  g_return_if_fail (SKY_IS_SOURCE_LIST (self) && order != NULL && order->rows != NULL);

  self->rows = g_steal_pointer (&order->rows);
  self->order = g_steal_pointer (&order->order);
  sky_source_order_free (order);
  hi = MIN (hi, MIN (n_old, n_new));
  if (lo >= hi)
    {
      self->n = n_new;
      if (n_old > 0 || n_new > 0)
        g_list_model_items_changed (G_LIST_MODEL (self), 0, n_old, n_new);
    }
  else
    {
      /* Before lo, then from hi on, then [lo, hi): each time the list is
       * what the changes told so far say. */
      self->old_rows = old_rows;
      self->old_order = old_order;
      self->old_lo = lo;
      self->old_hi = n_old;
      if (lo > 0)
        g_list_model_items_changed (G_LIST_MODEL (self), 0, lo, lo);
      self->old_hi = hi;
      self->n = n_new;
      if (n_old > hi || n_new > hi)
        g_list_model_items_changed (G_LIST_MODEL (self), hi, n_old - hi, n_new - hi);
      self->old_lo = self->old_hi = 0;
      self->old_rows = NULL;
      self->old_order = NULL;
      g_list_model_items_changed (G_LIST_MODEL (self), lo, hi - lo, hi - lo);
    }
  g_free (old_order);
  if (old_rows != self->rows)
    sky_source_rows_unref_later (old_rows);
  else
    sky_source_rows_unref (old_rows);
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
