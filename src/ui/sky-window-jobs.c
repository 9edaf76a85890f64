/* SPDX-License-Identifier: GPL-3.0-or-later */
/* SkyWindow's queue. Each operation (open, run, export) is a job; one runs
 * at a time, its heavy part on a worker thread, and its result is applied
 * here on the main loop. A GLib timeout ticking every 10 ms meanwhile
 * records how long the main loop was ever kept from it while the pipeline
 * ran: the measure of "never blocked". */
#include "sky-window-private.h"
#include "sky-render.h"
#include "sky-source.h"

#include <math.h>
#include <stdlib.h>

#define GAP_TICK_MS 10

static void next_job (SkyWindow *self);

static void
job_free (SkyJob *job)
{
  g_free (job->path);
  g_free (job);
}

void
sky_window_set_status (SkyWindow *self, const char *text)
{
  gtk_label_set_text (self->status_label, text ? text : "");
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->status_label), text);
}

static void
on_error_response (GtkDialog *dialog, int response, gpointer data)
{
  gtk_window_destroy (GTK_WINDOW (dialog));
}

/* One error dialog at a time, titled, not modal: a script's failed opens
 * one after the other show the latest error in it and count the others,
 * rather than stacking a dialog each. */
void
sky_window_show_error (SkyWindow *self, const char *primary, const char *detail)
{
  GtkWidget *dialog = self->error_dialog;
  g_autofree char *title = g_strdup_printf ("skysift: %s", primary);

  g_free (self->last_error);
  self->last_error = g_strdup_printf ("%s: %s", primary, detail);
  g_debug ("%s", self->last_error);
  if (dialog == NULL)
    {
      dialog = gtk_message_dialog_new (GTK_WINDOW (self), GTK_DIALOG_DESTROY_WITH_PARENT,
                                       GTK_MESSAGE_ERROR, GTK_BUTTONS_CLOSE, "%s", primary);
      gtk_window_set_modal (GTK_WINDOW (dialog), FALSE);
      g_signal_connect (dialog, "response", G_CALLBACK (on_error_response), NULL);
      self->error_dialog = dialog;
      g_object_add_weak_pointer (G_OBJECT (dialog), (gpointer *) &self->error_dialog);
      self->errors_in_dialog = 0;
    }
  self->errors_in_dialog++;
  g_object_set (dialog, "text", primary, NULL);
  if (self->errors_in_dialog > 1)
    gtk_message_dialog_format_secondary_text (GTK_MESSAGE_DIALOG (dialog),
                                              "%s\n\n(The latest of %d errors.)", detail,
                                              self->errors_in_dialog);
  else
    gtk_message_dialog_format_secondary_text (GTK_MESSAGE_DIALOG (dialog), "%s", detail);
  gtk_window_set_title (GTK_WINDOW (dialog), title);
  gtk_window_present (GTK_WINDOW (dialog));
  sky_window_set_status (self, primary);
  sky_window_changed (self);
}

/* ------------------------------------------------------------- the meter */

#define SORT_SETTLE_US 250000

static gboolean
gap_tick (gpointer data)
{
  SkyWindow *self = data;
  gint64 now = g_get_monotonic_time ();

  if (self->last_tick_us && (self->pipeline_active > 0 || self->prev_tick_in_pipeline))
    {
      double gap = (now - self->last_tick_us) / 1000.0;
      if (gap > 30)
        g_debug ("main loop stall: %.1f ms", gap);
      self->max_gap_ms = MAX (self->max_gap_ms, gap);
      self->run_max_gap_ms = MAX (self->run_max_gap_ms, gap);
    }
  /* A sort for a script: metered until its rows are in place, and a
   * moment more for the column view to bind them again. */
  if (self->last_tick_us && self->sorting)
    self->sort_max_gap_ms = MAX (self->sort_max_gap_ms, (now - self->last_tick_us) / 1000.0);
  if (self->sorting && self->sort_done_us == 0
      && sky_source_table_sort_pending (self->sources) == 0)
    {
      self->sort_done_us = now;
      self->sort_ms = (now - self->sort_t0_us) / 1000.0;
    }
  if (self->sorting && self->sort_done_us && now - self->sort_done_us > SORT_SETTLE_US)
    {
      self->sorting = FALSE;
      sky_window_changed (self);
    }
  /* Likewise the table's rows, made, filtered or sorted on a worker and
   * handed to the column view (sky_window_meter_table). */
  if (self->last_tick_us && self->table_metering)
    self->table_max_gap_ms = MAX (self->table_max_gap_ms, (now - self->last_tick_us) / 1000.0);
  if (self->table_metering && self->table_done_us == 0
      && sky_source_table_sort_pending (self->sources) == 0)
    self->table_done_us = now;
  if (self->table_metering && self->table_done_us && now - self->table_done_us > SORT_SETTLE_US)
    {
      self->table_metering = FALSE;
      sky_window_changed (self);
    }
  self->last_tick_us = now;
  self->prev_tick_in_pipeline = self->pipeline_active > 0;
  if (self->current == NULL && self->pipeline_active == 0 && !self->sorting
      && !self->table_metering)
    {
      self->gap_timer = 0;
      self->last_tick_us = 0;
      return G_SOURCE_REMOVE;
    }
  return G_SOURCE_CONTINUE;
}

static void
meter_start (SkyWindow *self)
{
  if (self->gap_timer == 0)
    {
      self->last_tick_us = g_get_monotonic_time ();
      self->gap_timer = g_timeout_add (GAP_TICK_MS, gap_tick, self);
    }
}

/* The source table asked a worker for rows (a run's, a filter's, a
 * sort's): the main loop is metered until they are shown and a moment
 * more, for the state's table_max_gap_ms. */
void
sky_window_meter_table (SkyWindow *self)
{
  if (!self->table_metering)
    self->table_max_gap_ms = 0;
  self->table_metering = TRUE;
  self->table_done_us = 0;
  meter_start (self);
}

/* Sorts the source table for a script, "COLUMN" or "COLUMN descending",
 * and meters the main loop until the rows are in place (a long list sorts
 * in steps on it): the state's sort_ms and sort_max_gap_ms. */
gboolean
sky_window_sort_sources (SkyWindow *self, const char *spec)
{
  g_auto (GStrv) words = g_strsplit (spec, " ", 2);
  gboolean descending = words[0] && words[1] && g_str_equal (words[1], "descending");

  if (words[0] == NULL || (words[1] && !descending && !g_str_equal (words[1], "ascending")))
    return FALSE;
  self->sorting = TRUE;
  self->sort_done_us = 0;
  self->sort_max_gap_ms = 0;
  self->sort_t0_us = g_get_monotonic_time ();
  meter_start (self);
  if (!sky_source_table_sort_by (self->sources, words[0], descending))
    {
      self->sorting = FALSE;
      return FALSE;
    }
  sky_window_changed (self);
  return TRUE;
}

/* -------------------------------------------------------------- plumbing */

/* A bar pulsing a few times a second rather than a spinner: a spinner
 * redraws the window every frame, which software OpenGL pays for. */
static gboolean
pulse (gpointer data)
{
  gtk_progress_bar_pulse (SKY_WINDOW (data)->progress);
  return G_SOURCE_CONTINUE;
}

static gboolean
show_busy (gpointer data)
{
  SkyWindow *self = data;
  self->busy_timer = 0;
  gtk_widget_set_visible (GTK_WIDGET (self->progress), TRUE);
  gtk_widget_set_visible (GTK_WIDGET (self->cancel_button), TRUE);
  self->pulse_timer = g_timeout_add (250, pulse, self);
  return G_SOURCE_REMOVE;
}

/* Work that ends within a fifth of a second (a threshold step, an export)
 * shows nothing: the bar would only flicker and cost relayouts. */
static void
busy_indicator (SkyWindow *self, gboolean busy)
{
  if (busy && self->busy_timer == 0 && self->pulse_timer == 0)
    self->busy_timer = g_timeout_add (200, show_busy, self);
  else if (!busy)
    {
      g_clear_handle_id (&self->busy_timer, g_source_remove);
      g_clear_handle_id (&self->pulse_timer, g_source_remove);
      gtk_widget_set_visible (GTK_WIDGET (self->progress), FALSE);
      gtk_widget_set_visible (GTK_WIDGET (self->cancel_button), FALSE);
    }
}

typedef struct {
  SkyWindow *self;
  SkyJobKind kind;
  SkyStep step;
  gint64 t0_us;
  char *path;
  double zoom;
  SkyRun *run;
} JobContext;

static JobContext *
job_context_new (SkyWindow *self)
{
  JobContext *ctx = g_new0 (JobContext, 1);
  ctx->self = g_object_ref (self);
  if (self->current)
    {
      ctx->kind = self->current->kind;
      ctx->step = self->current->step;
      ctx->t0_us = self->current->queued_us;
      ctx->path = g_strdup (self->current->path);
      ctx->zoom = self->current->zoom > 0 ? self->current->zoom : 1.0;
    }
  return ctx;
}

static void
job_context_free (JobContext *ctx)
{
  g_object_unref (ctx->self);
  g_clear_pointer (&ctx->run, sky_run_unref);
  g_free (ctx->path);
  g_free (ctx);
}

static void
job_done (SkyWindow *self)
{
  g_clear_pointer (&self->current, job_free);
  if (self->disposed)
    return;
  if (g_queue_is_empty (&self->jobs))
    busy_indicator (self, FALSE);
  sky_window_changed (self);
  next_job (self);
}

SkyJob *
sky_window_job_new (SkyJobKind kind, const char *path, SkyStep step)
{
  SkyJob *job = g_new0 (SkyJob, 1);

  job->kind = kind;
  job->path = g_strdup (path);
  job->step = step;
  job->queued_us = g_get_monotonic_time ();
  return job;
}

void
sky_window_queue_job (SkyWindow *self, SkyJob *job)
{
  /* A rerun still waiting will read the parameters when it starts: one is
   * enough however many moves of the slider come before it. */
  if (job->kind == SKY_JOB_RERUN)
    for (GList *l = self->jobs.head; l; l = l->next)
      if (((SkyJob *) l->data)->kind == SKY_JOB_RERUN)
        {
          job_free (job);
          return;
        }
  g_queue_push_tail (&self->jobs, job);
  sky_window_changed (self);
  next_job (self);
}

void
sky_window_push_job (SkyWindow *self, SkyJobKind kind, const char *path, SkyStep step,
                     gboolean is_demo)
{
  SkyJob *job = sky_window_job_new (kind, path, step);
  job->is_demo = is_demo;
  sky_window_queue_job (self, job);
}

void
sky_window_jobs_clear (SkyWindow *self)
{
  g_queue_clear_full (&self->jobs, (GDestroyNotify) job_free);
}

/* ------------------------------------------------------------------ open */

/* In sky-window-open.c; the job ends there with sky_window_job_finished. */
static void
start_open (SkyWindow *self, SkyJob *job)
{
  sky_window_open_start (self, job);
}

void
sky_window_job_finished (SkyWindow *self)
{
  job_done (self);
}

/* ------------------------------------------------------------------- run */

static void
on_run_drawn (gpointer data, gpointer unused)
{
  JobContext *ctx = data;
  SkyWindow *self = ctx->self;

  if (self->disposed)
    {
      job_context_free (ctx);
      return;
    }

  if (ctx->kind == SKY_JOB_RERUN)
    {
      self->last_threshold_redraw_ms = (g_get_monotonic_time () - ctx->t0_us) / 1000.0;
      self->max_threshold_redraw_ms = MAX (self->max_threshold_redraw_ms,
                                           self->last_threshold_redraw_ms);
      self->threshold_redraws++;
    }
  self->pipeline_active--;
  sky_window_changed (self);
  job_context_free (ctx);
}

/* "a, b and c" of the steps from index `from` to `to` (exclusive). */
static void
append_step_names (GString *out, const SkyStep *steps, int from, int to)
{
  for (int k = from; k < to; k++)
    g_string_append_printf (out, "%s%s", k == from ? "" : k == to - 1 ? " and " : ", ",
                            sky_step_name (steps[k]));
}

/* What ran on the CPU and how long it took, counting only the steps that
 * ran: those an earlier run lent (a threshold move keeps the clip) keep
 * the times they took then, which are not this run's. E.g. "segment,
 * label and measure took 12.3 ms on the CPU (clip reused)". A run that
 * was already shown (its steps asked for again) ran nothing now. */
char *
sky_window_ran_text (const SkyRun *run, gboolean already_shown)
{
  const SkyStep *steps;
  int nsteps = sky_method_steps (run->stages.method, &steps), first = 0, last = nsteps;
  GString *out = g_string_new (NULL);
  double ms = 0;

  for (int k = 0; k < nsteps; k++)
    {
      if (steps[k] == run->stages.kept)
        first = k + 1;
      if (steps[k] == run->done)
        last = k + 1;
    }
  for (int k = first; k < last; k++)
    ms += run->cpu.ms[steps[k]];
  if (already_shown || first >= last)
    {
      g_string_append (out, "nothing ran: the results were there");
      return g_string_free (out, FALSE);
    }
  append_step_names (out, steps, first, last);
  g_string_append_printf (out, " took %.1f ms on the CPU", ms);
  if (first > 0)
    {
      g_string_append (out, " (");
      append_step_names (out, steps, 0, first);
      g_string_append (out, " reused)");
    }
  return g_string_free (out, FALSE);
}

static void
on_run_done (GObject *source, GAsyncResult *result, gpointer data)
{
  JobContext *ctx = data;
  SkyWindow *self = ctx->self;
  g_autoptr (GError) error = NULL;
  g_autoptr (SkyRun) run = sky_pipeline_run_finish (result, &error);

  if (self->disposed)
    {
      job_context_free (ctx);
      job_done (self);
      return;
    }
  if (run == NULL)
    {
      self->pipeline_active--;
      /* A cancel has said so in the status line and put the controls back
       * to the results shown (sky_window_cancel). */
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        sky_window_show_error (self, "The pipeline failed", error->message);
      job_context_free (ctx);
    }
  else
    {
      g_autofree char *status = NULL;
      g_autofree char *found = sky_source_count_text (run->nsources);
      g_autofree char *ran = sky_window_ran_text (run, run == self->run);
      sky_window_apply_run (self, run, ctx->step);
      if (sky_run_has (run, SKY_STEP_MEASURE) && run->gpu_fault != NULL)
        status = g_strdup_printf ("%s; the GPU failed and %s", found, ran);
      else if (run->cpu_only != NULL)
        status = sky_window_cpu_only_text (run, found, ran);
      else if (sky_run_has (run, SKY_STEP_MEASURE) && run->backend == SKY_BACKEND_GPU)
        status = g_strdup_printf ("%s; the %s steps took %.2f ms on the GPU, %.2f ms with the "
                                  "transfers", found, sky_method_name (run->method),
                                  run->gpu_kernel.total, run->gpu_total.total);
      else if (sky_run_has (run, SKY_STEP_MEASURE) && run->has_gpu)
        status = g_strdup_printf ("%s; %s, the GPU %.2f ms with the transfers; %s", found, ran,
                                  run->gpu_total.total,
                                  run->gpu_note ? "the results DIFFER (Timings)" : "same results");
      else if (sky_run_has (run, SKY_STEP_MEASURE))
        status = g_strdup_printf ("%s; %s", found, ran);
      else if (sky_run_has_labels (run))
        status = g_strdup_printf ("%s labelled", found);
      else if (sky_run_has (run, SKY_STEP_CLIP))
        status = g_strdup_printf ("Background: median %.4g, σ %.4g %s", run->stats.median,
                                  run->stats.sigma, run->image->image.bunit);
      else if (run->maps != NULL)
        status = sky_window_maps_text (run);
      sky_window_set_status (self, status);
      sky_image_view_when_drawn (self->view, on_run_drawn, ctx);
    }
  job_done (self);
}

static void
start_run (SkyWindow *self, SkyJob *job)
{
  g_autofree char *reason = NULL;
  g_autofree char *status = NULL;
  SkyParams params;
  JobContext *ctx;

  if (job->kind == SKY_JOB_RERUN)
    {
      if (self->run == NULL || self->shown_step == SKY_STEP_NONE)
        {
          job_done (self);
          return;
        }
      job->step = self->shown_step;
    }
  if (self->image == NULL)
    {
      sky_window_set_status (self, "Open an image first");
      job_done (self);
      return;
    }
  if (!sky_backend_available (self->backend, &reason))
    {
      sky_window_show_error (self, "That backend cannot run here", reason);
      job_done (self);
      return;
    }
  status = g_strdup_printf ("Running %s on the %s backend…",
                            job->step == SKY_STEP_MEASURE && job->kind == SKY_JOB_RUN
                              ? "the steps" : sky_step_name (job->step),
                            sky_backend_name (self->backend));
  sky_window_set_status (self, status);
  ctx = job_context_new (self);
  self->pipeline_active++;
  self->run_max_gap_ms = 0;
  meter_start (self);
  params = self->params;
  /* A rerun (a parameter moving) may leave cores to the window, which may be
   * drawing the last result meanwhile: SKYSIFT_RERUN_THREADS sets how many
   * it uses (default every core: on two cores, one thread would double the
   * wait for the new picture more than drawing would gain). */
  if (job->kind == SKY_JOB_RERUN && g_getenv ("SKYSIFT_RERUN_THREADS"))
    params.nthreads = MAX (1, atoi (g_getenv ("SKYSIFT_RERUN_THREADS")));
  g_debug ("run job starts %.1f ms after it was asked for",
           (g_get_monotonic_time () - job->queued_us) / 1000.0);
  /* The run shown is about to be replaced: the mask and labels the next
   * run computes anew go to it now rather than living twice (2.5 GiB at
   * 16384 x 16384). Until it is done the view keeps its last picture and
   * the markers; redrawn meanwhile, it draws no mask, labels or outlines.
   * (A new smoothing kernel computes everything anew: what is given back
   * as for the same kernel is then only less than could be.) */
  if (self->run != NULL)
    {
      gsize given = sky_run_give_back (self->run, &params, self->method, self->backend,
                                       job->step);
      if (given > 0)
        g_debug ("gave %.1f MiB of the run shown to the next run", given / 1048576.0);
    }
  sky_pipeline_run_smoothed_async (self->image, &params, self->method, self->backend, job->step,
                                   self->smooth, self->run, self->cancellable, on_run_done, ctx);
}

/* ---------------------------------------------------------------- export */

/* The CLI's writers (sky_run_write_catalogue). */
static void
csv_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  JobContext *ctx = task_data;
  GError *error = NULL;

  /* Cancelled before it began: no file, as the status line will say. */
  if (g_task_return_error_if_cancelled (task))
    return;
  if (sky_run_write_catalogue (ctx->run, ctx->path, &error))
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
}

static void
on_csv_written (GObject *source, GAsyncResult *result, gpointer data)
{
  SkyWindow *self = SKY_WINDOW (source);
  JobContext *ctx = g_task_get_task_data (G_TASK (result));
  g_autoptr (GError) error = NULL;

  if (self->disposed)
    return;
  if (!g_task_propagate_boolean (G_TASK (result), &error))
    {
      /* A cancel is the user's wish, said in the status line, not a failure. */
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        sky_window_show_error (self, "Could not export the catalogue", error->message);
    }
  else
    {
      g_autofree char *written = sky_source_count_text (ctx->run->catalogue.n);
      g_autofree char *status = g_strdup_printf ("Wrote %s to %s", written, ctx->path);
      g_free (self->catalogue_path);
      self->catalogue_path = g_strdup (ctx->path);
      sky_window_set_status (self, status);
    }
  job_done (self);
}

static void
start_export_csv (SkyWindow *self, SkyJob *job)
{
  g_autoptr (GTask) task = NULL;
  JobContext *ctx;

  if (self->run == NULL || !sky_run_has (self->run, SKY_STEP_MEASURE))
    {
      sky_window_show_error (self, "There is no catalogue to export yet",
                             "Run measure (or Run All) first, then export.");
      job_done (self);
      return;
    }
  ctx = job_context_new (self);
  ctx->run = sky_run_ref (self->run);
  task = g_task_new (self, self->cancellable, on_csv_written, NULL);
  g_task_set_task_data (task, ctx, (GDestroyNotify) job_context_free);
  g_task_run_in_thread (task, csv_thread);
}

static void
on_png_written (GObject *source, GAsyncResult *result, gpointer data)
{
  JobContext *ctx = data;
  SkyWindow *self = ctx->self;
  g_autoptr (GError) error = NULL;

  if (self->disposed)
    {
      job_context_free (ctx);
      job_done (self);
      return;
    }
  if (!sky_texture_save_png_finish (result, &error))
    {
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        sky_window_show_error (self, "Could not export the picture", error->message);
    }
  else
    {
      g_autofree char *status = g_strdup_printf ("Wrote %s", ctx->path);
      if (ctx->kind == SKY_JOB_EXPORT_PNG)
        {
          g_free (self->view_path);
          self->view_path = g_strdup (ctx->path);
        }
      sky_window_set_status (self, status);
    }
  job_context_free (ctx);
  job_done (self);
}

static void
on_view_ready (gpointer data, gpointer unused)
{
  JobContext *ctx = data;
  SkyWindow *self = ctx->self;
  g_autoptr (GError) error = NULL;
  g_autoptr (GdkTexture) texture = NULL;

  /* Cancelled while waiting for the frame: nothing to render. */
  if (self->disposed || g_cancellable_is_cancelled (self->cancellable))
    {
      job_context_free (ctx);
      job_done (self);
      return;
    }
  if (ctx->kind == SKY_JOB_EXPORT_PNG)
    texture = sky_image_view_render_texture (self->view, &error);
  else if (ctx->kind == SKY_JOB_EXPORT_FIGURE)
    texture = sky_image_view_render_figure (self->view, &error);
  else if (ctx->kind == SKY_JOB_SCREENSHOT_PANEL)
    texture = sky_render_widget (self->side_panel, ctx->zoom, &error);
  else
    texture = sky_render_widget (GTK_WIDGET (self), ctx->zoom, &error);
  if (texture == NULL)
    {
      sky_window_show_error (self, "Could not export the picture", error->message);
      job_context_free (ctx);
      job_done (self);
      return;
    }
  sky_texture_save_png_async (texture, ctx->path, self->cancellable, on_png_written, ctx);
}

/* A widget shows in a picture the node it drew in the last frame, and
 * widgets that changed since (a status line, the busy bar) have none until
 * the next: wait for a frame after the job began. That frame's layout may
 * give the view a new size (a status line that grew a line), and the view
 * then shows its last picture stretched until the new one is drawn: wait
 * for that one too. */
typedef struct {
  JobContext *ctx;
  GdkFrameClock *clock;
  gulong handler;
} NextFrame;

static void after_view_drawn (gpointer data, gpointer unused);

static void
on_next_frame (GdkFrameClock *clock, gpointer data)
{
  NextFrame *next = data;
  JobContext *ctx = next->ctx;

  g_signal_handler_disconnect (clock, next->handler);
  g_object_unref (next->clock);
  g_free (next);
  if (!ctx->self->disposed && !g_cancellable_is_cancelled (ctx->self->cancellable)
      && !sky_image_view_is_drawn (ctx->self->view))
    sky_image_view_when_drawn (ctx->self->view, after_view_drawn, ctx);
  else
    on_view_ready (ctx, NULL);
}

static void
after_view_drawn (gpointer data, gpointer unused)
{
  JobContext *ctx = data;
  GdkFrameClock *clock = gtk_widget_get_frame_clock (GTK_WIDGET (ctx->self));
  NextFrame *next;

  if (ctx->self->disposed || clock == NULL)
    {
      on_view_ready (ctx, NULL);
      return;
    }
  next = g_new0 (NextFrame, 1);
  next->ctx = ctx;
  next->clock = g_object_ref (clock);
  next->handler = g_signal_connect (clock, "after-paint", G_CALLBACK (on_next_frame), next);
  gtk_widget_queue_draw (GTK_WIDGET (ctx->self));
}

static void
start_export_png (SkyWindow *self, SkyJob *job)
{
  if ((job->kind == SKY_JOB_EXPORT_PNG || job->kind == SKY_JOB_EXPORT_FIGURE) && self->image == NULL)
    {
      sky_window_show_error (self, "There is no image to export", "Open an image first.");
      job_done (self);
      return;
    }
  /* What is exported is what the screen shows once it has caught up. */
  sky_image_view_when_drawn (self->view, after_view_drawn, job_context_new (self));
}

/* ------------------------------------------------------------------ next */

static void
next_job (SkyWindow *self)
{
  SkyJob *job;

  if (self->current != NULL || g_queue_is_empty (&self->jobs))
    return;
  job = self->current = g_queue_pop_head (&self->jobs);
  g_clear_object (&self->cancellable);
  self->cancellable = g_cancellable_new ();
  busy_indicator (self, TRUE);
  meter_start (self);

  switch (job->kind)
    {
    case SKY_JOB_OPEN:
      start_open (self, job);
      break;
    case SKY_JOB_RUN:
    case SKY_JOB_RERUN:
      start_run (self, job);
      break;
    case SKY_JOB_EXPORT_CSV:
      start_export_csv (self, job);
      break;
    case SKY_JOB_EXPORT_PNG:
    case SKY_JOB_SCREENSHOT:
    case SKY_JOB_SCREENSHOT_PANEL:
    case SKY_JOB_EXPORT_FIGURE:
      start_export_png (self, job);
      break;
    case SKY_JOB_OVERLAY:
      sky_window_viewer_load_overlay (self, job->path);
      job_done (self);
      break;
    case SKY_JOB_FRAME:
      sky_window_frames_run_job (self, job);
      job_done (self);
      break;
    default:
      g_assert_not_reached ();
    }
}
