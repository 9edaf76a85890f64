/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The source table: its columns, scrolling to a selected source, and
 * sorting a large table with the app still responsive. */
#include "test-ui-gtk.h"
#include "sky-table-cell.h"

GtkWidget *
find_descendant (GtkWidget *root, GType type)
{
  for (GtkWidget *w = gtk_widget_get_first_child (root); w; w = gtk_widget_get_next_sibling (w))
    {
      GtkWidget *found;
      if (G_TYPE_CHECK_INSTANCE_TYPE (w, type))
        return w;
      if ((found = find_descendant (w, type)))
        return found;
    }
  return NULL;
}

/* The label (a column's header) or table cell under root that reads
 * text, or NULL. */
static GtkWidget *
header_label (GtkWidget *root, const char *title)
{
  for (GtkWidget *w = gtk_widget_get_first_child (root); w; w = gtk_widget_get_next_sibling (w))
    {
      GtkWidget *found;
      if (GTK_IS_LABEL (w) && g_strcmp0 (gtk_label_get_text (GTK_LABEL (w)), title) == 0)
        return w;
      if (SKY_IS_TABLE_CELL (w) && g_strcmp0 (sky_table_cell_get_text (SKY_TABLE_CELL (w)), title) == 0)
        return w;
      if ((found = header_label (w, title)))
        return found;
    }
  return NULL;
}

/* A label under root whose text starts with prefix, or NULL. */
GtkWidget *
header_label_prefix (GtkWidget *root, const char *prefix)
{
  for (GtkWidget *w = gtk_widget_get_first_child (root); w; w = gtk_widget_get_next_sibling (w))
    {
      GtkWidget *found;
      if (GTK_IS_LABEL (w) && g_str_has_prefix (gtk_label_get_text (GTK_LABEL (w)), prefix))
        return w;
      if ((found = header_label_prefix (w, prefix)))
        return found;
    }
  return NULL;
}

static GtkColumnViewColumn *
column_titled (GtkColumnView *view, const char *title)
{
  GListModel *columns = gtk_column_view_get_columns (view);

  for (guint i = 0; i < g_list_model_get_n_items (columns); i++)
    {
      g_autoptr (GtkColumnViewColumn) c = g_list_model_get_item (columns, i);
      if (g_strcmp0 (gtk_column_view_column_get_title (c), title) == 0)
        return c;
    }
  return NULL;
}

/* Adds a beam of fwhm_arcsec to a FITS file's header. */
static void
add_beam (const char *path, double fwhm_arcsec)
{
  fitsfile *f = NULL;
  int status = 0;

  fits_open_file (&f, path, READWRITE, &status);
  fits_write_key_dbl (f, "BMAJ", fwhm_arcsec / 3600, 10, NULL, &status);
  fits_write_key_dbl (f, "BMIN", fwhm_arcsec / 3600, 10, NULL, &status);
  fits_close_file (f, &status);
  fail_on_cfitsio (path, status);
}

/* The source table has the catalogue's columns with their units: RA and
 * Dec first, in sight at the default size, then x, y, peak and sum in the
 * image's unit, int_flux in Jy (the sum over the beam's area in pixels),
 * snr (peak over σ) and local_rms (σ) as the export has them. */
void
test_source_table_columns (Fixture *f)
{
  Image beam = field;
  GtkColumnView *view;
  GtkWidget *scroller;
  GListModel *rows;
  const SkyRun *run;
  /* 3" FWHM, 1" pixels: pi 3 3 / (4 ln 2) pixels. */
  double beam_pixels = G_PI * 9 / (4 * log (2));

  /* The field with a beam in its header. */
  beam.path = sky_test_tmp_path ("beam.fits");
  {
    g_autofree char *bytes = NULL;
    gsize len;
    g_assert_true (g_file_get_contents (field.path, &bytes, &len, NULL));
    g_assert_true (g_file_set_contents (beam.path, bytes, len, NULL));
  }
  add_beam (beam.path, 3);
  open_image (f, &beam);
  click (f, "app.run", "'all'");
  wait_idle (f, "run all");
  activate ("panel", g_variant_new_string ("sources"));
  wait_idle (f, "the sources panel");
  wait_frames (f);
  run = f->window->run;

  view = GTK_COLUMN_VIEW (find_descendant (GTK_WIDGET (f->window->sources),
                                           GTK_TYPE_COLUMN_VIEW));
  for (const char *const *t = (const char *const[]) { "id", "RA", "Dec", "x", "y",
                                                      "peak (Jy/beam)", "sum (Jy/beam)",
                                                      "int_flux (Jy)", "snr",
                                                      "local_rms (Jy/beam)", "pixels", NULL };
       *t; t++)
    if (column_titled (view, *t) == NULL || !gtk_column_view_column_get_visible (column_titled (view, *t)))
      g_error ("no column \"%s\" shown in the source table", *t);

  /* RA and Dec in sight at the default size, left of the scroller's edge. */
  scroller = gtk_widget_get_ancestor (GTK_WIDGET (view), GTK_TYPE_SCROLLED_WINDOW);
  for (const char *const *t = (const char *const[]) { "RA", "Dec", NULL }; *t; t++)
    {
      GtkWidget *label = header_label (GTK_WIDGET (view), *t);
      graphene_rect_t r;
      g_assert_nonnull (label);
      g_assert_true (gtk_widget_compute_bounds (label, scroller, &r));
      g_test_message ("%s header at x %.0f to %.0f of %d", *t, r.origin.x,
                      r.origin.x + r.size.width, gtk_widget_get_width (scroller));
      g_assert_cmpfloat (r.origin.x, >=, 0);
      g_assert_cmpfloat (r.origin.x + r.size.width, <=, gtk_widget_get_width (scroller));
    }

  if (g_getenv ("SKYSIFT_TEST_SCREENSHOTS"))
    {
      g_autofree char *shot = g_build_filename (g_getenv ("SKYSIFT_TEST_SCREENSHOTS"),
                                                "source-table.png", NULL);
      sky_window_screenshot (f->window, "panel", 1, shot);
      wait_idle (f, "the screenshot");
    }
  rows = G_LIST_MODEL (gtk_column_view_get_model (view));
  g_assert_cmpuint (g_list_model_get_n_items (rows), ==, N_FIELD_SOURCES);
  for (guint i = 0; i < N_FIELD_SOURCES; i++)
    {
      g_autoptr (GObject) row = g_list_model_get_item (rows, i);
      gint64 id;
      double int_flux, snr, local_rms;
      g_object_get (row, "id", &id, "int-flux", &int_flux, "snr", &snr, "local-rms", &local_rms,
                    NULL);
      g_assert_cmpfloat_with_epsilon (int_flux, run->catalogue.sum[id - 1] / beam_pixels,
                                      1e-9 * fabs (int_flux));
      g_assert_cmpfloat (local_rms, ==, run->stats.sigma);
      g_assert_cmpfloat_with_epsilon (snr, run->catalogue.peak[id - 1] / run->stats.sigma,
                                      1e-9 * snr);
    }

  /* x and y as FITS counts pixels, from 1, and said so above the table. */
  g_assert_nonnull (header_label_prefix (GTK_WIDGET (f->window->sources),
                                         "4 sources; x, y in FITS pixels, counted from 1"));
  for (guint i = 0; i < N_FIELD_SOURCES; i++)
    {
      g_autofree char *x = g_strdup_printf ("%.2f", run->catalogue.x[i] + 1);
      g_autofree char *y = g_strdup_printf ("%.2f", run->catalogue.y[i] + 1);
      g_assert_nonnull (header_label (GTK_WIDGET (view), x));
      g_assert_nonnull (header_label (GTK_WIDGET (view), y));
    }
  g_free (beam.path);
}

/* The list's row at position is wholly in sight. */
static void
assert_row_in_sight (GtkAdjustment *adj, guint position, guint n)
{
  double upper = gtk_adjustment_get_upper (adj), page = gtk_adjustment_get_page_size (adj);
  double value = gtk_adjustment_get_value (adj);
  double top = upper * position / n, bottom = upper * (position + 1) / n;

  if (top < value - 0.5 || bottom > value + page + 0.5)
    g_error ("row %u of %u (%.0f to %.0f px) is not in sight (%.0f to %.0f px)", position, n,
             top, bottom, value, value + page);
}

/* The table's rows are ordered on a worker: a sort is done when none is
 * pending, which frames alone do not promise on a loaded machine. */
static gboolean
sorted (gpointer table)
{
  return sky_source_table_sort_pending (table) == 0;
}

/* Sorting starts the list at its top (the brightest source, sorted by
 * peak), not where the old order was scrolled to; a marker clicked while
 * another panel shows brings up the table with its row in sight. */
void
test_source_table_scroll (Fixture *f)
{
  GtkColumnView *view;
  GtkAdjustment *adj;
  GListModel *rows;
  GtkSingleSelection *selection;
  guint n, middle;
  double brightest = -G_MAXDOUBLE, peak;
  gint64 id;

  if (!open_gc_like (f))
    return;
  click (f, "app.run", "'all'");
  wait_idle (f, "run all");
  activate ("panel", g_variant_new_string ("sources"));
  wait_idle (f, "the sources panel");
  /* the panel, once shown, orders its rows on a worker */
  iterate_until (sorted, f->window->sources, "the table's rows");
  wait_frames (f);
  view = GTK_COLUMN_VIEW (find_descendant (GTK_WIDGET (f->window->sources),
                                           GTK_TYPE_COLUMN_VIEW));
  adj = gtk_scrolled_window_get_vadjustment (
    GTK_SCROLLED_WINDOW (gtk_widget_get_ancestor (GTK_WIDGET (view), GTK_TYPE_SCROLLED_WINDOW)));
  selection = GTK_SINGLE_SELECTION (gtk_column_view_get_model (view));
  rows = G_LIST_MODEL (selection);
  n = g_list_model_get_n_items (rows);
  g_assert_cmpuint (n, >, 100);
  for (gint64 i = 0; i < f->window->run->catalogue.n; i++)
    brightest = MAX (brightest, f->window->run->catalogue.peak[i]);

  gtk_adjustment_set_value (adj, gtk_adjustment_get_upper (adj) / 2);
  wait_frames (f);
  gtk_column_view_sort_by_column (view, column_titled (view, "peak (Jy/beam)"),
                                  GTK_SORT_DESCENDING);
  iterate_until (sorted, f->window->sources, "the sort by peak");
  wait_frames (f);
  g_assert_cmpfloat (gtk_adjustment_get_value (adj), ==, 0);
  {
    g_autoptr (GObject) first = g_list_model_get_item (rows, 0);
    g_object_get (first, "peak", &peak, NULL);
    g_assert_cmpfloat (peak, ==, brightest);
  }

  /* The marker of the source in the middle of the list, clicked while the
   * pipeline panel shows. */
  activate ("panel", g_variant_new_string ("pipeline"));
  wait_frames (f);
  middle = n / 2;
  {
    g_autoptr (GObject) row = g_list_model_get_item (rows, middle);
    g_object_get (row, "id", &id, NULL);
  }
  g_signal_emit_by_name (f->view, "source-activated", id - 1);
  wait_frames (f);
  g_assert_cmpstr (gtk_stack_get_visible_child_name (f->window->panels), ==, "sources");
  g_assert_cmpuint (gtk_single_selection_get_selected (selection), ==, middle);
  assert_row_in_sight (adj, middle, n);

  /* Sorted again with that row selected: it stays in sight. */
  gtk_column_view_sort_by_column (view, column_titled (view, "id"), GTK_SORT_ASCENDING);
  iterate_until (sorted, f->window->sources, "the sort by id");
  wait_frames (f);
  assert_row_in_sight (adj, gtk_single_selection_get_selected (selection), n);
}

typedef struct {
  gint64 last_us;
  double max_gap_ms;
} GapMeter;
static gboolean
gap_tick (gpointer data)
{
  GapMeter *m = data;
  gint64 now = g_get_monotonic_time ();

  if (m->last_us)
    m->max_gap_ms = MAX (m->max_gap_ms, (now - m->last_us) / 1000.0);
  m->last_us = now;
  return G_SOURCE_CONTINUE;
}
/* Sorting tens of thousands of rows leaves the window responsive: the
 * sort runs in steps on the main loop (incrementally), and nothing keeps
 * it from a 5 ms timeout for SORT_STALL_MS. On gc_like_2048.fits at 1.2σ,
 * 48,544 rows: sorted at once the main loop waited 564 ms; in steps the
 * longest wait was 87-100 ms (the column view rebinding its rows at the
 * end), on the 2-core machine under Xvfb. The limit is some three times
 * that, for a loaded CI machine; a build with sanitizers skips it. */
#define SORT_STALL_MS 300.0
void
test_sort_responsive (Fixture *f)
{
  GtkColumnView *view;
  GListModel *model;
  GapMeter meter = { 0 };
  guint timer;
  gint64 t0;

  if (!open_gc_like (f))
    return;
  activate ("threshold", g_variant_new_double (1.2));
  click (f, "app.run", "'all'");
  wait_idle (f, "run all at 1.2 sigma");
  activate ("panel", g_variant_new_string ("sources"));
  wait_idle (f, "the sources panel");
  /* the panel, once shown, orders its rows on a worker */
  iterate_until (sorted, f->window->sources, "the table's rows");
  wait_frames (f);
  view = GTK_COLUMN_VIEW (find_descendant (GTK_WIDGET (f->window->sources),
                                           GTK_TYPE_COLUMN_VIEW));
  model = G_LIST_MODEL (gtk_column_view_get_model (view));
  g_assert_cmpuint (g_list_model_get_n_items (model), >, 40000);

  timer = g_timeout_add (5, gap_tick, &meter);
  t0 = g_get_monotonic_time ();
  gtk_column_view_sort_by_column (view, column_titled (view, "peak (Jy/beam)"),
                                  GTK_SORT_DESCENDING);
  meter.max_gap_ms = MAX (meter.max_gap_ms, (g_get_monotonic_time () - t0) / 1000.0);
  iterate_until (sorted, f->window->sources, "the sort");
  wait_frames (f);
  g_source_remove (timer);
  g_test_message ("sorted %u rows in %.0f ms, the main loop's longest wait %.0f ms",
                  g_list_model_get_n_items (model),
                  (g_get_monotonic_time () - t0) / 1000.0, meter.max_gap_ms);
  {
    double brightest = -G_MAXDOUBLE, peak;
    g_autoptr (GObject) first = g_list_model_get_item (model, 0);
    for (gint64 i = 0; i < f->window->run->catalogue.n; i++)
      brightest = MAX (brightest, f->window->run->catalogue.peak[i]);
    g_object_get (first, "peak", &peak, NULL);
    g_assert_cmpfloat (peak, ==, brightest);
  }
  if (g_getenv ("SKYSIFT_SANITIZED"))
    g_test_skip ("a build with sanitizers: its timings say nothing of the app's");
  else
    g_assert_cmpfloat (meter.max_gap_ms, <, SORT_STALL_MS);
}

/* app.sort sorts the table as a click on a column's header does, and the
 * state times it (sort_ms, sort_max_gap_ms) and is busy until the rows are
 * in place; an unknown column or order is refused. */
void
test_sort_action (Fixture *f)
{
  GtkColumnView *view;
  GListModel *rows;
  double brightest = -G_MAXDOUBLE, peak;

  open_image (f, &field);
  click (f, "app.run", "'all'");
  wait_idle (f, "run all");
  g_assert_false (sky_window_sort_sources (f->window, "nothing descending"));
  g_assert_false (sky_window_sort_sources (f->window, "peak sideways"));
  activate ("sort", g_variant_new_string ("peak descending"));
  wait_idle (f, "the sort");
  view = GTK_COLUMN_VIEW (find_descendant (GTK_WIDGET (f->window->sources),
                                           GTK_TYPE_COLUMN_VIEW));
  rows = G_LIST_MODEL (gtk_column_view_get_model (view));
  g_assert_cmpuint (g_list_model_get_n_items (rows), ==, 4);
  for (gint64 i = 0; i < f->window->run->catalogue.n; i++)
    brightest = MAX (brightest, f->window->run->catalogue.peak[i]);
  {
    g_autoptr (GObject) first = g_list_model_get_item (rows, 0);
    g_object_get (first, "peak", &peak, NULL);
  }
  g_assert_cmpfloat (peak, ==, brightest);
  g_assert_cmpfloat (state_number ("sort_ms"), >, 0);
  g_assert_cmpfloat (state_number ("sort_max_gap_ms"), >=, 0);
}

/* ------------------------------------------------------- many rows */

/* What the main thread may spend while a table of some 115,000 rows is
 * made, sorted or filtered, from the request until the app is idle and
 * three frames are drawn: its time on a core, TABLE_MAIN_CPU_MS (what the
 * load of the machine does not change much), and its longest wait,
 * TABLE_STALL_MS (for a machine loaded as the 2-core development machine
 * is, shared with other builds). There, under Xvfb, with the rows made,
 * filtered and sorted on a worker and shown at once, the main thread ran
 * 128-220 ms per step and waited at most 55-224 ms as a run's rows were
 * made (the run's own frames included), 33-491 ms sorted by peak, 44-242
 * ms by id, 54-148 ms filtered (load average 2 to 8, the highest beside
 * the whole suite); with GTK's filter and sort models on the main loop (an
 * incremental sort) it ran 355-517, 3009-3786, 2488-2767 and 233-562 ms
 * and waited 294-521, 130-301, 91-116 and 242-283 ms, and the row
 * selected was out of sight after the sort by id. */
#define TABLE_MAIN_CPU_MS 400.0
#define TABLE_STALL_MS 600.0

/* This thread's time on a core, ms (Linux's schedstat: the same however
 * loaded the machine is, where a wait is not); 0 where it cannot be read. */
static double
main_thread_cpu_ms (void)
{
  g_autofree char *path = g_strdup_printf ("/proc/self/task/%d/schedstat", (int) getpid ());
  g_autofree char *text = NULL;

  if (!g_file_get_contents (path, &text, NULL, NULL))
    return 0;
  return g_ascii_strtod (text, NULL) / 1e6;
}

/* The main loop's longest wait, from what's call until the app is idle
 * (the state's busy counts the table's rows on their way) and three
 * frames are drawn: a 5 ms timeout's longest gap, or what's own time;
 * and the main thread's time on a core meanwhile (*cpu_ms). */
static double
metered_until_rows (Fixture *f, void (*what) (Fixture *f, const char *arg), const char *arg,
                    double *cpu_ms)
{
  GapMeter meter = { 0 };
  guint timer = g_timeout_add (5, gap_tick, &meter);
  gint64 t0 = g_get_monotonic_time ();
  double cpu0 = main_thread_cpu_ms ();

  what (f, arg);
  meter.max_gap_ms = MAX (meter.max_gap_ms, (g_get_monotonic_time () - t0) / 1000.0);
  iterate_until (sorted, f->window->sources, "the table's rows");
  wait_idle (f, "the table's rows");
  wait_frames (f);
  g_source_remove (timer);
  *cpu_ms = main_thread_cpu_ms () - cpu0;
  return meter.max_gap_ms;
}

static void
do_run_all (Fixture *f, const char *arg)
{
  click (f, "app.run", "'all'");
}

static void
do_threshold (Fixture *f, const char *arg)
{
  activate ("threshold", g_variant_new_double (g_ascii_strtod (arg, NULL)));
}

static void
do_sort (Fixture *f, const char *arg)
{
  g_assert_true (sky_window_sort_sources (f->window, arg));
}

static void
do_filter (Fixture *f, const char *arg)
{
  activate ("source-filter", g_variant_new_string (arg));
}

static double
row_value (GListModel *rows, guint position, const char *property)
{
  g_autoptr (GObject) row = g_list_model_get_item (rows, position);
  GValue v = G_VALUE_INIT;
  double d;

  g_value_init (&v, G_TYPE_DOUBLE);
  g_object_get_property (row, property, &v);
  d = g_value_get_double (&v);
  g_value_unset (&v);
  return d;
}

/* The table's cells under root, in the widget tree's order. */
static void
collect_cells (GtkWidget *root, GPtrArray *cells)
{
  if (SKY_IS_TABLE_CELL (root))
    g_ptr_array_add (cells, root);
  for (GtkWidget *c = gtk_widget_get_first_child (root); c; c = gtk_widget_get_next_sibling (c))
    collect_cells (c, cells);
}

/* The cells' texts, for looking one up. */
static GHashTable *
cell_texts (GtkWidget *view)
{
  g_autoptr (GPtrArray) cells = g_ptr_array_new ();
  GHashTable *texts = g_hash_table_new (g_str_hash, g_str_equal);

  collect_cells (view, cells);
  for (guint i = 0; i < cells->len; i++)
    g_hash_table_add (texts, (gpointer) sky_table_cell_get_text (cells->pdata[i]));
  return texts;
}

static gint64
row_id (GListModel *rows, guint position)
{
  g_autoptr (GObject) row = g_list_model_get_item (rows, position);
  gint64 id;

  g_object_get (row, "id", &id, NULL);
  return id;
}

/* A table of some 115,000 rows (noise at 1 sigma on 1024 x 1024
 * pixels: no shared images needed) on screen, and the main thread never
 * busy for more than TABLE_MAIN_CPU_MS nor its loop kept for more than
 * TABLE_STALL_MS while a run's rows are made, sorted by peak, sorted back
 * by id with a row selected, and filtered. The rows
 * are in the order asked for, the selected source stays selected and in
 * sight, and the filter lists what it passes. */
void
test_table_many_rows (Fixture *f)
{
  g_autofree float *v = noise (1024, 1024, 20261124);
  Image img = { write_fits ("many.fits", v, 1024, 1024, -1), 1024, 1024 };
  GtkColumnView *view;
  GtkSingleSelection *selection;
  GtkAdjustment *adj;
  GListModel *rows;
  const SkyCatalogue *cat;
  double made_ms, peak_ms, id_ms, moved_ms, filter_ms, cpu[5];
  gint64 n, chosen, passing = 0;
  guint position;

  open_image (f, &img);
  activate ("threshold", g_variant_new_double (1.0));
  g_assert_cmpfloat (state_number ("threshold"), ==, 1.0);
  activate ("panel", g_variant_new_string ("sources"));
  wait_idle (f, "the sources panel");
  made_ms = metered_until_rows (f, do_run_all, NULL, &cpu[0]);
  cat = &f->window->run->catalogue;
  n = cat->n;
  g_assert_cmpint (n, >, 100000);
  view = GTK_COLUMN_VIEW (find_descendant (GTK_WIDGET (f->window->sources),
                                           GTK_TYPE_COLUMN_VIEW));
  selection = GTK_SINGLE_SELECTION (gtk_column_view_get_model (view));
  rows = G_LIST_MODEL (selection);
  adj = gtk_scrolled_window_get_vadjustment (
    GTK_SCROLLED_WINDOW (gtk_widget_get_ancestor (GTK_WIDGET (view), GTK_TYPE_SCROLLED_WINDOW)));
  g_assert_cmpuint (g_list_model_get_n_items (rows), ==, n);

  /* By peak, brightest first: the whole list in order. */
  peak_ms = metered_until_rows (f, do_sort, "peak descending", &cpu[1]);
  g_assert_cmpuint (g_list_model_get_n_items (rows), ==, n);
  for (guint i = 1; i < n; i++)
    if (row_value (rows, i - 1, "peak") < row_value (rows, i, "peak"))
      g_error ("rows %u and %u out of order by peak", i - 1, i);
  g_assert_cmpfloat (gtk_adjustment_get_value (adj), ==, 0);

  /* A row near the middle selected as a click does, then back by id: it
   * stays selected, at its id's place, in sight. */
  position = (guint) n / 2;
  chosen = row_id (rows, position);
  gtk_single_selection_set_selected (selection, position);
  g_assert_cmpfloat (state_number ("selected"), ==, chosen);
  id_ms = metered_until_rows (f, do_sort, "id ascending", &cpu[2]);
  g_assert_cmpuint (gtk_single_selection_get_selected (selection), ==, chosen - 1);
  assert_row_in_sight (adj, (guint) chosen - 1, (guint) n);
  g_assert_cmpfloat (state_number ("selected"), ==, chosen);
  for (guint i = 0; i < n; i += 997)
    g_assert_cmpint (row_id (rows, i), ==, i + 1);

  /* A threshold move with the table on screen: the new run's rows replace
   * the old ones, shown from the top, in the row widgets the view had
   * (GTK 4.8 destroys and remakes those whose row objects go: the main
   * thread's longest part of a move), each showing its new row. */
  {
    g_autoptr (GPtrArray) cells = g_ptr_array_new ();
    g_autoptr (GHashTable) texts = NULL;
    GWeakRef kept[16];
    guint n_kept = 0, alive = 0;

    collect_cells (GTK_WIDGET (view), cells);
    g_assert_cmpuint (cells->len, >=, G_N_ELEMENTS (kept));
    for (guint i = 0; i < G_N_ELEMENTS (kept); i++)
      g_weak_ref_init (&kept[n_kept++], cells->pdata[i * cells->len / G_N_ELEMENTS (kept)]);
    moved_ms = metered_until_rows (f, do_threshold, "1.05", &cpu[4]);
    g_assert_cmpfloat (state_number ("threshold"), ==, 1.05);
    cat = &f->window->run->catalogue;
    g_assert_cmpint (cat->n, <, n);
    n = cat->n;
    g_assert_cmpuint (g_list_model_get_n_items (rows), ==, n);
    g_assert_cmpfloat (gtk_adjustment_get_value (adj), ==, 0);
    for (guint i = 0; i < n_kept; i++)
      {
        g_autoptr (GtkWidget) cell = g_weak_ref_get (&kept[i]);
        alive += cell != NULL && gtk_widget_is_ancestor (cell, GTK_WIDGET (view));
        g_weak_ref_clear (&kept[i]);
      }
    g_test_message ("%u of %u row cells kept through the threshold move", alive, n_kept);
    g_assert_cmpuint (alive, >=, n_kept / 2);
    texts = cell_texts (GTK_WIDGET (view));
    for (guint i = 0; i < 20; i++)
      {
        char peak[64];
        g_snprintf (peak, sizeof peak, "%.4g", row_value (rows, i, "peak"));
        if (!g_hash_table_contains (texts, peak))
          g_error ("row %u's peak %s is not shown after the threshold move", i, peak);
      }
  }

  /* Filtered: the rows that pass, still in id order. */
  for (gint64 i = 0; i < n; i++)
    passing += cat->peak[i] / f->window->run->stats.sigma >= 2;
  g_assert_cmpint (passing, >, 0);
  g_assert_cmpint (passing, <, n);
  filter_ms = metered_until_rows (f, do_filter, "snr=2", &cpu[3]);
  g_assert_cmpuint (g_list_model_get_n_items (rows), ==, passing);
  for (guint i = 1; i < passing; i += 97)
    g_assert_cmpint (row_id (rows, i - 1), <, row_id (rows, i));
  save_widget_picture (GTK_WIDGET (f->window), "table-many-rows.png");

  /* By pixels after peak: a sort asked for by name replaces the last
   * (gtk_column_view_sort_by_column), so ties in area, many, come in the
   * catalogue's order, as GTK's stable sort model gave them. */
  g_assert_true (sky_window_sort_sources (f->window, "peak descending"));
  wait_idle (f, "the sort by peak");
  g_assert_true (sky_window_sort_sources (f->window, "pixels ascending"));
  wait_idle (f, "the sort by pixels");
  for (guint i = 1; i < passing; i++)
    {
      double a = row_value (rows, i - 1, "npix"), b = row_value (rows, i, "npix");
      if (a > b || (a == b && row_id (rows, i - 1) > row_id (rows, i)))
        g_error ("rows %u and %u out of order by pixels, then id", i - 1, i);
    }

  g_test_message ("%" G_GINT64_FORMAT " rows: the main loop's longest wait %.0f ms as the run's "
                  "rows were made, %.0f ms sorted by peak, %.0f ms by id, %.0f ms as a threshold move "
                  "replaced them, %.0f ms filtered (%" G_GINT64_FORMAT " listed); the main thread "
                  "on a core %.0f, %.0f, %.0f, %.0f, %.0f ms", n, made_ms, peak_ms, id_ms, moved_ms,
                  filter_ms, passing, cpu[0], cpu[1], cpu[2], cpu[4], cpu[3]);
  if (g_getenv ("SKYSIFT_SANITIZED"))
    g_test_skip ("a build with sanitizers: its timings say nothing of the app's");
  else
    {
      for (int k = 0; k < 5; k++)
        if (cpu[k] > 0)   /* 0: no schedstat to read */
          g_assert_cmpfloat (cpu[k], <, TABLE_MAIN_CPU_MS);
      g_assert_cmpfloat (made_ms, <, TABLE_STALL_MS);
      g_assert_cmpfloat (peak_ms, <, TABLE_STALL_MS);
      g_assert_cmpfloat (id_ms, <, TABLE_STALL_MS);
      g_assert_cmpfloat (moved_ms, <, TABLE_STALL_MS);
      g_assert_cmpfloat (filter_ms, <, TABLE_STALL_MS);
    }
  g_free (img.path);
}
