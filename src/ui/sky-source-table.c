/* SPDX-License-Identifier: GPL-3.0-or-later */
/* SkySourceTable: a GtkColumnView over SkySource rows, sorted by the
 * column headers; selecting a row emits source-selected. */
#include "sky-source-table.h"
#include "sky-source.h"

struct _SkySourceTable {
  GtkWidget parent_instance;

  GtkScrolledWindow *scroller;
  GtkColumnView *column_view;
  GtkColumnViewColumn *id_column;
  GtkColumnViewColumn *lng_column;
  GtkColumnViewColumn *lat_column;
  GtkLabel *summary;

  GtkSortListModel *sorted;    /* owned by selection */
  GtkSingleSelection *selection;
  gboolean selecting;           /* selection set from code, not by the user */
  SkyRun *run;
  gboolean stale;               /* run not shown yet */
  guint show_timer;
};

G_DEFINE_FINAL_TYPE (SkySourceTable, sky_source_table, GTK_TYPE_WIDGET)

#define SHOW_DELAY_MS 300

enum { SOURCE_SELECTED, N_SIGNALS };
static guint signals[N_SIGNALS];

static void on_selection_changed (GtkSelectionModel *model, guint position, guint n_items,
                                  SkySourceTable *self);

GtkWidget *
sky_source_table_new (void)
{
  return g_object_new (SKY_TYPE_SOURCE_TABLE, NULL);
}

/* A new model each time: replacing every row of the old one in place costs
 * the column view far more (about 100 ms for 350 rows) than starting over. */
static void
set_rows (SkySourceTable *self, GPtrArray *rows)
{
  GListStore *store = g_list_store_new (SKY_TYPE_SOURCE);
  GtkSortListModel *sorted;

  g_list_store_splice (store, 0, 0, rows->pdata, rows->len);
  sorted = gtk_sort_list_model_new (G_LIST_MODEL (store),
                                    g_object_ref (gtk_column_view_get_sorter (self->column_view)));
  if (self->selection)
    g_signal_handlers_disconnect_by_func (self->selection, on_selection_changed, self);
  g_clear_object (&self->selection);
  self->sorted = sorted;
  self->selection = gtk_single_selection_new (G_LIST_MODEL (sorted));
  gtk_single_selection_set_autoselect (self->selection, FALSE);
  gtk_single_selection_set_can_unselect (self->selection, TRUE);
  gtk_single_selection_set_selected (self->selection, GTK_INVALID_LIST_POSITION);
  g_signal_connect (self->selection, "selection-changed", G_CALLBACK (on_selection_changed), self);
  gtk_column_view_set_model (self->column_view, GTK_SELECTION_MODEL (self->selection));
}

static void
show_run (SkySourceTable *self)
{
  g_autoptr (GPtrArray) rows = g_ptr_array_new_with_free_func (g_object_unref);
  SkyRun *run = self->run;
  gint64 n = run && run->done >= SKY_STEP_MEASURE ? run->catalogue.n : 0;
  g_autofree char *text = NULL;

  SkyWcs *wcs = run ? run->image->wcs : NULL;

  for (gint64 i = 0; i < n; i++)
    g_ptr_array_add (rows, sky_source_new (run, i, wcs));
  set_rows (self, rows);
  /* The sky columns, named after the WCS's system (RA/Dec, glon/glat...). */
  gtk_column_view_column_set_visible (self->lng_column, wcs != NULL);
  gtk_column_view_column_set_visible (self->lat_column, wcs != NULL);
  if (wcs != NULL)
    {
      gboolean eq = sky_wcs_system (wcs) == SKY_COORD_EQUATORIAL;
      gtk_column_view_column_set_title (self->lng_column, eq ? "RA" : sky_wcs_lng_name (wcs));
      gtk_column_view_column_set_title (self->lat_column, eq ? "Dec" : sky_wcs_lat_name (wcs));
    }
  self->stale = FALSE;
  g_clear_handle_id (&self->show_timer, g_source_remove);
  if (run == NULL || run->done < SKY_STEP_MEASURE)
    text = g_strdup ("Run measure to list the sources");
  else
    text = sky_source_count_text (n);
  gtk_label_set_text (self->summary, text);
}

static gboolean
show_later (gpointer data)
{
  SkySourceTable *self = data;
  self->show_timer = 0;
  show_run (self);
  return G_SOURCE_REMOVE;
}

/* GTK 4.8's column view makes a widget for up to 200 rows whatever is in
 * sight, which for six columns costs some 80 ms of the main loop. So the
 * rows are remade only when the table is on screen, and once the results
 * stop changing for a moment (a threshold being dragged), not every step. */
void
sky_source_table_set_run (SkySourceTable *self, SkyRun *run)
{
  g_return_if_fail (SKY_IS_SOURCE_TABLE (self));

  if (run == self->run)
    return;
  g_clear_pointer (&self->run, sky_run_unref);
  self->run = run ? sky_run_ref (run) : NULL;
  self->stale = TRUE;
  g_clear_handle_id (&self->show_timer, g_source_remove);
  if (gtk_widget_get_mapped (GTK_WIDGET (self)))
    self->show_timer = g_timeout_add (SHOW_DELAY_MS, show_later, self);
}

static void
sky_source_table_map (GtkWidget *widget)
{
  SkySourceTable *self = SKY_SOURCE_TABLE (widget);

  GTK_WIDGET_CLASS (sky_source_table_parent_class)->map (widget);
  if (self->stale && self->show_timer == 0)
    show_run (self);
}

void
sky_source_table_select (SkySourceTable *self, gint64 index)
{
  GListModel *model;
  guint n, position = GTK_INVALID_LIST_POSITION;

  if (self->stale)
    show_run (self);
  model = G_LIST_MODEL (self->sorted);
  n = g_list_model_get_n_items (model);

  for (guint i = 0; i < n && index >= 0; i++)
    {
      g_autoptr (SkySource) source = g_list_model_get_item (model, i);
      if (sky_source_get_index (source) == index)
        {
          position = i;
          break;
        }
    }
  self->selecting = TRUE;
  gtk_single_selection_set_selected (self->selection, position);
  self->selecting = FALSE;
  if (position != GTK_INVALID_LIST_POSITION)
    {
      /* GTK 4.8 has no gtk_column_view_scroll_to (): rows are of one height,
       * so the row's share of the list is its share of the adjustment. */
      GtkAdjustment *adj = gtk_scrolled_window_get_vadjustment (self->scroller);
      double upper = gtk_adjustment_get_upper (adj), page = gtk_adjustment_get_page_size (adj);
      double row_top = upper * position / n, row_h = upper / n;
      double value = gtk_adjustment_get_value (adj);
      if (row_top < value || row_top + row_h > value + page)
        gtk_adjustment_set_value (adj, row_top - page / 2 + row_h / 2);
    }
}

static void
on_selection_changed (GtkSelectionModel *model, guint position, guint n_items,
                      SkySourceTable *self)
{
  SkySource *source;

  if (self->selecting)
    return;
  source = gtk_single_selection_get_selected_item (self->selection);
  g_signal_emit (self, signals[SOURCE_SELECTED], 0,
                 source ? sky_source_get_index (source) : (gint64) -1);
}

/* ----------------------------------------------------------------- cells */

static void
cell_setup (GtkSignalListItemFactory *factory, GtkListItem *item, gpointer user_data)
{
  GtkWidget *label = gtk_label_new (NULL);
  gtk_label_set_xalign (GTK_LABEL (label), 1.0);
  gtk_widget_add_css_class (label, "numeric");
  gtk_list_item_set_child (item, label);
}

/* The property's value as text: an int64 whole, a double with digits
 * decimals (fixed) or significant digits (general). */
static void
bind_format (GtkListItem *item, const char *property, gboolean fixed, int digits)
{
  SkySource *source = gtk_list_item_get_item (item);
  GValue value = G_VALUE_INIT;
  char text[64];

  g_value_init (&value, g_object_class_find_property (G_OBJECT_GET_CLASS (source),
                                                      property)->value_type);
  g_object_get_property (G_OBJECT (source), property, &value);
  if (G_VALUE_HOLDS_INT64 (&value))
    g_snprintf (text, sizeof text, "%" G_GINT64_FORMAT, g_value_get_int64 (&value));
  else
    g_snprintf (text, sizeof text, fixed ? "%.*f" : "%.*g", digits, g_value_get_double (&value));
  gtk_label_set_text (GTK_LABEL (gtk_list_item_get_child (item)), text);
  g_value_unset (&value);
}

#define DEFINE_BIND(prop, fixed, digits)                                                      \
  static void                                                                                 \
  bind_##prop (GtkSignalListItemFactory *factory, GtkListItem *item, gpointer user_data)      \
  {                                                                                           \
    bind_format (item, #prop, fixed, digits);                                                 \
  }

DEFINE_BIND (id, FALSE, 0)
DEFINE_BIND (x, TRUE, 2)
DEFINE_BIND (y, TRUE, 2)
DEFINE_BIND (peak, FALSE, 4)
DEFINE_BIND (sum, FALSE, 4)
DEFINE_BIND (npix, FALSE, 0)

static void
bind_lng (GtkSignalListItemFactory *factory, GtkListItem *item, gpointer user_data)
{
  char text[32];
  sky_source_format_lng (gtk_list_item_get_item (item), text, sizeof text);
  gtk_label_set_text (GTK_LABEL (gtk_list_item_get_child (item)), text);
}

static void
bind_lat (GtkSignalListItemFactory *factory, GtkListItem *item, gpointer user_data)
{
  char text[32];
  sky_source_format_lat (gtk_list_item_get_item (item), text, sizeof text);
  gtk_label_set_text (GTK_LABEL (gtk_list_item_get_child (item)), text);
}

/* ---------------------------------------------------------------- object */

static void
sky_source_table_dispose (GObject *object)
{
  SkySourceTable *self = SKY_SOURCE_TABLE (object);

  GtkWidget *child;

  gtk_widget_dispose_template (GTK_WIDGET (self), SKY_TYPE_SOURCE_TABLE);
  /* Template children without an id are ours to unparent. */
  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self))))
    gtk_widget_unparent (child);
  g_clear_object (&self->selection);
  g_clear_pointer (&self->run, sky_run_unref);
  g_clear_handle_id (&self->show_timer, g_source_remove);
  G_OBJECT_CLASS (sky_source_table_parent_class)->dispose (object);
}

static void
sky_source_table_class_init (SkySourceTableClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = sky_source_table_dispose;

  widget_class->map = sky_source_table_map;

  /* (index): the catalogue index of the selected row, -1 for none. */
  signals[SOURCE_SELECTED] =
    g_signal_new ("source-selected", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL,
                  NULL, NULL, G_TYPE_NONE, 1, G_TYPE_INT64);

  g_type_ensure (SKY_TYPE_SOURCE);
  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/io/github/skysift/SkySift/ui/sky-source-table.ui");
  gtk_widget_class_bind_template_child (widget_class, SkySourceTable, scroller);
  gtk_widget_class_bind_template_child (widget_class, SkySourceTable, column_view);
  gtk_widget_class_bind_template_child (widget_class, SkySourceTable, id_column);
  gtk_widget_class_bind_template_child (widget_class, SkySourceTable, lng_column);
  gtk_widget_class_bind_template_child (widget_class, SkySourceTable, lat_column);
  gtk_widget_class_bind_template_child (widget_class, SkySourceTable, summary);
  gtk_widget_class_bind_template_callback (widget_class, cell_setup);
  gtk_widget_class_bind_template_callback (widget_class, bind_id);
  gtk_widget_class_bind_template_callback (widget_class, bind_x);
  gtk_widget_class_bind_template_callback (widget_class, bind_y);
  gtk_widget_class_bind_template_callback (widget_class, bind_peak);
  gtk_widget_class_bind_template_callback (widget_class, bind_sum);
  gtk_widget_class_bind_template_callback (widget_class, bind_npix);
  gtk_widget_class_bind_template_callback (widget_class, bind_lng);
  gtk_widget_class_bind_template_callback (widget_class, bind_lat);

  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BOX_LAYOUT);
  gtk_widget_class_set_css_name (widget_class, "skysourcetable");
}

static void
sky_source_table_init (SkySourceTable *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  gtk_orientable_set_orientation (GTK_ORIENTABLE (gtk_widget_get_layout_manager (GTK_WIDGET (self))),
                                  GTK_ORIENTATION_VERTICAL);

  {
    g_autoptr (GPtrArray) none = g_ptr_array_new ();
    set_rows (self, none);
  }
  gtk_column_view_sort_by_column (self->column_view, self->id_column, GTK_SORT_ASCENDING);
}
