/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-color-bar.h: the colour scale of an image view, labelled in the
 * image's unit. */
#pragma once

#include <gtk/gtk.h>

#include "sky-image-view.h"

G_BEGIN_DECLS

#define SKY_TYPE_COLOR_BAR (sky_color_bar_get_type ())
G_DECLARE_FINAL_TYPE (SkyColorBar, sky_color_bar, SKY, COLOR_BAR, GtkWidget)

GtkWidget *sky_color_bar_new (void);
void sky_color_bar_set_view (SkyColorBar *self, SkyImageView *view);
SkyImageView *sky_color_bar_get_view (SkyColorBar *self);

G_END_DECLS
