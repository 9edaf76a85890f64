/* SPDX-License-Identifier: GPL-3.0-or-later */
/* SkyWindow's viewer tools: the catalogues and region files drawn over the
 * image with their cross-match (sky-overlay-set.h), the source table's
 * filter and Go to, detection on a smoothed copy and the picture smoothed
 * for the eye. (The header window: sky-window-header.c.) */
#include "sky-window-private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sky-ui-json.h"

/* ----------------------------------------------------------- overlays */

void
sky_window_add_overlay (SkyWindow *self, const char *path)
{
  sky_window_push_job (self, SKY_JOB_OVERLAY, path, SKY_STEP_NONE, FALSE);
}

/* The queued job's work: "" clears every overlay. */
void
sky_window_viewer_load_overlay (SkyWindow *self, const char *path)
{
  g_autoptr (GError) error = NULL;

  if (path == NULL || *path == '\0')
    sky_overlay_set_clear (self->overlays);
  else if (!sky_overlay_set_add (self->overlays, path, self->image, &error))
    {
      sky_window_show_error (self, "Could not load the overlay", error->message);
      return;
    }
  sky_overlay_set_match (self->overlays, self->run);
  sky_image_view_overlays_changed (self->view);
  sky_window_changed (self);
}

void
sky_window_set_match_radius (SkyWindow *self, double arcsec)
{
  g_autoptr (GError) error = NULL;

  if (!sky_overlay_set_radius (self->overlays, self->image, arcsec, &error))
    {
      sky_window_show_error (self, "That is not a match radius", error->message);
      return;
    }
  if (gtk_spin_button_get_value (self->match_radius_spin) != arcsec)
    gtk_spin_button_set_value (self->match_radius_spin, arcsec);
  sky_overlay_set_match (self->overlays, self->run);
  sky_image_view_overlays_changed (self->view);
  sky_window_changed (self);
}

/* The spin button's radius (the action's sets it too: no loop, the value
 * is then the set's). */
static void
on_match_radius_changed (GtkSpinButton *spin, SkyWindow *self)
{
  if (self->overlays != NULL && gtk_spin_button_get_value (spin) != self->overlays->radius_arcsec)
    sky_window_set_match_radius (self, gtk_spin_button_get_value (spin));
}

static void
on_overlay_chosen (GtkNativeDialog *dialog, int response, SkyWindow *self)
{
  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr (GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));
      g_autofree char *path = file ? g_file_get_path (file) : NULL;
      if (path != NULL)
        sky_window_add_overlay (self, path);
    }
  g_object_unref (dialog);
}

/* The menu's Load an Overlay: catalogues and region files, by extension. */
static void
action_overlay_dialog (GtkWidget *widget, const char *name, GVariant *param)
{
  SkyWindow *self = SKY_WINDOW (widget);
  GtkFileChooserNative *dialog;
  GtkFileFilter *filter = gtk_file_filter_new ();
  static const char *const patterns[] = { "*.csv", "*.ecsv", "*.xml", "*.vot", "*.votable",
                                          "*.cat", "*.reg", "*.tsv", "*.txt", NULL };

  dialog = gtk_file_chooser_native_new ("Load a Catalogue or Region File", GTK_WINDOW (self),
                                        GTK_FILE_CHOOSER_ACTION_OPEN, "_Load", "_Cancel");
  gtk_file_filter_set_name (filter, "Catalogues and DS9 regions");
  for (int i = 0; patterns[i]; i++)
    gtk_file_filter_add_pattern (filter, patterns[i]);
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (dialog), filter);
  g_object_unref (filter);
  g_signal_connect (dialog, "response", G_CALLBACK (on_overlay_chosen), self);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (dialog));
}

static void on_smooth_activate (GtkEntry *entry, SkyWindow *self);
static void on_match_radius_changed (GtkSpinButton *spin, SkyWindow *self);
static void on_picture_smooth_selected (GtkDropDown *dropdown, GParamSpec *pspec,
                                        SkyWindow *self);

void
sky_window_viewer_class_init (GtkWidgetClass *widget_class)
{
  gtk_widget_class_install_action (widget_class, "win.overlay", NULL, action_overlay_dialog);
  gtk_widget_class_bind_template_child (widget_class, SkyWindow, smooth_entry);
  gtk_widget_class_bind_template_callback (widget_class, on_smooth_activate);
  gtk_widget_class_bind_template_child (widget_class, SkyWindow, picture_smooth_dropdown);
  gtk_widget_class_bind_template_callback (widget_class, on_picture_smooth_selected);
  gtk_widget_class_bind_template_child (widget_class, SkyWindow, match_radius_spin);
  gtk_widget_class_bind_template_callback (widget_class, on_match_radius_changed);
}

/* ----------------------------------------------------- the source table */

void
sky_window_set_source_filter (SkyWindow *self, const char *text)
{
  g_autoptr (GError) error = NULL;
  SkySourceFilter filter = *sky_source_table_get_filter (self->sources);

  if (!sky_source_filter_parse (&filter, text, &error))
    {
      sky_window_show_error (self, "That is not a source filter", error->message);
      return;
    }
  sky_source_table_set_filter (self->sources, &filter);
}

/* The table's Go to: the source centred and selected, or the status line
 * saying which numbers there are. */
static void
on_goto_source (SkySourceTable *table, gint64 id, SkyWindow *self)
{
  gint64 n = sky_run_has (self->run, SKY_STEP_MEASURE) ? self->run->catalogue.n : 0;

  if (id < 1 || id > n)
    {
      g_autofree char *text = n > 0
        ? g_strdup_printf ("Go to: there is no source %" G_GINT64_FORMAT " (the numbers go "
                           "from 1 to %" G_GINT64_FORMAT ")", id, n)
        : g_strdup ("Go to: run measure first: there are no sources yet");
      sky_window_set_status (self, text);
      return;
    }
  sky_window_select_source (self, id);
}

static gboolean
marker_listed (const SkyRun *run, gint64 i, gpointer data)
{
  SkyWindow *self = data;
  return sky_source_filter_passes (sky_source_table_get_filter (self->sources), run, i);
}

/* The markers follow the table: a source it does not list has none. */
static void
on_filter_changed (SkySourceTable *table, SkyWindow *self)
{
  gboolean all = sky_source_filter_is_empty (sky_source_table_get_filter (table));

  sky_image_view_set_marker_filter (self->view, all ? NULL : marker_listed, self);
  sky_window_changed (self);
}

/* ---------------------------------------------------------- smoothing */

void
sky_window_set_smooth (SkyWindow *self, const char *kernel)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *text = g_strstrip (g_strdup (kernel ? kernel : ""));
  gboolean none = *text == '\0' || g_str_equal (text, "none");

  if (!none && self->image != NULL && !sky_smooth_kernel_check (self->image, text, &error))
    {
      sky_window_show_error (self, "That is not a smoothing kernel", error->message);
      gtk_editable_set_text (GTK_EDITABLE (self->smooth_entry), self->smooth ? self->smooth : "");
      return;
    }
  if (g_strcmp0 (none ? NULL : text, self->smooth) == 0)
    return;
  g_free (self->smooth);
  self->smooth = none ? NULL : g_steal_pointer (&text);
  if (g_strcmp0 (gtk_editable_get_text (GTK_EDITABLE (self->smooth_entry)),
                 self->smooth ? self->smooth : "") != 0)
    gtk_editable_set_text (GTK_EDITABLE (self->smooth_entry), self->smooth ? self->smooth : "");
  if (self->run != NULL)
    sky_window_push_job (self, SKY_JOB_RERUN, NULL, SKY_STEP_NONE, FALSE);
  sky_window_changed (self);
}

void
sky_window_viewer_restore_smooth (SkyWindow *self, GString *moved)
{
  const char *shown = self->run && self->run->smoothed ? self->run->smoothed->kernel : NULL;

  if (g_strcmp0 (self->smooth, shown) == 0)
    return;
  g_free (self->smooth);
  self->smooth = g_strdup (shown);
  gtk_editable_set_text (GTK_EDITABLE (self->smooth_entry), shown ? shown : "");
  if (moved->len > 0)
    g_string_append (moved, ", ");
  if (shown)
    g_string_append_printf (moved, "smoothed by %s", shown);
  else
    g_string_append (moved, "no smoothing");
}

static void
on_smooth_activate (GtkEntry *entry, SkyWindow *self)
{
  sky_window_set_smooth (self, gtk_editable_get_text (GTK_EDITABLE (entry)));
}

/* ---------------------------------------------- the picture, for the eye */

/* The drop-down's kernels, in its order. */
static const char *const picture_kernels[] = { "", "gauss:1", "gauss:2", "gauss:4", "beam" };

typedef struct {
  SkyWindow *self;
  SkyImageData *image;
  char *kernel;
} PictureInput;

static void
picture_input_free (PictureInput *in)
{
  g_object_unref (in->self);
  sky_image_data_unref (in->image);
  g_free (in->kernel);
  g_free (in);
}

/* On a worker: the smoothed copy, made ready to draw (limits, histogram
 * and pyramid of its own), facing the way the image does. */
static void
picture_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  PictureInput *in = task_data;
  g_autoptr (SkyImageData) data = g_atomic_rc_box_new0 (SkyImageData);
  int ret;

  if ((ret = sky_smooth_image (&in->image->image, in->kernel, 0, &data->image)) != SKY_OK
      || (ret = sky_display_stats_compute (&data->image, 0, &data->stats)) != SKY_OK
      || (ret = sky_pyramid_build (&data->image, 0, &data->pyramid)) != SKY_OK)
    {
      g_task_return_new_error (task, SKY_UI_ERROR, sky_ui_error_from_status (ret),
                               "%s smoothed by %s: %s", in->image->display_name, in->kernel,
                               sky_last_error ());
      return;
    }
  data->image.hdu = in->image->image.hdu;
  data->image.plane = in->image->image.plane;
  data->image.nplanes = in->image->image.nplanes;
  snprintf (data->image.bunit, sizeof data->image.bunit, "%s", in->image->image.bunit);
  data->flip_x = in->image->flip_x;
  data->display_name = g_strdup_printf ("%s smoothed by %s", in->image->display_name,
                                        in->kernel);
  g_task_return_pointer (task, g_steal_pointer (&data), (GDestroyNotify) sky_image_data_unref);
}

static void
on_picture_smoothed (GObject *source, GAsyncResult *result, gpointer data)
{
  PictureInput *in = g_task_get_task_data (G_TASK (result));
  SkyWindow *self = in->self;
  g_autoptr (GError) error = NULL;
  g_autoptr (SkyImageData) smoothed = g_task_propagate_pointer (G_TASK (result), &error);

  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED) || self->disposed)
    return;
  if (smoothed == NULL)
    {
      sky_window_show_error (self, "Could not smooth the picture", error->message);
      return;
    }
  /* Still the image and the kernel asked for. */
  if (in->image != self->image || g_strcmp0 (in->kernel, self->display_smooth) != 0)
    return;
  sky_image_view_set_display_image (self->view, smoothed);
  g_free (self->display_smoothed);
  self->display_smoothed = g_strdup (in->kernel);
  sky_window_changed (self);
}

static void
smooth_picture (SkyWindow *self)
{
  PictureInput *in;
  g_autoptr (GTask) task = NULL;

  if (self->display_smoothing)
    g_cancellable_cancel (self->display_smoothing);
  g_clear_object (&self->display_smoothing);
  if (self->display_smooth == NULL || self->image == NULL)
    {
      sky_image_view_set_display_image (self->view, NULL);
      g_clear_pointer (&self->display_smoothed, g_free);
      sky_window_changed (self);
      return;
    }
  in = g_new0 (PictureInput, 1);
  in->self = g_object_ref (self);
  in->image = sky_image_data_ref (self->image);
  in->kernel = g_strdup (self->display_smooth);
  self->display_smoothing = g_cancellable_new ();
  task = g_task_new (NULL, self->display_smoothing, on_picture_smoothed, NULL);
  g_task_set_task_data (task, in, (GDestroyNotify) picture_input_free);
  g_task_set_return_on_cancel (task, TRUE);
  g_task_run_in_thread (task, picture_thread);
}

gboolean
sky_window_set_display_smooth (SkyWindow *self, const char *kernel)
{
  g_autoptr (GError) error = NULL;
  gboolean none = kernel == NULL || *kernel == '\0' || g_str_equal (kernel, "none");

  if (!none && self->image != NULL && !sky_smooth_kernel_check (self->image, kernel, &error))
    {
      sky_window_show_error (self, "That is not a smoothing kernel", error->message);
      return TRUE;   /* a known setting, refused with its reason */
    }
  g_free (self->display_smooth);
  self->display_smooth = none ? NULL : g_strdup (kernel);
  for (guint i = 0; i < G_N_ELEMENTS (picture_kernels); i++)
    if (g_str_equal (picture_kernels[i], none ? "" : kernel)
        && gtk_drop_down_get_selected (self->picture_smooth_dropdown) != i)
      gtk_drop_down_set_selected (self->picture_smooth_dropdown, i);
  smooth_picture (self);
  return TRUE;
}

static void
on_picture_smooth_selected (GtkDropDown *dropdown, GParamSpec *pspec, SkyWindow *self)
{
  guint i = gtk_drop_down_get_selected (dropdown);

  if (i < G_N_ELEMENTS (picture_kernels)
      && g_strcmp0 (picture_kernels[i], self->display_smooth ? self->display_smooth : "") != 0)
    sky_window_set_display_smooth (self, picture_kernels[i]);
}

/* ---------------------------------------------------------- the window */

void
sky_window_viewer_init (SkyWindow *self)
{
  self->overlays = sky_overlay_set_new ();
  sky_image_view_set_overlays (self->view, self->overlays);
  g_signal_connect_object (self->sources, "goto-source", G_CALLBACK (on_goto_source), self, 0);
  g_signal_connect_object (self->sources, "filter-changed", G_CALLBACK (on_filter_changed),
                           self, 0);
  /* The state's busy waits for the table's rows (sky_source_table_sort_pending). */
  g_signal_connect_object (self->sources, "rows-shown", G_CALLBACK (sky_window_changed), self,
                           G_CONNECT_SWAPPED);
  g_signal_connect_object (self->sources, "rows-asked", G_CALLBACK (sky_window_meter_table),
                           self, G_CONNECT_SWAPPED);
}

void
sky_window_viewer_dispose (SkyWindow *self)
{
  if (self->header_window != NULL)
    gtk_window_destroy (GTK_WINDOW (self->header_window));
  if (self->view != NULL)
    sky_image_view_set_overlays (self->view, NULL);
  g_clear_pointer (&self->overlays, sky_overlay_set_free);
  g_clear_pointer (&self->smooth, g_free);
  if (self->display_smoothing)
    g_cancellable_cancel (self->display_smoothing);
  g_clear_object (&self->display_smoothing);
  g_clear_pointer (&self->display_smooth, g_free);
  g_clear_pointer (&self->display_smoothed, g_free);
}

void
sky_window_viewer_image_changed (SkyWindow *self)
{
  if (self->overlays && self->image)
    {
      sky_overlay_set_place (self->overlays, self->image);
      sky_overlay_set_match (self->overlays, NULL);
      sky_image_view_overlays_changed (self->view);
    }
  sky_window_header_refresh (self);
  /* The view dropped the last image's smoothed picture: this one's. */
  g_clear_pointer (&self->display_smoothed, g_free);
  if (self->display_smooth != NULL)
    smooth_picture (self);
}

void
sky_window_viewer_run_changed (SkyWindow *self)
{
  if (self->overlays == NULL)
    return;
  sky_overlay_set_match (self->overlays, self->run);
  sky_image_view_overlays_changed (self->view);
}

void
sky_window_viewer_describe (SkyWindow *self, GString *out)
{
  g_string_append (out, ", \"overlays\": ");
  sky_overlay_set_describe (self->overlays, out);
  g_string_append_printf (out, ", \"match_radius\": %.17g, \"match_radius_unit\": \"%s\"",
                          self->overlays->radius_arcsec,
                          self->overlays->radius_in_pixels ? "pixel" : "arcsec");
  {
    g_autofree char *filter = sky_source_filter_to_string (sky_source_table_get_filter (self->sources));
    g_string_append (out, ", \"source_filter\": ");
    sky_ui_json_string (out, filter);
    g_string_append_printf (out, ", \"listed\": %" G_GINT64_FORMAT,
                            sky_source_table_get_n_listed (self->sources));
  }
  g_string_append (out, ", \"smooth\": ");
  sky_ui_json_string (out, self->smooth);
  g_string_append (out, ", \"display_smooth\": ");
  sky_ui_json_string (out, self->display_smooth);
  g_string_append (out, ", \"display_smoothed\": ");
  sky_ui_json_string (out, self->display_smoothed);
  /* What the results shown were detected on. */
  if (self->run != NULL)
    {
      g_string_append (out, ", \"smoothed\": ");
      sky_ui_json_string (out, self->run->smoothed ? self->run->smoothed->kernel : "");
      g_string_append_printf (out, ", \"smooth_ms\": %.3f",
                              self->run->smoothed ? self->run->smoothed->ms : 0.0);
    }
  g_string_append_printf (out, ", \"header_window\": %s, \"header_cards\": %d, "
                          "\"header_shown\": %d",
                          self->header_window ? "true" : "false",
                          self->image ? self->image->image.nheader_cards : 0,
                          self->header_window ? self->header_shown : 0);
}
