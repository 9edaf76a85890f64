/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-image-view.h: the image with its display settings and the pipeline's
 * results on top: an OpenGL area for the pixels, cairo for the markers. */
#pragma once

#include <gtk/gtk.h>

#include "sky-image-data.h"
#include "sky-pipeline.h"

G_BEGIN_DECLS

#define SKY_TYPE_IMAGE_VIEW (sky_image_view_get_type ())
G_DECLARE_FINAL_TYPE (SkyImageView, sky_image_view, SKY, IMAGE_VIEW, GtkWidget)

#define SKY_IMAGE_VIEW_MAX_ZOOM 32.0
/* Rings and numbers go on at most this many sources in view, the
 * brightest; the rest in view get a point each. */
#define SKY_IMAGE_VIEW_MAX_RINGS 500

GtkWidget *sky_image_view_new (void);

/* Shows image (NULL for none), fitted, in its natural orientation. */
void sky_image_view_set_image (SkyImageView *self, SkyImageData *image);

/* image's zoom-out levels and exact statistics came
 * (sky_image_data_make_levels_async): where the view draws it, it draws
 * again with them. */
void sky_image_view_levels_changed (SkyImageView *self, SkyImageData *image);
SkyImageData *sky_image_view_get_image (SkyImageView *self);

/* Draws shown's pixels (a map of the image: the same size) in the image's
 * place, with its own display limits, the image's orientation, zoom and
 * results kept; NULL draws the image's own. mesh_box > 0 outlines a mesh
 * of boxes of that many pixels from pixel (0, 0) (a background mesh),
 * where a box spans at least 8 screen pixels. sky_image_view_set_image
 * forgets both. */
void sky_image_view_show_pixels (SkyImageView *self, SkyImageData *shown, int mesh_box);
SkyImageData *sky_image_view_get_shown_pixels (SkyImageView *self);

/* The image just set is also on the GPU: the GPU bridge's kept 2D
 * convolution output number convolved (sky_pipeline_gpu_convolution_demo), the
 * same floats. Where the view fills its textures through CUDA/GL interop
 * and the device still holds that output, the image's full-resolution
 * level then goes into the texture from there; its zoom-out levels, and
 * everything elsewhere, from host memory. sky_image_view_set_image()
 * forgets it. */
void sky_image_view_set_image_on_device (SkyImageView *self, guint64 convolved);

/* How the image last reached the screen, for a person: through CUDA/GL
 * interop or from host memory, with the time; NULL until it has. */
const char *sky_image_view_get_image_fill (SkyImageView *self);

/* The results to draw; which of them show is up to the show-* properties. */
void sky_image_view_set_run (SkyImageView *self, SkyRun *run);

void sky_image_view_fit (SkyImageView *self);
void sky_image_view_zoom_one (SkyImageView *self);
void sky_image_view_zoom_in (SkyImageView *self);
void sky_image_view_zoom_out (SkyImageView *self);
/* Zoom (logical pixels per image pixel) keeping the centre. */
void sky_image_view_set_zoom (SkyImageView *self, double zoom);
double sky_image_view_get_zoom (SkyImageView *self);
/* Puts image point (x, y) (0-based pixel indices, may be fractional) at the
 * centre of the view. */
void sky_image_view_center_on (SkyImageView *self, double x, double y);
/* The image point at the centre of the view, in the same 0-based pixels
 * (the "view-moved" signal says when it or the zoom changed). */
void sky_image_view_get_center (SkyImageView *self, double *x, double *y);
/* Whether the view fits the image to its size (until a zoom or pan). */
gboolean sky_image_view_get_fitted (SkyImageView *self);
/* Zoom and centre at once (a locked frame following another). */
void sky_image_view_set_center_zoom (SkyImageView *self, double zoom, double x, double y);

/* The catalogue index (label - 1) of the highlighted source, or -1. */
void sky_image_view_set_selected (SkyImageView *self, gint64 index);
/* The selected source's catalogue index, -1 for none. */
gint64 sky_image_view_get_selected (SkyImageView *self);

/* The view's "limits" property takes SKY_N_LIMITS for limits typed by the
 * user: these, in the image's unit (lo < hi). Setting them selects them. */
#define SKY_LIMITS_TYPED SKY_N_LIMITS
void sky_image_view_set_typed_limits (SkyImageView *self, double lo, double hi);

/* The data values at the ends of the colour scale and, for histogram
 * equalisation, the table (SKY_EQ_SIZE entries; NULL for other stretches). */
void sky_image_view_get_scale (SkyImageView *self, double *lo, double *hi, const float **eq);

/* Calls func (data) once the view has drawn a frame that shows its current
 * image, results and settings. */
void sky_image_view_when_drawn (SkyImageView *self, GFunc func, gpointer data);

/* Whether the last frame showed the view's current state (or no frame is
 * to come: no image, not mapped), which is when when_drawn answers at
 * once. Asked in a frame clock's "after-paint" it tells whether the frame
 * just painted, whose layout may have resized the view, shows it. */
gboolean sky_image_view_is_drawn (SkyImageView *self);

/* The view as it looks now, overlays included, in device pixels; NULL
 * with error set when it cannot be drawn (no GL, not on screen). */
GdkTexture *sky_image_view_render_texture (SkyImageView *self, GError **error);

/* The coordinate grid of the image's WCS over the part in view, with its
 * labels, the N/E compass and the beam (nothing without a celestial WCS). */
void sky_image_view_set_grid (SkyImageView *self, gboolean show);
gboolean sky_image_view_get_grid (SkyImageView *self);

/* Contour levels: values in the image's unit, or with sigma, multiples of
 * the clipped sigma as the threshold reads them (k sigma, or median + k
 * sigma for a relative threshold), and with threshold the run's detection
 * threshold. Sigma levels and the threshold wait for a clipped run. */
#define SKY_CONTOUR_MAX_LEVELS 16
typedef struct {
  int n;
  double values[SKY_CONTOUR_MAX_LEVELS];
  gboolean sigma;
  gboolean threshold;
} SkyContourSpec;

/* Reads "3,5,10 sigma", "3 5 10σ", "threshold, 3 sigma", "0.01 0.05",
 * "off" or "" (none); FALSE with error naming the word it cannot take. */
gboolean sky_contour_spec_parse (const char *text, SkyContourSpec *spec, GError **error);
/* The spec as the parser reads it back ("threshold, 3,5 sigma"); free it. */
char *sky_contour_spec_to_string (const SkyContourSpec *spec);
void sky_image_view_set_contours (SkyImageView *self, const SkyContourSpec *spec);
const SkyContourSpec *sky_image_view_get_contours (SkyImageView *self);

/* watcher (data) is called, from the main loop, after a frame that drew a
 * grid or contours other than the last (what the state below says), while
 * the view is in a window: data is meant to be that window. */
void sky_image_view_set_tools_watcher (SkyImageView *self, void (*watcher) (gpointer),
                                       gpointer data);

/* Appends the grid's and contours' state to a JSON object being written:
 * `, "grid": {...}, "contours": {...}` (docs/ui.md lists the keys). */
void sky_image_view_tools_describe (SkyImageView *self, GString *out);

/* A figure of the image in view for a publication: the part of the view
 * the image covers, as drawn, in a frame on a white margin, with ticks and
 * coordinate labels outside it where the grid's lines meet it and the axes
 * named (with a celestial WCS; the grid's lines only where the grid is on).
 * NULL with error set where no image is on screen. */
GdkTexture *sky_image_view_render_figure (SkyImageView *self, GError **error);

/* The OpenGL version and renderer, or why there is none. */
const char *sky_image_view_get_gl_info (SkyImageView *self);

/* Draws display (the image's size: a smoothed copy, for the eye only)
 * in place of the image's pixels, keeping the run, zoom and centre; NULL
 * goes back to the image's own. The colour bar and limits follow what is
 * drawn. A new image (set_image) drops the copy. */
void sky_image_view_set_display_image (SkyImageView *self, SkyImageData *display);
/* The copy drawn, or NULL. */
SkyImageData *sky_image_view_get_display_image (SkyImageView *self);

/* Which sources get a marker (and can be clicked): those func says TRUE
 * of (catalogue index i of run); NULL for every source. The selected
 * source keeps its marker. */
typedef gboolean (*SkyMarkerFilter) (const SkyRun *run, gint64 i, gpointer data);
void sky_image_view_set_marker_filter (SkyImageView *self, SkyMarkerFilter func, gpointer data);

/* The catalogues and region files to draw over the image (borrowed: the
 * window owns them; NULL for none), and a redraw after they changed. */
typedef struct _SkyOverlaySet SkyOverlaySet;
void sky_image_view_set_overlays (SkyImageView *self, SkyOverlaySet *overlays);
void sky_image_view_overlays_changed (SkyImageView *self);

G_END_DECLS
