/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The source table's rows and their order (sky-source-order.h). */
#include "sky-source-order.h"
#include "sky-source.h"
#include "sky-ui-error.h"
#include "sky-ui-task.h"

#include <math.h>
#include <string.h>

/* As SkySource's properties name them (sky-source.c), in key order. */
static const char *const key_names[SKY_SOURCE_N_KEYS] = {
  "id", "x", "y", "peak", "sum", "npix", "lng", "lat", "int-flux", "snr", "local-rms",
};

int
sky_source_key_from_name (const char *name)
{
  for (int k = 0; k < SKY_SOURCE_N_KEYS; k++)
    if (g_strcmp0 (name, key_names[k]) == 0)
      return k;
  return -1;
}

/* ------------------------------------------------------------------ rows */

static void
rows_clear (SkySourceRows *rows)
{
  for (gint64 i = 0; rows->sources && i < rows->n; i++)
    g_clear_object (&rows->sources[i]);
  g_free (rows->sources);
  sky_export_clear (&rows->export);
  g_clear_pointer (&rows->run, sky_run_unref);
}

SKY_DEFINE_SHARED_TYPE (SkySourceRows, sky_source_rows, rows_clear)

SkySourceRows *
sky_source_rows_new (SkyRun *run, GError **error)
{
  SkySourceRows *rows = g_atomic_rc_box_new0 (SkySourceRows);
  SkyRunInfo info = { 0 };
  int ret;

  if (run == NULL || !sky_run_has (run, SKY_STEP_MEASURE))
    return rows;
  rows->run = sky_run_ref (run);
  rows->n = run->catalogue.n;
  /* The export borrows the result: it lives here, beside it. */
  rows->result.nx = run->image->image.nx;
  rows->result.ny = run->image->image.ny;
  rows->result.stats = run->stats;
  rows->result.threshold_value = run->threshold_value;
  rows->result.nsources = run->nsources;
  rows->result.catalogue = run->catalogue;
  info.image = &run->image->image;
  info.params = &run->params;
  info.backend = sky_backend_name (run->backend);
  ret = sky_export_init (&rows->export, &info, &rows->result);
  if (ret != SKY_OK)
    {
      g_propagate_error (error, sky_ui_error_new_from_status (ret));
      sky_source_rows_unref (rows);
      return NULL;
    }
  rows->sources = g_new (SkySource *, MAX (rows->n, 1));
  for (gint64 i = 0; i < rows->n; i++)
    rows->sources[i] = sky_source_new (rows, i);
  return rows;
}

static gpointer
unref_thread (gpointer rows)
{
  sky_source_rows_unref (rows);
  return NULL;
}

void
sky_source_rows_unref_later (SkySourceRows *rows)
{
  if (rows == NULL)
    return;
  if (rows->n < 1000)
    sky_source_rows_unref (rows);
  else
    g_thread_unref (g_thread_new ("sky-rows-free", unref_thread, rows));
}

double
sky_source_rows_value (const SkySourceRows *rows, gint64 i, SkySourceKey key)
{
  const SkyCatalogue *cat = &rows->run->catalogue;
  const SkyExport *ex = &rows->export;
  double sigma = rows->run->stats.sigma > 0 ? rows->run->stats.sigma : NAN;

  switch (key)
    {
    case SKY_SOURCE_KEY_ID:
      return (double) (i + 1);
    case SKY_SOURCE_KEY_X:
      return cat->x[i];
    case SKY_SOURCE_KEY_Y:
      return cat->y[i];
    case SKY_SOURCE_KEY_PEAK:
      return cat->peak[i];
    case SKY_SOURCE_KEY_SUM:
      return cat->sum[i];
    case SKY_SOURCE_KEY_NPIX:
      return (double) cat->npix[i];
    case SKY_SOURCE_KEY_LNG:
      return ex->lng ? ex->lng[i] : NAN;
    case SKY_SOURCE_KEY_LAT:
      return ex->lat ? ex->lat[i] : NAN;
    case SKY_SOURCE_KEY_INT_FLUX:
      return ex->int_flux ? ex->int_flux[i] : NAN;
    case SKY_SOURCE_KEY_SNR:
      return cat->peak[i] / sigma;
    case SKY_SOURCE_KEY_LOCAL_RMS:
      return sigma;
    default:
      g_return_val_if_reached (NAN);
    }
}

/* ------------------------------------------------------------------ sort */

typedef struct {
  double key;                /* the first term's value */
  guint32 index;
} SortRow;

typedef struct {
  const SkySortTerm *terms;
  guint n_terms;
  double *const *values;     /* per term, per catalogue index */
} SortSpec;

/* a before b (< 0) in the term's direction, NaN last either way. */
static inline int
compare_values (double a, double b, gboolean descending)
{
  gboolean na = isnan (a), nb = isnan (b);

  if (na || nb)
    return na - nb;
  if (a == b)
    return 0;
  return (a < b) == !descending ? -1 : 1;
}

static int
compare_rows (gconstpointer pa, gconstpointer pb, gpointer data)
{
  const SortRow *a = pa, *b = pb;
  const SortSpec *spec = data;
  int c = compare_values (a->key, b->key, spec->terms[0].descending);

  for (guint t = 1; c == 0 && t < spec->n_terms; t++)
    c = compare_values (spec->values[t][a->index], spec->values[t][b->index],
                        spec->terms[t].descending);
  if (c == 0)
    c = (a->index > b->index) - (a->index < b->index);
  return c;
}

guint32 *
sky_source_order (const SkySourceRows *rows, const SkySourceFilter *filter,
                  const SkySortTerm *terms, guint n_terms, guint *n_listed)
{
  g_autofree SortRow *sorted = NULL;
  double *values[SKY_SORT_MAX_TERMS] = { NULL };
  guint32 *order = g_new (guint32, MAX (rows->n, 1));
  gboolean all = filter == NULL || sky_source_filter_is_empty (filter);
  guint n = 0;

  g_return_val_if_fail (rows->n <= G_MAXUINT32, NULL);
  for (gint64 i = 0; i < rows->n; i++)
    if (all || sky_source_filter_passes (filter, rows->run, i))
      order[n++] = (guint32) i;
  *n_listed = n;
  n_terms = MIN (n_terms, SKY_SORT_MAX_TERMS);
  if (n_terms == 0 || n < 2)
    return order;

  sorted = g_new (SortRow, n);
  for (guint r = 0; r < n; r++)
    sorted[r] = (SortRow) { sky_source_rows_value (rows, order[r], terms[0].key), order[r] };
  /* The later terms break ties only: looked up by catalogue index. */
  for (guint t = 1; t < n_terms; t++)
    {
      values[t] = g_new (double, rows->n);
      for (guint r = 0; r < n; r++)
        values[t][order[r]] = sky_source_rows_value (rows, order[r], terms[t].key);
    }
  g_qsort_with_data (sorted, (gint) n, sizeof *sorted, compare_rows,
                     &(SortSpec) { terms, n_terms, values });
  for (guint r = 0; r < n; r++)
    order[r] = sorted[r].index;
  for (guint t = 1; t < n_terms; t++)
    g_free (values[t]);
  return order;
}

/* ---------------------------------------------------------------- worker */

typedef struct {
  SkySourceRows *rows;       /* or NULL: made from run */
  SkyRun *run;
  SkySourceFilter filter;
  SkySortTerm terms[SKY_SORT_MAX_TERMS];
  guint n_terms;
} OrderInput;

static void
order_input_free (gpointer data)
{
  OrderInput *in = data;
  g_clear_pointer (&in->rows, sky_source_rows_unref);
  g_clear_pointer (&in->run, sky_run_unref);
  g_free (in);
}

void
sky_source_order_free (SkySourceOrder *order)
{
  if (order == NULL)
    return;
  g_clear_pointer (&order->rows, sky_source_rows_unref_later);
  g_free (order->order);
  g_free (order);
}

static void
order_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  OrderInput *in = data;
  g_autoptr (SkySourceOrder) out = g_new0 (SkySourceOrder, 1);
  gint64 t0 = g_get_monotonic_time ();
  GError *error = NULL;

  if (g_task_return_error_if_cancelled (task))
    return;
  out->rows = in->rows ? sky_source_rows_ref (in->rows) : sky_source_rows_new (in->run, &error);
  if (out->rows == NULL)
    {
      g_task_return_error (task, error);
      return;
    }
  if (g_task_return_error_if_cancelled (task))
    return;
  out->order = sky_source_order (out->rows, &in->filter, in->terms, in->n_terms, &out->n_listed);
  out->worker_ms = (g_get_monotonic_time () - t0) / 1000.0;
  g_task_return_pointer (task, g_steal_pointer (&out), (GDestroyNotify) sky_source_order_free);
}

void
sky_source_order_async (SkySourceRows *rows, SkyRun *run, const SkySourceFilter *filter,
                        const SkySortTerm *terms, guint n_terms, GCancellable *cancellable,
                        GAsyncReadyCallback callback, gpointer user_data)
{
  OrderInput *in = g_new0 (OrderInput, 1);

  in->rows = rows ? sky_source_rows_ref (rows) : NULL;
  in->run = run && rows == NULL ? sky_run_ref (run) : NULL;
  if (filter)
    in->filter = *filter;
  else
    sky_source_filter_init (&in->filter);
  in->n_terms = MIN (n_terms, SKY_SORT_MAX_TERMS);
  if (in->n_terms > 0)
    memcpy (in->terms, terms, in->n_terms * sizeof *terms);
  sky_ui_task_run (sky_source_order_async, in, order_input_free, order_thread, cancellable,
                   callback, user_data);
}

SkySourceOrder *
sky_source_order_finish (GAsyncResult *result, GError **error)
{
  return sky_ui_task_finish_pointer (result, sky_source_order_async, error);
}
