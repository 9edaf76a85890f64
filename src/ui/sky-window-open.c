/* SPDX-License-Identifier: GPL-3.0-or-later */
/* SkyWindow's open job: the image read on a worker (sky_image_data_load_async)
 * while the status line and the bar show how far it got; for a big image a
 * reduced view in the view meanwhile, the image itself once read (its first
 * frame from level 0, its limits from exact extremes and a sampled
 * histogram), then its zoom-out levels and exact histogram, after which
 * the job ends.
 * A cancel or a failure before the image is read puts the view back to the
 * image it showed (or none). */
#include "sky-window-private.h"
#include "sky-image-read.h"

#define POLL_MS 50

typedef struct {
  SkyWindow *self;
  gint64 t0_us;       /* when the user asked */
  char *path;
  SkyImageData *image;
} OpenContext;

static OpenContext *
open_context_new (SkyWindow *self, gint64 t0_us, const char *path)
{
  OpenContext *ctx = g_new0 (OpenContext, 1);
  ctx->self = g_object_ref (self);
  ctx->t0_us = t0_us;
  ctx->path = g_strdup (path);
  return ctx;
}

static void
open_context_free (OpenContext *ctx)
{
  g_object_unref (ctx->self);
  g_clear_pointer (&ctx->image, sky_image_data_unref);
  g_free (ctx->path);
  g_free (ctx);
}

static double
ms_since (gint64 t0_us)
{
  return (g_get_monotonic_time () - t0_us) / 1000.0;
}

static void
on_preview_drawn (gpointer data, gpointer unused)
{
  OpenContext *ctx = data;
  SkyWindow *self = ctx->self;

  /* Only if the view still shows it: the image itself may have come first. */
  if (!self->disposed && self->preview != NULL && self->preview == ctx->image)
    {
      self->preview_to_frame_ms = ms_since (ctx->t0_us);
      sky_window_changed (self);
    }
  open_context_free (ctx);
}

/* The progress while the file is read, and the reduced view once made. */
static gboolean
poll_open (gpointer data)
{
  SkyWindow *self = data;
  g_autoptr (SkyImageData) preview = NULL;
  g_autofree char *name = NULL;
  g_autofree char *status = NULL;
  double fraction;

  gint64 now = g_get_monotonic_time ();

  if (self->disposed || self->current == NULL)
    {
      self->open_poll = 0;
      return G_SOURCE_REMOVE;
    }
  /* The main loop's responsiveness over the whole open, levels included:
   * the longest wait between two ticks (POLL_MS where it never stalled). */
  if (self->open_last_tick_us)
    self->open_max_tick_ms = MAX (self->open_max_tick_ms,
                                  (now - self->open_last_tick_us) / 1000.0);
  self->open_last_tick_us = now;
  if (self->open_progress == NULL)
    return G_SOURCE_CONTINUE;
  /* Cancelled: the status line says so (sky_window_cancel), and the view
   * goes back when the read stops (on_loaded). */
  if (g_cancellable_is_cancelled (self->cancellable))
    return G_SOURCE_CONTINUE;
  preview = sky_open_progress_take_preview (self->open_progress);
  fraction = sky_open_progress_fraction (self->open_progress);
  name = g_filename_display_basename (self->current->path);

  if (preview != NULL)
    {
      OpenContext *ctx = open_context_new (self, self->open_t0_us, self->current->path);
      g_clear_pointer (&self->preview, sky_image_data_unref);
      self->preview = sky_image_data_ref (preview);
      ctx->image = sky_image_data_ref (preview);
      sky_image_view_set_image (self->view, preview);
      sky_image_view_when_drawn (self->view, on_preview_drawn, ctx);
    }
  if (fraction > 0 && (int) (100 * fraction) != self->open_percent)
    {
      self->open_percent = (int) (100 * fraction);
      sky_window_changed (self);   /* the state's open_read_fraction */
    }
  if (fraction > 0)
    {
      /* A bar that says how far, rather than one that pulses. */
      g_clear_handle_id (&self->pulse_timer, g_source_remove);
      gtk_progress_bar_set_fraction (self->progress, fraction);
      status = g_strdup_printf ("Opening %s… %.0f%%%s", name, 100 * fraction,
                                self->preview ? " (a reduced view meanwhile)" : "");
      sky_window_set_status (self, status);
    }
  return G_SOURCE_CONTINUE;
}

/* The read is over: no more progress to show (the ticks go on while the
 * levels are made). */
static void
stop_progress (SkyWindow *self)
{
  g_clear_pointer (&self->open_progress, sky_open_progress_unref);
}

static void
stop_polling (SkyWindow *self)
{
  g_clear_handle_id (&self->open_poll, g_source_remove);
  stop_progress (self);
}

/* The view back to the window's image and its results, as before the open. */
static void
drop_preview (SkyWindow *self)
{
  if (self->preview == NULL)
    return;
  g_clear_pointer (&self->preview, sky_image_data_unref);
  sky_image_view_set_image (self->view, self->image);
  if (self->run != NULL)
    sky_image_view_set_run (self->view, self->run);
}

static void
on_levels_made (GObject *source, GAsyncResult *result, gpointer data)
{
  OpenContext *ctx = data;
  SkyWindow *self = ctx->self;
  g_autoptr (GError) error = NULL;
  gint64 outliers = ctx->image->minmax_outliers;

  if (!sky_image_data_make_levels_finish (result, &error) && !self->disposed)
    sky_window_show_error (self, "Could not make the zoom-out levels", error->message);
  if (!self->disposed)
    {
      /* The exact histogram may find what its sample did not. */
      if (self->image == ctx->image && ctx->image->minmax_outliers != outliers)
        sky_window_choose_limits (self, ctx->image);
      g_autofree char *status =
        g_strdup_printf ("Opened %s: read in %.0f ms, prepared for display in %.0f ms, "
                         "zoom-out levels in %.0f ms after the first frame",
                         ctx->image->display_name, ctx->image->load_ms, ctx->image->prepare_ms,
                         ctx->image->levels_ms);
      sky_image_view_levels_changed (self->view, ctx->image);
      self->open_to_levels_ms = ms_since (ctx->t0_us);
      if (self->image == ctx->image)
        sky_window_set_status (self, status);
    }
  stop_polling (self);
  sky_window_job_finished (self);
  open_context_free (ctx);
}

static void
on_first_frame (gpointer data, gpointer unused)
{
  OpenContext *ctx = data;
  SkyWindow *self = ctx->self;
  gboolean levels = ctx->image->levels_pending;

  if (self->disposed)
    {
      if (levels)
        {
          stop_polling (self);
          sky_window_job_finished (self);
        }
      open_context_free (ctx);
      return;
    }
  self->open_to_frame_ms = ms_since (ctx->t0_us);
  if (self->startup_to_frame_ms == 0)
    self->startup_to_frame_ms = (g_get_monotonic_time () - self->started_us) / 1000.0;
  sky_window_changed (self);
  if (levels)
    {
      /* After the first frame, which they would only delay. */
      sky_image_data_make_levels_async (ctx->image, NULL, on_levels_made, ctx);
      return;
    }
  open_context_free (ctx);
}

static void
on_loaded (GObject *source, GAsyncResult *result, gpointer data)
{
  OpenContext *ctx = data;
  SkyWindow *self = ctx->self;
  g_autoptr (GError) error = NULL;
  g_autoptr (SkyImageData) image = sky_image_data_load_finish (result, &error);

  stop_progress (self);
  if (self->disposed)
    {
      stop_polling (self);
      g_clear_pointer (&self->preview, sky_image_data_unref);
      open_context_free (ctx);
      sky_window_job_finished (self);
      return;
    }
  if (image == NULL)
    {
      g_autofree char *name = g_filename_display_basename (ctx->path);
      g_autofree char *primary = g_strdup_printf ("Could not open “%s”", name);
      stop_polling (self);
      drop_preview (self);
      /* A cancel has said so in the status line (sky_window_cancel). */
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        sky_window_show_error (self, primary, error->message);
      open_context_free (ctx);
      sky_window_job_finished (self);
      return;
    }
  {
    g_autofree char *status =
      g_strdup_printf ("Opened %s: read in %.0f ms, prepared for display in %.0f ms%s",
                       image->display_name, image->load_ms, image->prepare_ms,
                       image->levels_pending ? "; making the zoom-out levels…" : "");
    gboolean levels = image->levels_pending;
    g_clear_pointer (&self->preview, sky_image_data_unref);
    sky_window_apply_image (self, image, ctx->path);
    sky_window_set_status (self, status);
    if (!image->is_demo)
      sky_window_files_add_recent (self, ctx->path);
    ctx->image = sky_image_data_ref (image);
    sky_image_view_when_drawn (self->view, on_first_frame, ctx);
    if (!levels)
      {
        stop_polling (self);
        sky_window_job_finished (self);
      }
  }
}

void
sky_window_open_start (SkyWindow *self, SkyJob *job)
{
  g_autofree char *name = g_filename_display_basename (job->path);
  g_autofree char *status = g_strdup_printf (job->is_demo && !g_file_test (job->path,
                                                                           G_FILE_TEST_EXISTS)
                                             ? "Making the demo image %s…" : "Opening %s…",
                                             name);
  /* The first frame is timed from the moment the user asked. */
  OpenContext *ctx = open_context_new (self, job->queued_us, job->path);
  SkyLoadOptions opts = { job->hdu, job->plane };

  stop_polling (self);
  self->open_progress = sky_open_progress_new ();
  self->open_t0_us = job->queued_us;
  self->preview_to_frame_ms = 0;
  self->open_to_levels_ms = 0;
  self->open_max_tick_ms = 0;
  self->open_last_tick_us = 0;
  self->open_percent = -1;
  self->open_poll = g_timeout_add_full (G_PRIORITY_DEFAULT, POLL_MS, poll_open,
                                        g_object_ref (self), g_object_unref);
  sky_window_set_status (self, status);
  sky_image_data_load_async (job->path, &opts, job->is_demo, self->open_progress,
                             self->cancellable, on_loaded, ctx);
}
