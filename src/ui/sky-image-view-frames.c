/* SPDX-License-Identifier: GPL-3.0-or-later */
/* SkyImageView: telling waiters when a frame shows the view's state, and
 * the picture as a texture. */
#include "sky-image-view-private.h"
#include "sky-render.h"

typedef struct {
  GFunc func;
  gpointer data;
} WhenDrawn;

static gboolean
call_when_drawn (gpointer data)
{
  WhenDrawn *w = data;
  w->func (w->data, NULL);
  g_free (w);
  return G_SOURCE_REMOVE;
}

/* Whether a frame is to come that shows the view's state: with no image
 * there is nothing to draw, and a view that is not mapped (its window
 * hidden or closed) is sent no frames. Waiting then would be for ever. */
static gboolean
frame_to_come (SkyImageView *self)
{
  return self->image != NULL && gtk_widget_get_mapped (GTK_WIDGET (self));
}

/* At default priority: redraws (priority 120) would starve an idle while
 * something animates. */
static void
call_when_idle (WhenDrawn *w)
{
  g_idle_add_full (G_PRIORITY_DEFAULT, call_when_drawn, w, NULL);
}

void
sky_image_view_when_drawn (SkyImageView *self, GFunc func, gpointer data)
{
  WhenDrawn *w = g_new (WhenDrawn, 1);

  w->func = func;
  w->data = data;
  if (self->drawn_current || !frame_to_come (self))
    call_when_idle (w);
  else
    g_ptr_array_add (self->when_drawn, w);
}

gboolean
sky_image_view_is_drawn (SkyImageView *self)
{
  return self->drawn_current || !frame_to_come (self);
}

/* The view stopped drawing (unmapped, or its image gone): whoever waits for
 * a frame gets its answer now. */
void
sky_image_view_release_when_drawn (SkyImageView *self)
{
  g_autoptr (GPtrArray) waiting = g_steal_pointer (&self->when_drawn);

  self->when_drawn = g_ptr_array_new ();
  for (guint i = 0; i < waiting->len; i++)
    call_when_idle (waiting->pdata[i]);
}

void
sky_image_view_after_paint (GdkFrameClock *clock, SkyImageView *self)
{
  g_autoptr (GPtrArray) waiting = NULL;

  if (!self->render_current || self->drawn_current)
    return;
  self->drawn_current = TRUE;
  waiting = g_steal_pointer (&self->when_drawn);
  self->when_drawn = g_ptr_array_new ();
  for (guint i = 0; i < waiting->len; i++)
    call_when_drawn (waiting->pdata[i]);
}

GdkTexture *
sky_image_view_render_texture (SkyImageView *self, GError **error)
{
  if (!self->use_raster && gtk_gl_area_get_error (GTK_GL_AREA (self->area)) != NULL)
    {
      g_set_error (error, SKY_UI_ERROR, SKY_UI_ERROR_GL, "the image view cannot draw: %s",
                   gtk_gl_area_get_error (GTK_GL_AREA (self->area))->message);
      return NULL;
    }
  return sky_render_widget (GTK_WIDGET (self), 1.0, error);
}

const char *
sky_image_view_get_gl_info (SkyImageView *self)
{
  if (self->use_raster)
    return sky_render_cpu_view_reason ();
  return self->gl_info ? self->gl_info : "OpenGL not started yet";
}
