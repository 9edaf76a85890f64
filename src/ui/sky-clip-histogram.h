/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-clip-histogram.h: the clip step's picture: the pixel values around
 * the background, with the median, the clipping bounds and the threshold. */
#pragma once

#include <gtk/gtk.h>

#include "sky-pipeline.h"

G_BEGIN_DECLS

#define SKY_TYPE_CLIP_HISTOGRAM (sky_clip_histogram_get_type ())
G_DECLARE_FINAL_TYPE (SkyClipHistogram, sky_clip_histogram, SKY, CLIP_HISTOGRAM, GtkWidget)

GtkWidget *sky_clip_histogram_new (void);
/* Shows run's histogram (NULL, or a run before clip: empty). */
void sky_clip_histogram_set_run (SkyClipHistogram *self, SkyRun *run);

/* What the count axis says: a log scale, its ticks and its top. */
char *sky_clip_histogram_axis_text (const SkyRun *run);

/* What the plot says of the threshold: its value, with an arrow to the
 * side it lies beyond where it is off the axis; NULL without one. */
char *sky_clip_histogram_threshold_text (const SkyRun *run);

G_END_DECLS
