/* SPDX-License-Identifier: GPL-3.0-or-later */
/* SkyScaleDialog. The histogram comes from the image's display statistics
 * (the loader's cumulative counts, which the quantile limits already use):
 * a bin's count is the rise of the cumulative fraction across it, so the
 * dialog reads no pixel. Its range is the central 99.9% of the pixels,
 * widened to hold the limits, and stays put while a line is dragged. */
#include "sky-scale-dialog.h"
#include "sky-ui-signal.h"

#include <math.h>

#define MARGIN 8.0      /* plot's left and right margins, widget pixels */
#define PICK 12.0       /* a press this near a line takes it */

struct _SkyScaleDialog {
  GtkWindow parent_instance;

  GtkDrawingArea *plot;
  GtkLabel *limits_label;

  SkyImageView *view;   /* not owned: the dialog dies with its parent */
  double range_lo, range_hi;
  int dragging;         /* -1, or the limit being dragged */
};

G_DEFINE_FINAL_TYPE (SkyScaleDialog, sky_scale_dialog, GTK_TYPE_WINDOW)

enum { LIMITS_CHANGED, N_SIGNALS };
static guint signals[N_SIGNALS];

static void
fit_range (SkyScaleDialog *self)
{
  SkyImageData *image = sky_image_view_get_image (self->view);
  double lo, hi, a, b, pad;

  if (image == NULL || image->stats.nvalid == 0)
    {
      self->range_lo = 0;
      self->range_hi = 1;
      return;
    }
  sky_image_view_get_scale (self->view, &lo, &hi, NULL);
  a = MIN (sky_display_stats_quantile (&image->stats, 0.0005), lo);
  b = MAX (sky_display_stats_quantile (&image->stats, 0.9995), hi);
  pad = 0.05 * (b - a);
  self->range_lo = MAX (a - pad, image->stats.min);
  self->range_hi = MIN (b + pad, image->stats.max);
  if (!(self->range_hi > self->range_lo))
    self->range_hi = self->range_lo + 1;
}

double
sky_scale_dialog_value_at (SkyScaleDialog *self, double x)
{
  double w = gtk_widget_get_width (GTK_WIDGET (self->plot)) - 2 * MARGIN;
  return self->range_lo + (x - MARGIN) / MAX (w, 1) * (self->range_hi - self->range_lo);
}

double
sky_scale_dialog_x_of (SkyScaleDialog *self, double v)
{
  double w = gtk_widget_get_width (GTK_WIDGET (self->plot)) - 2 * MARGIN;
  return MARGIN + (v - self->range_lo) / (self->range_hi - self->range_lo) * w;
}

static void
update_label (SkyScaleDialog *self)
{
  SkyImageData *image = sky_image_view_get_image (self->view);
  g_autofree char *text = NULL;
  double lo, hi;

  sky_image_view_get_scale (self->view, &lo, &hi, NULL);
  text = g_strdup_printf ("Limits %.5g to %.5g %s", lo, hi,
                          image != NULL ? image->image.bunit : "");
  gtk_label_set_text (self->limits_label, text);
}

static void
draw_plot (GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data)
{
  SkyScaleDialog *self = data;
  SkyImageData *image = sky_image_view_get_image (self->view);
  double counts[SKY_SCALE_DIALOG_BINS], lmax = 0, top = 16, base = height - 18, lo, hi;
  double pw = width - 2 * MARGIN;
  char text[64];

  cairo_set_source_rgb (cr, 1, 1, 1);
  cairo_paint (cr);
  if (image == NULL || image->stats.nvalid == 0 || pw < 10)
    return;
  for (int i = 0; i < SKY_SCALE_DIALOG_BINS; i++)
    {
      double a = self->range_lo + (self->range_hi - self->range_lo) * i / SKY_SCALE_DIALOG_BINS;
      double b = self->range_lo + (self->range_hi - self->range_lo) * (i + 1) / SKY_SCALE_DIALOG_BINS;
      counts[i] = (sky_display_stats_cdf (&image->stats, b) - sky_display_stats_cdf (&image->stats, a))
        * (double) image->stats.nvalid;
      lmax = MAX (lmax, log10 (1 + MAX (counts[i], 0)));
    }
  cairo_set_source_rgb (cr, 0.35, 0.55, 0.85);
  for (int i = 0; i < SKY_SCALE_DIALOG_BINS && lmax > 0; i++)
    {
      double bh = log10 (1 + MAX (counts[i], 0)) / lmax * (base - top);
      double x0 = MARGIN + pw * i / SKY_SCALE_DIALOG_BINS, x1 = MARGIN + pw * (i + 1) / SKY_SCALE_DIALOG_BINS;
      cairo_rectangle (cr, x0, base - bh, x1 - x0, bh);
    }
  cairo_fill (cr);
  cairo_set_source_rgb (cr, 0.2, 0.2, 0.2);
  cairo_set_line_width (cr, 1);
  cairo_move_to (cr, MARGIN, base + 0.5);
  cairo_line_to (cr, MARGIN + pw, base + 0.5);
  cairo_stroke (cr);
  cairo_select_font_face (cr, "Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size (cr, 10);
  g_snprintf (text, sizeof text, "%.4g", self->range_lo);
  cairo_move_to (cr, MARGIN, height - 5);
  cairo_show_text (cr, text);
  {
    cairo_text_extents_t ext;
    g_snprintf (text, sizeof text, "%.4g", self->range_hi);
    cairo_text_extents (cr, text, &ext);
    cairo_move_to (cr, MARGIN + pw - ext.x_advance, height - 5);
    cairo_show_text (cr, text);
  }

  /* The limits: lower in blue, upper in red, each with its value. */
  sky_image_view_get_scale (self->view, &lo, &hi, NULL);
  for (int k = 0; k < 2; k++)
    {
      double v = k ? hi : lo, x = floor (sky_scale_dialog_x_of (self, v)) + 0.5;
      cairo_set_line_width (cr, self->dragging == k ? 3 : 2);
      if (k)
        cairo_set_source_rgb (cr, 0.85, 0.15, 0.1);
      else
        cairo_set_source_rgb (cr, 0.1, 0.3, 0.9);
      cairo_move_to (cr, x, top - 4);
      cairo_line_to (cr, x, base);
      cairo_stroke (cr);
      g_snprintf (text, sizeof text, "%s %.4g", k ? "max" : "min", v);
      {
        /* Beside its line, inside the plot. */
        cairo_text_extents_t ext;
        double tx;
        cairo_text_extents (cr, text, &ext);
        tx = k ? x + 4 : x - 4 - ext.x_advance;
        tx = CLAMP (tx, 2, width - 2 - ext.x_advance);
        cairo_move_to (cr, tx, 11);
        cairo_show_text (cr, text);
      }
    }
}

void
sky_scale_dialog_move_limit (SkyScaleDialog *self, int which, double x)
{
  double lo, hi, v = sky_scale_dialog_value_at (self, x), gap;

  sky_image_view_get_scale (self->view, &lo, &hi, NULL);
  gap = (self->range_hi - self->range_lo) * 1e-3;
  if (which == 0)
    lo = MIN (v, hi - gap);
  else
    hi = MAX (v, lo + gap);
  g_signal_emit (self, signals[LIMITS_CHANGED], 0, lo, hi);
  update_label (self);
  gtk_widget_queue_draw (GTK_WIDGET (self->plot));
}

static void
on_drag_begin (GtkGestureDrag *gesture, double x, double y, SkyScaleDialog *self)
{
  double lo, hi, dlo, dhi;

  sky_image_view_get_scale (self->view, &lo, &hi, NULL);
  dlo = fabs (x - sky_scale_dialog_x_of (self, lo));
  dhi = fabs (x - sky_scale_dialog_x_of (self, hi));
  self->dragging = MIN (dlo, dhi) <= PICK ? (dlo <= dhi ? 0 : 1) : -1;
  if (self->dragging < 0)
    gtk_gesture_set_state (GTK_GESTURE (gesture), GTK_EVENT_SEQUENCE_DENIED);
}

static void
on_drag_update (GtkGestureDrag *gesture, double dx, double dy, SkyScaleDialog *self)
{
  double x0, y0;

  if (self->dragging < 0 || !gtk_gesture_drag_get_start_point (gesture, &x0, &y0))
    return;
  sky_scale_dialog_move_limit (self, self->dragging, x0 + dx);
}

static void
on_drag_end (GtkGestureDrag *gesture, double dx, double dy, SkyScaleDialog *self)
{
  self->dragging = -1;
  gtk_widget_queue_draw (GTK_WIDGET (self->plot));
}

static void
on_display_changed (SkyImageView *view, SkyScaleDialog *self)
{
  if (self->dragging < 0)
    fit_range (self);
  update_label (self);
  gtk_widget_queue_draw (GTK_WIDGET (self->plot));
}

static void
sky_scale_dialog_class_init (SkyScaleDialogClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/io/github/skysift/SkySift/ui/sky-scale-dialog.ui");
  gtk_widget_class_bind_template_child (widget_class, SkyScaleDialog, plot);
  gtk_widget_class_bind_template_child (widget_class, SkyScaleDialog, limits_label);

  /* (lo, hi): the limits a drag chose, in the image's unit. */
  signals[LIMITS_CHANGED] =
    sky_ui_signal_new (klass, "limits-changed", 2, G_TYPE_DOUBLE, G_TYPE_DOUBLE);
}

static void
sky_scale_dialog_init (SkyScaleDialog *self)
{
  GtkGesture *drag = gtk_gesture_drag_new ();

  gtk_widget_init_template (GTK_WIDGET (self));
  self->dragging = -1;
  gtk_drawing_area_set_draw_func (self->plot, draw_plot, self, NULL);
  g_signal_connect (drag, "drag-begin", G_CALLBACK (on_drag_begin), self);
  g_signal_connect (drag, "drag-update", G_CALLBACK (on_drag_update), self);
  g_signal_connect (drag, "drag-end", G_CALLBACK (on_drag_end), self);
  gtk_widget_add_controller (GTK_WIDGET (self->plot), GTK_EVENT_CONTROLLER (drag));
}

SkyScaleDialog *
sky_scale_dialog_new (GtkWindow *parent, SkyImageView *view)
{
  SkyScaleDialog *self = g_object_new (SKY_TYPE_SCALE_DIALOG, "transient-for", parent,
                                       "destroy-with-parent", TRUE, NULL);
  self->view = view;
  g_signal_connect_object (view, "display-changed", G_CALLBACK (on_display_changed), self, 0);
  fit_range (self);
  update_label (self);
  return self;
}
