/* SPDX-License-Identifier: GPL-3.0-or-later */
/* SkyWindow's files: the open and export dialogs, drag and drop, and the
 * recent files menu. Every path ends up in the queue like a script's. */
#include "sky-window-private.h"
#include "sky-window-frames.h"

#include <stdlib.h>

#define MAX_RECENT 8

/* cfitsio reads gzip, bzip2 and tile-compressed (fpack) files as they are. */
static const char *const fits_patterns[] = {
  "*.fits", "*.fit", "*.fts", "*.fits.gz", "*.fit.gz", "*.fts.gz", "*.fits.bz2", "*.fits.fz",
  "*.fz", "*.FITS", "*.FIT", "*.FTS", "*.FITS.gz", "*.FITS.GZ", NULL,
};

/* The catalogue formats of the export dialog, in the order it offers them. */
static const char *format_ids[] = { "csv", "ecsv", "xml", "reg", NULL };
static const char *format_labels[] = { "CSV (spreadsheets, pandas)",
                                       "ECSV (astropy, with units and provenance)",
                                       "VOTable (TOPCAT, CARTA, astropy)",
                                       "DS9 regions (DS9, CARTA)", NULL };

static const char *hdu_ids[] = { "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", NULL };
static const char *hdu_labels[] = { "the first image", "1", "2", "3", "4", "5", "6", "7", "8",
                                    "9", NULL };

static gboolean
looks_like_fits (const char *name)
{
  for (int i = 0; fits_patterns[i]; i++)
    if (g_pattern_match_simple (fits_patterns[i], name))
      return TRUE;
  return FALSE;
}

/* ----------------------------------------------------------------- open */

static void
on_open_response (GtkNativeDialog *dialog, int response, SkyWindow *self)
{
  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr (GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));
      g_autofree char *path = file ? g_file_get_path (file) : NULL;
      const char *hdu = gtk_file_chooser_get_choice (GTK_FILE_CHOOSER (dialog), "hdu");
      if (path && g_object_get_data (G_OBJECT (dialog), "new-frame"))
        sky_window_frame_new (self, path, hdu ? atoi (hdu) : 0, 0);
      else if (path)
        sky_window_open_plane (self, path, hdu ? atoi (hdu) : 0, 0);
      else if (file)
        sky_window_show_error (self, "Could not open the file",
                               "skysift reads local files only (this one has no local path).");
    }
  g_object_unref (dialog);
}

void
sky_window_open_dialog (SkyWindow *self)
{
  sky_window_open_dialog_into (self, FALSE);
}

void
sky_window_open_dialog_into (SkyWindow *self, gboolean new_frame)
{
  GtkFileChooserNative *dialog =
    gtk_file_chooser_native_new (new_frame ? "Open a FITS Image in a New Frame"
                                           : "Open a FITS Image", GTK_WINDOW (self),
                                 GTK_FILE_CHOOSER_ACTION_OPEN, "_Open", "_Cancel");
  g_autoptr (GtkFileFilter) fits = gtk_file_filter_new ();
  g_autoptr (GtkFileFilter) all = gtk_file_filter_new ();

  gtk_file_filter_set_name (fits, "FITS images");
  gtk_file_filter_add_mime_type (fits, "application/fits");
  gtk_file_filter_add_mime_type (fits, "image/fits");
  for (int i = 0; fits_patterns[i]; i++)
    gtk_file_filter_add_pattern (fits, fits_patterns[i]);
  gtk_file_filter_set_name (all, "All files");
  gtk_file_filter_add_pattern (all, "*");
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (dialog), fits);
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (dialog), all);
  gtk_file_chooser_set_filter (GTK_FILE_CHOOSER (dialog), fits);
  /* Which HDU: the first image unless told (a script or the command line
   * names any: FILE[HDU,PLANE]). A cube opens at its first plane; the
   * Pipeline panel's Plane control then steps through the others. */
  gtk_file_chooser_add_choice (GTK_FILE_CHOOSER (dialog), "hdu", "HDU", hdu_ids, hdu_labels);
  gtk_file_chooser_set_choice (GTK_FILE_CHOOSER (dialog), "hdu", "0");
  gtk_native_dialog_set_modal (GTK_NATIVE_DIALOG (dialog), TRUE);
  g_object_set_data (G_OBJECT (dialog), "new-frame", GINT_TO_POINTER (new_frame));
  g_signal_connect (dialog, "response", G_CALLBACK (on_open_response), self);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (dialog));
}

/* --------------------------------------------------------------- export */

static void
on_export_response (GtkNativeDialog *dialog, int response, SkyWindow *self)
{
  gboolean csv = GPOINTER_TO_INT (g_object_get_data (G_OBJECT (dialog), "csv"));

  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr (GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));
      g_autofree char *path = file ? g_file_get_path (file) : NULL;
      if (path && csv)
        {
          /* A name with a catalogue extension says the format; any other
           * gets the chosen format's extension. */
          const char *format = gtk_file_chooser_get_choice (GTK_FILE_CHOOSER (dialog), "format");
          if (!sky_catalogue_format_known (path) && format != NULL)
            {
              char *named = g_strdup_printf ("%s.%s", path, format);
              g_free (path);
              path = named;
            }
          sky_window_export_catalogue (self, path);
        }
      else if (path && g_strcmp0 (gtk_file_chooser_get_choice (GTK_FILE_CHOOSER (dialog), "picture"),
                                  "figure") == 0)
        sky_window_export_figure (self, path);
      else if (path)
        sky_window_export_view (self, path);
    }
  g_object_unref (dialog);
}

static void
export_dialog (SkyWindow *self, gboolean csv)
{
  GtkFileChooserNative *dialog =
    gtk_file_chooser_native_new (csv ? "Export the Catalogue" : "Export the View",
                                 GTK_WINDOW (self), GTK_FILE_CHOOSER_ACTION_SAVE, "_Export",
                                 "_Cancel");
  g_autofree char *stem = NULL;
  g_autofree char *name = NULL;

  if (self->image_path)
    {
      g_autofree char *base = g_path_get_basename (self->image_path);
      char *dot = strstr (base, ".fit");
      if (dot)
        *dot = '\0';
      stem = g_strdup (base);
    }
  name = g_strdup_printf ("%s_%s", stem ? stem : "skysift", csv ? "sources" : "view.png");
  /* Beside the image, not in the working directory the app started in;
   * the demo's folder is a cache, so it keeps the chooser's own choice. */
  if (self->image_path && !(self->image && self->image->is_demo))
    {
      g_autoptr (GFile) image = g_file_new_for_path (self->image_path);
      g_autoptr (GFile) folder = g_file_get_parent (image);
      if (folder)
        gtk_file_chooser_set_current_folder (GTK_FILE_CHOOSER (dialog), folder, NULL);
    }
  gtk_file_chooser_set_current_name (GTK_FILE_CHOOSER (dialog), name);
  if (csv)
    {
      /* The folder lists the catalogues already there, of any format. */
      g_autoptr (GtkFileFilter) catalogues = gtk_file_filter_new ();
      gtk_file_filter_set_name (catalogues, "Catalogues");
      for (int i = 0; format_ids[i]; i++)
        {
          g_autofree char *pattern = g_strdup_printf ("*.%s", format_ids[i]);
          gtk_file_filter_add_pattern (catalogues, pattern);
        }
      gtk_file_filter_add_pattern (catalogues, "*.vot");
      gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (dialog), catalogues);
      gtk_file_chooser_add_choice (GTK_FILE_CHOOSER (dialog), "format", "Format", format_ids,
                                   format_labels);
      gtk_file_chooser_set_choice (GTK_FILE_CHOOSER (dialog), "format", "csv");
    }
  else
    {
      /* The view as the screen shows it, or a figure with axes. */
      static const char *const picture_ids[] = { "view", "figure", NULL };
      static const char *const picture_labels[] = { "The view as shown",
                                                    "A figure with axes", NULL };
      gtk_file_chooser_add_choice (GTK_FILE_CHOOSER (dialog), "picture", "Picture",
                                   (const char **) picture_ids, (const char **) picture_labels);
      gtk_file_chooser_set_choice (GTK_FILE_CHOOSER (dialog), "picture", "view");
    }
  g_object_set_data (G_OBJECT (dialog), "csv", GINT_TO_POINTER (csv));
  gtk_native_dialog_set_modal (GTK_NATIVE_DIALOG (dialog), TRUE);
  g_signal_connect (dialog, "response", G_CALLBACK (on_export_response), self);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (dialog));
}

void
sky_window_export_catalogue_dialog (SkyWindow *self)
{
  if (self->run == NULL || !sky_run_has (self->run, SKY_STEP_MEASURE))
    {
      sky_window_show_error (self, "There is no catalogue to export yet",
                             "Run measure (or Run All) first, then export.");
      return;
    }
  export_dialog (self, TRUE);
}

void
sky_window_export_view_dialog (SkyWindow *self)
{
  export_dialog (self, FALSE);
}

/* --------------------------------------------------------- drag and drop */

static gboolean
on_drop (GtkDropTarget *target, const GValue *value, double x, double y, SkyWindow *self)
{
  GSList *files;
  g_autofree char *path = NULL;

  if (!G_VALUE_HOLDS (value, GDK_TYPE_FILE_LIST))
    return FALSE;
  files = g_value_get_boxed (value);
  if (files == NULL)
    return FALSE;
  path = g_file_get_path (files->data);
  if (path == NULL)
    {
      sky_window_show_error (self, "Could not open the dropped file",
                             "skysift reads local files only (this one has no local path).");
      return FALSE;
    }
  sky_window_open (self, path, FALSE);
  return TRUE;
}

/* --------------------------------------------------------------- recent */

/* When this app last opened the file: GTK lists recent items in no useful
 * order, and another app's use of the file says nothing of ours. */
static gint64
last_opened_here (GtkRecentInfo *info)
{
  GDateTime *stamp = NULL;

  if (!gtk_recent_info_get_application_info (info, g_get_application_name (), NULL, NULL,
                                             &stamp) || stamp == NULL)
    return G_MININT64;
  return g_date_time_to_unix (stamp) * G_USEC_PER_SEC + g_date_time_get_microsecond (stamp);
}

static int
most_recent_first (gconstpointer a, gconstpointer b)
{
  gint64 ta = last_opened_here (*(GtkRecentInfo **) a);
  gint64 tb = last_opened_here (*(GtkRecentInfo **) b);
  return (ta < tb) - (ta > tb);
}

static void
rebuild_recent_menu (GtkRecentManager *manager, SkyWindow *self)
{
  GList *items = gtk_recent_manager_get_items (manager);
  g_autoptr (GPtrArray) ours = g_ptr_array_new ();

  for (GList *l = items; l; l = l->next)
    if (gtk_recent_info_has_application (l->data, g_get_application_name ())
        && looks_like_fits (gtk_recent_info_get_display_name (l->data)))
      g_ptr_array_add (ours, l->data);
  g_ptr_array_sort (ours, most_recent_first);

  g_menu_remove_all (self->recent_menu);
  for (guint i = 0, n = 0; i < ours->len && n < MAX_RECENT; i++)
    {
      GtkRecentInfo *info = ours->pdata[i];
      g_autofree char *path = g_filename_from_uri (gtk_recent_info_get_uri (info), NULL, NULL);
      g_autoptr (GString) label = NULL;
      g_autoptr (GMenuItem) item = NULL;

      if (path == NULL || !g_file_test (path, G_FILE_TEST_EXISTS))
        continue;
      /* A menu reads "_" as the mnemonic mark: "small_src.fits" must not
       * show as "smallsrc.fits". */
      label = g_string_new (gtk_recent_info_get_display_name (info));
      g_string_replace (label, "_", "__", 0);
      item = g_menu_item_new (label->str, NULL);
      g_menu_item_set_action_and_target_value (item, "app.open", g_variant_new_string (path));
      g_menu_append_item (self->recent_menu, item);
      n++;
    }
  g_list_free_full (items, (GDestroyNotify) gtk_recent_info_unref);
}

void
sky_window_files_add_recent (SkyWindow *self, const char *path)
{
  g_autofree char *uri = g_filename_to_uri (path, NULL, NULL);
  if (uri)
    gtk_recent_manager_add_item (gtk_recent_manager_get_default (), uri);
}

void
sky_window_files_init (SkyWindow *self)
{
  GtkDropTarget *target = gtk_drop_target_new (GDK_TYPE_FILE_LIST, GDK_ACTION_COPY);
  GtkRecentManager *manager = gtk_recent_manager_get_default ();

  g_signal_connect (target, "drop", G_CALLBACK (on_drop), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (target));

  g_signal_connect_object (manager, "changed", G_CALLBACK (rebuild_recent_menu), self, 0);
  rebuild_recent_menu (manager, self);
}
