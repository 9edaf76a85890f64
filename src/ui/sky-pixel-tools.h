/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-pixel-tools.h: a small window that follows the pointer over an image
 * view: the pixel values around it (a table of 5 x 5 to 9 x 9) and the
 * image around it enlarged (the magnifier), in the view's colours. */
#pragma once

#include <gtk/gtk.h>

#include "sky-image-view.h"

G_BEGIN_DECLS

#define SKY_TYPE_PIXEL_TOOLS (sky_pixel_tools_get_type ())
G_DECLARE_FINAL_TYPE (SkyPixelTools, sky_pixel_tools, SKY, PIXEL_TOOLS, GtkWindow)

#define SKY_PIXEL_TOOLS_MAGNIFIED 11   /* image pixels a side */
#define SKY_PIXEL_TOOLS_CELL 15        /* screen pixels per image pixel */

SkyPixelTools *sky_pixel_tools_new (GtkWindow *parent, SkyImageView *view);

/* The table's size: 5, 7 or 9 pixels a side; 0 hides the table. */
void sky_pixel_tools_set_size (SkyPixelTools *self, int size);
int sky_pixel_tools_get_size (SkyPixelTools *self);
void sky_pixel_tools_set_magnifier (SkyPixelTools *self, gboolean show);
gboolean sky_pixel_tools_get_magnifier (SkyPixelTools *self);

/* Follows image point (x, y) (the view's pixel units: pixel i covers
 * [i, i + 1)), as the view's pointer-moved signal gives it. */
void sky_pixel_tools_follow (SkyPixelTools *self, gboolean inside, double x, double y);

/* The table's text at column col, row row (0-based from the top left as
 * shown, headers excluded), and the image pixel at the centre (0-based;
 * -1 when the pointer is off the image). */
const char *sky_pixel_tools_get_text (SkyPixelTools *self, int col, int row);
void sky_pixel_tools_get_centre (SkyPixelTools *self, gint64 *x, gint64 *y);
/* The magnifier's drawing area (its pixel (c, r) of the magnified block
 * spans CELL screen pixels from (c * CELL, r * CELL)). */
GtkWidget *sky_pixel_tools_get_magnifier_widget (SkyPixelTools *self);

G_END_DECLS
