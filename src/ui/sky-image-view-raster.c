/* SPDX-License-Identifier: GPL-3.0-or-later */
/* SkyImageView drawn on the CPU (sky-raster.h): a worker draws the picture
 * for the current state; until it is done, the last picture is shown moved
 * and scaled to where the new state puts it, so that panning and zooming
 * answer at once. One worker at a time; a state that changed meanwhile is
 * drawn next. */
#include "sky-image-view-private.h"
#include "sky-raster.h"

#include <string.h>

typedef struct {
  SkyImageView *self;
  SkyImageData *image;
  /* The run's mask and labels, held by the job itself: the window may give
   * the run's arrays to the next run while this draws (sky_run_give_back). */
  SkyBuffer *mask, *labels;
  SkyRasterParams params;
  float eq[SKY_EQ_SIZE];
  guint8 cmap[SKY_CMAP_SIZE * 4];
  guint64 serial;
  double zoom, cx, cy;
  gboolean flip;
  int width, height, scale;
} RasterJob;

static void
raster_job_free (RasterJob *job)
{
  g_object_unref (job->self);
  sky_image_data_unref (job->image);
  sky_buffer_unref (job->mask);
  sky_buffer_unref (job->labels);
  g_free (job);
}

static void
raster_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  RasterJob *job = data;
  gsize stride = (gsize) job->params.width * 4;
  guint8 *rgba = g_malloc (stride * job->params.height);

  gint64 t0 = g_get_monotonic_time ();
  sky_raster_render (&job->image->pyramid, &job->params, rgba, stride, 0);
  g_debug ("raster %d x %d in %.1f ms", job->params.width, job->params.height,
           (g_get_monotonic_time () - t0) / 1000.0);
  g_task_return_pointer (task, g_bytes_new_take (rgba, stride * job->params.height),
                         (GDestroyNotify) g_bytes_unref);
}

static void
on_raster_done (GObject *source, GAsyncResult *result, gpointer data)
{
  RasterJob *job = g_task_get_task_data (G_TASK (result));
  SkyImageView *self = job->self;
  g_autoptr (GBytes) bytes = g_task_propagate_pointer (G_TASK (result), NULL);

  self->raster_busy = FALSE;
  if (bytes != NULL && job->image == sky_image_view_pixels (self))
    {
      g_clear_object (&self->frame);
      self->frame = gdk_memory_texture_new (job->params.width, job->params.height,
                                            GDK_MEMORY_R8G8B8A8, bytes,
                                            (gsize) job->params.width * 4);
      self->frame_zoom = job->zoom;
      self->frame_cx = job->cx;
      self->frame_cy = job->cy;
      self->frame_flip = job->flip;
      self->frame_width = job->width;
      self->frame_height = job->height;
      self->frame_serial = job->serial;
      gtk_widget_queue_draw (GTK_WIDGET (self));
    }
  if (self->frame_serial == self->serial)
    self->render_current = TRUE;
  else
    sky_image_view_raster_request (self);
}

void
sky_image_view_raster_request (SkyImageView *self)
{
  GtkWidget *widget = GTK_WIDGET (self);
  g_autoptr (GTask) task = NULL;
  RasterJob *job;
  int scale = gtk_widget_get_scale_factor (widget);
  int width = gtk_widget_get_width (widget), height = gtk_widget_get_height (widget);
  int lod, overlay;
  double lo, hi;
  const float *eq;

  if (self->raster_busy || self->image == NULL || width <= 0 || height <= 0)
    return;
  self->raster_busy = TRUE;
  job = g_new0 (RasterJob, 1);
  job->self = g_object_ref (self);
  job->image = sky_image_data_ref (sky_image_view_pixels (self));
  if (self->run != NULL && self->run->mask != NULL)
    job->mask = sky_buffer_ref (self->run->stages.mask_buffer);
  if (self->run != NULL && self->run->labels != NULL)
    job->labels = sky_buffer_ref (self->run->stages.labels_buffer);
  job->serial = self->serial;
  job->zoom = self->zoom;
  job->cx = self->cx;
  job->cy = self->cy;
  job->flip = self->flip_x;
  job->width = width;
  job->height = height;
  job->scale = scale;

  sky_image_view_frame_setup (self, self->zoom * scale, &lod, &overlay);
  sky_image_view_get_scale (self, &lo, &hi, &eq);
  if (eq)
    memcpy (job->eq, eq, sizeof job->eq);
  sky_colormap_fill (self->colormap, job->cmap);
  job->params = (SkyRasterParams) {
    .width = width * scale,
    .height = height * scale,
    .fb_zoom = self->zoom * scale,
    .cx = self->cx,
    .cy = self->cy,
    .flip_x = self->flip_x,
    .lod = lod,
    .lo = lo,
    .hi = hi,
    .stretch = self->stretch,
    .eq = job->eq,
    .cmap = job->cmap,
    .overlay = overlay,
    .selected = (gint32) (self->selected + 1),
    .mask = sky_buffer_data (job->mask),
    .labels = sky_buffer_data (job->labels),
    .background = { 59, 59, 61 },
    .blank = { 140, 158, 191 },
  };
  task = g_task_new (NULL, NULL, on_raster_done, NULL);
  g_task_set_task_data (task, job, (GDestroyNotify) raster_job_free);
  g_task_run_in_thread (task, raster_thread);
}

/* The last picture where the current state puts the image: for an image
 * point seen at s_old in it, s = centre + (s_old - old centre) * k + shift. */
void
sky_image_view_raster_snapshot (SkyImageView *self, GtkSnapshot *snapshot)
{
  int w = gtk_widget_get_width (GTK_WIDGET (self)), h = gtk_widget_get_height (GTK_WIDGET (self));
  static const GdkRGBA background = { 59 / 255.0f, 59 / 255.0f, 61 / 255.0f, 1 };
  double k, f = self->flip_x ? -1 : 1;

  gtk_snapshot_append_color (snapshot, &background, &GRAPHENE_RECT_INIT (0, 0, w, h));
  if (self->frame == NULL || self->image == NULL || self->frame_flip != self->flip_x)
    return;
  k = self->zoom / self->frame_zoom;
  gtk_snapshot_push_clip (snapshot, &GRAPHENE_RECT_INIT (0, 0, w, h));
  gtk_snapshot_save (snapshot);
  gtk_snapshot_translate (snapshot,
                          &GRAPHENE_POINT_INIT (w / 2.0 + (self->frame_cx - self->cx) * self->zoom * f
                                                  - self->frame_width / 2.0 * k,
                                                h / 2.0 - (self->frame_cy - self->cy) * self->zoom
                                                  - self->frame_height / 2.0 * k));
  gtk_snapshot_scale (snapshot, k, k);
  gtk_snapshot_append_texture (snapshot, self->frame,
                               &GRAPHENE_RECT_INIT (0, 0, self->frame_width, self->frame_height));
  gtk_snapshot_restore (snapshot);
  gtk_snapshot_pop (snapshot);
}
