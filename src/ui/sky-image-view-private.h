/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-image-view-private.h: SkyImageView's instance, shared by the files that
 * split it by concern: sky-image-view.c (state, input), sky-image-view-gl.c
 * (textures and the shader), sky-image-view-overlay.c (markers, numbers). */
#pragma once

#include <epoxy/gl.h>

#include "sky-colormap.h"
#include "sky-gl-interop.h"
#include "sky-image-view.h"
#include "sky-overlay-set.h"

G_BEGIN_DECLS

typedef struct {
  GLint center, half, fb_zoom, flip, size, lod, base_lod, lo, hi, stretch, overlay, selected,
    reach, background, blank;
} SkyViewUniforms;

struct _SkyImageView {
  GtkWidget parent_instance;

  GtkWidget *area;              /* GtkGLArea, our only child */

  SkyImageData *image;           /* the pixels drawn: the image, or a copy
                                 * for the eye (set_display_image) */
  SkyImageData *source;          /* with such a copy, the image it is of */
  SkyImageData *shown;           /* pixels drawn in the image's place (a map,
                                  * over any copy), or NULL */
  int mesh_box;                  /* outline a mesh of boxes this wide, 0 for none */
  SkyRun *run;
  gint64 *draw_order;           /* catalogue indices, brightest sum first */

  /* What the view shows. zoom is logical pixels per image pixel; (cx, cy)
   * the image point at the view's centre, in pixel units where pixel i
   * covers [i, i + 1). Image rows go up the screen (FITS convention). */
  double zoom, cx, cy;
  gboolean fitted;              /* refit on resize until the user zooms */
  gboolean flip_x;
  SkyStretch stretch;
  SkyLimits limits;             /* or SKY_LIMITS_TYPED */
  double typed_lo, typed_hi;
  SkyColormap colormap;
  gboolean show_mask, show_labels, show_markers;
  gint64 selected;
  float eq[SKY_EQ_SIZE];

  /* Pointer and drag. */
  gboolean pointer_inside;
  double pointer_x, pointer_y;
  double drag_cx, drag_cy;

  /* GL state, only touched with the area's context current. */
  GLuint program, vao;
  GLuint tex_image, tex_cmap, tex_eq, tex_mask, tex_labels;
  SkyViewUniforms u;
  int base_lod;                 /* pyramid level in the texture's level 0 */
  gboolean image_dirty, cmap_dirty, eq_dirty, mask_dirty, labels_dirty;
  gboolean levels_dirty;        /* zoom-out levels came after the image */
  int levels_uploaded;          /* pyramid levels in the texture (to nlevels), or 0 */
  gboolean texture_holds_preview; /* the image texture holds a reduced view */
  gboolean overlays_uploadable; /* the label image fits the GL size limit */
  GLint max_texture_size;
  /* Desktop GL: the mask and labels in buffer objects read as buffer
   * textures (linear, so CUDA fills them with a plain copy), where the
   * image has at most max_buffer_texels pixels; else the 2D textures. */
  GLuint buf_mask, buf_labels, tbo_mask, tbo_labels;
  gsize buf_bytes[2];           /* storage given to buf_mask, buf_labels */
  GLint max_buffer_texels;      /* 0: no buffer textures (OpenGL ES) */
  gboolean overlay_buffers;     /* this image's overlays are in the buffers */
  GLint u_buffers;
  char *gl_info;
  guint64 image_on_device;      /* the bridge's convolution output number, or 0 */
  char *image_fill;             /* how the image last went into its texture */
  SkyGlInterop *interop;        /* how the mask and labels go up (never NULL once realized) */

  /* Drawing on the CPU (sky-raster.h) where OpenGL is software or absent:
   * the last picture and the view it was drawn for, and the state serial
   * it shows. */
  gboolean use_raster;
  GdkTexture *frame;
  double frame_zoom, frame_cx, frame_cy;
  gboolean frame_flip;
  int frame_width, frame_height;  /* logical pixels */
  guint64 serial, frame_serial;
  gboolean raster_busy;

  /* The coordinate grid and contours (sky-image-view-grid.c): what to
   * show, and the geometry last worked out for it. */
  gboolean show_grid;
  SkyGrid grid;
  double grid_rect[4];          /* the rectangle grid covers, 0-based pixels */
  gboolean grid_valid;
  int grid_labels;              /* labels the last frame drew */
  gboolean compass_shown, beam_shown;
  double compass_north_deg;     /* north's and east's screen angles, degrees */
  double compass_east_deg;      /* counter-clockwise from right */
  double beam_deg;              /* the beam's major axis on screen, likewise */
  SkyContourSpec contour_spec;
  SkyContour contours[SKY_CONTOUR_MAX_LEVELS + 1];
  double contour_level[SKY_CONTOUR_MAX_LEVELS + 1];
  gboolean contour_is_threshold[SKY_CONTOUR_MAX_LEVELS + 1];
  int ncontours;
  int contour_lod;              /* the pyramid level they were traced on */
  gboolean contours_valid;
  gboolean contours_pending;    /* a worker is tracing them */
  guint contour_generation;     /* which request a traced result answers */
  guint tools_hash;             /* what the state last heard of them */
  void (*tools_watcher) (gpointer);   /* told when that changes */
  gpointer tools_watcher_data;
  gboolean figure_pass;         /* drawing for a figure: grid labels go outside */

  /* Frames: callbacks waiting for a frame that shows the current state. */
  gboolean render_current;      /* the last GL render drew the current state */
  gboolean drawn_current;       /* ... and a frame with it was painted */
  GPtrArray *when_drawn;        /* pairs of (GFunc, data) */
  GdkFrameClock *frame_clock;
  gulong after_paint_id;

  SkyOverlaySet *overlays;      /* catalogues and regions drawn on top, borrowed */
  SkyMarkerFilter marker_filter; /* which sources get a marker; NULL: all */
  gpointer marker_filter_data;
};

/* Image point (ix, iy) to widget pixels in a w x h view: the one place this
 * arithmetic is written, for sky_image_view_image_to_widget and for the
 * markers, which read the size once per frame rather than per source. */
static inline void
sky_image_view_to_widget_in (const SkyImageView *self, double w, double h, double ix, double iy,
                             double *wx, double *wy)
{
  *wx = w / 2 + (ix - self->cx) * self->zoom * (self->flip_x ? -1 : 1);
  *wy = h / 2 - (iy - self->cy) * self->zoom;
}

/* The image whose pixels are drawn: a map shown in the image's place, or
 * the image (or its copy for the eye). Sizes, orientation and results are the image's either way. */
static inline SkyImageData *
sky_image_view_pixels (const SkyImageView *self)
{
  return self->shown != NULL ? self->shown : self->image;
}

/* sky-image-view.c */
void sky_image_view_state_changed (SkyImageView *self, gboolean gl_too);
void sky_image_view_image_to_widget (SkyImageView *self, double ix, double iy,
                                     double *wx, double *wy);
void sky_image_view_widget_to_image (SkyImageView *self, double wx, double wy,
                                     double *ix, double *iy);

/* The pyramid level to sample and the overlay bits (SKY_OVERLAY_*) of
 * the frame about to be drawn, for the GL and the CPU paths alike. */
void sky_image_view_frame_setup (SkyImageView *self, double fb_zoom, int *lod, int *overlay);

/* The view moved: its zoom (notified) and centre, in image pixels. */
void sky_image_view_set_view (SkyImageView *self, double zoom, double cx, double cy);
/* Zooms keeping the image point under widget point (wx, wy) where it is. */
void sky_image_view_zoom_around (SkyImageView *self, double zoom, double wx, double wy);
/* Emits pointer-moved for the pointer as it is. */
void sky_image_view_pointer_update (SkyImageView *self);

/* sky-image-view-input.c */
/* The zoom one step in or out (direction > 0: in) from zoom. */
double sky_image_view_next_zoom (double zoom, int direction);
void sky_image_view_input_class_init (GtkWidgetClass *widget_class);
void sky_image_view_input_init (SkyImageView *self);

/* sky-image-view-grid.c */
/* Drops the grid and contours worked out: all of them for a new image
 * (image_too), the contours alone for a new run. */
void sky_image_view_tools_forget (SkyImageView *self, gboolean image_too);
void sky_image_view_grid_snapshot (SkyImageView *self, GtkSnapshot *snapshot);
/* For the figure (sky-image-view-figure.c): 0-based pixels to widget
 * pixels in a w x h view; the part of the image in view (FALSE: none);
 * the grid of rectangle r worked out (grid_valid says whether it could
 * be); the grid's labels placed within bounds (x0, y0, x1, y1 in widget
 * pixels), as dark text with ticks for a figure. */
void sky_image_view_pix_to_widget (SkyImageView *self, double w, double h, double x, double y,
                                   double *wx, double *wy);
gboolean sky_image_view_visible_rect (SkyImageView *self, double w, double h, double r[4]);
void sky_image_view_ensure_grid (SkyImageView *self, const double r[4]);
void sky_image_view_draw_labels (SkyImageView *self, cairo_t *cr, double w, double h,
                                 const double bounds[4], gboolean figure);

/* sky-image-view-frames.c */
/* The frame clock painted: those waiting for the view's state are told. */
void sky_image_view_after_paint (GdkFrameClock *clock, SkyImageView *self);
/* The view stopped drawing: whoever waits for a frame is told now. */
void sky_image_view_release_when_drawn (SkyImageView *self);

/* sky-image-view-raster.c */
void sky_image_view_raster_request (SkyImageView *self);
void sky_image_view_raster_snapshot (SkyImageView *self, GtkSnapshot *snapshot);

/* sky-image-view-gl.c */
void sky_image_view_gl_realize (SkyImageView *self);
void sky_image_view_gl_unrealize (SkyImageView *self);
gboolean sky_image_view_gl_render (SkyImageView *self);

/* sky-image-view-overlay.c */
void sky_image_view_overlay_snapshot (SkyImageView *self, GtkSnapshot *snapshot);
/* The markers and numbers of the view as it is, drawn afresh, or NULL
 * where there are none to draw. */
GskRenderNode *sky_image_view_overlay_node (SkyImageView *self);
/* The catalogue index of the marker at widget point (wx, wy), or -1. */
gint64 sky_image_view_overlay_pick (SkyImageView *self, double wx, double wy);

/* sky-image-view-catalogues.c */
void sky_image_view_catalogues_snapshot (SkyImageView *self, GtkSnapshot *snapshot);

G_END_DECLS
