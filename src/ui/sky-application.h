/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-application.h: the GtkApplication io.github.skysift.SkySift, whose
 * actions (open, backend, run, threshold, export-catalog, export-view,
 * quit) drive the window from the toolbar and from D-Bus alike. */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define SKY_APPLICATION_ID "io.github.skysift.SkySift"

#define SKY_TYPE_APPLICATION (sky_application_get_type ())
G_DECLARE_FINAL_TYPE (SkyApplication, sky_application, SKY, APPLICATION, GtkApplication)

SkyApplication *sky_application_new (void);

/* The main window, made (and shown) where there is none. */
GtkWindow *sky_application_get_window (SkyApplication *self);

/* "PATH", "PATH[HDU]" or "PATH[HDU,PLANE]" as app.open reads it (PATH
 * made absolute; HDU 0 and PLANE 0 where not given). */
void sky_application_split_path (const char *text, char **path, int *hdu, gint64 *plane);

/* sky-application-frames.c: the frames' and the cube animator's actions,
 * and their states brought up to date from the window. */
void sky_application_frames_add_actions (SkyApplication *self);
void sky_application_frames_sync (SkyApplication *self, GtkWindow *window);

G_END_DECLS
