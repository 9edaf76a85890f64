/* SPDX-License-Identifier: GPL-3.0-or-later */
/* SkySourceSorter (sky-source-sorter.h). */
#include "sky-source-sorter.h"
#include "sky-source.h"

#include <math.h>

struct _SkySourceSorter {
  GtkSorter parent_instance;
  SkySourceKey key;
};

G_DEFINE_FINAL_TYPE (SkySourceSorter, sky_source_sorter, GTK_TYPE_SORTER)

enum { PROP_0, PROP_KEY, N_PROPS };
static GParamSpec *properties[N_PROPS];

/* What reading a column view's sort compares: GTK 4.8 has no getter for
 * its columns (4.10's gtk_column_view_sorter_get_nth_sort_column), but
 * its compare asks the columns' sorters in order of precedence and
 * inverts a descending one's answer, up to the first that is not equal.
 * Each of ours, asked about a probe, answers "before" once and notes its
 * key, then "equal": so each compare of two probes names the next column
 * and its direction. */
#define SKY_TYPE_SORT_PROBE (sky_sort_probe_get_type ())
G_DECLARE_FINAL_TYPE (SkySortProbe, sky_sort_probe, SKY, SORT_PROBE, GObject)

struct _SkySortProbe {
  GObject parent_instance;
  guint answered;            /* a bit per key */
  SkySourceKey last;
};

G_DEFINE_FINAL_TYPE (SkySortProbe, sky_sort_probe, G_TYPE_OBJECT)

static void
sky_sort_probe_class_init (SkySortProbeClass *klass)
{
}

static void
sky_sort_probe_init (SkySortProbe *self)
{
}

static GtkOrdering
sky_source_sorter_compare (GtkSorter *sorter, gpointer item1, gpointer item2)
{
  SkySourceSorter *self = SKY_SOURCE_SORTER (sorter);
  double a, b;

  if (SKY_IS_SORT_PROBE (item1))
    {
      SkySortProbe *probe = item1;
      if (probe->answered & (1u << self->key))
        return GTK_ORDERING_EQUAL;
      probe->answered |= 1u << self->key;
      probe->last = self->key;
      return GTK_ORDERING_SMALLER;
    }
  a = sky_source_get_value (item1, self->key);
  b = sky_source_get_value (item2, self->key);
  if (isnan (a) || isnan (b))
    return isnan (a) - isnan (b);    /* unknowns after the numbers */
  return gtk_ordering_from_cmpfunc ((a > b) - (a < b));
}

static GtkSorterOrder
sky_source_sorter_get_order (GtkSorter *sorter)
{
  return SKY_SOURCE_SORTER (sorter)->key == SKY_SOURCE_KEY_ID ? GTK_SORTER_ORDER_TOTAL
                                                              : GTK_SORTER_ORDER_PARTIAL;
}

guint
sky_source_sorter_read_terms (GtkSorter *view_sorter, SkySortTerm *terms, guint max)
{
  g_autoptr (SkySortProbe) a = g_object_new (SKY_TYPE_SORT_PROBE, NULL);
  g_autoptr (SkySortProbe) b = g_object_new (SKY_TYPE_SORT_PROBE, NULL);
  guint n = 0;

  while (n < max)
    {
      GtkOrdering ordering = gtk_sorter_compare (view_sorter, a, b);
      if (ordering == GTK_ORDERING_EQUAL)
        break;
      terms[n++] = (SkySortTerm) { a->last, ordering == GTK_ORDERING_LARGER };
    }
  return n;
}

static void
sky_source_sorter_set_property (GObject *object, guint prop_id, const GValue *value,
                                GParamSpec *pspec)
{
  SkySourceSorter *self = SKY_SOURCE_SORTER (object);
  int key;

  switch (prop_id)
    {
    case PROP_KEY:
      key = sky_source_key_from_name (g_value_get_string (value));
      if (key < 0)
        g_critical ("SkySourceSorter: no key \"%s\"", g_value_get_string (value));
      self->key = key < 0 ? SKY_SOURCE_KEY_ID : (SkySourceKey) key;
      gtk_sorter_changed (GTK_SORTER (self), GTK_SORTER_CHANGE_DIFFERENT);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
sky_source_sorter_class_init (SkySourceSorterClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkSorterClass *sorter_class = GTK_SORTER_CLASS (klass);

  object_class->set_property = sky_source_sorter_set_property;
  sorter_class->compare = sky_source_sorter_compare;
  sorter_class->get_order = sky_source_sorter_get_order;

  /* The SkySource property whose value orders the rows. */
  properties[PROP_KEY] = g_param_spec_string ("key", NULL, NULL, "id",
                                              G_PARAM_WRITABLE | G_PARAM_CONSTRUCT
                                              | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
sky_source_sorter_init (SkySourceSorter *self)
{
}
