/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-timings-panel.h: each step's time on each backend, side by side, with
 * the speedup, whether the backends agree, and a bar chart of the same. */
#pragma once

#include <gtk/gtk.h>

#include "sky-pipeline.h"

G_BEGIN_DECLS

#define SKY_TYPE_TIMINGS_PANEL (sky_timings_panel_get_type ())
G_DECLARE_FINAL_TYPE (SkyTimingsPanel, sky_timings_panel, SKY, TIMINGS_PANEL, GtkWidget)

GtkWidget *sky_timings_panel_new (void);
void sky_timings_panel_set_run (SkyTimingsPanel *self, SkyRun *run);
/* Why there is no GPU here (NULL: there is one), shown under the table
 * when the run has no GPU figures. */
void sky_timings_panel_set_gpu_note (SkyTimingsPanel *self, const char *note);
/* The Convolution lab's timings, a section under the rest (NULL or "":
 * hidden). */
void sky_timings_panel_set_convolution (SkyTimingsPanel *self, const char *text);
const char *sky_timings_panel_get_convolution (SkyTimingsPanel *self);
/* The caption under the table. */
const char *sky_timings_panel_get_caption (SkyTimingsPanel *self);
/* The display line (sky_display_describe ()), kept up to date. */
const char *sky_timings_panel_get_display (SkyTimingsPanel *self);

G_END_DECLS
