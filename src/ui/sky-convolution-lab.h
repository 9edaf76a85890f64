/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-convolution-lab.h: the Convolution lab: the lesson's grid of deltas
 * (SKY_CONVOLUTION_DEMO_*, sky-core.h) and its convolution with a kernel,
 * side by side or one at a time, in two image views that share one zoom,
 * with the CPU's and the GPU's timings. */
#pragma once

#include <gtk/gtk.h>

#include "sky-core.h"
#include "sky-image-view.h"

G_BEGIN_DECLS

#define SKY_TYPE_CONVOLUTION_LAB (sky_convolution_lab_get_type ())
G_DECLARE_FINAL_TYPE (SkyConvolutionLab, sky_convolution_lab, SKY, CONVOLUTION_LAB, GtkWindow)

GtkWidget *sky_convolution_lab_new (GtkApplication *app);

/* The two views: the deltas and the convolved result. */
SkyImageView *sky_convolution_lab_get_deltas_view (SkyConvolutionLab *self);
SkyImageView *sky_convolution_lab_get_result_view (SkyConvolutionLab *self);

/* Whether a convolution is being computed (the result not shown yet). */
gboolean sky_convolution_lab_is_busy (SkyConvolutionLab *self);

/* Where the result view puts input pixel (0, 0): the result's pixel
 * indices are the input's plus this (7 for full mode with the lesson's
 * 15 x 15 kernel, 0 for same, -7 for valid). */
int sky_convolution_lab_get_result_offset (SkyConvolutionLab *self);

/* Zooms both views and centres them on the delta at input pixel (x, y). */
void sky_convolution_lab_show_delta (SkyConvolutionLab *self, double zoom, int x, int y);

/* Chooses the toolbar's dtype (f64 or f32), mode (full, same or valid) and
 * show (both, deltas or result), as the user would; NULL keeps one. A new
 * dtype or mode computes again. */
void sky_convolution_lab_choose (SkyConvolutionLab *self, const char *dtype, const char *mode,
                                 const char *show);

/* The timings as the lab shows them, one per line. */
const char *sky_convolution_lab_get_timings (SkyConvolutionLab *self);

G_END_DECLS
