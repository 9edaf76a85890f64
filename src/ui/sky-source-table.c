/* SPDX-License-Identifier: GPL-3.0-or-later */
/* SkySourceTable: a GtkColumnView over SkySource rows, sorted by the
 * column headers; selecting a row emits source-selected. */
#include "sky-source-table.h"
#include "sky-source.h"

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
  GtkCustomFilter *custom;      /* the filter, as the list model asks it */
  gboolean syncing;             /* controls set from code */
  gint64 nrows;                 /* rows before the filter */

  GtkSortListModel *sorted;    /* owned by selection */
  GtkSingleSelection *selection;
  gboolean selecting;           /* selection set from code, not by the user */
  guint pending_row;            /* to scroll to once the list is laid out */
  guint scroll_tick;            /* the tick callback waiting for that */
  int scroll_ticks;
  SkyRun *run;
  SkyRun *rows_run;             /* the run the rows were made from */
  gboolean stale;               /* run not shown yet */
  guint show_timer;
};

G_DEFINE_FINAL_TYPE (SkySourceTable, sky_source_table, GTK_TYPE_WIDGET)

#define SHOW_DELAY_MS 300

/* From how many rows the table sorts in steps (about 100 ms at once on the
 * two-core machine). */
#define INCREMENTAL_ROWS 20000

/* A pending scroll to wherever the selected row is by then. */
#define SELECTED_ROW (G_MAXUINT - 1)

enum { SOURCE_SELECTED, GOTO_SOURCE, FILTER_CHANGED, N_SIGNALS };
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

  GtkFilterListModel *filtered;

  g_list_store_splice (store, 0, 0, rows->pdata, rows->len);
  self->nrows = rows->len;
  filtered = gtk_filter_list_model_new (G_LIST_MODEL (store),
                                        GTK_FILTER (g_object_ref (self->custom)));
  sorted = gtk_sort_list_model_new (G_LIST_MODEL (filtered),
                                    g_object_ref (gtk_column_view_get_sorter (self->column_view)));
  /* A long list sorts in steps on the main loop: 48,544 rows sorted at
   * once kept it for 0.56 s (230,776 for up to 1.9 s). A short one sorts at
   * once, in a few ms, rather than showing the partial orders of the steps
   * as the rows move under the pointer. */
  gtk_sort_list_model_set_incremental (sorted, rows->len > INCREMENTAL_ROWS);
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

/* The run's catalogue as the export has it (sky positions, int_flux), its
 * result borrowed from the run: not to be cleared, only ex. */
static int
export_run (SkyRun *run, SkyResult *res, SkyExport *ex)
{
  SkyRunInfo info = { 0 };

  res->nx = run->image->image.nx;
  res->ny = run->image->image.ny;
  res->stats = run->stats;
  res->threshold_value = run->threshold_value;
  res->nsources = run->nsources;
  res->catalogue = run->catalogue;
  info.image = &run->image->image;
  info.params = &run->params;
  info.backend = sky_backend_name (run->backend);
  return sky_export_init (ex, &info, res);
}

/* A column's title with the image's unit: "peak (Jy/beam)". */
static void
set_unit_title (GtkColumnViewColumn *column, const char *name, const char *unit)
{
  g_autofree char *title = unit && *unit ? g_strdup_printf ("%s (%s)", name, unit)
                                         : g_strdup (name);
  gtk_column_view_column_set_title (column, title);
}

/* The count of sources, and of those listed where a filter is set. */
static void
show_summary (SkySourceTable *self)
{
  SkyRun *run = self->run;
  gint64 n = run && sky_run_has (run, SKY_STEP_MEASURE) ? run->catalogue.n : 0;
  g_autofree char *text = NULL;

  if (run == NULL || !sky_run_has (run, SKY_STEP_MEASURE))
    text = g_strdup ("Run measure to list the sources");
  else
    {
      g_autofree char *count = sky_source_count_text (n);
      g_autofree char *listed = sky_source_filter_is_empty (&self->filter) ? g_strdup ("")
        : g_strdup_printf ("%u listed of ", g_list_model_get_n_items (G_LIST_MODEL (self->sorted)));
      /* The files and the Python package keep 0-based pixel columns
       * (docs/contract.md); the window counts as DS9 and CARTA do. */
      text = g_strdup_printf ("%s%s; x, y in FITS pixels, counted from 1", listed, count);
    }
  gtk_label_set_text (self->summary, text);
}

static void
show_run (SkySourceTable *self)
{
  g_autoptr (GPtrArray) rows = g_ptr_array_new_with_free_func (g_object_unref);
  SkyRun *run = self->run;
  gint64 n = run && sky_run_has (run, SKY_STEP_MEASURE) ? run->catalogue.n : 0;
  SkyResult res = { 0 };
  SkyExport ex = { 0 };
  SkyWcs *wcs = NULL;

  if (n > 0 && export_run (run, &res, &ex) != SKY_OK)
    {
      g_warning ("the source table: %s", sky_last_error ());
      n = 0;
    }
  wcs = ex.wcs;
  for (gint64 i = 0; i < n; i++)
    g_ptr_array_add (rows, sky_source_new (run, i, &ex));
  /* The filter reads the catalogue the rows index, whatever run comes
   * next before they are made again. */
  g_clear_pointer (&self->rows_run, sky_run_unref);
  self->rows_run = n > 0 ? sky_run_ref (run) : NULL;
  set_rows (self, rows);
  set_unit_title (self->peak_column, "peak", ex.unit);
  set_unit_title (self->sum_column, "sum", ex.unit);
  set_unit_title (self->local_rms_column, "local_rms", ex.unit);
  /* The sky columns, named after the WCS's system (RA/Dec, glon/glat...). */
  gtk_column_view_column_set_visible (self->lng_column, wcs != NULL);
  gtk_column_view_column_set_visible (self->lat_column, wcs != NULL);
  if (wcs != NULL)
    {
      gboolean eq = sky_wcs_system (wcs) == SKY_COORD_EQUATORIAL;
      gtk_column_view_column_set_title (self->lng_column, eq ? "RA" : sky_wcs_lng_name (wcs));
      gtk_column_view_column_set_title (self->lat_column, eq ? "Dec" : sky_wcs_lat_name (wcs));
    }
  sky_export_clear (&ex);
  self->stale = FALSE;
  g_clear_handle_id (&self->show_timer, g_source_remove);
  show_summary (self);
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

/* Scrolls the list so that row position is in sight, centred if it was
 * not. GTK 4.8 has no gtk_column_view_scroll_to (): rows are of one
 * height, so the row's share of the list is its share of the adjustment. */
static void
scroll_now (SkySourceTable *self, guint position)
{
  GtkAdjustment *adj = gtk_scrolled_window_get_vadjustment (self->scroller);
  double upper = gtk_adjustment_get_upper (adj), page = gtk_adjustment_get_page_size (adj);
  guint n = g_list_model_get_n_items (G_LIST_MODEL (self->sorted));
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
 * mapped (a marker clicked with another panel showing) or given a new
 * model has an empty or stale one. A frame's tick callbacks run before its
 * layout, so the second tick comes after a layout. */
static gboolean
scroll_when_laid_out (GtkWidget *widget, GdkFrameClock *clock, gpointer data)
{
  SkySourceTable *self = SKY_SOURCE_TABLE (widget);

  /* An incremental sort still under way: the rows are not in place yet. */
  if (gtk_sort_list_model_get_pending (self->sorted) > 0)
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

/* A new sort order: the selected row stays in sight, or with none the list
 * starts at its top (the brightest source, sorted by peak), not wherever
 * the old order had been scrolled to (the list view keeps the row that
 * was at the top in place, wherever it has gone). After the layout: the
 * model sorts after this handler has run. */
static void
on_sorter_changed (GtkSorter *sorter, GtkSorterChange change, SkySourceTable *self)
{
  gboolean selected = gtk_single_selection_get_selected (self->selection)
                      != GTK_INVALID_LIST_POSITION;

  scroll_to_row (self, selected ? SELECTED_ROW : 0);
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
          if (self->stale)
            show_run (self);
          gtk_column_view_sort_by_column (self->column_view, column,
                                          descending ? GTK_SORT_DESCENDING : GTK_SORT_ASCENDING);
          return TRUE;
        }
    }
  return FALSE;
}

guint
sky_source_table_sort_pending (SkySourceTable *self)
{
  return self->sorted ? gtk_sort_list_model_get_pending (self->sorted) : 0;
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
  g_signal_emit (self, signals[SOURCE_SELECTED], 0,
                 source ? sky_source_get_index (source) : (gint64) -1);
}

/* ---------------------------------------------------------------- filter */

static gboolean
filter_row (gpointer item, gpointer data)
{
  SkySourceTable *self = data;
  gint64 index = sky_source_get_index (item);

  if (self->rows_run == NULL || index >= self->rows_run->catalogue.n)
    return TRUE;
  return sky_source_filter_passes (&self->filter, self->rows_run, index);
}

static void
apply_filter (SkySourceTable *self)
{
  gtk_filter_changed (GTK_FILTER (self->custom), GTK_FILTER_CHANGE_DIFFERENT);
  if (!self->stale)
    show_summary (self);
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
 * when the table is on screen (show_run), and the state asks for this
 * after every change. */
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
  gtk_label_set_text (GTK_LABEL (gtk_list_item_get_child (item)), text);
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
  gtk_label_set_text (GTK_LABEL (gtk_list_item_get_child (item)), text);
}

DEFINE_BIND_WITH (x, bind_fits_pixel, "x")
DEFINE_BIND_WITH (y, bind_fits_pixel, "y")

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
  g_clear_object (&self->custom);
  g_clear_pointer (&self->run, sky_run_unref);
  g_clear_pointer (&self->rows_run, sky_run_unref);
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
  signals[SOURCE_SELECTED] =
    g_signal_new ("source-selected", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL,
                  NULL, NULL, G_TYPE_NONE, 1, G_TYPE_INT64);
  /* (id): go to the source with that label number (the Go to control). */
  signals[GOTO_SOURCE] =
    g_signal_new ("goto-source", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL,
                  NULL, NULL, G_TYPE_NONE, 1, G_TYPE_INT64);
  /* The filter's controls changed what is listed. */
  signals[FILTER_CHANGED] =
    g_signal_new ("filter-changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL,
                  NULL, NULL, G_TYPE_NONE, 0);

  g_type_ensure (SKY_TYPE_SOURCE);
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
  self->custom = gtk_custom_filter_new (filter_row, self, NULL);
  gtk_orientable_set_orientation (GTK_ORIENTABLE (gtk_widget_get_layout_manager (GTK_WIDGET (self))),
                                  GTK_ORIENTATION_VERTICAL);

  {
    g_autoptr (GPtrArray) none = g_ptr_array_new ();
    set_rows (self, none);
  }
  gtk_column_view_sort_by_column (self->column_view, self->id_column, GTK_SORT_ASCENDING);
  g_signal_connect_object (gtk_column_view_get_sorter (self->column_view), "changed",
                           G_CALLBACK (on_sorter_changed), self, 0);
}
