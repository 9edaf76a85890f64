/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The dialogs: opening and exporting through the file dialog, the export
 * folder, the about dialog. */
#include "test-ui-gtk.h"

/* The file dialog a person sees: without a portal, GtkFileChooserNative
 * shows a GtkFileChooserDialog, a toplevel of its own. */
static gboolean
find_file_dialog (gpointer data)
{
  GListModel *toplevels = gtk_window_get_toplevels ();

  for (guint i = 0; i < g_list_model_get_n_items (toplevels); i++)
    {
      g_autoptr (GtkWindow) w = g_list_model_get_item (toplevels, i);
      if (GTK_IS_FILE_CHOOSER_DIALOG (w) && gtk_widget_get_visible (GTK_WIDGET (w)))
        {
          *(GtkWindow **) data = w;
          return TRUE;
        }
    }
  return FALSE;
}

static gboolean
file_dialog_gone (gpointer data)
{
  GtkWindow *w = NULL;
  return !find_file_dialog (&w);
}

G_GNUC_BEGIN_IGNORE_DEPRECATIONS
typedef struct {
  GtkFileChooser *chooser;
  const char *want;     /* the path the dialog should give */
} ChooserWait;

static gboolean
chooser_gives (gpointer data)
{
  ChooserWait *w = data;
  g_autoptr (GFile) file = gtk_file_chooser_get_file (w->chooser);
  g_autofree char *path = file != NULL ? g_file_get_path (file) : NULL;
  return g_strcmp0 (path, w->want) == 0;
}
G_GNUC_END_IGNORE_DEPRECATIONS

static gboolean
widget_shown (gpointer data)
{
  return gtk_widget_get_mapped (data) && gtk_widget_get_width (data) > 0;
}

/* Picks option in the dialog's choice drop-down, as a click on it does
 * (the drop-down keeps its option ids as "options"). */
static gboolean
pick_in (GtkWidget *root, const char *option)
{
  for (GtkWidget *w = gtk_widget_get_first_child (root); w; w = gtk_widget_get_next_sibling (w))
    {
      const char *const *options = g_object_get_data (G_OBJECT (w), "options");
      if (GTK_IS_DROP_DOWN (w) && options != NULL && g_strv_contains (options, option))
        {
          for (guint i = 0; options[i]; i++)
            if (g_str_equal (options[i], option))
              gtk_drop_down_set_selected (GTK_DROP_DOWN (w), i);
          return TRUE;
        }
      if (pick_in (w, option))
        return TRUE;
    }
  return FALSE;
}

static void
pick_choice (GtkWidget *dialog, const char *option)
{
  const char *format, *picture;

  if (!pick_in (dialog, option))
    g_error ("the file dialog has no choice offering %s", option);
  /* The catalogue's Format, or the view's Picture (as shown, a figure). */
  format = gtk_file_chooser_get_choice (GTK_FILE_CHOOSER (dialog), "format");
  picture = gtk_file_chooser_get_choice (GTK_FILE_CHOOSER (dialog), "picture");
  g_assert_true (g_strcmp0 (format, option) == 0 || g_strcmp0 (picture, option) == 0);
}

/* Opens the dialog by the window's action (its menu item and shortcut),
 * fills it in as a person would, and presses the accept button. */
G_GNUC_BEGIN_IGNORE_DEPRECATIONS
static void
use_file_dialog (Fixture *f, const char *action, const char *folder, const char *name,
                 const char *file, const char *format)
{
  GtkWindow *dialog = NULL;
  GtkFileChooser *chooser;

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (f->window), action, NULL));
  iterate_until (find_file_dialog, &dialog, action);
  chooser = GTK_FILE_CHOOSER (dialog);
  if (file != NULL)
    {
      g_autoptr (GFile) gfile = g_file_new_for_path (file);
      g_assert_true (gtk_file_chooser_set_file (chooser, gfile, NULL));
    }
  else
    {
      /* Typed into the name entry as a whole path, as a person may. */
      g_autofree char *path = g_build_filename (folder, name, NULL);
      gtk_file_chooser_set_current_name (chooser, path);
    }
  if (format != NULL)
    pick_choice (GTK_WIDGET (dialog), format);
  if (format != NULL && g_getenv ("SKY_TEST_EXPORT_DIALOG_SCREENSHOT"))
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (GdkTexture) shot = NULL;
      iterate_until (widget_shown, dialog, "the file dialog on screen");
      shot = sky_render_widget (GTK_WIDGET (dialog), 1, &error);
      g_assert_no_error (error);
      {
        /* A folder: one picture per export, named after the answer. */
        g_autofree char *png = g_strdup_printf ("%s/export-%s-%s.png",
                                                g_getenv ("SKY_TEST_EXPORT_DIALOG_SCREENSHOT"),
                                                name, format);
        g_assert_true (gdk_texture_save_to_png (shot, png));
      }
    }
  /* The dialog accepts only once its folder has loaded and shows the
   * file selected, as a person would wait to see it. */
  {
    g_autofree char *want = file != NULL ? g_strdup (file)
                                         : g_build_filename (folder, name, NULL);
    ChooserWait w = { chooser, want };
    iterate_until (chooser_gives, &w, want);
  }
  gtk_dialog_response (GTK_DIALOG (dialog), GTK_RESPONSE_ACCEPT);
  iterate_until (file_dialog_gone, NULL, "the file dialog to close");
  wait_idle (f, action);
}
G_GNUC_END_IGNORE_DEPRECATIONS

static void
assert_file_starts (const char *path, const char *start)
{
  g_autofree char *text = NULL;

  if (!g_file_get_contents (path, &text, NULL, NULL))
    {
      g_autofree char *json = state_json ();
      g_error ("%s was not written; the app's state: %s", path, json);
    }
  if (!g_str_has_prefix (text, start))
    g_error ("%s starts %.40s, not %s", path, text, start);
}

/* The Open dialog takes a gzipped FITS file; the Export dialog writes the
 * format chosen (its extension added to a bare name) or the one the
 * typed extension names. */
void
test_file_dialogs (Fixture *f)
{
  static const struct {
    const char *name, *format, *written, *start;
  } exports[] = {
    { "cat", "csv", "cat.csv", "source_id," },
    { "cat", "ecsv", "cat.ecsv", "# %ECSV 1.0" },
    { "cat", "xml", "cat.xml", "<?xml" },
    { "cat", "reg", "cat.reg", "# Region file format: DS9" },
    { "typed.reg", "csv", "typed.reg", "# Region file format: DS9" },
  };
  g_autofree char *folder = sky_test_tmp_path ("dialogs");
  g_autofree char *gz = g_build_filename (folder, "field.fits.gz", NULL);
  g_autofree char *raw = NULL;
  g_autofree char *want = NULL;
  gsize size = 0;

  g_mkdir_with_parents (folder, 0700);
  open_image (f, &field);
  g_assert_true (g_file_get_contents (field.path, &raw, &size, NULL));
  {
    g_autoptr (GZlibCompressor) zip = g_zlib_compressor_new (G_ZLIB_COMPRESSOR_FORMAT_GZIP, -1);
    g_autoptr (GOutputStream) file = NULL;
    g_autoptr (GOutputStream) out = NULL;
    g_autoptr (GFile) target = g_file_new_for_path (gz);
    file = G_OUTPUT_STREAM (g_file_replace (target, NULL, FALSE, 0, NULL, NULL));
    out = g_converter_output_stream_new (file, G_CONVERTER (zip));
    g_assert_true (g_output_stream_write_all (out, raw, size, NULL, NULL, NULL));
    g_assert_true (g_output_stream_close (out, NULL, NULL));
  }
  use_file_dialog (f, "win.open", NULL, NULL, gz, NULL);
  want = g_strdup_printf ("\"%s\"", gz);
  assert_state ("image", want);
  click (f, "app.run", "'all'");
  wait_idle (f, "run all");
  g_assert_cmpfloat (state_number ("nsources"), ==, N_FIELD_SOURCES);

  for (guint i = 0; i < G_N_ELEMENTS (exports); i++)
    {
      g_autofree char *path = g_build_filename (folder, exports[i].written, NULL);
      g_remove (path);
      use_file_dialog (f, "win.export-catalog", folder, exports[i].name, NULL,
                       exports[i].format);
      assert_file_starts (path, exports[i].start);
      g_remove (path);
    }

  /* The view's export: as shown, the view's size; as a figure, larger, on
   * a white margin. */
  {
    g_autofree char *view_png = g_build_filename (folder, "shown.png", NULL);
    g_autofree char *figure_png = g_build_filename (folder, "figure.png", NULL);
    g_autoptr (GdkTexture) shown = NULL;
    g_autoptr (GdkTexture) figure = NULL;
    g_autofree guint32 *argb = NULL;

    use_file_dialog (f, "win.export-view", folder, "shown.png", NULL, "view");
    use_file_dialog (f, "win.export-view", folder, "figure.png", NULL, "figure");
    shown = gdk_texture_new_from_filename (view_png, NULL);
    figure = gdk_texture_new_from_filename (figure_png, NULL);
    g_assert_nonnull (shown);
    g_assert_nonnull (figure);
    g_assert_cmpint (gdk_texture_get_width (shown), ==,
                     gtk_widget_get_width (GTK_WIDGET (f->view)) * gtk_widget_get_scale_factor (GTK_WIDGET (f->view)));
    argb = g_new (guint32, (gsize) gdk_texture_get_width (figure) * gdk_texture_get_height (figure));
    gdk_texture_download (figure, (guchar *) argb, (gsize) gdk_texture_get_width (figure) * 4);
    g_assert_cmpint (gdk_texture_get_width (figure), >, gdk_texture_get_width (shown) / 2);
    g_assert_cmphex (argb[0] & 0xffffff, ==, 0xffffff);   /* the margin's top left */
    g_remove (view_png);
    g_remove (figure_png);
  }
  /* The Frames menu's Open in a New Frame: the image chosen is frame 2,
   * current, and frame 1 keeps the field. */
  use_file_dialog (f, "win.frame-open", NULL, NULL, orient_west.path, NULL);
  {
    g_autofree char *json = state_json ();
    g_autofree char *want_new = g_strdup_printf ("\"%s\"", orient_west.path);
    assert_state ("image", want_new);
    g_assert_nonnull (strstr (json, "\"frames\": {\"n\": 2, \"current\": 2"));
    g_assert_nonnull (strstr (json, gz));
  }
  g_remove (gz);
  g_rmdir (folder);
}

static GtkWindow *
file_chooser_shown (void)
{
  GtkWindow *w = NULL;
  return find_file_dialog (&w) ? w : NULL;
}

static gboolean
chooser_up (gpointer data)
{
  return file_chooser_shown () != NULL;
}

/* The export dialogs start in the image's folder (the test runs in the
 * build folder, the image is elsewhere), with the image's name. */
void
test_export_folder (Fixture *f)
{
  static const char *const actions[] = { "win.export-catalog", "win.export-view" };
  g_autofree char *want = g_path_get_dirname (field.path);
  g_autofree char *cwd = g_get_current_dir ();

  open_image (f, &field);
  click (f, "app.run", "'all'");
  wait_idle (f, "run all");
  g_assert_cmpstr (cwd, !=, want);
  for (guint i = 0; i < G_N_ELEMENTS (actions); i++)
    {
      GtkWindow *chooser;
      g_autoptr (GFile) folder = NULL;
      g_autofree char *path = NULL, *name = NULL;

      g_assert_true (gtk_widget_activate_action (GTK_WIDGET (f->window), actions[i], NULL));
      iterate_until (chooser_up, NULL, actions[i]);
      chooser = file_chooser_shown ();
      wait_frames (f);
      folder = gtk_file_chooser_get_current_folder (GTK_FILE_CHOOSER (chooser));
      path = folder ? g_file_get_path (folder) : NULL;
      name = gtk_file_chooser_get_current_name (GTK_FILE_CHOOSER (chooser));
      g_test_message ("%s starts in %s with %s", actions[i], path, name);
      g_assert_cmpstr (path, ==, want);
      g_assert_true (g_str_has_prefix (name, "field_"));
      gtk_dialog_response (GTK_DIALOG (chooser), GTK_RESPONSE_CANCEL);
    }
}

static GtkWindow *
about_dialog_shown (void)
{
  GListModel *toplevels = gtk_window_get_toplevels ();   /* GTK's own */

  for (guint i = 0; i < g_list_model_get_n_items (toplevels); i++)
    {
      g_autoptr (GtkWindow) w = g_list_model_get_item (toplevels, i);
      if (GTK_IS_ABOUT_DIALOG (w) && gtk_widget_get_visible (GTK_WIDGET (w)))
        return w;
    }
  return NULL;
}

static gboolean
about_up (gpointer data)
{
  return about_dialog_shown () != NULL;
}

/* Every label under root: whole (not ellipsized, no wider than given). */
static void
assert_labels_whole (GtkWidget *root, GString *texts)
{
  for (GtkWidget *w = gtk_widget_get_first_child (root); w; w = gtk_widget_get_next_sibling (w))
    {
      if (!gtk_widget_get_mapped (w))
        continue;
      if (GTK_IS_LABEL (w))
        {
          PangoRectangle logical;
          pango_layout_get_pixel_extents (gtk_label_get_layout (GTK_LABEL (w)), NULL, &logical);
          if (pango_layout_is_ellipsized (gtk_label_get_layout (GTK_LABEL (w)))
              || logical.width > gtk_widget_get_width (w))
            g_error ("the about dialog's label \"%s\" is cut: %d px in %d",
                     gtk_label_get_text (GTK_LABEL (w)), logical.width, gtk_widget_get_width (w));
          g_string_append_printf (texts, "%s\n", gtk_label_get_text (GTK_LABEL (w)));
        }
      assert_labels_whole (w, texts);
    }
}

/* Saves a picture of widget under SKYSIFT_TEST_SCREENSHOTS, to look at. */
void
save_widget_picture (GtkWidget *widget, const char *name)
{
  g_autoptr (GdkTexture) texture = NULL;
  g_autofree char *path = NULL;

  if (g_getenv ("SKYSIFT_TEST_SCREENSHOTS") == NULL)
    return;
  texture = sky_render_widget (widget, 1, NULL);
  path = g_build_filename (g_getenv ("SKYSIFT_TEST_SCREENSHOTS"), name, NULL);
  if (texture)
    gdk_texture_save_to_png (texture, path);
}

static gboolean
stack_settled (gpointer stack)
{
  return !gtk_stack_get_transition_running (stack);
}

/* The about dialog: its credits name what skysift is built on and the
 * lesson it follows; no line of any page is cut at its right edge. */
void
test_about (Fixture *f)
{
  static const char *const pages[] = { "main", "credits", "system", "license" };
  g_autoptr (GString) texts = g_string_new (NULL);
  GtkWindow *about;
  GtkStack *stack;
  g_autofree char *system = NULL;
  g_auto (GStrv) lines = NULL;

  open_image (f, &field);
  activate ("about", NULL);
  iterate_until (about_up, NULL, "the about dialog");
  about = about_dialog_shown ();
  stack = GTK_STACK (find_descendant (GTK_WIDGET (about), GTK_TYPE_STACK));
  for (guint i = 0; i < G_N_ELEMENTS (pages); i++)
    {
      g_autofree char *shot = g_strdup_printf ("about-%s.png", pages[i]);
      g_assert_nonnull (gtk_stack_get_child_by_name (stack, pages[i]));
      gtk_stack_set_visible_child_name (stack, pages[i]);
      iterate_until (stack_settled, stack, pages[i]);
      wait_frames (f);
      save_widget_picture (GTK_WIDGET (about), shot);
      assert_labels_whole (GTK_WIDGET (about), texts);
    }
  g_test_message ("%s", texts->str);
  for (const char *const *want = (const char *const[]) { "cfitsio", "wcslib",
                                                         "Using your GPU with CuPy", "GTK",
                                                         NULL };
       *want; want++)
    if (strstr (texts->str, *want) == NULL)
      g_error ("the about dialog does not name %s", *want);

  /* The system information is a text view that does not wrap: its lines
   * are kept short enough for the dialog. */
  system = g_strdup (gtk_about_dialog_get_system_information (GTK_ABOUT_DIALOG (about)));
  lines = g_strsplit (system, "\n", -1);
  for (guint i = 0; lines[i]; i++)
    g_assert_cmpint (g_utf8_strlen (lines[i], -1), <=, 64);
  gtk_window_destroy (about);
}
