/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Cancelling: a cancelled re-run puts the parameters back to the results
 * shown; a new image drops what was queued. */
#include "test-ui-gtk.h"

/* Escape: the window's cancel action, as the key binding activates it. */
static void
cancel (Fixture *f)
{
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (f->window), "win.cancel", NULL));
}

double
action_threshold (void)
{
  g_autoptr (GVariant) state = g_action_group_get_action_state (G_ACTION_GROUP (app),
                                                                "threshold");
  return g_variant_get_double (state);
}

/* Every place that shows or reports a parameter agrees with the run whose
 * results are shown: the controls, the window's parameters (what the next
 * run takes), the state, app.threshold's state and the statistics' line. */
static void
assert_params_are_shown_run (Fixture *f)
{
  const SkyRun *run = f->window->run;
  const SkyParams *p = &f->window->params;
  g_autofree char *sigma = NULL;

  g_assert_nonnull (run);
  g_assert_cmpfloat (p->threshold, ==, run->params.threshold);
  g_assert_cmpfloat (p->clip_kappa, ==, run->params.clip_kappa);
  g_assert_cmpint (p->connectivity, ==, run->params.connectivity);
  g_assert_cmpint (p->relative, ==, run->params.relative);
  g_assert_cmpfloat (gtk_adjustment_get_value (f->window->threshold_adjustment), ==,
                     run->params.threshold);
  g_assert_cmpfloat (gtk_adjustment_get_value (f->window->kappa_adjustment), ==,
                     run->params.clip_kappa);
  g_assert_cmpuint (gtk_drop_down_get_selected (f->window->connectivity_dropdown), ==,
                    run->params.connectivity == 8 ? 1 : 0);
  g_assert_cmpint (gtk_check_button_get_active (f->window->relative_check), ==,
                   run->params.relative);
  g_assert_cmpfloat (state_number ("threshold"), ==, run->params.threshold);
  g_assert_cmpfloat (action_threshold (), ==, run->params.threshold);
  sigma = g_strdup_printf ("(%gσ)", run->params.threshold);
  if (strstr (gtk_label_get_text (f->window->stats_label), sigma) == NULL)
    g_error ("the statistics do not say %s: %s", sigma,
             gtk_label_get_text (f->window->stats_label));
}

void
assert_status_starts (Fixture *f, const char *prefix)
{
  const char *status = gtk_label_get_text (f->window->status_label);
  if (!g_str_has_prefix (status, prefix))
    g_error ("the status line does not start with \"%s\": %s", prefix, status);
}

static int
count_lines (const char *path)
{
  g_autofree char *text = NULL;
  int n = 0;

  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  for (const char *c = text; *c; c++)
    n += *c == '\n';
  return n;
}

/* The defect: a threshold re-run cancelled left the slider, the state and
 * app.threshold at the new value over the old results, and an export then
 * wrote the old catalogue. Cancelled as it starts (the rerun starts within
 * app.threshold when nothing else is queued, and a GTask whose cancellable
 * is cancelled before its callback reports the cancel whenever the worker
 * got to), so the test does not depend on how fast the machine is. The
 * controls go back to the results shown, the status line says so, the
 * export queued behind is dropped as the docs say, a cancel with nothing
 * under way changes nothing, and the slider still re-runs afterwards. */
void
test_cancel_threshold (Fixture *f)
{
  g_autofree char *dropped = sky_test_tmp_path ("dropped.csv");
  g_autofree char *csv = sky_test_tmp_path ("after-cancel.csv");

  g_remove (dropped);
  g_remove (csv);
  open_image (f, &field);
  click (f, "app.run", "'all'");
  wait_idle (f, "run all");
  g_assert_cmpfloat (state_number ("nsources"), ==, N_FIELD_SOURCES);

  activate ("threshold", g_variant_new_double (20));
  g_assert_nonnull (f->window->current);
  g_assert_cmpint (f->window->current->kind, ==, SKY_JOB_RERUN);
  activate ("export-catalog", g_variant_new_string (dropped));
  assert_state ("queued", "1");
  cancel (f);
  wait_idle (f, "the cancelled threshold re-run");

  assert_params_are_shown_run (f);
  g_assert_cmpfloat (state_number ("threshold"), ==, 5);
  g_assert_cmpfloat (state_number ("nsources"), ==, N_FIELD_SOURCES);
  assert_state ("shown_step", "\"measure\"");
  assert_status_starts (f, "Cancelled; back to the results shown: threshold 5σ");
  /* Dropped, not run late and not failed. */
  g_assert_false (g_file_test (dropped, G_FILE_TEST_EXISTS));
  assert_state ("catalogue", "\"\"");
  assert_state ("last_error", "\"\"");

  /* The export writes the sources shown, at the threshold shown: a names
   * line and one line per source. */
  activate ("export-catalog", g_variant_new_string (csv));
  wait_idle (f, "the export");
  g_assert_cmpint (count_lines (csv), ==, 1 + N_FIELD_SOURCES);
  g_assert_cmpfloat (f->window->run->params.threshold, ==, state_number ("threshold"));

  /* A cancel once the job is done and shown changes nothing. */
  {
    g_autofree char *before = state_json ();
    g_autofree char *status = g_strdup (gtk_label_get_text (f->window->status_label));
    g_autofree char *after = NULL;
    cancel (f);
    wait_idle (f, "a cancel with nothing under way");
    after = state_json ();
    g_assert_cmpstr (after, ==, before);
    g_assert_cmpstr (gtk_label_get_text (f->window->status_label), ==, status);
  }

  /* Putting the controls back queued nothing, and left the slider live. */
  activate ("threshold", g_variant_new_double (20));
  assert_state ("busy", "true");
  wait_idle (f, "threshold 20");
  g_assert_cmpfloat (state_number ("nsources"), ==, N_ABOVE_20_SIGMA);
  assert_params_are_shown_run (f);

  /* Cancelling an export, as a script does (app.cancel): no dialog for it,
   * the status line says so. */
  activate ("export-catalog", g_variant_new_string (dropped));
  g_assert_cmpint (f->window->current->kind, ==, SKY_JOB_EXPORT_CSV);
  activate ("cancel", NULL);
  wait_idle (f, "the cancelled export");
  assert_status_starts (f, "Export cancelled");
  assert_state ("last_error", "\"\"");
  {
    g_autofree char *first = g_strdup_printf ("\"%s\"", csv);   /* the first export's */
    assert_state ("catalogue", first);
  }
  assert_params_are_shown_run (f);
  g_remove (dropped);
  g_remove (csv);
}

/* The other parameters that re-run: clip κ, connectivity and the relative
 * threshold, one at a time and all at once (one rerun takes them all), go
 * back to the results shown when their re-run is cancelled. */
void
test_cancel_parameters (Fixture *f)
{
  SkyWindow *w;

  open_image (f, &field);
  w = f->window;
  click (f, "app.run", "'all'");
  wait_idle (f, "run all");
  assert_params_are_shown_run (f);

  gtk_adjustment_set_value (w->kappa_adjustment, 2.5);
  g_assert_cmpfloat (w->params.clip_kappa, ==, 2.5);
  g_assert_nonnull (w->current);
  cancel (f);
  wait_idle (f, "the cancelled κ re-run");
  g_assert_cmpfloat (w->params.clip_kappa, ==, 3);
  assert_params_are_shown_run (f);
  assert_status_starts (f, "Cancelled; back to the results shown: clip κ 3");

  gtk_drop_down_set_selected (w->connectivity_dropdown, 1);
  g_assert_cmpint (w->params.connectivity, ==, 8);
  g_assert_nonnull (w->current);
  cancel (f);
  wait_idle (f, "the cancelled connectivity re-run");
  g_assert_cmpint (w->params.connectivity, ==, 4);
  assert_params_are_shown_run (f);
  assert_status_starts (f, "Cancelled; back to the results shown: 4-connected");

  gtk_check_button_set_active (w->relative_check, TRUE);
  g_assert_true (w->params.relative);
  g_assert_nonnull (w->current);
  cancel (f);
  wait_idle (f, "the cancelled relative re-run");
  g_assert_false (w->params.relative);
  assert_params_are_shown_run (f);
  assert_status_starts (f, "Cancelled; back to the results shown: absolute threshold");

  gtk_adjustment_set_value (w->threshold_adjustment, 12);
  gtk_adjustment_set_value (w->kappa_adjustment, 4);
  gtk_drop_down_set_selected (w->connectivity_dropdown, 1);
  gtk_check_button_set_active (w->relative_check, TRUE);
  cancel (f);
  wait_idle (f, "the cancelled re-run of four moves");
  assert_params_are_shown_run (f);
  assert_status_starts (f, "Cancelled; back to the results shown: threshold 5σ, clip κ 3, "
                           "4-connected, absolute threshold");
  g_assert_cmpfloat (state_number ("nsources"), ==, N_FIELD_SOURCES);
}

/* Cancel on a new image. Opening one, with a threshold move and Run All
 * queued behind: the old image and its results stay, and so do their
 * parameters. Run All on an image with no results yet: nothing is shown,
 * and the controls keep what the user set, for the next run. */
void
test_cancel_new_image (Fixture *f)
{
  open_image (f, &field);
  click (f, "app.run", "'all'");
  wait_idle (f, "run all");

  activate ("open", g_variant_new_string (orient_west.path));
  g_assert_cmpint (f->window->current->kind, ==, SKY_JOB_OPEN);
  activate ("threshold", g_variant_new_double (20));
  click (f, "app.run", "'all'");
  assert_state ("queued", "2");
  cancel (f);
  wait_idle (f, "the cancelled open");
  g_assert_true (g_str_has_suffix (f->window->image_path, "field.fits"));
  assert_params_are_shown_run (f);
  g_assert_cmpfloat (state_number ("threshold"), ==, 5);
  g_assert_cmpfloat (state_number ("nsources"), ==, N_FIELD_SOURCES);
  assert_status_starts (f, "Opening cancelled; back to the results shown: threshold 5σ");

  open_image (f, &orient_west);
  activate ("threshold", g_variant_new_double (20));
  assert_state ("busy", "false");   /* no results to re-run */
  click (f, "app.run", "'all'");
  g_assert_cmpint (f->window->current->kind, ==, SKY_JOB_RUN);
  cancel (f);
  wait_idle (f, "the cancelled run all");
  g_assert_null (f->window->run);
  assert_state ("shown_step", "\"none\"");
  assert_state ("done", "\"none\"");
  g_assert_cmpfloat (state_number ("nsources"), ==, -1);
  g_assert_cmpfloat (state_number ("threshold"), ==, 20);
  g_assert_cmpfloat (action_threshold (), ==, 20);
  g_assert_cmpfloat (gtk_adjustment_get_value (f->window->threshold_adjustment), ==, 20);
  assert_status_starts (f, "Cancelled");

  click (f, "app.run", "'all'");
  wait_idle (f, "run all at 20σ");
  assert_state ("done", "\"measure\"");
  assert_params_are_shown_run (f);
  g_assert_cmpfloat (f->window->run->params.threshold, ==, 20);
}
