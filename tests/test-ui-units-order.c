/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The source table's rows and order (sky-source-order.h), with no display:
 * every listed row passes the filter, the order follows the terms with
 * ties broken by the next term and at last by the catalogue index, and
 * the worker gives what the function gives. */
#include <math.h>

#include "sky-source-order.h"
#include "sky-test-util.h"

void source_order_check (SkyImageData *image);

/* a before or level with b for terms, ties by index: as the table must. */
static int
compare_brute (const SkySourceRows *rows, const SkySortTerm *terms, guint n_terms,
               guint32 a, guint32 b)
{
  for (guint t = 0; t < n_terms; t++)
    {
      double x = sky_source_rows_value (rows, a, terms[t].key);
      double y = sky_source_rows_value (rows, b, terms[t].key);
      if (isnan (x) != isnan (y))
        return isnan (x) ? 1 : -1;          /* unknowns last either way */
      if (!isnan (x) && x != y)
        return (x < y) == !terms[t].descending ? -1 : 1;
    }
  return (a > b) - (a < b);
}

static void
assert_order (const SkySourceRows *rows, const SkySourceFilter *filter,
              const SkySortTerm *terms, guint n_terms)
{
  guint n = 0, expect = 0;
  g_autofree guint32 *order = sky_source_order (rows, filter, terms, n_terms, &n);

  for (gint64 i = 0; i < rows->n; i++)
    expect += filter == NULL || sky_source_filter_passes (filter, rows->run, i);
  g_assert_cmpuint (n, ==, expect);
  for (guint p = 0; p < n; p++)
    {
      g_assert_true (filter == NULL || sky_source_filter_passes (filter, rows->run, order[p]));
      if (p > 0 && compare_brute (rows, terms, n_terms, order[p - 1], order[p]) >= 0)
        g_error ("rows %u and %u (sources %u, %u) out of order", p - 1, p, order[p - 1],
                 order[p]);
    }
}

/* On image, a synthetic field, at 1.5 sigma. */
void
source_order_check (SkyImageData *image)
{
  g_autoptr (SkyRun) run = NULL;
  g_autoptr (SkySourceRows) rows = NULL;
  g_autoptr (GError) error = NULL;
  SkyParams params;
  SkySourceFilter area;

  sky_params_init (&params);
  params.threshold = 1.5;   /* many small sources: ties in area */
  run = sky_pipeline_run (image, &params, SKY_BACKEND_CPU, SKY_STEP_MEASURE, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (run->catalogue.n, >, 500);
  rows = sky_source_rows_new (run, &error);
  g_assert_no_error (error);
  g_assert_cmpint (rows->n, ==, run->catalogue.n);
  for (gint64 i = 0; i < rows->n; i += 17)
    {
      g_assert_cmpfloat (sky_source_rows_value (rows, i, SKY_SOURCE_KEY_ID), ==, i + 1);
      g_assert_cmpfloat (sky_source_rows_value (rows, i, SKY_SOURCE_KEY_PEAK), ==,
                         run->catalogue.peak[i]);
      g_assert_cmpfloat (sky_source_rows_value (rows, i, SKY_SOURCE_KEY_NPIX), ==,
                         (double) run->catalogue.npix[i]);
    }

  /* No terms: catalogue order; one, either way; ties in area broken by
   * peak, then by index; local_rms the same for all: index order. */
  assert_order (rows, NULL, NULL, 0);
  assert_order (rows, NULL, (SkySortTerm[]) { { SKY_SOURCE_KEY_PEAK, TRUE } }, 1);
  assert_order (rows, NULL, (SkySortTerm[]) { { SKY_SOURCE_KEY_SUM, FALSE } }, 1);
  assert_order (rows, NULL, (SkySortTerm[]) { { SKY_SOURCE_KEY_NPIX, TRUE },
                                              { SKY_SOURCE_KEY_PEAK, FALSE } }, 2);
  assert_order (rows, NULL, (SkySortTerm[]) { { SKY_SOURCE_KEY_NPIX, FALSE } }, 1);
  assert_order (rows, NULL, (SkySortTerm[]) { { SKY_SOURCE_KEY_INT_FLUX, TRUE } }, 1);
  assert_order (rows, NULL, (SkySortTerm[]) { { SKY_SOURCE_KEY_LOCAL_RMS, TRUE } }, 1);

  /* A filter keeps those it passes, sorted alike. */
  sky_source_filter_init (&area);
  area.min_area = 4;
  assert_order (rows, &area, (SkySortTerm[]) { { SKY_SOURCE_KEY_X, TRUE } }, 1);

  /* The names the .ui gives the columns' sorters. */
  g_assert_cmpint (sky_source_key_from_name ("int-flux"), ==, SKY_SOURCE_KEY_INT_FLUX);
  g_assert_cmpint (sky_source_key_from_name ("local-rms"), ==, SKY_SOURCE_KEY_LOCAL_RMS);
  g_assert_cmpint (sky_source_key_from_name ("brightness"), ==, -1);

  /* None before measure. */
  {
    g_autoptr (SkyRun) clip = sky_pipeline_run (image, &params, SKY_BACKEND_CPU, SKY_STEP_CLIP,
                                                NULL, NULL, &error);
    g_autoptr (SkySourceRows) none = sky_source_rows_new (clip, &error);
    g_assert_no_error (error);
    g_assert_cmpint (none->n, ==, 0);
    g_assert_null (none->run);
  }
}
