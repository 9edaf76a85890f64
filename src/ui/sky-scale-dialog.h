/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-scale-dialog.h: the image's histogram with the view's display limits
 * on it as two lines to drag. Moving one emits limits-changed (lo, hi);
 * the window applies them as typed limits. */
#pragma once

#include <gtk/gtk.h>

#include "sky-image-view.h"

G_BEGIN_DECLS

#define SKY_TYPE_SCALE_DIALOG (sky_scale_dialog_get_type ())
G_DECLARE_FINAL_TYPE (SkyScaleDialog, sky_scale_dialog, SKY, SCALE_DIALOG, GtkWindow)

#define SKY_SCALE_DIALOG_BINS 200

SkyScaleDialog *sky_scale_dialog_new (GtkWindow *parent, SkyImageView *view);

/* What a drag does: the lower (which 0) or upper (1) limit to the value
 * at x, in the plot's widget pixels. The limits stay ordered. */
void sky_scale_dialog_move_limit (SkyScaleDialog *self, int which, double x);

/* The plot's value at widget x, and the x of value v. */
double sky_scale_dialog_value_at (SkyScaleDialog *self, double x);
double sky_scale_dialog_x_of (SkyScaleDialog *self, double v);

G_END_DECLS
