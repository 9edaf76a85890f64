/* SPDX-License-Identifier: GPL-3.0-or-later */
/* SkyImageView: display settings, zoom and pan, its properties and signals.
 * Input is in sky-image-view-input.c, frame waiters in -frames.c, the two
 * drawing paths in -gl.c and -raster.c, markers in -overlay.c. */
#include "sky-image-view-private.h"
#include "sky-raster.h"
#include "sky-render.h"
#include "sky-ui-signal.h"

#include <math.h>

G_DEFINE_FINAL_TYPE (SkyImageView, sky_image_view, GTK_TYPE_WIDGET)

enum {
  PROP_0,
  PROP_STRETCH,
  PROP_LIMITS,
  PROP_COLORMAP,
  PROP_FLIP_X,
  PROP_ZOOM,
  PROP_SHOW_MASK,
  PROP_SHOW_LABELS,
  PROP_SHOW_MARKERS,
  N_PROPS
};

enum {
  POINTER_MOVED,
  SOURCE_ACTIVATED,
  DISPLAY_CHANGED,
  VIEW_MOVED,
  N_SIGNALS
};

static GParamSpec *properties[N_PROPS];
static guint signals[N_SIGNALS];


static double
fit_zoom (SkyImageView *self)
{
  int w = gtk_widget_get_width (GTK_WIDGET (self)), h = gtk_widget_get_height (GTK_WIDGET (self));
  if (self->image == NULL || w <= 0 || h <= 0)
    return 1;
  return MIN (w / (double) self->image->image.nx, h / (double) self->image->image.ny);
}

static double
clamp_zoom (SkyImageView *self, double zoom)
{
  double lowest = MIN (fit_zoom (self) / 2, 1.0);

  if (isnan (zoom))
    return self->zoom;
  return CLAMP (zoom, MAX (lowest, 1.0 / 4096), SKY_IMAGE_VIEW_MAX_ZOOM);
}

void
sky_image_view_image_to_widget (SkyImageView *self, double ix, double iy, double *wx, double *wy)
{
  sky_image_view_to_widget_in (self, gtk_widget_get_width (GTK_WIDGET (self)),
                               gtk_widget_get_height (GTK_WIDGET (self)), ix, iy, wx, wy);
}

void
sky_image_view_widget_to_image (SkyImageView *self, double wx, double wy, double *ix, double *iy)
{
  double w = gtk_widget_get_width (GTK_WIDGET (self)), h = gtk_widget_get_height (GTK_WIDGET (self));
  *ix = self->cx + (wx - w / 2) / self->zoom * (self->flip_x ? -1 : 1);
  *iy = self->cy - (wy - h / 2) / self->zoom;
}

/* Everything that changes the picture goes through here: the GL area
 * renders again when gl_too, the markers are drawn again in any case, and
 * the frame that shows it releases the when_drawn callbacks. */
void
sky_image_view_state_changed (SkyImageView *self, gboolean gl_too)
{
  self->render_current = FALSE;
  self->drawn_current = FALSE;
  if (gl_too && self->use_raster)
    {
      self->serial++;
      sky_image_view_raster_request (self);
    }
  else if (gl_too)
    gtk_gl_area_queue_render (GTK_GL_AREA (self->area));
  else
    self->render_current = !self->use_raster || self->frame_serial == self->serial;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
sky_image_view_frame_setup (SkyImageView *self, double fb_zoom, int *lod, int *overlay)
{
  *lod = 0;
  *overlay = 0;
  if (self->image == NULL)
    return;
  {
    const SkyPyramid *pyr = &sky_image_view_pixels (self)->pyramid;
    int nlevels = sky_pyramid_levels (pyr);
    while (*lod < nlevels - 1 && fb_zoom * (1 << (*lod + 1)) <= 1.0)
      (*lod)++;
    /* A reduced view holds one level: finer ones are drawn from it. */
    *lod = MAX (*lod, pyr->first);
  }
  if (self->run == NULL || (!self->use_raster && !self->overlays_uploadable))
    return;
  if (self->show_mask && self->run->mask)
    *overlay |= SKY_OVERLAY_MASK;
  if (self->show_labels && self->run->labels)
    *overlay |= SKY_OVERLAY_LABELS;
  /* Outlines once a pixel is four screen pixels wide. */
  if ((self->show_labels || self->show_markers) && self->run->labels && fb_zoom >= 4)
    *overlay |= SKY_OVERLAY_OUTLINES;
}

void
sky_image_view_pointer_update (SkyImageView *self)
{
  double ix = 0, iy = 0;
  /* A reduced view has no pixel values to read out. */
  gboolean over_image = self->pointer_inside && self->image != NULL && !self->image->is_preview;
  if (over_image)
    sky_image_view_widget_to_image (self, self->pointer_x, self->pointer_y, &ix, &iy);
  g_signal_emit (self, signals[POINTER_MOVED], 0, over_image, ix, iy);
}

static void
refresh_eq (SkyImageView *self)
{
  double lo, hi;
  if (self->image == NULL)
    return;
  sky_image_view_get_scale (self, &lo, &hi, NULL);
  sky_display_stats_fill_eq (&sky_image_view_pixels (self)->stats, lo, hi, self->eq);
  self->eq_dirty = TRUE;
}

static void
display_changed (SkyImageView *self)
{
  sky_image_view_state_changed (self, TRUE);
  g_signal_emit (self, signals[DISPLAY_CHANGED], 0);
}

void
sky_image_view_set_view (SkyImageView *self, double zoom, double cx, double cy)
{
  gboolean zoom_changed = zoom != self->zoom;
  self->zoom = zoom;
  self->cx = cx;
  self->cy = cy;
  sky_image_view_state_changed (self, TRUE);
  sky_image_view_pointer_update (self);
  if (zoom_changed)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ZOOM]);
  g_signal_emit (self, signals[VIEW_MOVED], 0);
}

/* Zooms keeping the image point under widget point (wx, wy) where it is. */
void
sky_image_view_zoom_around (SkyImageView *self, double zoom, double wx, double wy)
{
  double w = gtk_widget_get_width (GTK_WIDGET (self)), h = gtk_widget_get_height (GTK_WIDGET (self));
  double ix, iy;

  if (self->image == NULL)
    return;
  zoom = clamp_zoom (self, zoom);
  sky_image_view_widget_to_image (self, wx, wy, &ix, &iy);
  self->fitted = FALSE;
  sky_image_view_set_view (self, zoom, ix - (wx - w / 2) / zoom * (self->flip_x ? -1 : 1),
                           iy + (wy - h / 2) / zoom);
}

/* ------------------------------------------------------------ public API */

GtkWidget *
sky_image_view_new (void)
{
  return g_object_new (SKY_TYPE_IMAGE_VIEW, NULL);
}


void
sky_image_view_set_image (SkyImageView *self, SkyImageData *image)
{
  g_return_if_fail (SKY_IS_IMAGE_VIEW (self));

  if (image == self->image && self->source == NULL)
    return;
  g_clear_pointer (&self->source, sky_image_data_unref);
  g_clear_pointer (&self->run, sky_run_unref);
  g_clear_pointer (&self->draw_order, g_free);
  g_clear_pointer (&self->shown, sky_image_data_unref);
  self->mesh_box = 0;
  g_clear_pointer (&self->image, sky_image_data_unref);
  self->image = image ? sky_image_data_ref (image) : NULL;
  sky_image_view_tools_forget (self, TRUE);
  if (self->image == NULL)
    sky_image_view_release_when_drawn (self);
  self->selected = -1;
  self->image_dirty = self->mask_dirty = self->labels_dirty = TRUE;
  self->image_on_device = 0;
  /* Limits typed for another image mean nothing for this one. */
  if (self->limits == SKY_LIMITS_TYPED)
    {
      self->limits = SKY_LIMITS_MINMAX;
      self->typed_lo = self->typed_hi = 0;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_LIMITS]);
    }
  if (image != NULL && image->flip_x != self->flip_x)
    {
      self->flip_x = image->flip_x;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_FLIP_X]);
    }
  refresh_eq (self);
  sky_image_view_fit (self);
  g_signal_emit (self, signals[DISPLAY_CHANGED], 0);
}

void
sky_image_view_levels_changed (SkyImageView *self, SkyImageData *image)
{
  g_return_if_fail (SKY_IS_IMAGE_VIEW (self));
  if (image == NULL || sky_image_view_pixels (self) != image)
    return;
  /* Only the new levels go up to a texture (level 0 is there already);
   * the statistics may be exact now where they were of a sample. */
  self->levels_dirty = TRUE;
  refresh_eq (self);
  sky_image_view_state_changed (self, TRUE);
  g_signal_emit (self, signals[DISPLAY_CHANGED], 0);
}

void
sky_image_view_set_display_image (SkyImageView *self, SkyImageData *display)
{
  SkyImageData *source;

  g_return_if_fail (SKY_IS_IMAGE_VIEW (self));
  source = self->source ? self->source : self->image;
  if (source == NULL || (display == NULL && self->source == NULL))
    return;
  g_return_if_fail (display == NULL || (display->image.nx == source->image.nx
                                        && display->image.ny == source->image.ny));
  if (display == NULL)
    {
      g_clear_pointer (&self->image, sky_image_data_unref);
      self->image = g_steal_pointer (&self->source);
    }
  else
    {
      if (self->source == NULL)
        self->source = g_steal_pointer (&self->image);
      else
        g_clear_pointer (&self->image, sky_image_data_unref);
      self->image = sky_image_data_ref (display);
    }
  self->image_dirty = TRUE;
  self->image_on_device = 0;
  refresh_eq (self);
  sky_image_view_state_changed (self, TRUE);
  g_signal_emit (self, signals[DISPLAY_CHANGED], 0);
}

SkyImageData *
sky_image_view_get_display_image (SkyImageView *self)
{
  g_return_val_if_fail (SKY_IS_IMAGE_VIEW (self), NULL);
  return self->source ? self->image : NULL;
}

void
sky_image_view_set_image_on_device (SkyImageView *self, guint64 convolved)
{
  g_return_if_fail (SKY_IS_IMAGE_VIEW (self));
  self->image_on_device = convolved;
}

const char *
sky_image_view_get_image_fill (SkyImageView *self)
{
  g_return_val_if_fail (SKY_IS_IMAGE_VIEW (self), NULL);
  /* The CPU drawing path reads the host's pixels; no texture at all. */
  if (self->use_raster && self->image != NULL)
    return "drawn on the CPU from host memory";
  return self->image_fill;
}

void
sky_image_view_show_pixels (SkyImageView *self, SkyImageData *shown, int mesh_box)
{
  g_return_if_fail (SKY_IS_IMAGE_VIEW (self));
  g_return_if_fail (shown == NULL
                    || (self->image != NULL && shown->image.nx == self->image->image.nx
                        && shown->image.ny == self->image->image.ny));

  if (shown == self->shown && mesh_box == self->mesh_box)
    return;
  self->mesh_box = mesh_box;
  if (shown != self->shown)
    {
      g_clear_pointer (&self->shown, sky_image_data_unref);
      self->shown = shown ? sky_image_data_ref (shown) : NULL;
      self->image_dirty = TRUE;
      /* Limits typed for other pixels mean nothing for these. */
      if (self->limits == SKY_LIMITS_TYPED)
        {
          self->limits = SKY_LIMITS_MINMAX;
          g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_LIMITS]);
        }
      refresh_eq (self);
    }
  sky_image_view_state_changed (self, TRUE);
  g_signal_emit (self, signals[DISPLAY_CHANGED], 0);
}

SkyImageData *
sky_image_view_get_shown_pixels (SkyImageView *self)
{
  g_return_val_if_fail (SKY_IS_IMAGE_VIEW (self), NULL);
  return self->shown;
}

SkyImageData *
sky_image_view_get_image (SkyImageView *self)
{
  g_return_val_if_fail (SKY_IS_IMAGE_VIEW (self), NULL);
  /* A reduced view is no image to read pixels from. */
  return self->image != NULL && !self->image->is_preview ? self->image : NULL;
}

static int
compare_sum_desc (gconstpointer a, gconstpointer b, gpointer data)
{
  const SkyCatalogue *cat = data;
  double x = cat->sum[*(const gint64 *) a], y = cat->sum[*(const gint64 *) b];
  return (x < y) - (x > y);
}

void
sky_image_view_set_run (SkyImageView *self, SkyRun *run)
{
  g_return_if_fail (SKY_IS_IMAGE_VIEW (self));
  g_return_if_fail (run == NULL || run->image == (self->source ? self->source : self->image));

  if (run == self->run)
    return;
  if (self->run == NULL || run == NULL || run->mask != self->run->mask)
    self->mask_dirty = TRUE;
  if (self->run == NULL || run == NULL || run->labels != self->run->labels)
    self->labels_dirty = TRUE;
  g_clear_pointer (&self->run, sky_run_unref);
  g_clear_pointer (&self->draw_order, g_free);
  self->run = run ? sky_run_ref (run) : NULL;
  sky_image_view_tools_forget (self, FALSE);
  /* The pipeline sorted them on its worker; a run made otherwise here. */
  if (run != NULL && run->by_sum != NULL)
    self->draw_order = g_memdup2 (run->by_sum, run->catalogue.n * sizeof (gint64));
  else if (run != NULL && sky_run_has (run, SKY_STEP_MEASURE) && run->catalogue.n > 0)
    {
      self->draw_order = g_new (gint64, run->catalogue.n);
      for (gint64 i = 0; i < run->catalogue.n; i++)
        self->draw_order[i] = i;
      g_qsort_with_data (self->draw_order, (gint) run->catalogue.n, sizeof (gint64), compare_sum_desc,
                    &run->catalogue);
    }
  if (run == NULL || self->selected >= run->catalogue.n)
    self->selected = -1;
  sky_image_view_state_changed (self, TRUE);
}

void
sky_image_view_fit (SkyImageView *self)
{
  g_return_if_fail (SKY_IS_IMAGE_VIEW (self));
  if (self->image == NULL)
    return;
  self->fitted = TRUE;
  sky_image_view_set_view (self, fit_zoom (self), self->image->image.nx / 2.0, self->image->image.ny / 2.0);
}

void
sky_image_view_set_zoom (SkyImageView *self, double zoom)
{
  g_return_if_fail (SKY_IS_IMAGE_VIEW (self));
  sky_image_view_zoom_around (self, zoom, gtk_widget_get_width (GTK_WIDGET (self)) / 2.0,
               gtk_widget_get_height (GTK_WIDGET (self)) / 2.0);
}

double
sky_image_view_get_zoom (SkyImageView *self)
{
  g_return_val_if_fail (SKY_IS_IMAGE_VIEW (self), 1);
  return self->zoom;
}

/* One image pixel to one device pixel. */
void
sky_image_view_zoom_one (SkyImageView *self)
{
  sky_image_view_set_zoom (self, 1.0 / gtk_widget_get_scale_factor (GTK_WIDGET (self)));
}

void
sky_image_view_zoom_in (SkyImageView *self)
{
  sky_image_view_set_zoom (self, sky_image_view_next_zoom (self->zoom, 1));
}

void
sky_image_view_zoom_out (SkyImageView *self)
{
  sky_image_view_set_zoom (self, sky_image_view_next_zoom (self->zoom, -1));
}

void
sky_image_view_get_center (SkyImageView *self, double *x, double *y)
{
  *x = self->cx - 0.5;
  *y = self->cy - 0.5;
}

gboolean
sky_image_view_get_fitted (SkyImageView *self)
{
  return self->fitted;
}

void
sky_image_view_set_center_zoom (SkyImageView *self, double zoom, double x, double y)
{
  g_return_if_fail (SKY_IS_IMAGE_VIEW (self));
  if (self->image == NULL || !isfinite (x) || !isfinite (y) || !(zoom > 0))
    return;
  self->fitted = FALSE;
  sky_image_view_set_view (self, clamp_zoom (self, zoom), x + 0.5, y + 0.5);
}

void
sky_image_view_center_on (SkyImageView *self, double x, double y)
{
  g_return_if_fail (SKY_IS_IMAGE_VIEW (self));
  if (self->image == NULL)
    return;
  self->fitted = FALSE;
  sky_image_view_set_view (self, self->zoom, x + 0.5, y + 0.5);
}

void
sky_image_view_set_selected (SkyImageView *self, gint64 index)
{
  g_return_if_fail (SKY_IS_IMAGE_VIEW (self));
  if (self->run == NULL || index < 0 || index >= self->run->catalogue.n)
    index = -1;
  if (index == self->selected)
    return;
  self->selected = index;
  sky_image_view_state_changed (self, TRUE);
}

void
sky_image_view_set_typed_limits (SkyImageView *self, double lo, double hi)
{
  g_return_if_fail (SKY_IS_IMAGE_VIEW (self));
  if (!(hi > lo) || !isfinite (lo) || !isfinite (hi))
    return;
  self->typed_lo = lo;
  self->typed_hi = hi;
  if (self->limits != SKY_LIMITS_TYPED)
    {
      self->limits = SKY_LIMITS_TYPED;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_LIMITS]);
    }
  refresh_eq (self);
  display_changed (self);
}

void
sky_image_view_get_scale (SkyImageView *self, double *lo, double *hi, const float **eq)
{
  double a = 0, b = 1;
  if (self->image != NULL && self->limits == SKY_LIMITS_TYPED)
    {
      a = self->typed_lo;
      b = self->typed_hi;
    }
  else if (self->image != NULL)
    {
      a = sky_image_view_pixels (self)->stats.lo[self->limits];
      b = sky_image_view_pixels (self)->stats.hi[self->limits];
    }
  if (self->image != NULL)
    {
      if (!(b > a))
        {
          a -= 0.5;
          b = a + 1;
        }
    }
  *lo = a;
  *hi = b;
  if (eq)
    *eq = self->stretch == SKY_STRETCH_HISTEQ ? self->eq : NULL;
}

/* ------------------------------------------------------------- GtkWidget */

static void
on_area_realize (GtkWidget *area, SkyImageView *self)
{
  sky_image_view_gl_realize (self);
}

static void
on_area_unrealize (GtkWidget *area, SkyImageView *self)
{
  sky_image_view_gl_unrealize (self);
}

static gboolean
on_area_render (GtkGLArea *area, GdkGLContext *context, SkyImageView *self)
{
  return sky_image_view_gl_render (self);
}

static void
sky_image_view_size_allocate (GtkWidget *widget, int width, int height, int baseline)
{
  SkyImageView *self = SKY_IMAGE_VIEW (widget);

  if (!self->use_raster)
    gtk_widget_allocate (self->area, width, height, baseline, NULL);
  if (self->fitted && self->image != NULL && fit_zoom (self) != self->zoom)
    sky_image_view_set_view (self, fit_zoom (self), self->image->image.nx / 2.0, self->image->image.ny / 2.0);
  else if (self->use_raster && (width != self->frame_width || height != self->frame_height))
    sky_image_view_state_changed (self, TRUE);
}

static void
sky_image_view_measure (GtkWidget *widget, GtkOrientation orientation, int for_size,
                        int *minimum, int *natural, int *minimum_baseline, int *natural_baseline)
{
  *minimum = 64;
  *natural = 640;
}

static void
sky_image_view_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  SkyImageView *self = SKY_IMAGE_VIEW (widget);

  if (self->use_raster)
    sky_image_view_raster_snapshot (self, snapshot);
  else
    gtk_widget_snapshot_child (widget, self->area, snapshot);
  sky_image_view_grid_snapshot (self, snapshot);
  sky_image_view_overlay_snapshot (self, snapshot);
  sky_image_view_catalogues_snapshot (self, snapshot);
}

static void
sky_image_view_realize (GtkWidget *widget)
{
  SkyImageView *self = SKY_IMAGE_VIEW (widget);

  GTK_WIDGET_CLASS (sky_image_view_parent_class)->realize (widget);
  /* Drawn on the CPU, the view has no textures: say so as the display
   * path (the GL area's realize says it otherwise). */
  if (self->use_raster)
    sky_gl_interop_free (sky_gl_interop_new (NULL, sky_render_cpu_view_reason ()));
  self->frame_clock = gtk_widget_get_frame_clock (widget);
  self->after_paint_id = g_signal_connect (self->frame_clock, "after-paint",
                                           G_CALLBACK (sky_image_view_after_paint), self);
}

static void
sky_image_view_unmap (GtkWidget *widget)
{
  GTK_WIDGET_CLASS (sky_image_view_parent_class)->unmap (widget);
  sky_image_view_release_when_drawn (SKY_IMAGE_VIEW (widget));
}

static void
sky_image_view_unrealize (GtkWidget *widget)
{
  SkyImageView *self = SKY_IMAGE_VIEW (widget);

  g_clear_signal_handler (&self->after_paint_id, self->frame_clock);
  self->frame_clock = NULL;
  GTK_WIDGET_CLASS (sky_image_view_parent_class)->unrealize (widget);
}

/* ------------------------------------------------------------- GObject */

static void
sky_image_view_dispose (GObject *object)
{
  SkyImageView *self = SKY_IMAGE_VIEW (object);

  g_clear_pointer (&self->area, gtk_widget_unparent);
  g_clear_pointer (&self->run, sky_run_unref);
  g_clear_pointer (&self->shown, sky_image_data_unref);
  g_clear_pointer (&self->image, sky_image_data_unref);
  g_clear_pointer (&self->source, sky_image_data_unref);
  G_OBJECT_CLASS (sky_image_view_parent_class)->dispose (object);
}

static void
sky_image_view_finalize (GObject *object)
{
  SkyImageView *self = SKY_IMAGE_VIEW (object);

  g_free (self->draw_order);
  sky_image_view_tools_forget (self, TRUE);
  g_free (self->gl_info);
  g_free (self->image_fill);
  g_clear_object (&self->frame);
  g_ptr_array_free (self->when_drawn, TRUE);
  G_OBJECT_CLASS (sky_image_view_parent_class)->finalize (object);
}

static void
sky_image_view_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  SkyImageView *self = SKY_IMAGE_VIEW (object);

  switch (prop_id)
    {
    case PROP_STRETCH:
      g_value_set_uint (value, self->stretch);
      break;
    case PROP_LIMITS:
      g_value_set_uint (value, self->limits);
      break;
    case PROP_COLORMAP:
      g_value_set_uint (value, self->colormap);
      break;
    case PROP_FLIP_X:
      g_value_set_boolean (value, self->flip_x);
      break;
    case PROP_ZOOM:
      g_value_set_double (value, self->zoom);
      break;
    case PROP_SHOW_MASK:
      g_value_set_boolean (value, self->show_mask);
      break;
    case PROP_SHOW_LABELS:
      g_value_set_boolean (value, self->show_labels);
      break;
    case PROP_SHOW_MARKERS:
      g_value_set_boolean (value, self->show_markers);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
set_boolean (SkyImageView *self, gboolean *field, gboolean value, GParamSpec *pspec)
{
  if (*field == value)
    return;
  *field = value;
  sky_image_view_state_changed (self, TRUE);
  g_object_notify_by_pspec (G_OBJECT (self), pspec);
}

static void
sky_image_view_set_property (GObject *object, guint prop_id, const GValue *value,
                             GParamSpec *pspec)
{
  SkyImageView *self = SKY_IMAGE_VIEW (object);
  guint u;

  switch (prop_id)
    {
    case PROP_STRETCH:
      if ((u = g_value_get_uint (value)) != self->stretch)
        {
          self->stretch = u;
          display_changed (self);
          g_object_notify_by_pspec (object, pspec);
        }
      break;
    case PROP_LIMITS:
      if ((u = g_value_get_uint (value)) != self->limits)
        {
          /* Typed limits start from the ones shown. */
          if (u == SKY_LIMITS_TYPED && !(self->typed_hi > self->typed_lo))
            sky_image_view_get_scale (self, &self->typed_lo, &self->typed_hi, NULL);
          self->limits = u;
          refresh_eq (self);
          display_changed (self);
          g_object_notify_by_pspec (object, pspec);
        }
      break;
    case PROP_COLORMAP:
      if ((u = g_value_get_uint (value)) != self->colormap)
        {
          self->colormap = u;
          self->cmap_dirty = TRUE;
          display_changed (self);
          g_object_notify_by_pspec (object, pspec);
        }
      break;
    case PROP_FLIP_X:
      set_boolean (self, &self->flip_x, g_value_get_boolean (value), pspec);
      sky_image_view_pointer_update (self);
      break;
    case PROP_ZOOM:
      sky_image_view_set_zoom (self, g_value_get_double (value));
      break;
    case PROP_SHOW_MASK:
      set_boolean (self, &self->show_mask, g_value_get_boolean (value), pspec);
      break;
    case PROP_SHOW_LABELS:
      set_boolean (self, &self->show_labels, g_value_get_boolean (value), pspec);
      break;
    case PROP_SHOW_MARKERS:
      set_boolean (self, &self->show_markers, g_value_get_boolean (value), pspec);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
sky_image_view_class_init (SkyImageViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = sky_image_view_dispose;
  object_class->finalize = sky_image_view_finalize;
  object_class->get_property = sky_image_view_get_property;
  object_class->set_property = sky_image_view_set_property;

  widget_class->measure = sky_image_view_measure;
  widget_class->size_allocate = sky_image_view_size_allocate;
  widget_class->snapshot = sky_image_view_snapshot;
  widget_class->realize = sky_image_view_realize;
  widget_class->unrealize = sky_image_view_unrealize;
  widget_class->unmap = sky_image_view_unmap;

  properties[PROP_STRETCH] =
    g_param_spec_uint ("stretch", NULL, NULL, 0, SKY_N_STRETCHES - 1, SKY_STRETCH_LOG,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_LIMITS] =
    g_param_spec_uint ("limits", NULL, NULL, 0, SKY_LIMITS_TYPED, SKY_LIMITS_MINMAX,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_COLORMAP] =
    g_param_spec_uint ("colormap", NULL, NULL, 0, SKY_N_COLORMAPS - 1, SKY_COLORMAP_GREY_R,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_FLIP_X] =
    g_param_spec_boolean ("flip-x", NULL, NULL, FALSE,
                          G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_ZOOM] =
    g_param_spec_double ("zoom", NULL, NULL, 0, SKY_IMAGE_VIEW_MAX_ZOOM, 1,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_SHOW_MASK] =
    g_param_spec_boolean ("show-mask", NULL, NULL, FALSE,
                          G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_SHOW_LABELS] =
    g_param_spec_boolean ("show-labels", NULL, NULL, FALSE,
                          G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_SHOW_MARKERS] =
    g_param_spec_boolean ("show-markers", NULL, NULL, FALSE,
                          G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  /* (inside, x, y): the image point under the pointer, 0-based pixels. */
  signals[POINTER_MOVED] =
    sky_ui_signal_new (klass, "pointer-moved", 3, G_TYPE_BOOLEAN, G_TYPE_DOUBLE, G_TYPE_DOUBLE);
  /* (index): a click on a marker; index into the run's catalogue. */
  signals[SOURCE_ACTIVATED] = sky_ui_signal_new (klass, "source-activated", 1, G_TYPE_INT64);
  /* The image, limits, stretch or colour map changed: the colour bar listens. */
  signals[DISPLAY_CHANGED] = sky_ui_signal_new (klass, "display-changed", 0);
  /* The zoom or the centre changed (a pan, a zoom, a fit): locked frames follow. */
  signals[VIEW_MOVED] = sky_ui_signal_new (klass, "view-moved", 0);

  sky_image_view_input_class_init (widget_class);

  gtk_widget_class_set_css_name (widget_class, "skyimageview");
}

static void
sky_image_view_init (SkyImageView *self)
{
  self->zoom = 1;
  self->fitted = TRUE;
  self->stretch = SKY_STRETCH_LOG;
  self->limits = SKY_LIMITS_MINMAX;
  self->colormap = SKY_COLORMAP_GREY_R;
  self->selected = -1;
  self->when_drawn = g_ptr_array_new ();

  self->use_raster = sky_render_view_on_cpu ();
  self->area = gtk_gl_area_new ();
  gtk_gl_area_set_auto_render (GTK_GL_AREA (self->area), FALSE);
  gtk_gl_area_set_required_version (GTK_GL_AREA (self->area), 3, 3);
  gtk_widget_set_parent (self->area, GTK_WIDGET (self));
  gtk_widget_set_visible (self->area, !self->use_raster);
  g_signal_connect_after (self->area, "realize", G_CALLBACK (on_area_realize), self);
  g_signal_connect (self->area, "unrealize", G_CALLBACK (on_area_unrealize), self);
  g_signal_connect (self->area, "render", G_CALLBACK (on_area_render), self);

  gtk_widget_set_focusable (GTK_WIDGET (self), TRUE);
  gtk_widget_set_focus_on_click (GTK_WIDGET (self), TRUE);
  gtk_widget_set_cursor_from_name (GTK_WIDGET (self), "crosshair");

  sky_image_view_input_init (self);
}
