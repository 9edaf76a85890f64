/* SPDX-License-Identifier: GPL-3.0-or-later */
/* SkyClipHistogram: counts on a log scale, so that the wings where the
 * clipping bounds sit are as visible as the peak. */
#include "sky-clip-histogram.h"

#include <math.h>

struct _SkyClipHistogram {
  GtkWidget parent_instance;
  SkyRun *run;
};

G_DEFINE_FINAL_TYPE (SkyClipHistogram, sky_clip_histogram, GTK_TYPE_WIDGET)

GtkWidget *
sky_clip_histogram_new (void)
{
  return g_object_new (SKY_TYPE_CLIP_HISTOGRAM, NULL);
}

void
sky_clip_histogram_set_run (SkyClipHistogram *self, SkyRun *run)
{
  g_return_if_fail (SKY_IS_CLIP_HISTOGRAM (self));
  if (run == self->run)
    return;
  g_clear_pointer (&self->run, sky_run_unref);
  if (run != NULL && sky_run_has (run, SKY_STEP_CLIP))
    self->run = sky_run_ref (run);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

/* A line at x with its label beside it, on the left where the right
 * would leave the plot (right is its right edge). */
static void
vline (cairo_t *cr, double x, double top, double bottom, const char *label, double label_y,
       double right)
{
  cairo_text_extents_t ext;

  cairo_move_to (cr, floor (x) + 0.5, top);
  cairo_line_to (cr, floor (x) + 0.5, bottom);
  cairo_stroke (cr);
  if (label)
    {
      cairo_text_extents (cr, label, &ext);
      cairo_move_to (cr, x + 3 + ext.x_advance > right ? x - 3 - ext.x_advance : x + 3, label_y);
      cairo_show_text (cr, label);
    }
}

char *
sky_clip_histogram_axis_text (const SkyRun *run)
{
  guint32 most = 0;

  for (int i = 0; i < SKY_CLIP_HIST_BINS; i++)
    most = MAX (most, run->hist[i]);
  return g_strdup_printf ("pixels per bin, log scale (ticks at powers of 10, top %u)", most);
}

char *
sky_clip_histogram_threshold_text (const SkyRun *run)
{
  if (!isfinite (run->threshold_value))
    return NULL;
  if (run->threshold_value >= run->hist_hi)
    return g_strdup_printf ("threshold %.3g →", run->threshold_value);
  if (run->threshold_value <= run->hist_lo)
    return g_strdup_printf ("← threshold %.3g", run->threshold_value);
  return g_strdup_printf ("threshold %.3g", run->threshold_value);
}

static void
sky_clip_histogram_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  SkyClipHistogram *self = SKY_CLIP_HISTOGRAM (widget);
  int w = gtk_widget_get_width (widget), h = gtk_widget_get_height (widget);
  const double left = 4, right = 4, top = 14, bottom = 18;
  double pw = w - left - right, ph = h - top - bottom, lmax = 0, k, sigma, med, range;
  SkyRun *run = self->run;
  char text[64];
  GdkRGBA fg;
  cairo_t *cr;

  if (w < 40 || h < 40)
    return;
  gtk_style_context_get_color (gtk_widget_get_style_context (widget), &fg);
  cr = gtk_snapshot_append_cairo (snapshot, &GRAPHENE_RECT_INIT (0, 0, w, h));
  cairo_select_font_face (cr, "Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size (cr, 10);
  cairo_set_line_width (cr, 1);

  if (run == NULL)
    {
      cairo_set_source_rgba (cr, fg.red, fg.green, fg.blue, 0.6);
      cairo_move_to (cr, left, h / 2.0);
      cairo_show_text (cr, "Run clip to see the background's histogram");
      cairo_destroy (cr);
      return;
    }

  for (int i = 0; i < SKY_CLIP_HIST_BINS; i++)
    lmax = MAX (lmax, log10 (1.0 + run->hist[i]));
  range = run->hist_hi - run->hist_lo;

  /* Bars */
  cairo_set_source_rgba (cr, 0.35, 0.55, 0.85, 0.9);
  for (int i = 0; i < SKY_CLIP_HIST_BINS && lmax > 0; i++)
    {
      double bh = log10 (1.0 + run->hist[i]) / lmax * ph;
      double x0 = left + pw * i / SKY_CLIP_HIST_BINS, x1 = left + pw * (i + 1) / SKY_CLIP_HIST_BINS;
      cairo_rectangle (cr, x0, top + ph - bh, x1 - x0, bh);
    }
  cairo_fill (cr);

  cairo_set_source_rgba (cr, fg.red, fg.green, fg.blue, 0.8);
  cairo_move_to (cr, left, top + ph + 0.5);
  cairo_line_to (cr, left + pw, top + ph + 0.5);
  cairo_stroke (cr);

  /* The count axis: log(1 + count), from none at the base to the tallest
   * bin's count at the top, with ticks at the powers of ten between. */
  {
    g_autofree char *axis = sky_clip_histogram_axis_text (run);
    cairo_text_extents_t ext;
    guint32 most = 0;

    for (int i = 0; i < SKY_CLIP_HIST_BINS; i++)
      most = MAX (most, run->hist[i]);
    for (double c = 10; c <= most; c *= 10)
      {
        double y = floor (top + ph - log10 (1.0 + c) / lmax * ph) + 0.5;
        cairo_move_to (cr, left, y);
        cairo_line_to (cr, left + 4, y);
      }
    cairo_stroke (cr);
    cairo_text_extents (cr, axis, &ext);
    cairo_move_to (cr, left + pw - ext.x_advance, top - 4);
    cairo_show_text (cr, axis);
  }

#define XOF(v) (left + ((v) - run->hist_lo) / range * pw)
  med = run->stats.median;
  sigma = run->stats.sigma;
  k = run->params.clip_kappa;
  cairo_set_source_rgb (cr, 0.1, 0.65, 0.25);
  vline (cr, XOF (med), top - 2, top + ph, "median", top + 8, left + pw);
  if (sigma > 0)
    {
      cairo_set_source_rgb (cr, 0.9, 0.5, 0.0);
      g_snprintf (text, sizeof text, "-%gσ", k);
      vline (cr, XOF (med - k * sigma), top, top + ph, text, top + 20, left + pw);
      g_snprintf (text, sizeof text, "+%gσ", k);
      vline (cr, XOF (med + k * sigma), top, top + ph, text, top + 20, left + pw);
    }
  if (isfinite (run->threshold_value) && run->threshold_value < run->hist_hi
      && run->threshold_value > run->hist_lo)
    {
      cairo_set_source_rgb (cr, 0.85, 0.1, 0.45);
      vline (cr, XOF (run->threshold_value), top, top + ph, "threshold", top + 32, left + pw);
    }
  else if (isfinite (run->threshold_value))
    {
      /* Off the axis (the usual case at 5σ: the axis spans κ + 3 σ): an
       * arrow at the edge it lies beyond, with its value. */
      gboolean right_side = run->threshold_value >= run->hist_hi;
      double x = right_side ? left + pw - 1 : left + 1, y = top + 32, dir = right_side ? 1 : -1;
      cairo_text_extents_t ext;

      g_autofree char *label = sky_clip_histogram_threshold_text (run);
      cairo_set_source_rgb (cr, 0.85, 0.1, 0.45);
      cairo_move_to (cr, x, y - 4);
      cairo_line_to (cr, x - dir * 8, y - 9);
      cairo_line_to (cr, x - dir * 8, y + 1);
      cairo_close_path (cr);
      cairo_fill (cr);
      cairo_text_extents (cr, label, &ext);
      cairo_move_to (cr, right_side ? x - 11 - ext.x_advance : x + 11, y);
      cairo_show_text (cr, label);
    }
#undef XOF

  cairo_set_source_rgba (cr, fg.red, fg.green, fg.blue, 0.8);
  g_snprintf (text, sizeof text, "%.3g", run->hist_lo);
  cairo_move_to (cr, left, h - 4);
  cairo_show_text (cr, text);
  {
    cairo_text_extents_t ext;
    g_snprintf (text, sizeof text, "%.3g %s", run->hist_hi, run->image->image.bunit);
    cairo_text_extents (cr, text, &ext);
    cairo_move_to (cr, left + pw - ext.x_advance, h - 4);
    cairo_show_text (cr, text);
  }
  cairo_destroy (cr);
}

static void
sky_clip_histogram_measure (GtkWidget *widget, GtkOrientation orientation, int for_size,
                            int *minimum, int *natural, int *minimum_baseline,
                            int *natural_baseline)
{
  if (orientation == GTK_ORIENTATION_HORIZONTAL)
    *minimum = 160, *natural = 300;
  else
    *minimum = 100, *natural = 150;
}

static void
sky_clip_histogram_dispose (GObject *object)
{
  g_clear_pointer (&SKY_CLIP_HISTOGRAM (object)->run, sky_run_unref);
  G_OBJECT_CLASS (sky_clip_histogram_parent_class)->dispose (object);
}

static void
sky_clip_histogram_class_init (SkyClipHistogramClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = sky_clip_histogram_dispose;

  widget_class->snapshot = sky_clip_histogram_snapshot;
  widget_class->measure = sky_clip_histogram_measure;

  gtk_widget_class_set_css_name (widget_class, "skycliphistogram");
}

static void
sky_clip_histogram_init (SkyClipHistogram *self)
{
}
