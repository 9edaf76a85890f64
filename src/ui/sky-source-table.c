/* SPDX-License-Identifier: GPL-3.0-or-later */
/* SkySourceTable: a GtkColumnView over SkySource rows, sorted by the
 * column headers; selecting a row emits source-selected.
 *
 * The rows, their filter and their order are worked out on a worker
 * (sky-source-order.h) and handed to the list (SkySourceList) in one
 * change: GTK 4.8's GtkSortListModel sorts on the main loop, and sorted
 * 230,776 rows there in steps that together kept it for 0.8 to 1.2 s,
 * where the worker's order costs the main loop one rebinding of the rows
 * in sight. */
#include "sky-source-table.h"
#include "sky-source-list.h"
#include "sky-source-sorter.h"
#include "sky-table-cell.h"
#include "sky-ui-signal.h"

#include <math.h>
#include <string.h>

struct _SkySourceTable {
  GtkWidget parent_instance;

  GtkScrolledWindow *scroller;
  GtkColumnView *column_view;
  GtkColumnViewColumn *id_column;
  GtkColumnViewColumn *lng_column;
  GtkColumnViewColumn *lat_column;
  GtkColumnViewColumn *peak_column;
  GtkColumnViewColumn *sum_column;
  GtkColumnViewColumn *local_rms_column;
  GtkLabel *summary;
  GtkSpinButton *area_spin;
  GtkSpinButton *snr_spin;
  GtkEntry *flux_entry;
  GtkCheckButton *edge_check;
  GtkCheckButton *flags_check;
  GtkEntry *goto_entry;
  GtkExpander *filter_expander;
  SkySourceFilter filter;
  gboolean syncing;             /* controls set from code */

  SkySourceList *list;          /* owned by selection */
  GtkSingleSelection *selection;
  gint64 selected;              /* the selected row's catalogue index, -1: none */
  gboolean selecting;           /* selection set from code, not by the user */
  guint pending_row;            /* to scroll to once the list is laid out */
  guint scroll_tick;            /* the tick callback waiting for that */
  int scroll_ticks;
  SkyRun *run;
  gboolean stale;               /* run not shown yet */
  guint show_timer;

  GCancellable *ordering;       /* the worker's order on its way, or NULL */
  gboolean resorted;            /* that order is a new sort: scroll once shown */
  gint64 select_when_ordered;   /* a select () asked meanwhile, -2: none */
};

G_DEFINE_FINAL_TYPE (SkySourceTable, sky_source_table, GTK_TYPE_WIDGET)

#define SHOW_DELAY_MS 300

/* A pending scroll to wherever the selected row is by then. */
#define SELECTED_ROW (G_MAXUINT - 1)

#define NO_PENDING_SELECT (-2)

enum { SOURCE_SELECTED, GOTO_SOURCE, FILTER_CHANGED, ROWS_ASKED, ROWS_SHOWN, N_SIGNALS };
static guint signals[N_SIGNALS];

static void show_summary (SkySourceTable *self);
static void scroll_to_row (SkySourceTable *self, guint position);

GtkWidget *
sky_source_table_new (void)
{
  return g_object_new (SKY_TYPE_SOURCE_TABLE, NULL);
}

/* A column's title with the image's unit: "peak (Jy/beam)". */
static void
set_unit_title (GtkColumnViewColumn *column, const char *name, const char *unit)
{
  g_autofree char *title = unit && *unit ? g_strdup_printf ("%s (%s)", name, unit)
                                         : g_strdup (name);
  gtk_column_view_column_set_title (column, title);
}

/* The titles that depend on the image: units, the sky's system. */
static void
show_titles (SkySourceTable *self, SkySourceRows *rows)
{
  SkyWcs *wcs = rows->export.wcs;

  set_unit_title (self->peak_column, "peak", rows->export.unit);
  set_unit_title (self->sum_column, "sum", rows->export.unit);
  set_unit_title (self->local_rms_column, "local_rms", rows->export.unit);
  /* The sky columns, named after the WCS's system (RA/Dec, glon/glat...). */
  gtk_column_view_column_set_visible (self->lng_column, wcs != NULL);
  gtk_column_view_column_set_visible (self->lat_column, wcs != NULL);
  if (wcs != NULL)
    {
      gboolean eq = sky_wcs_system (wcs) == SKY_COORD_EQUATORIAL;
      gtk_column_view_column_set_title (self->lng_column, eq ? "RA" : sky_wcs_lng_name (wcs));
      gtk_column_view_column_set_title (self->lat_column, eq ? "Dec" : sky_wcs_lat_name (wcs));
    }
}

/* Selects position (G_MAXUINT: none) without emitting source-selected. */
static void
select_quietly (SkySourceTable *self, guint position)
{
  self->selecting = TRUE;
  gtk_single_selection_set_selected (self->selection, position == G_MAXUINT
                                                      ? GTK_INVALID_LIST_POSITION : position);
  self->selecting = FALSE;
  self->selected = sky_source_list_index_at (self->list, position);
}

/* The positions a GTK 4.8 column view may have rows for: up to
 * GTK_LIST_VIEW_MAX_LIST_ITEMS (200) about the rows in sight, read off
 * the adjustment (rows are of one height). */
#define VIEW_ROWS_KEPT 200

static void
rows_in_sight (SkySourceTable *self, guint *first, guint *count)
{
  GtkAdjustment *adj = gtk_scrolled_window_get_vadjustment (self->scroller);
  double upper = gtk_adjustment_get_upper (adj);
  guint n = g_list_model_get_n_items (G_LIST_MODEL (self->list));
  guint top = upper > 0 ? (guint) MIN (n, n * gtk_adjustment_get_value (adj) / upper) : 0;

  *first = top > VIEW_ROWS_KEPT ? top - VIEW_ROWS_KEPT : 0;
  *count = 3 * VIEW_ROWS_KEPT;
}

/* The worker's order, shown in one change. Nothing is selected while the
 * list changes: GtkSingleSelection would look for its row among all the
 * new ones, making each. The selected source stays selected where it is
 * still listed (wherever the order put it); a new run's rows start with
 * none, as a new catalogue's rows do, at the top. */
static void
on_ordered (GObject *source, GAsyncResult *result, gpointer data)
{
  g_autoptr (SkySourceTable) self = data;
  g_autoptr (GError) error = NULL;
  SkySourceOrder *order = sky_source_order_finish (result, &error);
  gboolean new_rows, resorted;
  guint first, count;
  gint64 keep;
  gint64 t0 = g_get_monotonic_time ();

  /* One dropped for a later one, or the table gone. */
  if (g_task_get_cancellable (G_TASK (result)) != self->ordering)
    {
      sky_source_order_free (order);
      return;
    }
  if (order == NULL)
    {
      g_warning ("the source table: %s", error->message);
      g_clear_object (&self->ordering);
      return;
    }
  g_clear_object (&self->ordering);
  new_rows = order->rows != sky_source_list_get_rows (self->list);
  resorted = self->resorted;
  self->resorted = FALSE;
  keep = new_rows ? -1 : self->selected;
  g_debug ("the source table: %u rows ordered on a worker in %.1f ms", order->n_listed,
           order->worker_ms);
  if (new_rows)
    show_titles (self, order->rows);
  select_quietly (self, G_MAXUINT);
  rows_in_sight (self, &first, &count);
  sky_source_list_set_order (self->list, order, first, count);
  if (keep >= 0)
    {
      guint position = sky_source_list_find (self->list, keep);
      select_quietly (self, position);
      if (position == G_MAXUINT)   /* filtered out */
        g_signal_emit (self, signals[SOURCE_SELECTED], 0, (gint64) -1);
    }
  show_summary (self);
  g_debug ("the source table: %u rows shown in %.1f ms of the main loop",
           g_list_model_get_n_items (G_LIST_MODEL (self->list)),
           (g_get_monotonic_time () - t0) / 1000.0);
  if (self->select_when_ordered != NO_PENDING_SELECT)
    {
      gint64 index = self->select_when_ordered;
      self->select_when_ordered = NO_PENDING_SELECT;
      sky_source_table_select (self, index);
    }
  else if (resorted || new_rows)
    scroll_to_row (self, self->selected >= 0 ? SELECTED_ROW : 0);
  g_signal_emit (self, signals[ROWS_SHOWN], 0);
}

/* Orders the rows anew on a worker, from the run not shown yet (stale) or
 * the rows shown: the filter and sort as they are now. An order already
 * on its way is dropped for this one. */
static void
reorder (SkySourceTable *self, const char *why)
{
  SkySortTerm terms[SKY_SORT_MAX_TERMS];
  guint n_terms = sky_source_sorter_read_terms (gtk_column_view_get_sorter (self->column_view),
                                                terms, G_N_ELEMENTS (terms));
  SkySourceRows *rows = self->stale ? NULL : sky_source_list_get_rows (self->list);

  g_debug ("the source table: ordering anew (%s)", why);
  if (self->ordering)
    g_cancellable_cancel (self->ordering);
  g_clear_object (&self->ordering);
  self->ordering = g_cancellable_new ();
  if (self->stale)
    {
      self->stale = FALSE;
      g_clear_handle_id (&self->show_timer, g_source_remove);
    }
  sky_source_order_async (rows, rows ? NULL : self->run, &self->filter, terms, n_terms,
                          self->ordering, on_ordered, g_object_ref (self));
  g_signal_emit (self, signals[ROWS_ASKED], 0);
}

/* The count of sources, and of those listed where a filter is set. */
static void
show_summary (SkySourceTable *self)
{
  SkySourceRows *rows = sky_source_list_get_rows (self->list);
  g_autofree char *text = NULL;

  if (rows == NULL || rows->run == NULL)
    text = g_strdup ("Run measure to list the sources");
  else
    {
      g_autofree char *count = sky_source_count_text (rows->n);
      g_autofree char *listed = sky_source_filter_is_empty (&self->filter) ? g_strdup ("")
        : g_strdup_printf ("%u listed of ", g_list_model_get_n_items (G_LIST_MODEL (self->list)));
      /* The files and the Python package keep 0-based pixel columns
       * (docs/contract.md); the window counts as DS9 and CARTA do. */
      text = g_strdup_printf ("%s%s; x, y in FITS pixels, counted from 1", listed, count);
    }
  gtk_label_set_text (self->summary, text);
}

static gboolean
show_later (gpointer data)
{
  SkySourceTable *self = data;
  self->show_timer = 0;
  reorder (self, "a new run");
  return G_SOURCE_REMOVE;
}

/* The rows are remade only when the table is on screen, and once the
 * results stop changing for a moment (a threshold being dragged), not
 * every step: each costs the worker the run's export and the main loop a
 * rebinding of the rows in sight. */
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
    reorder (self, "shown");
}

/* Scrolls the list so that row position is in sight, centred if it was
 * not. GTK 4.8 has no gtk_column_view_scroll_to (): rows are of one
 * height, so the row's share of the list is its share of the adjustment. */
static void
scroll_now (SkySourceTable *self, guint position)
{
  GtkAdjustment *adj = gtk_scrolled_window_get_vadjustment (self->scroller);
  double upper = gtk_adjustment_get_upper (adj), page = gtk_adjustment_get_page_size (adj);
  guint n = g_list_model_get_n_items (G_LIST_MODEL (self->list));
  double row_top, row_h, value;

  if (position >= n)
    return;
  row_top = upper * position / n;
  row_h = upper / n;
  value = gtk_adjustment_get_value (adj);
  if (row_top < value || row_top + row_h > value + page)
    gtk_adjustment_set_value (adj, row_top - page / 2 + row_h / 2);
}

/* The adjustment describes the list only once it is laid out: a table just
 * mapped (a marker clicked with another panel showing) or given new rows
 * has an empty or stale one. A frame's tick callbacks run before its
 * layout, so the second tick comes after a layout. */
static gboolean
scroll_when_laid_out (GtkWidget *widget, GdkFrameClock *clock, gpointer data)
{
  SkySourceTable *self = SKY_SOURCE_TABLE (widget);

  /* An order still on its way: the rows are not in place yet. */
  if (self->ordering != NULL)
    self->scroll_ticks = 0;
  if (++self->scroll_ticks < 2)
    return G_SOURCE_CONTINUE;
  self->scroll_tick = 0;
  scroll_now (self, self->pending_row == SELECTED_ROW
                    ? gtk_single_selection_get_selected (self->selection) : self->pending_row);
  return G_SOURCE_REMOVE;
}

static void
scroll_to_row (SkySourceTable *self, guint position)
{
  self->pending_row = position;
  self->scroll_ticks = 0;
  if (self->scroll_tick == 0)
    self->scroll_tick = gtk_widget_add_tick_callback (GTK_WIDGET (self), scroll_when_laid_out,
                                                      NULL, NULL);
}

/* A new sort order (a header clicked, sort_by): worked out on a worker.
 * Once it is shown, the selected row is in sight, or with none the list
 * starts at its top (the brightest source, sorted by peak), not wherever
 * the old order had been scrolled to. Rows not made yet are sorted when
 * they are made. */
static void
on_sorter_changed (GtkSorter *sorter, GtkSorterChange change, SkySourceTable *self)
{
  self->resorted = TRUE;
  if (!self->stale || self->ordering != NULL)
    reorder (self, "a new sort");
}

gboolean
sky_source_table_sort_by (SkySourceTable *self, const char *name, gboolean descending)
{
  GListModel *columns = gtk_column_view_get_columns (self->column_view);
  guint n = g_list_model_get_n_items (columns);

  for (guint i = 0; i < n; i++)
    {
      g_autoptr (GtkColumnViewColumn) column = g_list_model_get_item (columns, i);
      const char *title = gtk_column_view_column_get_title (column);
      size_t len = strcspn (title, " ");

      if (strlen (name) == len && g_ascii_strncasecmp (title, name, len) == 0)
        {
          gtk_column_view_sort_by_column (self->column_view, column,
                                          descending ? GTK_SORT_DESCENDING : GTK_SORT_ASCENDING);
          /* Rows not made yet are made now, in that order. */
          if (self->stale)
            reorder (self, "sorted before shown");
          return TRUE;
        }
    }
  return FALSE;
}

guint
sky_source_table_sort_pending (SkySourceTable *self)
{
  if (self->ordering == NULL && self->show_timer == 0)
    return 0;
  return MAX (g_list_model_get_n_items (G_LIST_MODEL (self->list)), 1);
}

void
sky_source_table_select (SkySourceTable *self, gint64 index)
{
  guint position;

  if (self->stale)
    reorder (self, "a row selected");
  if (self->ordering != NULL)
    {
      /* Once the rows are in place. */
      self->select_when_ordered = index;
      return;
    }
  position = index >= 0 ? sky_source_list_find (self->list, index) : G_MAXUINT;
  select_quietly (self, position);
  if (position != G_MAXUINT)
    scroll_to_row (self, position);
}

static void
on_selection_changed (GtkSelectionModel *model, guint position, guint n_items,
                      SkySourceTable *self)
{
  SkySource *source;

  if (self->selecting)
    return;
  source = gtk_single_selection_get_selected_item (self->selection);
  self->selected = source ? sky_source_get_index (source) : -1;
  g_signal_emit (self, signals[SOURCE_SELECTED], 0, self->selected);
}

/* ---------------------------------------------------------------- filter */

static void
apply_filter (SkySourceTable *self)
{
  /* Rows not made yet are filtered when they are made. */
  if (!self->stale || self->ordering != NULL)
    reorder (self, "a new filter");
  g_signal_emit (self, signals[FILTER_CHANGED], 0);
}

/* A control moved: the filter is what they all say. Typed text that is
 * not a number leaves the flux as it was, and the entry marked. */
static void
on_filter_changed (SkySourceTable *self)
{
  const char *flux = gtk_editable_get_text (GTK_EDITABLE (self->flux_entry));
  g_autofree char *stripped = g_strstrip (g_strdup (flux));
  char *end;
  double v;

  if (self->syncing)
    return;
  self->filter.min_area = (gint64) gtk_spin_button_get_value (self->area_spin);
  self->filter.min_snr = gtk_spin_button_get_value (self->snr_spin);
  self->filter.no_edge = !gtk_check_button_get_active (self->edge_check);
  self->filter.no_flags = !gtk_check_button_get_active (self->flags_check);
  v = g_ascii_strtod (stripped, &end);
  gtk_widget_remove_css_class (GTK_WIDGET (self->flux_entry), "error");
  if (*stripped == '\0')
    self->filter.min_flux = -INFINITY;
  else if (end != stripped && *end == '\0' && isfinite (v))
    self->filter.min_flux = v;
  else
    gtk_widget_add_css_class (GTK_WIDGET (self->flux_entry), "error");
  apply_filter (self);
}

void
sky_source_table_set_filter (SkySourceTable *self, const SkySourceFilter *filter)
{
  char flux[G_ASCII_DTOSTR_BUF_SIZE] = "";

  self->filter = *filter;
  self->syncing = TRUE;
  gtk_spin_button_set_value (self->area_spin, MAX (filter->min_area, 1));
  gtk_spin_button_set_value (self->snr_spin, filter->min_snr);
  if (filter->min_flux > -INFINITY)
    g_ascii_dtostr (flux, sizeof flux, filter->min_flux);
  gtk_editable_set_text (GTK_EDITABLE (self->flux_entry), flux);
  gtk_widget_remove_css_class (GTK_WIDGET (self->flux_entry), "error");
  gtk_check_button_set_active (self->edge_check, !filter->no_edge);
  gtk_check_button_set_active (self->flags_check, !filter->no_flags);
  self->syncing = FALSE;
  if (!sky_source_filter_is_empty (filter))
    gtk_expander_set_expanded (self->filter_expander, TRUE);
  apply_filter (self);
}

const SkySourceFilter *
sky_source_table_get_filter (SkySourceTable *self)
{
  return &self->filter;
}

/* Counted from the catalogue, not from the rows: the rows are made only
 * when the table is on screen, and the state asks for this after every
 * change. */
gint64
sky_source_table_get_n_listed (SkySourceTable *self)
{
  gint64 n = 0;

  if (self->run == NULL || !sky_run_has (self->run, SKY_STEP_MEASURE))
    return 0;
  if (sky_source_filter_is_empty (&self->filter))
    return self->run->catalogue.n;
  for (gint64 i = 0; i < self->run->catalogue.n; i++)
    n += sky_source_filter_passes (&self->filter, self->run, i);
  return n;
}

/* The typed number, or 0 (no such source) for text that is not one. */
static void
on_goto (SkySourceTable *self)
{
  const char *text = gtk_editable_get_text (GTK_EDITABLE (self->goto_entry));
  char *end;
  gint64 id = g_ascii_strtoll (text, &end, 10);

  if (end == text || *end != '\0')
    id = 0;
  g_signal_emit (self, signals[GOTO_SOURCE], 0, id);
}

/* ----------------------------------------------------------------- cells */

static void
cell_setup (GtkSignalListItemFactory *factory, GtkListItem *item, gpointer user_data)
{
  GtkWidget *cell = sky_table_cell_new ();
  gtk_widget_add_css_class (cell, "numeric");
  gtk_list_item_set_child (item, cell);
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
  sky_table_cell_set_text (SKY_TABLE_CELL (gtk_list_item_get_child (item)), text);
  g_value_unset (&value);
}

#define DEFINE_BIND(prop, fixed, digits)                                                      \
  static void                                                                                 \
  bind_##prop (GtkSignalListItemFactory *factory, GtkListItem *item, gpointer user_data)      \
  {                                                                                           \
    bind_format (item, #prop, fixed, digits);                                                 \
  }

DEFINE_BIND (id, FALSE, 0)
DEFINE_BIND (peak, FALSE, 4)
DEFINE_BIND (sum, FALSE, 4)
DEFINE_BIND (npix, FALSE, 0)
DEFINE_BIND (snr, TRUE, 1)

/* To 4 significant digits; empty where unknown (no beam, no σ), as the
 * CSV leaves the field. */
static void
bind_unknown_empty (GtkListItem *item, const char *property)
{
  double v;
  char text[64] = "";

  g_object_get (gtk_list_item_get_item (item), property, &v, NULL);
  if (isfinite (v))
    g_snprintf (text, sizeof text, "%.4g", v);
  sky_table_cell_set_text (SKY_TABLE_CELL (gtk_list_item_get_child (item)), text);
}

/* A column's bind handler that hands its property to how. */
#define DEFINE_BIND_WITH(name, how, property)                                                 \
  static void                                                                                 \
  bind_##name (GtkSignalListItemFactory *factory, GtkListItem *item, gpointer user_data)      \
  {                                                                                           \
    how (item, property);                                                                     \
  }

DEFINE_BIND_WITH (int_flux, bind_unknown_empty, "int-flux")
DEFINE_BIND_WITH (local_rms, bind_unknown_empty, "local-rms")

/* FITS image pixels, counted from 1: the catalogue's 0-based centroid + 1. */
static void
bind_fits_pixel (GtkListItem *item, const char *property)
{
  double v;
  char text[64];

  g_object_get (gtk_list_item_get_item (item), property, &v, NULL);
  g_snprintf (text, sizeof text, "%.2f", v + 1);
  sky_table_cell_set_text (SKY_TABLE_CELL (gtk_list_item_get_child (item)), text);
}

DEFINE_BIND_WITH (x, bind_fits_pixel, "x")
DEFINE_BIND_WITH (y, bind_fits_pixel, "y")

static void
bind_lng (GtkSignalListItemFactory *factory, GtkListItem *item, gpointer user_data)
{
  char text[32];
  sky_source_format_lng (gtk_list_item_get_item (item), text, sizeof text);
  sky_table_cell_set_text (SKY_TABLE_CELL (gtk_list_item_get_child (item)), text);
}

static void
bind_lat (GtkSignalListItemFactory *factory, GtkListItem *item, gpointer user_data)
{
  char text[32];
  sky_source_format_lat (gtk_list_item_get_item (item), text, sizeof text);
  sky_table_cell_set_text (SKY_TABLE_CELL (gtk_list_item_get_child (item)), text);
}

/* ---------------------------------------------------------------- object */

static void
sky_source_table_dispose (GObject *object)
{
  SkySourceTable *self = SKY_SOURCE_TABLE (object);

  GtkWidget *child;

  /* The columns going take their sorters from the view's: no new order. */
  if (self->column_view)
    g_signal_handlers_disconnect_by_func (gtk_column_view_get_sorter (self->column_view),
                                          on_sorter_changed, self);
  gtk_widget_dispose_template (GTK_WIDGET (self), SKY_TYPE_SOURCE_TABLE);
  /* Template children without an id are ours to unparent. */
  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self))))
    gtk_widget_unparent (child);
  if (self->ordering)
    g_cancellable_cancel (self->ordering);
  g_clear_object (&self->ordering);
  if (self->selection)
    g_signal_handlers_disconnect_by_func (self->selection, on_selection_changed, self);
  g_clear_object (&self->selection);
  self->list = NULL;
  g_clear_pointer (&self->run, sky_run_unref);
  g_clear_handle_id (&self->show_timer, g_source_remove);
  if (self->scroll_tick != 0)
    gtk_widget_remove_tick_callback (GTK_WIDGET (self), self->scroll_tick);
  self->scroll_tick = 0;
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
  signals[SOURCE_SELECTED] = sky_ui_signal_new (klass, "source-selected", 1, G_TYPE_INT64);
  /* (id): go to the source with that label number (the Go to control). */
  signals[GOTO_SOURCE] = sky_ui_signal_new (klass, "goto-source", 1, G_TYPE_INT64);
  /* The filter's controls changed what is listed. */
  signals[FILTER_CHANGED] = sky_ui_signal_new (klass, "filter-changed", 0);
  /* A worker makes, filters or sorts the rows: sort_pending is not 0. */
  signals[ROWS_ASKED] = sky_ui_signal_new (klass, "rows-asked", 0);
  /* The rows asked for (a run's, a filter's, a sort's) are in place:
   * sort_pending is 0 again. */
  signals[ROWS_SHOWN] = sky_ui_signal_new (klass, "rows-shown", 0);

  g_type_ensure (SKY_TYPE_SOURCE);
  g_type_ensure (SKY_TYPE_SOURCE_SORTER);
  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/io/github/skysift/SkySift/ui/sky-source-table.ui");
  gtk_widget_class_bind_template_child (widget_class, SkySourceTable, scroller);
  gtk_widget_class_bind_template_child (widget_class, SkySourceTable, column_view);
  gtk_widget_class_bind_template_child (widget_class, SkySourceTable, id_column);
  gtk_widget_class_bind_template_child (widget_class, SkySourceTable, lng_column);
  gtk_widget_class_bind_template_child (widget_class, SkySourceTable, lat_column);
  gtk_widget_class_bind_template_child (widget_class, SkySourceTable, peak_column);
  gtk_widget_class_bind_template_child (widget_class, SkySourceTable, sum_column);
  gtk_widget_class_bind_template_child (widget_class, SkySourceTable, local_rms_column);
  gtk_widget_class_bind_template_child (widget_class, SkySourceTable, summary);
  gtk_widget_class_bind_template_child (widget_class, SkySourceTable, filter_expander);
  gtk_widget_class_bind_template_child (widget_class, SkySourceTable, area_spin);
  gtk_widget_class_bind_template_child (widget_class, SkySourceTable, snr_spin);
  gtk_widget_class_bind_template_child (widget_class, SkySourceTable, flux_entry);
  gtk_widget_class_bind_template_child (widget_class, SkySourceTable, edge_check);
  gtk_widget_class_bind_template_child (widget_class, SkySourceTable, flags_check);
  gtk_widget_class_bind_template_child (widget_class, SkySourceTable, goto_entry);
  gtk_widget_class_bind_template_callback (widget_class, on_filter_changed);
  gtk_widget_class_bind_template_callback (widget_class, on_goto);
  gtk_widget_class_bind_template_callback (widget_class, cell_setup);
  gtk_widget_class_bind_template_callback (widget_class, bind_id);
  gtk_widget_class_bind_template_callback (widget_class, bind_x);
  gtk_widget_class_bind_template_callback (widget_class, bind_y);
  gtk_widget_class_bind_template_callback (widget_class, bind_peak);
  gtk_widget_class_bind_template_callback (widget_class, bind_sum);
  gtk_widget_class_bind_template_callback (widget_class, bind_npix);
  gtk_widget_class_bind_template_callback (widget_class, bind_lng);
  gtk_widget_class_bind_template_callback (widget_class, bind_lat);
  gtk_widget_class_bind_template_callback (widget_class, bind_int_flux);
  gtk_widget_class_bind_template_callback (widget_class, bind_snr);
  gtk_widget_class_bind_template_callback (widget_class, bind_local_rms);

  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BOX_LAYOUT);
  gtk_widget_class_set_css_name (widget_class, "skysourcetable");
}

static void
sky_source_table_init (SkySourceTable *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  sky_source_filter_init (&self->filter);
  self->selected = -1;
  self->select_when_ordered = NO_PENDING_SELECT;
  gtk_orientable_set_orientation (GTK_ORIENTABLE (gtk_widget_get_layout_manager (GTK_WIDGET (self))),
                                  GTK_ORIENTATION_VERTICAL);
  /* One list and one selection for good: new rows, a new filter and a
   * new order change the list's content, not the view's model. */
  self->list = sky_source_list_new ();
  self->selection = gtk_single_selection_new (G_LIST_MODEL (self->list));
  gtk_single_selection_set_autoselect (self->selection, FALSE);
  gtk_single_selection_set_can_unselect (self->selection, TRUE);
  gtk_single_selection_set_selected (self->selection, GTK_INVALID_LIST_POSITION);
  g_signal_connect (self->selection, "selection-changed", G_CALLBACK (on_selection_changed), self);
  gtk_column_view_set_model (self->column_view, GTK_SELECTION_MODEL (self->selection));
  gtk_column_view_sort_by_column (self->column_view, self->id_column, GTK_SORT_ASCENDING);
  g_signal_connect_object (gtk_column_view_get_sorter (self->column_view), "changed",
                           G_CALLBACK (on_sorter_changed), self, 0);
}
