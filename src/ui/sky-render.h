/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-render.h: pictures of widgets as the screen shows them, and PNG files
 * of them written off the main thread. */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

/* What the app found out about OpenGL at start: the renderer's name (NULL
 * when no context could be made) and whether it is a software rasteriser. */
void sky_render_set_gl_probe (const char *renderer, gboolean software);

/* Whether image views draw on the CPU (sky-raster.h) rather than with
 * OpenGL: where OpenGL is software or absent, or SKYSIFT_VIEW=cpu;
 * SKYSIFT_VIEW=gl forces OpenGL. */
gboolean sky_render_view_on_cpu (void);

/* A line saying how the view draws, for the about dialog and describe (). */
const char *sky_render_cpu_view_reason (void);

/* Renders widget (with its children, GL areas included) with its window's
 * renderer, at the device scale times zoom (1: as on screen). Main thread.
 * NULL with error set when the widget is not on screen. */
GdkTexture *sky_render_widget (GtkWidget *widget, double zoom, GError **error);

/* Writes texture as a PNG file: the pixels are read back here, on the main
 * thread (a GL texture can only be read there), and encoded and written on
 * a worker, to a temporary name renamed into place when complete. */
void sky_texture_save_png_async (GdkTexture *texture,
                                 const char *path,
                                 GCancellable *cancellable,
                                 GAsyncReadyCallback callback,
                                 gpointer user_data);
gboolean sky_texture_save_png_finish (GAsyncResult *result, GError **error);

G_END_DECLS
