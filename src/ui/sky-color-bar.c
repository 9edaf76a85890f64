/* SPDX-License-Identifier: GPL-3.0-or-later */
/* SkyColorBar: the view's colour map along the stretched scale, with the
 * data values at five evenly spaced stretched positions. */
#include "sky-color-bar.h"
#include "sky-colormap.h"
#include "sky-ticks.h"

#include <math.h>

struct _SkyColorBar {
  GtkWidget parent_instance;
  SkyImageView *view;
  gulong display_changed_id;
};

G_DEFINE_FINAL_TYPE (SkyColorBar, sky_color_bar, GTK_TYPE_WIDGET)

enum { PROP_0, PROP_VIEW, N_PROPS };
static GParamSpec *properties[N_PROPS];

#define BAR_HEIGHT 12
#define MAX_TICKS 9   /* at most; fewer where their labels would touch */

GtkWidget *
sky_color_bar_new (void)
{
  return g_object_new (SKY_TYPE_COLOR_BAR, NULL);
}

static void
on_display_changed (SkyImageView *view, SkyColorBar *self)
{
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
sky_color_bar_set_view (SkyColorBar *self, SkyImageView *view)
{
  g_return_if_fail (SKY_IS_COLOR_BAR (self));

  if (self->view == view)
    return;
  if (self->view)
    {
      g_clear_signal_handler (&self->display_changed_id, self->view);
      g_clear_object (&self->view);
    }
  if (view)
    {
      self->view = g_object_ref (view);
      self->display_changed_id = g_signal_connect (view, "display-changed",
                                                   G_CALLBACK (on_display_changed), self);
    }
  gtk_widget_queue_draw (GTK_WIDGET (self));
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_VIEW]);
}

SkyImageView *
sky_color_bar_get_view (SkyColorBar *self)
{
  return self->view;
}

static void
sky_color_bar_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  SkyColorBar *self = SKY_COLOR_BAR (widget);
  int w = gtk_widget_get_width (widget), h = gtk_widget_get_height (widget);
  SkyImageData *image = self->view ? sky_image_view_get_image (self->view) : NULL;
  guint8 rgba[SKY_CMAP_SIZE * 4];
  const float *eq;
  double lo, hi, bar_x = 6, bar_w;
  guint stretch, colormap;
  cairo_surface_t *strip;
  cairo_t *cr;
  GdkRGBA fg;
  int unit_w = 0;

  if (image == NULL || w < 40)
    return;
  g_object_get (self->view, "stretch", &stretch, "colormap", &colormap, NULL);
  sky_image_view_get_scale (self->view, &lo, &hi, &eq);
  /* gtk_widget_get_color () is 4.10; the style context gives the same in 4.8. */
  gtk_style_context_get_color (gtk_widget_get_style_context (widget), &fg);

  cr = gtk_snapshot_append_cairo (snapshot, &GRAPHENE_RECT_INIT (0, 0, w, h));
  cairo_select_font_face (cr, "Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size (cr, 10);
  if (image->image.bunit[0])
    {
      cairo_text_extents_t ext;
      cairo_text_extents (cr, image->image.bunit, &ext);
      unit_w = (int) ceil (ext.x_advance) + 10;
    }
  bar_w = w - 2 * bar_x - unit_w;

  /* The colour map, one column per table entry, scaled to the bar. */
  sky_colormap_fill (colormap, rgba);
  strip = cairo_image_surface_create (CAIRO_FORMAT_RGB24, SKY_CMAP_SIZE, 1);
  {
    guint32 *row = (guint32 *) cairo_image_surface_get_data (strip);
    cairo_surface_flush (strip);
    for (int i = 0; i < SKY_CMAP_SIZE; i++)
      row[i] = (guint32) rgba[4 * i] << 16 | (guint32) rgba[4 * i + 1] << 8 | rgba[4 * i + 2];
    cairo_surface_mark_dirty (strip);
  }
  cairo_save (cr);
  cairo_translate (cr, bar_x, 2);
  cairo_scale (cr, bar_w / SKY_CMAP_SIZE, BAR_HEIGHT);
  cairo_set_source_surface (cr, strip, 0, 0);
  cairo_pattern_set_filter (cairo_get_source (cr), CAIRO_FILTER_NEAREST);
  cairo_rectangle (cr, 0, 0, SKY_CMAP_SIZE, 1);
  cairo_fill (cr);
  cairo_restore (cr);
  cairo_surface_destroy (strip);

  gdk_cairo_set_source_rgba (cr, &fg);
  cairo_set_line_width (cr, 1);
  cairo_rectangle (cr, bar_x - 0.5, 1.5, bar_w + 1, BAR_HEIGHT + 1);
  cairo_stroke (cr);

  /* Ticks at round values, where the stretch puts them. */
  {
    cairo_text_extents_t digit;
    SkyTick ticks[MAX_TICKS];
    int n;

    cairo_text_extents (cr, "0", &digit);
    n = sky_ticks_choose (stretch, lo, hi, eq, bar_w, digit.x_advance, ticks, MAX_TICKS);
    for (int k = 0; k < n; k++)
      {
        double x = bar_x + ticks[k].t * bar_w;
        cairo_text_extents_t ext;

        cairo_move_to (cr, floor (x) + 0.5, BAR_HEIGHT + 3);
        cairo_line_to (cr, floor (x) + 0.5, BAR_HEIGHT + 6);
        cairo_stroke (cr);
        cairo_text_extents (cr, ticks[k].label, &ext);
        x = CLAMP (x - ext.x_advance / 2, 0, w - unit_w - ext.x_advance);
        cairo_move_to (cr, x, BAR_HEIGHT + 17);
        cairo_show_text (cr, ticks[k].label);
      }
  }
  if (unit_w)
    {
      cairo_move_to (cr, w - unit_w + 6, BAR_HEIGHT);
      cairo_show_text (cr, image->image.bunit);
    }
  cairo_destroy (cr);
}

static void
sky_color_bar_measure (GtkWidget *widget, GtkOrientation orientation, int for_size,
                       int *minimum, int *natural, int *minimum_baseline, int *natural_baseline)
{
  if (orientation == GTK_ORIENTATION_HORIZONTAL)
    *minimum = 120, *natural = 320;
  else
    *minimum = *natural = BAR_HEIGHT + 21;
}

static void
sky_color_bar_dispose (GObject *object)
{
  sky_color_bar_set_view (SKY_COLOR_BAR (object), NULL);
  G_OBJECT_CLASS (sky_color_bar_parent_class)->dispose (object);
}

static void
sky_color_bar_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  switch (prop_id)
    {
    case PROP_VIEW:
      g_value_set_object (value, SKY_COLOR_BAR (object)->view);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
sky_color_bar_set_property (GObject *object, guint prop_id, const GValue *value,
                            GParamSpec *pspec)
{
  switch (prop_id)
    {
    case PROP_VIEW:
      sky_color_bar_set_view (SKY_COLOR_BAR (object), g_value_get_object (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
sky_color_bar_class_init (SkyColorBarClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = sky_color_bar_dispose;
  object_class->get_property = sky_color_bar_get_property;
  object_class->set_property = sky_color_bar_set_property;

  widget_class->snapshot = sky_color_bar_snapshot;
  widget_class->measure = sky_color_bar_measure;

  properties[PROP_VIEW] =
    g_param_spec_object ("view", NULL, NULL, SKY_TYPE_IMAGE_VIEW,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  gtk_widget_class_set_css_name (widget_class, "skycolorbar");
}

static void
sky_color_bar_init (SkyColorBar *self)
{
}
