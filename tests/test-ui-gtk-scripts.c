/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Scripts: the error dialog a script's mistake brings, a script's edge
 * cases and parameters. */
#include "test-ui-gtk.h"

static gboolean
file_written (gpointer path)
{
  return g_file_test (path, G_FILE_TEST_IS_REGULAR) && app_idle (NULL);
}
static char *
recent_label (Fixture *f, int i)
{
  char *label = NULL;

  if (i >= g_menu_model_get_n_items (G_MENU_MODEL (f->window->recent_menu)))
    return NULL;
  g_menu_model_get_item_attribute (G_MENU_MODEL (f->window->recent_menu), i,
                                   G_MENU_ATTRIBUTE_LABEL, "s", &label);
  return label;
}
typedef struct {
  Fixture *f;
  const char *first, *second;
} RecentOrder;
static gboolean
recent_in_order (gpointer data)
{
  RecentOrder *want = data;
  g_autofree char *first = recent_label (want->f, 0);
  g_autofree char *second = recent_label (want->f, 1);
  return g_strcmp0 (first, want->first) == 0 && g_strcmp0 (second, want->second) == 0;
}
/* What a script or a user can do at the edges: a screenshot of a window
 * with no image, a zoom that is not a number, the relative threshold's
 * text, the recent files in order of use, and the lab closing with the
 * main window. */
void
test_script_edges (Fixture *f)
{
  g_autofree char *not_fits = sky_test_tmp_path ("not-fits.fits");
  g_autofree char *shot = sky_test_tmp_path ("no-image-shot.png");
  GtkWindow *lab = NULL;
  gpointer weak_lab, weak_window;
  const char *stats;
  double zoom;

  /* A failed open leaves a window with no image; its screenshot is taken
   * all the same, and the queue goes on. */
  g_assert_true (g_file_set_contents (not_fits, "SIMPLE  = nonsense\n", -1, NULL));
  g_remove (shot);
  activate ("open", g_variant_new_string (not_fits));
  for (GList *l = gtk_application_get_windows (GTK_APPLICATION (app)); l; l = l->next)
    if (SKY_IS_WINDOW (l->data))
      f->window = l->data;
  g_assert_nonnull (f->window);
  f->view = f->window->view;
  iterate_until (app_idle, NULL, "the bad file refused");
  g_assert_false (sky_window_has_image (f->window));
  activate ("screenshot", g_variant_new_string (shot));
  iterate_until (file_written, shot, "a screenshot of the window with no image");

  /* Opened in the order field, no_wcs, field: the menu lists field first,
   * its names with their underscores (doubled: "_" marks a mnemonic). */
  open_image (f, &field);
  open_image (f, &orient_nowcs);
  open_image (f, &field);
  {
    RecentOrder want = { f, "field.fits", "no__wcs.fits" };
    iterate_until (recent_in_order, &want, "the recent files in order of use");
  }

  /* NaN is refused with a message and leaves the zoom as it was. */
  zoom = state_number ("zoom");
  activate ("zoom", g_variant_new_double (NAN));
  assert_state ("last_error", "\"That is not a zoom");
  g_assert_cmpfloat (state_number ("zoom"), ==, zoom);

  /* Relative mode: the level is median + 5 sigma, said once. */
  gtk_check_button_set_active (f->window->relative_check, TRUE);
  click (f, "app.run", "'all'");
  wait_idle (f, "run all, relative");
  assert_state ("relative", "true");
  stats = gtk_label_get_text (f->window->stats_label);
  g_test_message ("%s", stats);
  {
    g_autofree char *want = g_strdup_printf ("Threshold: pixel > median + 5σ = %.6g ",
                                             f->window->run->stats.median
                                             + 5 * f->window->run->stats.sigma);
    g_assert_nonnull (strstr (stats, want));
  }

  /* The lab goes with the main window. */
  activate ("convolution-demo", NULL);
  for (GList *l = gtk_application_get_windows (GTK_APPLICATION (app)); l; l = l->next)
    if (SKY_IS_CONVOLUTION_LAB (l->data))
      lab = l->data;
  g_assert_nonnull (lab);
  weak_lab = lab;
  weak_window = f->window;
  g_object_add_weak_pointer (G_OBJECT (lab), &weak_lab);
  g_object_add_weak_pointer (G_OBJECT (f->window), &weak_window);
  gtk_window_destroy (GTK_WINDOW (f->window));
  f->window = NULL;
  iterate_until (pointer_cleared, &weak_lab, "the lab to close with the main window");
  iterate_until (pointer_cleared, &weak_window, "the main window to be finalized");
}

/* The error dialogs shown, with the last one's title and texts. */
static int
error_dialogs (GtkWindow **last)
{
  GListModel *toplevels = gtk_window_get_toplevels ();   /* GTK's own */
  int n = 0;

  for (guint i = 0; i < g_list_model_get_n_items (toplevels); i++)
    {
      g_autoptr (GtkWindow) w = g_list_model_get_item (toplevels, i);
      if (GTK_IS_MESSAGE_DIALOG (w) && gtk_widget_get_visible (GTK_WIDGET (w)))
        {
          n++;
          *last = w;
        }
    }
  return n;
}

/* Failed opens from a script, one after the other, show one titled,
 * non-modal dialog with the latest error and the count, not a stack of
 * modal, untitled ones. */
void
test_error_dialog (Fixture *f)
{
  g_autofree char *bad1 = sky_test_tmp_path ("bad-one.fits");
  g_autofree char *bad2 = sky_test_tmp_path ("bad-two.fits");
  GtkWindow *dialog = NULL;
  g_autofree char *secondary = NULL;
  g_autofree char *text = NULL;

  open_image (f, &field);
  g_assert_true (g_file_set_contents (bad1, "SIMPLE  = nonsense\n", -1, NULL));
  g_assert_true (g_file_set_contents (bad2, "not a FITS file at all\n", -1, NULL));
  activate ("open", g_variant_new_string (bad1));
  activate ("open", g_variant_new_string (bad2));
  wait_idle (f, "the two failed opens");
  g_assert_cmpint (error_dialogs (&dialog), ==, 1);
  g_assert_false (gtk_window_get_modal (dialog));
  g_assert_true (g_str_has_prefix (gtk_window_get_title (dialog), "skysift: Could not open"));
  g_object_get (dialog, "text", &text, "secondary-text", &secondary, NULL);
  g_test_message ("%s: %s / %s", gtk_window_get_title (dialog), text, secondary);
  g_assert_nonnull (strstr (secondary, "bad-two.fits"));
  g_assert_nonnull (strstr (secondary, "(The latest of 2 errors.)"));

  /* Closed, the next error opens a dialog of its own, counting anew. */
  gtk_dialog_response (GTK_DIALOG (dialog), GTK_RESPONSE_CLOSE);
  g_assert_cmpint (error_dialogs (&dialog), ==, 0);
  activate ("open", g_variant_new_string (bad1));
  wait_idle (f, "a third failed open");
  g_assert_cmpint (error_dialogs (&dialog), ==, 1);
  g_clear_pointer (&secondary, g_free);
  g_object_get (dialog, "secondary-text", &secondary, NULL);
  g_assert_null (strstr (secondary, "The latest of"));
  g_assert_nonnull (strstr (secondary, "bad-one.fits"));
}

static GVariant *
action_state_of (const char *name)
{
  return g_action_group_get_action_state (G_ACTION_GROUP (app), name);
}

/* The parameters, the plane and the pan as actions, for scripts over
 * D-Bus, with their states; out-of-range values refused with a message;
 * the state says which source is selected. */
void
test_script_parameters (Fixture *f)
{
  Image cube = { write_cube ("cube-actions.fits", 40, 30, 3), 40, 30 };
  g_autoptr (GVariant) kappa = NULL, connectivity = NULL, relative = NULL, plane = NULL;

  open_image (f, &field);
  click (f, "app.run", "'all'");
  wait_idle (f, "run all");

  activate ("kappa", g_variant_new_double (2.5));
  wait_idle (f, "kappa 2.5");
  g_assert_cmpfloat (state_number ("clip_kappa"), ==, 2.5);
  g_assert_cmpfloat (f->window->run->params.clip_kappa, ==, 2.5);
  kappa = action_state_of ("kappa");
  g_assert_cmpfloat (g_variant_get_double (kappa), ==, 2.5);
  activate ("kappa", g_variant_new_double (1));
  assert_state ("last_error", "\"That is not a clip κ: Clip κ is 2 to 10, not 1");
  g_assert_cmpfloat (state_number ("clip_kappa"), ==, 2.5);

  activate ("connectivity", g_variant_new_int32 (8));
  wait_idle (f, "8-connected");
  g_assert_cmpfloat (state_number ("connectivity"), ==, 8);
  g_assert_cmpint (f->window->run->params.connectivity, ==, 8);
  connectivity = action_state_of ("connectivity");
  g_assert_cmpint (g_variant_get_int32 (connectivity), ==, 8);
  activate ("connectivity", g_variant_new_int32 (6));
  assert_state ("last_error", "\"That is not a connectivity");
  g_assert_cmpfloat (state_number ("connectivity"), ==, 8);

  activate ("relative", g_variant_new_boolean (TRUE));
  wait_idle (f, "relative");
  assert_state ("relative", "true");
  g_assert_true (f->window->run->params.relative);
  relative = action_state_of ("relative");
  g_assert_true (g_variant_get_boolean (relative));

  /* The selected source, by label number, 0 for none. */
  assert_state ("selected", "0");
  activate ("select-source", g_variant_new_int64 (2));
  assert_state ("selected", "2");
  activate ("select-source", g_variant_new_int64 (0));
  assert_state ("selected", "0");

  /* Pan to FITS pixel (41, 61), counted from 1: the centre of index 40, 60. */
  activate ("zoom", g_variant_new_double (4));
  activate ("pan", g_variant_new ("(dd)", 41.0, 61.0));
  wait_idle (f, "pan");
  g_assert_cmpfloat (f->view->cx, ==, 40.5);
  g_assert_cmpfloat (f->view->cy, ==, 60.5);
  g_assert_cmpfloat (state_number ("zoom"), ==, 4);

  open_image (f, &cube);
  activate ("plane", g_variant_new_int64 (2));
  wait_idle (f, "plane 2");
  g_assert_cmpfloat (state_number ("plane"), ==, 2);
  plane = action_state_of ("plane");
  g_assert_cmpint (g_variant_get_int64 (plane), ==, 2);
  activate ("plane", g_variant_new_int64 (3));
  assert_state ("last_error", "\"There is no such plane: cube-actions.fits has planes 0 to 2, "
                              "not 3");
  g_assert_cmpfloat (state_number ("plane"), ==, 2);
  g_free (cube.path);
}
