/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-window-script.h: the window as scripts drive it: the operations the
 * app's D-Bus actions and the tests call, the settings they change and the
 * figures they read back. Every operation is queued and runs in order, so
 * that a script's open, run and export follow each other as a person's
 * clicks would. */
#pragma once

#include "sky-pipeline.h"
#include "sky-window.h"

G_BEGIN_DECLS

/* Queued operations. open with is_demo makes the demo image first if it is
 * not there yet. Failures are shown in a dialog naming the file and reason,
 * and leave what the window had. */
void sky_window_open (SkyWindow *self, const char *path, gboolean is_demo);
/* Opens a given HDU (1-based; 0: the first with an image) and plane
 * (0-based, of a cube). */
void sky_window_open_plane (SkyWindow *self, const char *path, int hdu, gint64 plane);
void sky_window_run (SkyWindow *self, SkyStep until);
void sky_window_export_catalogue (SkyWindow *self, const char *path);
void sky_window_export_view (SkyWindow *self, const char *path);
/* The whole window, or with part "panel" the side panel, as PNG, scaled
 * by zoom (1: as on screen). */
void sky_window_screenshot (SkyWindow *self, const char *part, double zoom, const char *path);

/* Cancels the operation under way and drops those queued behind it; the
 * parameter controls go back to those of the results shown. Nothing under
 * way: nothing changes. */
void sky_window_cancel (SkyWindow *self);

/* Settings; FALSE (and nothing changed) for an unavailable backend. */
gboolean sky_window_set_backend (SkyWindow *self, SkyBackend backend, GError **error);
void sky_window_set_threshold (SkyWindow *self, double threshold);

/* The other parameters and the plane, for scripts, as their controls set
 * them: clip κ (2 to 10), connectivity (4 or 8), the relative threshold,
 * a cube's plane (0-based; opens it). A value the control cannot take is
 * refused with an error dialog and last_error, not clamped. */
void sky_window_set_kappa (SkyWindow *self, double kappa);
void sky_window_set_connectivity (SkyWindow *self, int connectivity);
void sky_window_set_relative (SkyWindow *self, gboolean relative);
void sky_window_set_plane (SkyWindow *self, gint64 plane);

/* The method (lesson or local): a change re-runs up to the step of the
 * new method that stands for the one shown (clip and background, segment
 * and flood, label and deblend, measure). The local method's parameters by
 * name, as its controls set them: box (pixels), filter (boxes, odd), seed,
 * flood (rms), min-area (pixels), deblend-levels, deblend-share,
 * deblend-rise (rms); out of range or unknown is refused with a message.
 * What the view shows of the background: image, background, rms,
 * residual (image − background); FALSE for an unknown name. */
void sky_window_set_method (SkyWindow *self, SkyMethod method);
SkyMethod sky_window_get_method (SkyWindow *self);
void sky_window_set_local_param (SkyWindow *self, const char *name, double value);
gboolean sky_window_set_background_view (SkyWindow *self, const char *name);

/* Centres the view on FITS image pixel (x, y), counted from 1 as the
 * readout shows it, keeping the zoom. */
void sky_window_pan (SkyWindow *self, double x, double y);

gboolean sky_window_has_image (SkyWindow *self);

/* The header window: every card of the image's HDU, those holding search
 * (any case; "" or NULL: as it is) shown and the matches highlighted. */
void sky_window_show_header (SkyWindow *self, const char *search);
/* The HDU's cards, one a line, trailing blanks cut ("" without an image). */
char *sky_window_get_header_text (SkyWindow *self);

/* Queued: a catalogue or DS9 region file drawn over the image and matched
 * with the sources ("" clears them all); a bad file gets an error dialog
 * naming it and why. The match radius in arcseconds (pixels on an image
 * with no celestial WCS). */
void sky_window_add_overlay (SkyWindow *self, const char *path);
void sky_window_set_match_radius (SkyWindow *self, double arcsec);

/* The source table's filter, as "area=5,snr=10,flux=0.5,edge=off,flags=off"
 * (sky-source-filter.h; "none" lists every source); text it cannot take
 * is refused by name in an error dialog and last_error. */
void sky_window_set_source_filter (SkyWindow *self, const char *text);

/* Detection on a smoothed copy, as skysift-cli find --smooth KERNEL: beam,
 * lesson, gauss:SIGMA[:SIZE] or box:SIZE ("" or "none": the image itself);
 * shown results are run again. A kernel the image cannot have (no beam)
 * or that does not parse is refused by name. */
void sky_window_set_smooth (SkyWindow *self, const char *kernel);

/* The view, for scripts: zoom (logical pixels per image pixel), the
 * source to select and centre (its label number, 0 for none), the panel
 * to show (pipeline, timings, sources), and display settings by name
 * (stretch linear|log|sqrt|asinh|histeq, limits minmax|99.5|99.9|zscale|LO,HI,
 * colormap grey-r|grey|inferno|viridis|heat, and mask, labels, markers,
 * flip on|off); FALSE for an unknown name. */
void sky_window_set_zoom (SkyWindow *self, double zoom);
void sky_window_select_source (SkyWindow *self, gint64 id);
gboolean sky_window_show_panel (SkyWindow *self, const char *name);
gboolean sky_window_set_display (SkyWindow *self, const char *setting, const char *value);

/* Viewing tools: the coordinate grid on or off; contour levels as
 * sky_contour_spec_parse reads them ("3,5,10 sigma", "threshold", "0.1 0.2",
 * "" for none), refused with an error dialog when it cannot (FALSE), and
 * read back as that text (free it). */
void sky_window_set_grid (SkyWindow *self, gboolean show);
gboolean sky_window_get_grid (SkyWindow *self);
gboolean sky_window_set_contours (SkyWindow *self, const char *levels);
char *sky_window_get_contours (SkyWindow *self);
/* The pixel table (5, 7 or 9 a side; 0 hides it; others refused with an
 * error dialog, FALSE), the magnifier, and the scale dialog, each in a
 * window beside the main one that follows the pointer or the limits. */
gboolean sky_window_set_pixel_table (SkyWindow *self, int size);
int sky_window_get_pixel_table (SkyWindow *self);   /* 0 when not shown */
void sky_window_set_magnifier (SkyWindow *self, gboolean show);
gboolean sky_window_get_magnifier (SkyWindow *self);
void sky_window_show_scale_dialog (SkyWindow *self, gboolean show);
gboolean sky_window_get_scale_dialog (SkyWindow *self);
/* The dialog where a person types contour levels (the current ones in
 * its entry); Enter or Apply sets them as sky_window_set_contours does. */
void sky_window_show_contour_dialog (SkyWindow *self);
/* Queued: the view as a publication figure (sky_image_view_render_figure)
 * written as PNG to path. */
void sky_window_export_figure (SkyWindow *self, const char *path);
/* Appends the tools' state to the state's JSON object. */
void sky_window_tools_describe (SkyWindow *self, GString *out);
/* Sorts the source table, "COLUMN" or "COLUMN descending" (COLUMN the
 * first word of its title: id, peak, sum, RA...), timing it and the main
 * loop's longest stall until the rows are in place (the state's sort_ms,
 * sort_max_gap_ms; busy until then); FALSE for no such column. */
gboolean sky_window_sort_sources (SkyWindow *self, const char *spec);

/* What the app's action states mirror ("" where there is nothing yet). */
const char *sky_window_get_image_path (SkyWindow *self);
SkyBackend sky_window_get_backend (SkyWindow *self);
SkyStep sky_window_get_shown_step (SkyWindow *self);
double sky_window_get_threshold (SkyWindow *self);
const SkyParams *sky_window_get_params (SkyWindow *self);   /* what the controls hold */
gint64 sky_window_get_plane (SkyWindow *self);              /* 0 without an image */
const char *sky_window_get_catalogue_path (SkyWindow *self);
const char *sky_window_get_view_path (SkyWindow *self);

/* What the SAMP link reads (sky-samp-link.c): whether operations are
 * queued or under way, the image shown and the run whose catalogue is
 * shown (NULL before an image, or before measure; no reference given),
 * and the selected source's label number (0 for none). */
gboolean sky_window_is_busy (SkyWindow *self);
SkyImageData *sky_window_get_image (SkyWindow *self);
SkyRun *sky_window_get_catalogue_run (SkyWindow *self);
gint64 sky_window_get_selected_source (SkyWindow *self);

/* Figures for scripts and tests, as a JSON object: the image, busy, the
 * last step, nsources, first-frame and threshold redraw times, the main
 * loop's longest stall while the pipeline ran, the last error. */
char *sky_window_describe (SkyWindow *self);

G_END_DECLS
