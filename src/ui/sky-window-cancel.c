/* SPDX-License-Identifier: GPL-3.0-or-later */
/* SkyWindow's cancel: the job under way stopped, the queue emptied, and
 * the controls put back to the parameters of the results shown. */
#include "sky-window-private.h"

static void
append_item (GString *list, const char *item)
{
  if (list->len > 0)
    g_string_append (list, ", ");
  g_string_append (list, item);
}

/* Puts the controls (threshold, clip kappa, connectivity, relative) back
 * to the parameters of the run the window shows, and lists in moved what
 * that changed. A cancelled rerun would have applied what the controls
 * say; without it they would describe results that are not there, and the
 * state, the actions' states and a later export would disagree with the
 * picture. The parameters the user does not set (the pass limit, the
 * threads of a rerun) stay as they are. */
static void
restore_shown_params (SkyWindow *self, GString *moved)
{
  const SkyParams *shown;
  char text[64];

  if (self->run == NULL)
    return;   /* no results shown: the controls describe the next run */
  shown = &self->run->params;
  /* The controls' handlers copy each value into self->params, as for a
   * move by the user, but queue no rerun: this is what is shown. */
  self->restoring_params = TRUE;
  if (self->params.threshold != shown->threshold)
    {
      gtk_adjustment_set_value (self->threshold_adjustment, shown->threshold);
      g_snprintf (text, sizeof text, "threshold %gσ", shown->threshold);
      append_item (moved, text);
    }
  if (self->params.clip_kappa != shown->clip_kappa)
    {
      gtk_adjustment_set_value (self->kappa_adjustment, shown->clip_kappa);
      g_snprintf (text, sizeof text, "clip κ %g", shown->clip_kappa);
      append_item (moved, text);
    }
  if (self->params.connectivity != shown->connectivity)
    {
      gtk_drop_down_set_selected (self->connectivity_dropdown, shown->connectivity == 8 ? 1 : 0);
      g_snprintf (text, sizeof text, "%d-connected", shown->connectivity);
      append_item (moved, text);
    }
  if (self->params.relative != shown->relative)
    {
      gtk_check_button_set_active (self->relative_check, shown->relative);
      append_item (moved, shown->relative ? "threshold above the median" : "absolute threshold");
    }
  sky_window_method_restore (self, moved);
  sky_window_viewer_restore_smooth (self, moved);
  self->restoring_params = FALSE;
  /* The handlers took the widgets' values, which an adjustment may have
   * clamped to its bounds: the run's own values are what the results are. */
  self->params.threshold = shown->threshold;
  self->params.clip_kappa = shown->clip_kappa;
  self->params.connectivity = shown->connectivity;
  self->params.relative = shown->relative;
}

static const char *
cancelled_text (SkyJobKind kind)
{
  switch (kind)
    {
    case SKY_JOB_OPEN:
      return "Opening cancelled";
    case SKY_JOB_EXPORT_CSV:
    case SKY_JOB_EXPORT_PNG:
    case SKY_JOB_SCREENSHOT:
    case SKY_JOB_SCREENSHOT_PANEL:
    case SKY_JOB_EXPORT_FIGURE:
      return "Export cancelled";
    case SKY_JOB_RUN:
    case SKY_JOB_RERUN:
    default:
      return "Cancelled";
    }
}

void
sky_window_cancel (SkyWindow *self)
{
  g_autoptr (GString) status = NULL;
  g_autoptr (GString) moved = g_string_new (NULL);

  /* Nothing under way (a job that has finished has applied its result, and
   * the queue is empty whenever no job is current): nothing to undo. */
  if (self->current == NULL)
    return;
  sky_window_jobs_clear (self);
  if (self->cancellable)
    g_cancellable_cancel (self->cancellable);
  /* Said now, while the job may still finish its step; the job, ending
   * cancelled, leaves the line as it is. */
  status = g_string_new (cancelled_text (self->current->kind));
  restore_shown_params (self, moved);
  if (moved->len > 0)
    g_string_append_printf (status, "; back to the results shown: %s", moved->str);
  sky_window_set_status (self, status->str);
  sky_window_changed (self);
}
