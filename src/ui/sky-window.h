/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-window.h: the main window: the image, the pipeline's toolbar and its
 * panels. What scripts, the app's D-Bus actions and the tests call on it is
 * in sky-window-script.h. */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define SKY_TYPE_WINDOW (sky_window_get_type ())
G_DECLARE_FINAL_TYPE (SkyWindow, sky_window, SKY, WINDOW, GtkApplicationWindow)

SkyWindow *sky_window_new (GtkApplication *app);

/* When the process started (g_get_monotonic_time), to time startup to
 * the first frame; the window's creation when never set. */
void sky_window_set_start_time (SkyWindow *self, gint64 start_us);

/* Tells the user (a dialog) and records it for describe (). */
void sky_window_show_error (SkyWindow *self, const char *primary, const char *detail);

/* Information for the about dialog: the OpenGL renderer. */
const char *sky_window_get_gl_info (SkyWindow *self);
/* Shows the Convolution lab's timings in the timings panel. */
void sky_window_set_convolution_timings (SkyWindow *self, const char *text);

G_END_DECLS
