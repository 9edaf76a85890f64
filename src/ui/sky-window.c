/* SPDX-License-Identifier: GPL-3.0-or-later */
/* SkyWindow: the class, its panels and the readout under the pointer. */
#include "sky-window-private.h"
#include "sky-resources.h"

#include <math.h>
#include <string.h>

#include "sky-colormap.h"
#include "sky-source.h"
#include "sky-ui-signal.h"

G_DEFINE_FINAL_TYPE (SkyWindow, sky_window, GTK_TYPE_APPLICATION_WINDOW)

enum { STATE_CHANGED, N_SIGNALS };
static guint signals[N_SIGNALS];

static void sync_backend_buttons (SkyWindow *self);

SkyWindow *
sky_window_new (GtkApplication *app)
{
  return g_object_new (SKY_TYPE_WINDOW, "application", app, NULL);
}

void
sky_window_set_start_time (SkyWindow *self, gint64 start_us)
{
  self->started_us = start_us;
}

/* --------------------------------------------------------------- queued */

void
sky_window_open (SkyWindow *self, const char *path, gboolean is_demo)
{
  g_return_if_fail (SKY_IS_WINDOW (self));
  sky_window_push_job (self, SKY_JOB_OPEN, path, SKY_STEP_NONE, is_demo);
}

void
sky_window_open_plane (SkyWindow *self, const char *path, int hdu, gint64 plane)
{
  SkyJob *job;

  g_return_if_fail (SKY_IS_WINDOW (self));
  job = sky_window_job_new (SKY_JOB_OPEN, path, SKY_STEP_NONE);
  job->hdu = hdu;
  job->plane = plane;
  sky_window_queue_job (self, job);
}

void
sky_window_run (SkyWindow *self, SkyStep until)
{
  g_return_if_fail (SKY_IS_WINDOW (self));
  sky_window_push_job (self, SKY_JOB_RUN, NULL, sky_window_method_step (self, until), FALSE);
}

void
sky_window_export_catalogue (SkyWindow *self, const char *path)
{
  g_return_if_fail (SKY_IS_WINDOW (self));
  sky_window_push_job (self, SKY_JOB_EXPORT_CSV, path, SKY_STEP_NONE, FALSE);
}

void
sky_window_export_view (SkyWindow *self, const char *path)
{
  g_return_if_fail (SKY_IS_WINDOW (self));
  sky_window_push_job (self, SKY_JOB_EXPORT_PNG, path, SKY_STEP_NONE, FALSE);
}

void
sky_window_screenshot (SkyWindow *self, const char *part, double zoom, const char *path)
{
  SkyJob *job;

  g_return_if_fail (SKY_IS_WINDOW (self));
  job = sky_window_job_new (g_strcmp0 (part, "panel") == 0 ? SKY_JOB_SCREENSHOT_PANEL
                            : SKY_JOB_SCREENSHOT, path, SKY_STEP_NONE);
  job->zoom = CLAMP (zoom, 0.1, 4.0);
  sky_window_queue_job (self, job);
}

/* ------------------------------------------------------------- settings */

gboolean
sky_window_set_backend (SkyWindow *self, SkyBackend backend, GError **error)
{
  g_autofree char *reason = NULL;

  g_return_val_if_fail (SKY_IS_WINDOW (self), FALSE);
  if (!sky_backend_available (backend, &reason))
    {
      g_set_error (error, SKY_UI_ERROR, SKY_UI_ERROR_UNAVAILABLE, "%s", reason);
      return FALSE;
    }
  self->backend = backend;
  sync_backend_buttons (self);
  sky_window_changed (self);
  return TRUE;
}

void
sky_window_set_threshold (SkyWindow *self, double threshold)
{
  g_autoptr (GError) error = NULL;

  g_return_if_fail (SKY_IS_WINDOW (self));
  /* A script's app.threshold: out of the control's range is refused with
   * a message, not clamped. */
  if (!sky_window_set_threshold_checked (self, threshold, &error))
    sky_window_show_error (self, "That is not a threshold", error->message);
}

gboolean
sky_window_has_image (SkyWindow *self)
{
  return self->image != NULL;
}

void
sky_window_set_zoom (SkyWindow *self, double zoom)
{
  /* A script's app.zoom: anything but a positive number is a mistake to
   * report, not a zoom to clamp (NaN would reach the drawing). */
  if (!(zoom > 0) || !isfinite (zoom))
    {
      g_autofree char *detail = g_strdup_printf ("app.zoom takes a positive number of screen "
                                                 "pixels per image pixel, not %g.", zoom);
      sky_window_show_error (self, "That is not a zoom", detail);
      return;
    }
  sky_image_view_set_zoom (self->view, zoom);
}

void
sky_window_select_source (SkyWindow *self, gint64 id)
{
  gint64 index = id - 1;

  if (self->run == NULL || !sky_run_has (self->run, SKY_STEP_MEASURE)
      || index >= self->run->catalogue.n)
    index = -1;
  sky_source_table_select (self->sources, index);
  sky_image_view_set_selected (self->view, index);
  if (index >= 0)
    sky_image_view_center_on (self->view, self->run->catalogue.x[index],
                              self->run->catalogue.y[index]);
  sky_window_changed (self);
}

gboolean
sky_window_show_panel (SkyWindow *self, const char *name)
{
  if (gtk_stack_get_child_by_name (self->panels, name) == NULL)
    return FALSE;
  gtk_stack_set_visible_child_name (self->panels, name);
  return TRUE;
}

gboolean
sky_window_set_display (SkyWindow *self, const char *setting, const char *value)
{
  int v = -1;

  if (g_str_equal (setting, "panels"))
    return sky_window_set_panels (self, value);
  if (g_str_equal (setting, "smooth"))
    return sky_window_set_display_smooth (self, value);
  if (g_str_equal (setting, "background"))
    return sky_window_set_background_view (self, value);

  if (g_str_equal (setting, "mask") || g_str_equal (setting, "labels")
      || g_str_equal (setting, "markers"))
    {
      g_autofree char *property = g_strconcat ("show-", setting, NULL);
      if (!g_str_equal (value, "on") && !g_str_equal (value, "off"))
        return FALSE;
      g_object_set (self->view, property, g_str_equal (value, "on"), NULL);
      return TRUE;
    }
  if (g_str_equal (setting, "flip"))
    {
      if (!g_str_equal (value, "on") && !g_str_equal (value, "off"))
        return FALSE;
      g_object_set (self->view, "flip-x", g_str_equal (value, "on"), NULL);
      return TRUE;
    }
  if (g_str_equal (setting, "stretch"))
    v = sky_stretch_from_name (value);
  else if (g_str_equal (setting, "limits") && strchr (value, ','))
    {
      /* limits=LO,HI: typed limits. */
      char *end;
      double lo = g_ascii_strtod (value, &end), hi;
      if (*end != ',')
        return FALSE;
      hi = g_ascii_strtod (end + 1, &end);
      if (*end || !(hi > lo))
        return FALSE;
      sky_window_set_typed_limits (self, lo, hi);
      return TRUE;
    }
  else if (g_str_equal (setting, "limits"))
    v = sky_limits_from_name (value);
  else if (g_str_equal (setting, "colormap"))
    v = sky_colormap_from_name (value);
  if (v < 0)
    return FALSE;
  g_object_set (self->view, setting, (guint) v, NULL);
  return TRUE;
}

const char *
sky_window_get_image_path (SkyWindow *self)
{
  return self->image_path ? self->image_path : "";
}

SkyBackend
sky_window_get_backend (SkyWindow *self)
{
  return self->backend;
}

SkyStep
sky_window_get_shown_step (SkyWindow *self)
{
  return self->shown_step;
}

double
sky_window_get_threshold (SkyWindow *self)
{
  return self->params.threshold;
}

const char *
sky_window_get_catalogue_path (SkyWindow *self)
{
  return self->catalogue_path ? self->catalogue_path : "";
}

const char *
sky_window_get_view_path (SkyWindow *self)
{
  return self->view_path ? self->view_path : "";
}

const char *
sky_window_get_gl_info (SkyWindow *self)
{
  return sky_image_view_get_gl_info (self->view);
}

static void
on_backend_toggled (GtkToggleButton *button, SkyWindow *self)
{
  SkyBackend backend = button == self->gpu_button ? SKY_BACKEND_GPU
                       : button == self->both_button ? SKY_BACKEND_BOTH : SKY_BACKEND_CPU;
  g_autoptr (GError) error = NULL;

  if (!gtk_toggle_button_get_active (button) || backend == self->backend)
    return;
  if (!sky_window_set_backend (self, backend, &error))
    {
      sky_window_show_error (self, "That backend cannot run here", error->message);
      sync_backend_buttons (self);
    }
}

static void
sync_backend_buttons (SkyWindow *self)
{
  GtkToggleButton *button = self->backend == SKY_BACKEND_GPU ? self->gpu_button
                            : self->backend == SKY_BACKEND_BOTH ? self->both_button
                            : self->cpu_button;
  if (!gtk_toggle_button_get_active (button))
    gtk_toggle_button_set_active (button, TRUE);
}

/* ----------------------------------------------------------- applying */

void
sky_window_apply_image (SkyWindow *self, SkyImageData *image, const char *path)
{
  const SkyImage *img = &image->image;
  g_autofree char *subtitle = NULL;

  sky_window_frames_image_leaving (self, image);
  g_clear_pointer (&self->run, sky_run_unref);
  g_clear_pointer (&self->image, sky_image_data_unref);
  self->image = sky_image_data_ref (image);
  g_free (self->image_path);
  self->image_path = g_strdup (path);
  self->shown_step = SKY_STEP_NONE;

  sky_image_view_set_image (self->view, image);
  sky_window_choose_limits (self, image);
  sky_clip_histogram_set_run (self->histogram, NULL);
  sky_timings_panel_set_run (self->timings, NULL);
  sky_source_table_set_run (self->sources, NULL);
  gtk_label_set_text (self->stats_label, "Run clip to measure the background.");

  gtk_label_set_text (self->title_label, image->display_name);
  {
    g_autofree char *plane = img->nplanes > 1
      /* Planes count from 0, as --plane and app.open's [HDU,PLANE] do. */
      ? g_strdup_printf (", plane %" G_GINT64_FORMAT " (of 0–%" G_GINT64_FORMAT ")", img->plane,
                         img->nplanes - 1)
      : g_strdup ("");
    subtitle = g_strdup_printf ("%" G_GINT64_FORMAT " × %" G_GINT64_FORMAT "%s%s, HDU %d%s%s%s",
                                img->nx, img->ny, img->bunit[0] ? ", " : "", img->bunit,
                                img->hdu, plane, image->has_wcs ? "" : ", no celestial WCS",
                                image->is_demo ? " (demo)" : "");
  }
  gtk_label_set_text (self->subtitle_label, subtitle);
  sky_window_show_plane_control (self, img);
  gtk_window_set_title (GTK_WINDOW (self), image->display_name);
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->flip_button),
                               image->has_wcs
                               ? "Mirror left-right. It starts where RA (the first axis) "
                                 "increases to the left, from the sign of CDELT1 or CD1_1."
                               : "Mirror left-right. This image has no celestial WCS: it "
                                 "starts with x increasing to the right, as DS9 shows it.");
  gtk_widget_grab_focus (GTK_WIDGET (self->view));
  sky_window_viewer_image_changed (self);
  sky_window_frames_image_applied (self);
  sky_window_changed (self);
}

static void
update_stats_label (SkyWindow *self)
{
  SkyRun *run = self->run;
  const char *unit;
  GString *text;

  if (run == NULL || !sky_run_has (run, SKY_STEP_CLIP))
    return;
  unit = run->image->image.bunit;
  text = g_string_new (NULL);
  if (run->stats.flat)
    g_string_append_printf (text, "The image is flat (σ = 0 after clipping): no background "
                            "to measure and no sources.");
  else
    {
      g_string_append_printf (text, "Background: median %.6g, σ %.6g %s\n", run->stats.median,
                              run->stats.sigma, unit);
      g_string_append_printf (text, "%" G_GINT64_FORMAT " of %" G_GINT64_FORMAT
                              " pixels kept after %d passes%s\n", run->stats.n,
                              run->stats.ninput, run->stats.iterations,
                              run->stats.converged ? "" : " (stopped by the pass limit)");
      /* threshold_value is the level itself, the median already added
       * in relative mode. */
      if (run->params.relative)
        g_string_append_printf (text, "Threshold: pixel > median + %gσ = %.6g %s",
                                run->params.threshold, run->threshold_value, unit);
      else
        g_string_append_printf (text, "Threshold: pixel > %.6g %s (%gσ)", run->threshold_value,
                                unit, run->params.threshold);
      if (sky_run_has_labels (run))
        {
          g_autofree char *found = sky_source_count_text (run->nsources);
          g_string_append_printf (text, "\n%s, %d-connected", found, run->params.connectivity);
        }
    }
  gtk_label_set_text (self->stats_label, text->str);
  g_string_free (text, TRUE);
}

/* A run the CPU finished because the GPU failed says so above the image,
 * until it is dismissed or a run without a fault replaces it; the results
 * shown are whole either way. */
static void
update_gpu_banner (SkyWindow *self, const SkyRun *run)
{
  if (run->gpu_fault != NULL)
    {
      g_autofree char *text = g_strdup_printf (
        run->backend == SKY_BACKEND_BOTH
          ? "The GPU failed, so these are the CPU's results alone, with nothing to compare. %s"
          : "The GPU failed, so the CPU finished this run. %s", run->gpu_fault);
      gtk_label_set_text (self->gpu_banner_label, text);
    }
  gtk_revealer_set_reveal_child (self->gpu_banner, run->gpu_fault != NULL);
}

static void
on_gpu_banner_close (GtkButton *button, SkyWindow *self)
{
  gtk_revealer_set_reveal_child (self->gpu_banner, FALSE);
  sky_window_changed (self);
}

void
sky_window_apply_run (SkyWindow *self, SkyRun *run, SkyStep shown)
{
  gboolean new_step = shown != self->shown_step;
  gint64 t0 = g_get_monotonic_time ();

  g_return_if_fail (run->image == self->image);

  g_clear_pointer (&self->run, sky_run_unref);
  self->run = sky_run_ref (run);
  self->shown_step = shown;
  sky_window_viewer_run_changed (self);

  sky_image_view_set_run (self->view, run);
  if (new_step)
    {
      /* Each step's own picture: the mask, the sources in colour, markers. */
      g_object_set (self->view,
                    "show-mask", shown == SKY_STEP_SEGMENT,
                    "show-labels", shown == SKY_STEP_LABEL || shown == SKY_STEP_FLOOD
                                   || shown == SKY_STEP_DEBLEND,
                    "show-markers", shown == SKY_STEP_MEASURE,
                    NULL);
    }
  update_gpu_banner (self, run);
  sky_clip_histogram_set_run (self->histogram, run);
  sky_timings_panel_set_run (self->timings, run);
  sky_source_table_set_run (self->sources, run);
  update_stats_label (self);
  sky_window_method_apply_run (self, run, new_step);
  sky_window_keep_panel_width (self);
  sky_window_changed (self);
  g_debug ("run applied in %.1f ms", (g_get_monotonic_time () - t0) / 1000.0);
}

/* ------------------------------------------------------------- readout */

/* The readout is two lines tall whatever it shows (nothing, off the
 * image), measured in its own font: a minimum height in the style sheet
 * guessed the two lines' height short and the image above shrank the
 * first time they showed. */
static void
fix_readout_height (GtkWidget *label)
{
  PangoLayout *layout = gtk_widget_create_pango_layout (label, "0\n0");
  int height;

  pango_layout_get_pixel_size (layout, NULL, &height);
  g_object_unref (layout);
  gtk_widget_set_size_request (label, -1, height);
}

/* The readout of view's image point (x, y): the window's own view, or
 * another frame's (image and run), whose readout names the frame. */
void
sky_window_show_readout (SkyWindow *self, SkyImageView *view, SkyImageData *image, SkyRun *run,
                         int frame, gboolean inside, double x, double y)
{
  const SkyImage *img;
  gint64 ix, iy;
  GString *text;
  float v;

  if (!inside || image == NULL)
    {
      gtk_label_set_text (self->readout_label, "");
      return;
    }
  img = &image->image;
  ix = (gint64) floor (x);
  iy = (gint64) floor (y);
  if (ix < 0 || iy < 0 || ix >= img->nx || iy >= img->ny)
    {
      gtk_label_set_text (self->readout_label, "");
      return;
    }
  /* Two lines: the pixel and its value, then where it is on the sky and
   * the source it belongs to. The pixel is counted as FITS counts it, and
   * DS9 and CARTA, from 1 (the files keep 0-based columns). */
  text = g_string_new (NULL);
  v = img->pixels[iy * img->nx + ix];
  g_string_append_printf (text, "x %5" G_GINT64_FORMAT "  y %5" G_GINT64_FORMAT
                          " (FITS, from 1)  ", ix + 1, iy + 1);
  if (isnan (v))
    g_string_append (text, "blank");
  else
    g_string_append_printf (text, "%.5g %s", v, img->bunit);
  /* A map shown in the image's place: its value too, the one the colours show. */
  if (view == self->view && sky_window_shown_map_name (self) != NULL)
    g_string_append_printf (text, "  %s %.5g", sky_window_shown_map_name (self),
                            sky_image_view_get_shown_pixels (self->view)->image.pixels[iy * img->nx
                                                                                      + ix]);
  g_string_append_c (text, '\n');
  if (image->wcs != NULL)
    {
      double lng, lat;
      /* At the pointer itself, not the pixel's centre. */
      if (sky_wcs_pix2world (image->wcs, x - 0.5, y - 0.5, &lng, &lat) == SKY_OK)
        {
          if (sky_wcs_system (image->wcs) == SKY_COORD_EQUATORIAL)
            {
              char ra[SKY_SEXAGESIMAL_SIZE], dec[SKY_SEXAGESIMAL_SIZE];
              g_string_append_printf (text, "%s %s  ", sky_format_ra (lng, ra, sizeof ra),
                                      sky_format_dec (lat, dec, sizeof dec));
            }
          else
            g_string_append_printf (text, "%s %.5f %s %+.5f  ", sky_wcs_lng_name (image->wcs),
                                    lng, sky_wcs_lat_name (image->wcs), lat);
        }
    }
  if (run && run->labels && run->labels[iy * img->nx + ix] > 0)
    g_string_append_printf (text, "source %d  ", run->labels[iy * img->nx + ix]);
  if (frame > 0)
    g_string_append_printf (text, "(frame %d)", frame);
  g_strchomp (text->str);
  gtk_label_set_text (self->readout_label, text->str);
  g_string_free (text, TRUE);
}

static void
on_pointer_moved (SkyImageView *view, gboolean inside, double x, double y, SkyWindow *self)
{
  sky_window_show_readout (self, view, self->image, self->run, 0, inside, x, y);
}

/* ------------------------------------------------------------ selection */

static void
on_source_selected (SkySourceTable *table, gint64 index, SkyWindow *self)
{
  sky_image_view_set_selected (self->view, index);
  if (index >= 0 && self->run)
    sky_image_view_center_on (self->view, self->run->catalogue.x[index],
                              self->run->catalogue.y[index]);
  sky_window_changed (self);
}

static void
on_source_activated (SkyImageView *view, gint64 index, SkyWindow *self)
{
  sky_image_view_set_selected (self->view, index);
  gtk_stack_set_visible_child_name (self->panels, "sources");
  sky_source_table_select (self->sources, index);
  sky_window_changed (self);
}

/* At once, so that a script that asked for something and then reads the
 * state sees it queued. */
void
sky_window_changed (SkyWindow *self)
{
  if (!self->disposed)
    g_signal_emit (self, signals[STATE_CHANGED], 0);
}

/* -------------------------------------------------------------- actions */

static void
action_open (GtkWidget *widget, const char *name, GVariant *param)
{
  sky_window_open_dialog (SKY_WINDOW (widget));
}

static void
action_open_demo (GtkWidget *widget, const char *name, GVariant *param)
{
  g_autofree char *path = sky_image_data_demo_path ();
  sky_window_open (SKY_WINDOW (widget), path, TRUE);
}

static void
action_export_catalog (GtkWidget *widget, const char *name, GVariant *param)
{
  sky_window_export_catalogue_dialog (SKY_WINDOW (widget));
}

static void
action_export_view (GtkWidget *widget, const char *name, GVariant *param)
{
  sky_window_export_view_dialog (SKY_WINDOW (widget));
}

static void
action_cancel (GtkWidget *widget, const char *name, GVariant *param)
{
  sky_window_cancel (SKY_WINDOW (widget));
}

static void
action_zoom (GtkWidget *widget, const char *name, GVariant *param)
{
  SkyImageView *view = SKY_WINDOW (widget)->view;

  if (g_str_equal (name, "win.zoom-in"))
    sky_image_view_zoom_in (view);
  else if (g_str_equal (name, "win.zoom-out"))
    sky_image_view_zoom_out (view);
  else if (g_str_equal (name, "win.zoom-fit"))
    sky_image_view_fit (view);
  else
    sky_image_view_zoom_one (view);
}

/* ------------------------------------------------------------------ GPU */

static void
probe_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  char *reason = NULL;
  if (sky_backend_available (SKY_BACKEND_GPU, &reason))
    g_task_return_pointer (task, NULL, NULL);
  else
    g_task_return_pointer (task, reason, g_free);
}

/* The GPU choices say why they cannot be chosen, where they cannot. */
static void
on_gpu_probed (GObject *source, GAsyncResult *result, gpointer data)
{
  SkyWindow *self = SKY_WINDOW (source);
  g_autofree char *reason = g_task_propagate_pointer (G_TASK (result), NULL);

  if (reason != NULL)
    {
      gtk_widget_set_tooltip_text (GTK_WIDGET (self->gpu_button), reason);
      gtk_widget_set_tooltip_text (GTK_WIDGET (self->both_button), reason);
      sky_timings_panel_set_gpu_note (self->timings, reason);
    }
  else
    {
      g_autofree char *gpu = sky_backend_gpu_description ();
      g_autofree char *both = g_strdup_printf ("Run on the CPU and on the GPU (%s) and compare",
                                               gpu);
      gtk_widget_set_sensitive (GTK_WIDGET (self->gpu_button), TRUE);
      gtk_widget_set_sensitive (GTK_WIDGET (self->both_button), TRUE);
      gtk_widget_set_tooltip_text (GTK_WIDGET (self->gpu_button), gpu);
      gtk_widget_set_tooltip_text (GTK_WIDGET (self->both_button), both);
      sky_timings_panel_set_gpu_note (self->timings, NULL);
    }
}

static void
probe_gpu (SkyWindow *self)
{
  g_autoptr (GTask) task = g_task_new (self, NULL, on_gpu_probed, NULL);
  g_task_run_in_thread (task, probe_thread);
}

/* -------------------------------------------------------------- GObject */

static void
sky_window_dispose (GObject *object)
{
  SkyWindow *self = SKY_WINDOW (object);

  /* Work under way finishes on its own and finds the window gone. */
  self->disposed = TRUE;
  sky_window_jobs_clear (self);
  if (self->cancellable)
    g_cancellable_cancel (self->cancellable);
  g_clear_handle_id (&self->gap_timer, g_source_remove);
  g_clear_handle_id (&self->pulse_timer, g_source_remove);
  g_clear_handle_id (&self->busy_timer, g_source_remove);
  if (self->error_dialog != NULL)
    {
      GtkWidget *dialog = self->error_dialog;
      g_object_remove_weak_pointer (G_OBJECT (dialog), (gpointer *) &self->error_dialog);
      self->error_dialog = NULL;
      gtk_window_destroy (GTK_WINDOW (dialog));
    }
  sky_window_viewer_dispose (self);
  sky_window_frames_dispose (self);
  gtk_widget_dispose_template (GTK_WIDGET (self), SKY_TYPE_WINDOW);
  G_OBJECT_CLASS (sky_window_parent_class)->dispose (object);
}

static void
sky_window_finalize (GObject *object)
{
  SkyWindow *self = SKY_WINDOW (object);

  g_clear_object (&self->cancellable);
  g_clear_pointer (&self->run, sky_run_unref);
  g_clear_pointer (&self->image, sky_image_data_unref);
  g_free (self->image_path);
  g_free (self->catalogue_path);
  g_free (self->view_path);
  g_free (self->last_error);
  g_free (self->input_error);
  G_OBJECT_CLASS (sky_window_parent_class)->finalize (object);
}

static void
sky_window_class_init (SkyWindowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = sky_window_dispose;
  object_class->finalize = sky_window_finalize;

  /* Something sky_window_describe () reports has changed. */
  signals[STATE_CHANGED] = sky_ui_signal_new (klass, "state-changed", 0);

  /* The templates live in a GResource inside the static library: naming it
   * keeps its object file, and the constructor that registers it, linked. */
  (void) sky_ui_get_resource ();
  g_type_ensure (SKY_TYPE_IMAGE_VIEW);
  g_type_ensure (SKY_TYPE_COLOR_BAR);
  g_type_ensure (SKY_TYPE_CLIP_HISTOGRAM);
  g_type_ensure (SKY_TYPE_TIMINGS_PANEL);
  g_type_ensure (SKY_TYPE_SOURCE_TABLE);
  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/io/github/skysift/SkySift/ui/sky-window.ui");
  gtk_widget_class_bind_template_child (widget_class, SkyWindow, title_label);
  gtk_widget_class_bind_template_child (widget_class, SkyWindow, gpu_banner);
  gtk_widget_class_bind_template_child (widget_class, SkyWindow, gpu_banner_label);
  gtk_widget_class_bind_template_child (widget_class, SkyWindow, gpu_banner_close);
  gtk_widget_class_bind_template_child (widget_class, SkyWindow, subtitle_label);
  gtk_widget_class_bind_template_child (widget_class, SkyWindow, cpu_button);
  gtk_widget_class_bind_template_child (widget_class, SkyWindow, gpu_button);
  gtk_widget_class_bind_template_child (widget_class, SkyWindow, both_button);
  gtk_widget_class_bind_template_child (widget_class, SkyWindow, progress);
  gtk_widget_class_bind_template_child (widget_class, SkyWindow, status_label);
  gtk_widget_class_bind_template_child (widget_class, SkyWindow, cancel_button);
  gtk_widget_class_bind_template_child (widget_class, SkyWindow, stretch_dropdown);
  gtk_widget_class_bind_template_child (widget_class, SkyWindow, limits_dropdown);
  gtk_widget_class_bind_template_child (widget_class, SkyWindow, lo_entry);
  gtk_widget_class_bind_template_child (widget_class, SkyWindow, hi_entry);
  gtk_widget_class_bind_template_child (widget_class, SkyWindow, colormap_dropdown);
  gtk_widget_class_bind_template_child (widget_class, SkyWindow, flip_button);
  gtk_widget_class_bind_template_child (widget_class, SkyWindow, view);
  gtk_widget_class_bind_template_child (widget_class, SkyWindow, color_bar);
  gtk_widget_class_bind_template_child (widget_class, SkyWindow, readout_label);
  gtk_widget_class_bind_template_child (widget_class, SkyWindow, paned);
  gtk_widget_class_bind_template_child (widget_class, SkyWindow, side_panel);
  gtk_widget_class_bind_template_child (widget_class, SkyWindow, panels);
  gtk_widget_class_bind_template_child (widget_class, SkyWindow, threshold_adjustment);
  gtk_widget_class_bind_template_child (widget_class, SkyWindow, threshold_slider_adjustment);
  gtk_widget_class_bind_template_child (widget_class, SkyWindow, threshold_scale);
  gtk_widget_class_bind_template_child (widget_class, SkyWindow, threshold_spin);
  gtk_widget_class_bind_template_child (widget_class, SkyWindow, kappa_adjustment);
  gtk_widget_class_bind_template_child (widget_class, SkyWindow, kappa_spin);
  gtk_widget_class_bind_template_child (widget_class, SkyWindow, limits_note);
  gtk_widget_class_bind_template_child (widget_class, SkyWindow, plane_box);
  gtk_widget_class_bind_template_child (widget_class, SkyWindow, plane_spin);
  gtk_widget_class_bind_template_child (widget_class, SkyWindow, plane_range_label);
  gtk_widget_class_bind_template_child (widget_class, SkyWindow, connectivity_dropdown);
  gtk_widget_class_bind_template_child (widget_class, SkyWindow, relative_check);
  gtk_widget_class_bind_template_child (widget_class, SkyWindow, stats_label);
  gtk_widget_class_bind_template_child (widget_class, SkyWindow, histogram);
  gtk_widget_class_bind_template_child (widget_class, SkyWindow, show_mask_check);
  gtk_widget_class_bind_template_child (widget_class, SkyWindow, show_labels_check);
  gtk_widget_class_bind_template_child (widget_class, SkyWindow, show_markers_check);
  gtk_widget_class_bind_template_child (widget_class, SkyWindow, timings);
  gtk_widget_class_bind_template_child (widget_class, SkyWindow, sources);
  gtk_widget_class_bind_template_child (widget_class, SkyWindow, recent_menu);
  /* The view's display settings are in describe (): sky_window_changed
   * keeps the actions' state fresh. */
  gtk_widget_class_bind_template_callback (widget_class, sky_window_changed);
  gtk_widget_class_bind_template_callback (widget_class, on_gpu_banner_close);
  gtk_widget_class_bind_template_callback (widget_class, on_backend_toggled);
  gtk_widget_class_bind_template_callback (widget_class, on_pointer_moved);
  gtk_widget_class_bind_template_callback (widget_class, on_source_activated);
  gtk_widget_class_bind_template_callback (widget_class, on_source_selected);
  sky_window_controls_class_init (widget_class);
  sky_window_method_class_init (widget_class);

  gtk_widget_class_install_action (widget_class, "win.open", NULL, action_open);
  sky_window_viewer_class_init (widget_class);
  gtk_widget_class_install_action (widget_class, "win.open-demo", NULL, action_open_demo);
  gtk_widget_class_install_action (widget_class, "win.export-catalog", NULL, action_export_catalog);
  gtk_widget_class_install_action (widget_class, "win.export-view", NULL, action_export_view);
  gtk_widget_class_install_action (widget_class, "win.cancel", NULL, action_cancel);
  gtk_widget_class_install_action (widget_class, "win.zoom-in", NULL, action_zoom);
  gtk_widget_class_install_action (widget_class, "win.zoom-out", NULL, action_zoom);
  gtk_widget_class_install_action (widget_class, "win.zoom-fit", NULL, action_zoom);
  gtk_widget_class_install_action (widget_class, "win.zoom-one", NULL, action_zoom);

  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_o, GDK_CONTROL_MASK, "win.open", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_s, GDK_CONTROL_MASK,
                                       "win.export-catalog", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_s, GDK_CONTROL_MASK | GDK_SHIFT_MASK,
                                       "win.export-view", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Escape, 0, "win.cancel", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_w, GDK_CONTROL_MASK, "window.close",
                                       NULL);
}

static void
sky_window_init (SkyWindow *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  g_signal_connect (self->readout_label, "realize", G_CALLBACK (fix_readout_height), NULL);
  sky_window_layout_init (self);
  g_queue_init (&self->jobs);
  self->started_us = g_get_monotonic_time ();
  sky_params_init (&self->params);
  self->backend = SKY_BACKEND_CPU;
  self->shown_step = SKY_STEP_NONE;

  /* Display settings are the view's properties; the toolbar only mirrors them. */
  g_object_bind_property (self->view, "stretch", self->stretch_dropdown, "selected",
                          G_BINDING_BIDIRECTIONAL | G_BINDING_SYNC_CREATE);
  g_object_bind_property (self->view, "limits", self->limits_dropdown, "selected",
                          G_BINDING_BIDIRECTIONAL | G_BINDING_SYNC_CREATE);
  g_object_bind_property (self->view, "colormap", self->colormap_dropdown, "selected",
                          G_BINDING_BIDIRECTIONAL | G_BINDING_SYNC_CREATE);
  g_object_bind_property (self->view, "flip-x", self->flip_button, "active",
                          G_BINDING_BIDIRECTIONAL | G_BINDING_SYNC_CREATE);
  g_object_bind_property (self->view, "show-mask", self->show_mask_check, "active",
                          G_BINDING_BIDIRECTIONAL | G_BINDING_SYNC_CREATE);
  g_object_bind_property (self->view, "show-labels", self->show_labels_check, "active",
                          G_BINDING_BIDIRECTIONAL | G_BINDING_SYNC_CREATE);
  g_object_bind_property (self->view, "show-markers", self->show_markers_check, "active",
                          G_BINDING_BIDIRECTIONAL | G_BINDING_SYNC_CREATE);

  sky_window_controls_init (self);
  sky_window_method_init (self);

  /* Until the GPU has been looked for (off the main thread: starting CUDA
   * takes a moment), its choices wait. */
  gtk_widget_set_sensitive (GTK_WIDGET (self->gpu_button), FALSE);
  gtk_widget_set_sensitive (GTK_WIDGET (self->both_button), FALSE);
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->gpu_button), "Looking for a GPU…");
  probe_gpu (self);

  sky_window_files_init (self);
  sky_window_viewer_init (self);
  sky_window_frames_init (self);
}

void
sky_window_set_convolution_timings (SkyWindow *self, const char *text)
{
  sky_timings_panel_set_convolution (self->timings, text);
}
