/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-ui-gtk.h: what the widget tests' files share (test-ui-gtk-*.c,
 * one test program; its main is in test-ui-gtk.c). */
#pragma once

#include <fitsio.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <glib/gstdio.h>

#include "sky-application.h"
#include "sky-clip-histogram.h"
#include "sky-color-bar.h"
#include "sky-convolution-lab.h"
#include "sky-image-view-private.h"
#include "sky-pipeline-gpu.h"
#include "sky-render.h"
#include "sky-window-private.h"
#include "sky-test-util.h"

/* Longest wait for the app: a pipeline run or a frame, on a loaded 2-core
 * machine, takes well under a second for these images. */
#define WAIT_S 60.0

/* The longest a frame of gc_like_2048.fits at 1.2 sigma (some 48,500
 * sources) may take, from a zoom request to the frame on screen, and the
 * longest drawing its markers alone may take. Measured on the 2-core
 * development machine (Xvfb, llvmpipe), medians of three: see
 * test_dense_markers. */
#define DENSE_REDRAW_MS 300.0
#define DENSE_OVERLAY_MS 150.0

/* Colours of the view (sky-image-view-raster.c, -overlay.c, sky-raster.c). */
static const int BACKGROUND_RGB[3] = { 59, 59, 61 };
static const int MARKER_RGB[3] = { 217, 26, 115 };   /* (0.85, 0.1, 0.45) */
static const int OUTLINE_RGB[3] = { 255, 204, 0 };   /* (1, 0.8, 0) */

/* ------------------------------------------------------------- fixtures */

/* The test field: noise of sigma 1 around 0 (an absolute threshold of 5
 * sigma is then 5) and Gaussian sources of sigma 1.5 pixels at pixel
 * centres, as the catalogue gives positions (0-based pixel indices). */
#define FIELD_NX 160
#define FIELD_NY 120
#define PSF_SIGMA 1.5

typedef struct {
  double x, y, peak;
} Source;

static const Source field_sources[] = {
  { 40, 60, 400 },   /* the brightest: the darkest spot in reversed grey */
  { 112, 28, 60 },
  { 124, 92, 14 },   /* above 5 sigma, below 20 */
  { 72, 96, 9 },     /* likewise */
};

#define N_FIELD_SOURCES G_N_ELEMENTS (field_sources)
#define N_ABOVE_20_SIGMA 2

/* A small image with one bright pixel near its left edge and top, to see
 * which way round it is drawn. */
#define ORIENT_NX 64
#define ORIENT_NY 48
#define ORIENT_X 3
#define ORIENT_Y 40

typedef struct {
  char *path;
  int nx, ny;
} Image;

#define LINEAR_CDELT1 2

/* ------------------------------------------------------------ the app */

typedef struct {
  SkyWindow *window;
  SkyImageView *view;
  int nx, ny;           /* the image shown */
  double cx, cy;        /* the image point at the view's centre, as the test put it */
  double zoom;          /* logical pixels per image pixel, and */
  gboolean flip;        /* the mirroring, as the app's state says */
} Fixture;

/* ---------------------------------------------------------- pictures */

typedef struct {
  int width, height;    /* device pixels */
  double scale;         /* device pixels per logical pixel */
  guint32 *argb;        /* cairo's ARGB32, opaque */
} Picture;

void picture_free (Picture *pic);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (Picture, picture_free)

typedef struct {
  int r, g, b;
} Rgb;

/* test-ui-gtk-common.c */
extern SkyApplication *app;
extern char *no_gl_reason;
extern Image field, orient_west, orient_east, orient_nowcs, orient_linear;
extern int zoom_x, zoom_y;
float *noise (int nx, int ny, guint32 seed);
void fail_on_cfitsio (const char *path, int status);
char *write_fits (const char *name, const float *pixels, int nx, int ny, int cdelt1_sign);
void make_fixtures (void);
void activate (const char *action, GVariant *param);
void click (Fixture *f, const char *action, const char *target);
char *state_json (void);
const char *state_field (const char *json, const char *key);
double state_number (const char *key);
void assert_state (const char *key, const char *value);
void iterate_until (gboolean (*done) (gpointer), gpointer data, const char *what);
gboolean app_idle (gpointer data);
gboolean flag_set (gpointer data);
gboolean pointer_cleared (gpointer data);
void set_flag (gpointer data, gpointer unused);
void wait_idle (Fixture *f, const char *what);
void open_image (Fixture *f, const Image *image);
Picture *render_view (Fixture *f);
Rgb pixel (const Picture *pic, int x, int y);
gboolean close_to (Rgb c, const int ref[3], int tol);
gboolean is_grey (Rgb c, int tol);
double luminance (Rgb c);
void to_picture (Fixture *f, const Picture *pic, double ix, double iy, double *px, double *py);
Rgb pixel_at_image (Fixture *f, const Picture *pic, double ix, double iy);
void image_rect (Fixture *f, const Picture *pic, int *x0, int *y0, int *x1, int *y1);
int ring_hits (const Picture *pic, double x, double y, double max_r, double *radius);
void assert_ring (Fixture *f, const Picture *pic, const Source *s);
void assert_no_ring (Fixture *f, const Picture *pic, const Source *s);

/* test-ui-gtk-layouts.c */
void layouts_count_start (const char *prefix);
guint layouts_count_stop (void);

/* test-ui-gtk-pictures.c */
void test_drawn (Fixture *f);
void test_orientation (Fixture *f);
int run_length (const Picture *pic, int x, int y, int dx, int dy);
void test_zoom_square (Fixture *f);
void test_colormap (Fixture *f);
void test_segment_mask (Fixture *f);
void test_label_colours (Fixture *f);
void test_measure_markers (Fixture *f);
void test_threshold (Fixture *f);

/* test-ui-gtk-cancel.c */
double action_threshold (void);
void assert_status_starts (Fixture *f, const char *prefix);
void test_cancel_threshold (Fixture *f);
void test_cancel_parameters (Fixture *f);
void test_cancel_new_image (Fixture *f);

/* test-ui-gtk-dense.c */
gboolean open_gc_like (Fixture *f);
void test_gc_like (Fixture *f);
void test_dense_markers (Fixture *f);
void test_dense_time_limits (Fixture *f);

/* test-ui-gtk-lab.c */
void test_convolution_16x (Fixture *f);
void test_lab_readout_keys (Fixture *f);

/* test-ui-gtk-controls.c */
void test_readout (Fixture *f);
char *write_cube (const char *name, int nx, int ny, int nplanes);
void test_cube_planes (Fixture *f);
void test_kappa_typed (Fixture *f);
void test_threshold_field (Fixture *f);
void test_limits_error_clears (Fixture *f);
void resize_window (Fixture *f, int width, int height);
void test_panel_wheel (Fixture *f);

/* test-ui-gtk-layout.c */
void wait_frames (Fixture *f);
void test_panel_width_steady (Fixture *f);
void test_readout_room (Fixture *f);
void test_narrow_window (Fixture *f);

/* test-ui-gtk-sources.c */
GtkWidget *find_descendant (GtkWidget *root, GType type);
GtkWidget *header_label_prefix (GtkWidget *root, const char *prefix);
void test_source_table_columns (Fixture *f);
void test_source_table_scroll (Fixture *f);
void test_sort_responsive (Fixture *f);

/* test-ui-gtk-scripts.c */
void test_script_edges (Fixture *f);
void test_error_dialog (Fixture *f);
void test_script_parameters (Fixture *f);

/* test-ui-gtk-dialogs.c */
void test_file_dialogs (Fixture *f);
void test_export_folder (Fixture *f);
void save_widget_picture (GtkWidget *widget, const char *name);
void test_about (Fixture *f);

/* test-ui-gtk-frames.c */
void test_frames_menu_tiles (Fixture *f);
void test_menu_actions (Fixture *f);
void test_menu_scale_toggle (Fixture *f);
void test_cube_animator (Fixture *f);

/* test-ui-gtk-viewer.c */
void test_header_window (Fixture *f);
void test_overlay_truth (Fixture *f);
void test_overlay_sextractor (Fixture *f);
void test_overlay_regions (Fixture *f);
void test_source_filters (Fixture *f);
void test_smooth_detection (Fixture *f);
void test_display_smooth (Fixture *f);
/* test-ui-gtk-method.c */
void test_method_switch (Fixture *f);
void test_background_views (Fixture *f);
void test_lesson_banner (Fixture *f);
void test_local_gpu_says_cpu (Fixture *f);

/* test-ui-gtk-tools.c */
void test_grid (Fixture *f);
void test_grid_pole (Fixture *f);
void test_grid_allsky (Fixture *f);
void test_contours (Fixture *f);
void test_pixel_table (Fixture *f);
void test_scale_dialog (Fixture *f);
void test_contours_gc_like (Fixture *f);

/* test-ui-gtk-status.c */
void test_gpu_fault_banner (Fixture *f);
void test_junk_pixel_limits (Fixture *f);
void test_status_says_what_ran (Fixture *f);
void test_rerun_gives_back_arrays (Fixture *f);
void test_sort_action (Fixture *f);
void test_table_many_rows (Fixture *f);
void test_plane_reruns (Fixture *f);
