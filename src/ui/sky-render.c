/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Rendering widgets to textures and textures to PNG files. */
#include "sky-render.h"
#include "sky-image-data.h"

#include <math.h>

static char *gl_renderer;
static int gl_software = -1;   /* -1: not probed */
static char *cpu_view_reason;

void
sky_render_set_gl_probe (const char *renderer, gboolean software)
{
  g_free (gl_renderer);
  gl_renderer = g_strdup (renderer);
  gl_software = renderer == NULL || software;
}

gboolean
sky_render_view_on_cpu (void)
{
  const char *choice = g_getenv ("SKYSIFT_VIEW");

  if (g_strcmp0 (choice, "cpu") == 0)
    return TRUE;
  if (g_strcmp0 (choice, "gl") == 0)
    return FALSE;
  return gl_software == 1;
}

const char *
sky_render_cpu_view_reason (void)
{
  if (cpu_view_reason == NULL)
    {
      if (g_strcmp0 (g_getenv ("SKYSIFT_VIEW"), "cpu") == 0)
        cpu_view_reason = g_strdup ("drawn on the CPU (SKYSIFT_VIEW=cpu)");
      else if (gl_renderer == NULL)
        cpu_view_reason = g_strdup ("drawn on the CPU: no OpenGL context");
      else
        cpu_view_reason = g_strdup_printf ("drawn on the CPU: OpenGL is software (%s)",
                                           gl_renderer);
    }
  return cpu_view_reason;
}

/* A toplevel keeps no render node of its own that a GtkWidgetPaintable
 * could show: draw its title bar and content one by one on the window's
 * background, cropped to them (no client-side shadow). */
static GskRenderNode *
window_node (GtkWindow *window, double scale, graphene_rect_t *area)
{
  GtkWidget *parts[] = { gtk_window_get_titlebar (window), gtk_window_get_child (window) };
  GtkStyleContext *style = gtk_widget_get_style_context (GTK_WIDGET (window));
  graphene_rect_t bounds[2];
  gboolean have[2] = { FALSE, FALSE };
  GtkSnapshot *snapshot;
  GdkRGBA bg = { 0.98, 0.98, 0.98, 1 };

  *area = GRAPHENE_RECT_INIT (0, 0, 0, 0);
  for (int i = 0; i < 2; i++)
    if (parts[i] && gtk_widget_get_mapped (parts[i])
        && gtk_widget_compute_bounds (parts[i], GTK_WIDGET (window), &bounds[i]))
      {
        if (area->size.width == 0)
          *area = bounds[i];
        else
          graphene_rect_union (area, &bounds[i], area);
        have[i] = TRUE;
      }
  if (area->size.width <= 0 || area->size.height <= 0)
    return NULL;
  gtk_style_context_lookup_color (style, "window_bg_color", &bg);
  snapshot = gtk_snapshot_new ();
  gtk_snapshot_scale (snapshot, scale, scale);
  gtk_snapshot_append_color (snapshot, &bg, &GRAPHENE_RECT_INIT (0, 0, area->size.width,
                                                                 area->size.height));
  for (int i = 0; i < 2; i++)
    if (have[i])
      {
        g_autoptr (GdkPaintable) paintable = gtk_widget_paintable_new (parts[i]);
        gtk_snapshot_save (snapshot);
        gtk_snapshot_translate (snapshot, &GRAPHENE_POINT_INIT (bounds[i].origin.x - area->origin.x,
                                                                bounds[i].origin.y - area->origin.y));
        gdk_paintable_snapshot (paintable, snapshot, bounds[i].size.width, bounds[i].size.height);
        gtk_snapshot_restore (snapshot);
      }
  return gtk_snapshot_free_to_node (snapshot);
}

GdkTexture *
sky_render_widget (GtkWidget *widget, double zoom, GError **error)
{
  GtkNative *native = gtk_widget_get_native (widget);
  int w = gtk_widget_get_width (widget), h = gtk_widget_get_height (widget);
  double scale = gtk_widget_get_scale_factor (widget) * zoom;
  g_autoptr (GskRenderNode) node = NULL;
  graphene_rect_t area = GRAPHENE_RECT_INIT (0, 0, w, h);

  if (native == NULL || !gtk_widget_get_mapped (widget) || w <= 0 || h <= 0)
    {
      g_set_error_literal (error, SKY_UI_ERROR, 0, "nothing to render: the widget is not on screen");
      return NULL;
    }
  if (GTK_IS_WINDOW (widget))
    node = window_node (GTK_WINDOW (widget), scale, &area);
  else
    {
      g_autoptr (GdkPaintable) paintable = gtk_widget_paintable_new (widget);
      GtkSnapshot *snapshot = gtk_snapshot_new ();
      gtk_snapshot_scale (snapshot, scale, scale);
      gdk_paintable_snapshot (paintable, snapshot, w, h);
      node = gtk_snapshot_free_to_node (snapshot);
    }
  if (node == NULL)
    {
      g_set_error_literal (error, SKY_UI_ERROR, 0, "nothing to render: the widget drew nothing");
      return NULL;
    }
  return gsk_renderer_render_texture (gtk_native_get_renderer (native), node,
                                      &GRAPHENE_RECT_INIT (0, 0, ceil (area.size.width * scale),
                                                           ceil (area.size.height * scale)));
}

typedef struct {
  guchar *pixels;     /* cairo ARGB32, which is what gdk_texture_download gives */
  int width, height;
  gsize stride;
  char *path;
} PngJob;

static void
png_job_free (PngJob *job)
{
  g_free (job->pixels);
  g_free (job->path);
  g_free (job);
}

static cairo_status_t
append_bytes (void *closure, const unsigned char *data, unsigned int length)
{
  g_byte_array_append (closure, data, length);
  return CAIRO_STATUS_SUCCESS;
}

/* Encodes in memory, then writes through the core's atomic writer, as the
 * catalogue is written: a temporary renamed into place, nothing left on
 * failure, and a message that names the file and the reason. */
static void
png_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  PngJob *job = task_data;
  g_autoptr (GByteArray) png = g_byte_array_new ();
  cairo_surface_t *surface =
    cairo_image_surface_create_for_data (job->pixels, CAIRO_FORMAT_ARGB32, job->width, job->height,
                                         (int) job->stride);
  cairo_status_t status = cairo_surface_write_to_png_stream (surface, append_bytes, png);

  cairo_surface_destroy (surface);
  if (status != CAIRO_STATUS_SUCCESS)
    g_task_return_new_error (task, SKY_UI_ERROR, 0, "%s: cannot encode the PNG: %s", job->path,
                             cairo_status_to_string (status));
  else if (sky_write_bytes (job->path, png->data, png->len) != SKY_OK)
    g_task_return_new_error (task, SKY_UI_ERROR, 0, "%s", sky_last_error ());
  else
    g_task_return_boolean (task, TRUE);
}

void
sky_texture_save_png_async (GdkTexture *texture,
                            const char *path,
                            GCancellable *cancellable,
                            GAsyncReadyCallback callback,
                            gpointer user_data)
{
  g_autoptr (GTask) task = g_task_new (NULL, cancellable, callback, user_data);
  PngJob *job = g_new0 (PngJob, 1);

  job->width = gdk_texture_get_width (texture);
  job->height = gdk_texture_get_height (texture);
  job->stride = (gsize) cairo_format_stride_for_width (CAIRO_FORMAT_ARGB32, job->width);
  job->pixels = g_malloc (job->stride * job->height);
  job->path = g_strdup (path);
  gdk_texture_download (texture, job->pixels, job->stride);
  g_task_set_source_tag (task, sky_texture_save_png_async);
  g_task_set_task_data (task, job, (GDestroyNotify) png_job_free);
  g_task_run_in_thread (task, png_thread);
}

gboolean
sky_texture_save_png_finish (GAsyncResult *result, GError **error)
{
  return g_task_propagate_boolean (G_TASK (result), error);
}
