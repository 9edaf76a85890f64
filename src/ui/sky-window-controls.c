/* SPDX-License-Identifier: GPL-3.0-or-later */
/* SkyWindow's controls: the Pipeline panel's parameters (clip κ, the
 * threshold's slider and number, connectivity, relative threshold, a
 * cube's plane) and the typed display limits.
 *
 * Text typed into a control is checked here, not left to the control's
 * own parsing, which turns a typo into 0 and then clamps it to the lower
 * bound without a word: a value the control cannot take is refused, the
 * control keeps its value, and the status line says which control and
 * why, until that control takes a value again (or, for the limits, until
 * typed limits are no longer in use).
 *
 * The Pipeline panel scrolls; a wheel turned over it scrolls it, and moves
 * a slider or spin button only when that control has the keyboard focus,
 * so that scrolling past the threshold slider never re-runs the search. */
#include "sky-window-private.h"

#include <math.h>

/* The least κ offered. Clipping noise at median ± κσ converges to a spread
 * only for κ above √3 (a normal distribution cut at ± a has σ below
 * a/√3, so below that the bounds shrink every pass until nothing is left)
 * and just above √3 it takes hundreds of passes to a σ far below the
 * noise's: on 512 × 512 pixels of N(0, 1), κ 1.7 clips to 120 pixels in
 * 298 passes, 1.8 stops after 66 passes at σ 0.42, 2.0 after 29 at 0.72,
 * 3 after 5 at 0.98. */
#define KAPPA_MIN 2.0

/* ------------------------------------------------------ input errors */

static void
clear_error_style (SkyWindow *self)
{
  if (self->input_error_control != NULL)
    gtk_widget_remove_css_class (self->input_error_control, "error");
  self->input_error_control = NULL;
  g_clear_pointer (&self->input_error, g_free);
}

/* Refuses what was typed into control: the reason in the status line and
 * in the state's last_error, the control marked. */
void
sky_window_set_input_error (SkyWindow *self, GtkWidget *control, const char *text)
{
  clear_error_style (self);
  self->input_error_control = control;
  self->input_error = g_strdup (text);
  gtk_widget_add_css_class (control, "error");
  gtk_widget_error_bell (control);
  g_free (self->last_error);
  self->last_error = g_strdup (text);
  sky_window_set_status (self, text);
  sky_window_changed (self);
}

/* control took a value: its error, if the status line still shows it, no
 * longer applies. */
void
sky_window_clear_input_error (SkyWindow *self, GtkWidget *control)
{
  if (self->input_error_control != control)
    return;
  if (g_strcmp0 (gtk_label_get_text (self->status_label), self->input_error) == 0)
    sky_window_set_status (self, NULL);
  clear_error_style (self);
  sky_window_changed (self);
}

/* ------------------------------------------------------- typed numbers */

/* A number typed into a spin button: the C locale's decimal point or the
 * user's, nothing else around it but spaces. */
static gboolean
parse_number (const char *text, double *value)
{
  g_autofree char *trimmed = g_strstrip (g_strdup (text));
  char *end;

  if (*trimmed == '\0')
    return FALSE;
  *value = g_ascii_strtod (trimmed, &end);
  if (*end != '\0')
    *value = g_strtod (trimmed, &end);
  return *end == '\0' && isfinite (*value);
}

/* The "input" handler of a parameter's spin button (with the update
 * policy "if-valid", so that an error keeps the value): name is the
 * control's label, why_low why nothing below its lower bound is taken. */
static int
check_typed_value (GtkSpinButton *spin, double *value, const char *name, const char *why_low,
                   SkyWindow *self)
{
  GtkAdjustment *adjustment = gtk_spin_button_get_adjustment (spin);
  const char *text = gtk_editable_get_text (GTK_EDITABLE (spin));
  double lo = gtk_adjustment_get_lower (adjustment), hi = gtk_adjustment_get_upper (adjustment);
  double now = gtk_adjustment_get_value (adjustment);
  g_autofree char *message = NULL;
  double v = 0;

  if (!parse_number (text, &v))
    message = g_strdup_printf ("%s: “%s” is not a number; it stays %g", name, text, now);
  else if (v < lo)
    message = g_strdup_printf ("%s: %g is below %g%s; it stays %g", name, v, lo, why_low, now);
  else if (v > hi)
    message = g_strdup_printf ("%s: %g is above %g, the most it takes; it stays %g", name, v,
                               hi, now);
  if (message != NULL)
    {
      sky_window_set_input_error (self, GTK_WIDGET (spin), message);
      return GTK_INPUT_ERROR;
    }
  *value = v;
  return TRUE;
}

static int
on_kappa_input (GtkSpinButton *spin, double *value, SkyWindow *self)
{
  return check_typed_value (spin, value, "Clip at κ",
                            ", where clipping noise no longer converges to a spread", self);
}

static int
on_threshold_input (GtkSpinButton *spin, double *value, SkyWindow *self)
{
  return check_typed_value (spin, value, "Threshold", " σ, the least it takes", self);
}

/* ---------------------------------------------------------- parameters */

static void
rerun (SkyWindow *self)
{
  if (self->run != NULL && !self->restoring_params)
    sky_window_push_job (self, SKY_JOB_RERUN, NULL, SKY_STEP_NONE, FALSE);
}

/* The slider spans the usual thresholds; the number beside it, whose
 * adjustment is the threshold itself, takes any up to its upper bound (the
 * slider then rests at its end). */
static void
on_threshold_changed (GtkAdjustment *adjustment, SkyWindow *self)
{
  self->params.threshold = gtk_adjustment_get_value (adjustment);
  g_signal_handlers_block_matched (self->threshold_slider_adjustment, G_SIGNAL_MATCH_DATA, 0, 0,
                                   NULL, NULL, self);
  gtk_adjustment_set_value (self->threshold_slider_adjustment, self->params.threshold);
  g_signal_handlers_unblock_matched (self->threshold_slider_adjustment, G_SIGNAL_MATCH_DATA, 0,
                                     0, NULL, NULL, self);
  sky_window_clear_input_error (self, GTK_WIDGET (self->threshold_spin));
  sky_window_changed (self);
  rerun (self);
}

static void
on_threshold_slider_changed (GtkAdjustment *adjustment, SkyWindow *self)
{
  gtk_adjustment_set_value (self->threshold_adjustment, gtk_adjustment_get_value (adjustment));
}

static void
on_kappa_changed (GtkAdjustment *adjustment, SkyWindow *self)
{
  self->params.clip_kappa = gtk_adjustment_get_value (adjustment);
  sky_window_clear_input_error (self, GTK_WIDGET (self->kappa_spin));
  sky_window_changed (self);
  rerun (self);
}

static void
on_connectivity_changed (GtkDropDown *dropdown, GParamSpec *pspec, SkyWindow *self)
{
  self->params.connectivity = gtk_drop_down_get_selected (dropdown) == 1 ? 8 : 4;
  rerun (self);
}

static void
on_relative_toggled (GtkCheckButton *check, SkyWindow *self)
{
  self->params.relative = gtk_check_button_get_active (check);
  rerun (self);
}

/* The plane control of a cube: its range and the plane shown, set without
 * reopening (the signal is for the user's changes). */
void
sky_window_show_plane_control (SkyWindow *self, const SkyImage *img)
{
  g_autofree char *range = g_strdup_printf ("of 0–%" G_GINT64_FORMAT, img->nplanes - 1);

  gtk_widget_set_visible (self->plane_box, img->nplanes > 1);
  g_signal_handlers_block_matched (self->plane_spin, G_SIGNAL_MATCH_DATA, 0, 0, NULL, NULL, self);
  gtk_spin_button_set_range (self->plane_spin, 0, MAX (img->nplanes - 1, 0));
  gtk_spin_button_set_increments (self->plane_spin, 1, 10);
  gtk_spin_button_set_value (self->plane_spin, (double) img->plane);
  g_signal_handlers_unblock_matched (self->plane_spin, G_SIGNAL_MATCH_DATA, 0, 0, NULL, NULL,
                                     self);
  gtk_label_set_text (self->plane_range_label, range);
}

/* Another plane of the same cube: opened like any image, through the
 * queue, from the same file and HDU; and, as a moved threshold does, run
 * up to the step shown, so that the results stay on screen. */
static void
on_plane_changed (GtkSpinButton *spin, SkyWindow *self)
{
  SkyStep shown = self->shown_step;

  if (self->image == NULL)
    return;
  sky_window_open_plane (self, self->image_path, self->image->image.hdu,
                         (gint64) gtk_spin_button_get_value (spin));
  if (shown != SKY_STEP_NONE)
    sky_window_run (self, shown);
}

gboolean
sky_window_set_threshold_checked (SkyWindow *self, double threshold, GError **error)
{
  double lo = gtk_adjustment_get_lower (self->threshold_adjustment);
  double hi = gtk_adjustment_get_upper (self->threshold_adjustment);

  if (!(threshold >= lo && threshold <= hi))
    {
      g_set_error (error, SKY_UI_ERROR, SKY_UI_ERROR_ARGUMENT, "The threshold is %g to %g σ, not %g.",
                   lo, hi, threshold);
      return FALSE;
    }
  gtk_adjustment_set_value (self->threshold_adjustment, threshold);
  return TRUE;
}

/* ------------------------------------------------------------ scripts */

void
sky_window_set_kappa (SkyWindow *self, double kappa)
{
  double lo = gtk_adjustment_get_lower (self->kappa_adjustment);
  double hi = gtk_adjustment_get_upper (self->kappa_adjustment);

  if (!(kappa >= lo && kappa <= hi))
    {
      g_autofree char *detail = g_strdup_printf ("Clip κ is %g to %g, not %g (below %g clipping "
                                                 "noise no longer converges to a spread).", lo,
                                                 hi, kappa, lo);
      sky_window_show_error (self, "That is not a clip κ", detail);
      return;
    }
  gtk_adjustment_set_value (self->kappa_adjustment, kappa);
}

void
sky_window_set_connectivity (SkyWindow *self, int connectivity)
{
  if (connectivity != 4 && connectivity != 8)
    {
      g_autofree char *detail = g_strdup_printf ("Pixels connect by their 4 edges or all 8 "
                                                 "neighbours, not %d.", connectivity);
      sky_window_show_error (self, "That is not a connectivity", detail);
      return;
    }
  gtk_drop_down_set_selected (self->connectivity_dropdown, connectivity == 8 ? 1 : 0);
}

void
sky_window_set_relative (SkyWindow *self, gboolean relative)
{
  gtk_check_button_set_active (self->relative_check, relative);
}

void
sky_window_set_plane (SkyWindow *self, gint64 plane)
{
  gint64 n = self->image ? self->image->image.nplanes : 0;

  if (plane < 0 || plane >= n)
    {
      g_autofree char *detail = n > 0
        ? g_strdup_printf ("%s has planes 0 to %" G_GINT64_FORMAT ", not %" G_GINT64_FORMAT ".",
                           self->image->display_name, n - 1, plane)
        : g_strdup ("Open an image first.");
      sky_window_show_error (self, "There is no such plane", detail);
      return;
    }
  /* Against the plane last asked for: one still being opened is not asked
   * for again, and one asked for away from it is. */
  if (plane != (gint64) gtk_spin_button_get_value (self->plane_spin))
    gtk_spin_button_set_value (self->plane_spin, (double) plane);
}

void
sky_window_pan (SkyWindow *self, double x, double y)
{
  if (self->image == NULL || !isfinite (x) || !isfinite (y))
    {
      sky_window_show_error (self, "Nothing to pan to",
                             self->image == NULL ? "Open an image first."
                                                 : "app.pan takes two numbers, x and y.");
      return;
    }
  /* The view centres on a 0-based pixel index: FITS pixel n is index n - 1. */
  sky_image_view_center_on (self->view, x - 1, y - 1);
}

const SkyParams *
sky_window_get_params (SkyWindow *self)
{
  return &self->params;
}

gint64
sky_window_get_plane (SkyWindow *self)
{
  return self->image ? self->image->image.plane : 0;
}

/* -------------------------------------------------------- typed limits */

static void
clear_limits_error (SkyWindow *self)
{
  sky_window_clear_input_error (self, GTK_WIDGET (self->lo_entry));
  sky_window_clear_input_error (self, GTK_WIDGET (self->hi_entry));
}

static void
on_limits_changed (SkyImageView *view, GParamSpec *pspec, SkyWindow *self)
{
  guint limits;
  gboolean typed;

  g_object_get (view, "limits", &limits, NULL);
  if (!self->choosing_limits)
    {
      /* The user's choice: the app's note no longer applies. */
      self->limits_automatic = FALSE;
      gtk_widget_set_visible (GTK_WIDGET (self->limits_note), FALSE);
    }
  typed = limits == SKY_LIMITS_TYPED;
  gtk_widget_set_visible (GTK_WIDGET (self->lo_entry), typed);
  gtk_widget_set_visible (GTK_WIDGET (self->hi_entry), typed);
  clear_limits_error (self);
  if (typed)
    {
      double lo, hi;
      char text[G_ASCII_DTOSTR_BUF_SIZE];
      sky_image_view_get_scale (view, &lo, &hi, NULL);
      gtk_editable_set_text (GTK_EDITABLE (self->lo_entry),
                             g_ascii_formatd (text, sizeof text, "%.6g", lo));
      gtk_editable_set_text (GTK_EDITABLE (self->hi_entry),
                             g_ascii_formatd (text, sizeof text, "%.6g", hi));
    }
}

static void
on_limit_entered (GtkEntry *entry, SkyWindow *self)
{
  const char *a = gtk_editable_get_text (GTK_EDITABLE (self->lo_entry));
  const char *b = gtk_editable_get_text (GTK_EDITABLE (self->hi_entry));
  double lo, hi;

  if (!parse_number (a, &lo) || !parse_number (b, &hi) || !(hi > lo))
    {
      sky_window_set_input_error (self, GTK_WIDGET (entry),
                                  "Display limits: two numbers, the lower first");
      return;
    }
  sky_window_set_typed_limits (self, lo, hi);
}

/* A new image's limits: min-max by default, as the lesson's LogNorm spans
 * the whole range, unless a few wild pixels set that range
 * (minmax_outliers): then 99.9%, and the Pipeline panel says why. Limits
 * chosen so for the last image go back to min-max; the user's own choice
 * stays. */
void
sky_window_choose_limits (SkyWindow *self, SkyImageData *image)
{
  gboolean automatic = FALSE;
  guint limits;

  g_object_get (self->view, "limits", &limits, NULL);
  if (self->limits_automatic && limits == SKY_LIMITS_99_9)
    limits = SKY_LIMITS_MINMAX;
  if (limits == SKY_LIMITS_MINMAX && image->minmax_outliers > 0)
    {
      g_autofree char *note = g_strdup_printf (
        "Display limits 99.9%%, not min–max: %" G_GINT64_FORMAT " pixel%s (%.2g%% of the "
        "image) reach %.3g to %.3g, over a thousand times the range of the rest. Choose "
        "min–max under the image to see the whole range.", image->minmax_outliers,
        image->minmax_outliers == 1 ? "" : "s",
        100.0 * image->minmax_outliers
          / MAX (image->image.nx * image->image.ny - image->image.nblank, 1), image->stats.min,
        image->stats.max);
      gtk_label_set_text (self->limits_note, note);
      limits = SKY_LIMITS_99_9;
      automatic = TRUE;
    }
  self->choosing_limits = TRUE;
  g_object_set (self->view, "limits", limits, NULL);
  self->choosing_limits = FALSE;
  self->limits_automatic = automatic;
  gtk_widget_set_visible (GTK_WIDGET (self->limits_note), automatic);
}

/* Typed limits applied, from the entries or a script: the entries' error,
 * if any, no longer applies. */
void
sky_window_set_typed_limits (SkyWindow *self, double lo, double hi)
{
  clear_limits_error (self);
  sky_image_view_set_typed_limits (self->view, lo, hi);
}

/* ---------------------------------------------------------- the wheel */

static gboolean
has_focus_within (GtkWidget *widget)
{
  GtkRoot *root = gtk_widget_get_root (widget);
  GtkWidget *focus = root ? gtk_root_get_focus (root) : NULL;

  return focus != NULL && (focus == widget || gtk_widget_is_ancestor (focus, widget));
}

/* A wheel over a control of the scrolled panel: the control's own while it
 * has the focus, else the panel's, scrolled as GtkScrolledWindow scrolls
 * for a wheel (a step of the page size to the power 2/3). */
static gboolean
on_control_scroll (GtkEventControllerScroll *controller, double dx, double dy, gpointer data)
{
  GtkWidget *control = gtk_event_controller_get_widget (GTK_EVENT_CONTROLLER (controller));
  GtkWidget *scrolled = gtk_widget_get_ancestor (control, GTK_TYPE_SCROLLED_WINDOW);
  GtkAdjustment *adjustment;
  double page;

  if (has_focus_within (control) || scrolled == NULL)
    return FALSE;
  adjustment = gtk_scrolled_window_get_vadjustment (GTK_SCROLLED_WINDOW (scrolled));
  page = gtk_adjustment_get_page_size (adjustment);
  gtk_adjustment_set_value (adjustment,
                            gtk_adjustment_get_value (adjustment) + dy * pow (page, 2.0 / 3.0));
  return TRUE;
}

/* Makes control take the wheel only while it has the focus: a controller in
 * the capture phase runs before the control's own. */
static void
wheel_only_when_focused (GtkWidget *control)
{
  GtkEventController *scroll = gtk_event_controller_scroll_new (
    GTK_EVENT_CONTROLLER_SCROLL_VERTICAL | GTK_EVENT_CONTROLLER_SCROLL_DISCRETE);

  gtk_event_controller_set_name (scroll, "sky-wheel-when-focused");
  gtk_event_controller_set_propagation_phase (scroll, GTK_PHASE_CAPTURE);
  g_signal_connect (scroll, "scroll", G_CALLBACK (on_control_scroll), NULL);
  gtk_widget_add_controller (control, scroll);
}

/* -------------------------------------------------------------- setup */

/* The controls' handlers, named in sky-window.ui. */
void
sky_window_controls_class_init (GtkWidgetClass *widget_class)
{
  gtk_widget_class_bind_template_callback (widget_class, on_threshold_changed);
  gtk_widget_class_bind_template_callback (widget_class, on_threshold_slider_changed);
  gtk_widget_class_bind_template_callback (widget_class, on_kappa_changed);
  gtk_widget_class_bind_template_callback (widget_class, on_kappa_input);
  gtk_widget_class_bind_template_callback (widget_class, on_threshold_input);
  gtk_widget_class_bind_template_callback (widget_class, on_plane_changed);
  gtk_widget_class_bind_template_callback (widget_class, on_connectivity_changed);
  gtk_widget_class_bind_template_callback (widget_class, on_relative_toggled);
  gtk_widget_class_bind_template_callback (widget_class, on_limits_changed);
  gtk_widget_class_bind_template_callback (widget_class, on_limit_entered);
}

void
sky_window_controls_init (SkyWindow *self)
{
  gtk_adjustment_set_lower (self->kappa_adjustment, KAPPA_MIN);
  gtk_adjustment_set_value (self->threshold_adjustment, self->params.threshold);
  gtk_adjustment_set_value (self->threshold_slider_adjustment, self->params.threshold);
  gtk_adjustment_set_value (self->kappa_adjustment, self->params.clip_kappa);

  wheel_only_when_focused (GTK_WIDGET (self->kappa_spin));
  wheel_only_when_focused (GTK_WIDGET (self->threshold_scale));
  wheel_only_when_focused (GTK_WIDGET (self->threshold_spin));
  wheel_only_when_focused (GTK_WIDGET (self->plane_spin));
}
