/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-window-private.h: SkyWindow's instance, shared by the files that split
 * it by concern: sky-window.c (the class, panels, readout),
 * sky-window-controls.c (the parameter and limit controls, typed input),
 * sky-window-layout.c (where the panels are), sky-window-state.c (the state
 * for scripts),
 * sky-window-jobs.c (the queue: load, run, export), sky-window-files.c
 * (file dialogs, drag and drop, recent files), sky-window-header.c (the
 * header window), sky-window-viewer.c (overlays, the table's filter,
 * smoothing). */
#pragma once

#include "sky-clip-histogram.h"
#include "sky-color-bar.h"
#include "sky-image-view.h"
#include "sky-overlay-set.h"
#include "sky-source-table.h"
#include "sky-timings-panel.h"
#include "sky-window.h"
#include "sky-window-script.h"

G_BEGIN_DECLS

typedef enum {
  SKY_JOB_OPEN,
  SKY_JOB_RUN,
  SKY_JOB_RERUN,        /* parameters moved: run again up to the shown step */
  SKY_JOB_EXPORT_CSV,
  SKY_JOB_EXPORT_PNG,
  SKY_JOB_SCREENSHOT,
  SKY_JOB_SCREENSHOT_PANEL,
  SKY_JOB_OVERLAY,      /* path: a catalogue or region file; "": clear them */
  SKY_JOB_EXPORT_FIGURE,  /* the view as a figure with axes (PNG) */
  SKY_JOB_FRAME,        /* a frame operation, in order with opens and runs */
} SkyJobKind;

typedef struct {
  SkyJobKind kind;
  char *path;
  gboolean is_demo;
  int hdu;              /* open: 1-based, 0 for the first with an image */
  gint64 plane;         /* open: 0-based plane of a cube */
  SkyStep step;
  double zoom;          /* screenshots: scale of the picture, 0 for 1 */
  gint64 queued_us;     /* when it was asked for (a threshold move's start) */
  int frame_op, frame;  /* frame jobs (sky-window-frames.c) */
  const void *frame_open;   /* a new frame's: the open job that brings its image */
} SkyJob;

struct _SkyWindow {
  GtkApplicationWindow parent_instance;

  /* Template widgets */
  GtkLabel *title_label;
  GtkLabel *subtitle_label;
  GtkToggleButton *cpu_button;
  GtkToggleButton *gpu_button;
  GtkToggleButton *both_button;
  GtkProgressBar *progress;
  GtkLabel *status_label;
  GtkRevealer *gpu_banner;       /* the GPU failed and the CPU finished */
  GtkLabel *gpu_banner_label;
  GtkButton *gpu_banner_close;
  GtkButton *cancel_button;
  GtkDropDown *stretch_dropdown;
  GtkDropDown *limits_dropdown;
  GtkEntry *lo_entry;
  GtkEntry *hi_entry;
  GtkDropDown *colormap_dropdown;
  GtkToggleButton *flip_button;
  SkyImageView *view;
  SkyColorBar *color_bar;
  GtkLabel *readout_label;
  GtkPaned *paned;              /* the image and the panels */
  GtkWidget *side_panel;
  GtkStack *panels;
  GtkAdjustment *threshold_adjustment;         /* the threshold, as its number field */
  GtkAdjustment *threshold_slider_adjustment;  /* the slider's usual range */
  GtkScale *threshold_scale;
  GtkSpinButton *threshold_spin;
  GtkAdjustment *kappa_adjustment;
  GtkSpinButton *kappa_spin;
  GtkLabel *limits_note;         /* why the limits are not min-max */
  gboolean limits_automatic;     /* the app chose them for this image */
  gboolean choosing_limits;
  GtkWidget *plane_box;          /* a cube's plane: shown for cubes only */
  GtkSpinButton *plane_spin;
  GtkLabel *plane_range_label;
  GtkDropDown *connectivity_dropdown;
  GtkCheckButton *relative_check;
  GtkLabel *stats_label;
  SkyClipHistogram *histogram;
  GtkCheckButton *show_mask_check;
  GtkCheckButton *show_labels_check;
  GtkCheckButton *show_markers_check;
  SkyTimingsPanel *timings;
  SkySourceTable *sources;
  GMenu *recent_menu;

  /* The method and the local method's controls (sky-window-method.c) */
  SkyMethod method;
  GtkDropDown *method_dropdown;
  GtkWidget *local_grid;
  GtkSpinButton *box_spin, *filter_spin, *seed_spin, *flood_spin, *area_spin, *nthresh_spin;
  GtkSpinButton *mincont_spin, *deblend_sigma_spin;
  GtkDropDown *background_view_dropdown;
  GtkWidget *clip_button, *segment_button, *label_button;
  GtkWidget *background_button, *flood_button, *deblend_button;
  GtkRevealer *method_banner;    /* the lesson's threshold below the background */
  GtkLabel *method_banner_label;
  GtkButton *method_banner_button;
  gconstpointer method_banner_dismissed;
  int maps_pending;              /* background maps or meshes being made */
  SkyRun *mesh_pending;          /* the run whose mesh is being made (not a ref) */  /* the image whose banner was dismissed (not a ref) */

  /* What the window shows */
  SkyImageData *image;
  char *image_path;
  SkyRun *run;
  SkyStep shown_step;   /* the step whose result the view shows */
  SkyParams params;
  SkyBackend backend;
  gboolean restoring_params;  /* a cancel puts the controls back: no rerun */
  char *catalogue_path;  /* last written */
  char *view_path;

  /* The queue */
  GQueue jobs;
  SkyJob *current;
  GCancellable *cancellable;

  /* Measurements for describe () */
  gint64 started_us;      /* the process's start, for startup to first frame */
  double open_to_frame_ms;
  double startup_to_frame_ms;
  /* The open under way (sky-window-open.c) */
  struct _SkyOpenProgress *open_progress;
  guint open_poll;
  gint64 open_t0_us;
  SkyImageData *preview;  /* the reduced view the view shows meanwhile */
  double preview_to_frame_ms;   /* asked to a reduced view's first frame, or 0 */
  double open_to_levels_ms;     /* asked to the zoom-out levels drawn, or 0 */
  double open_max_tick_ms;      /* the open's longest wait between two 50 ms ticks */
  gint64 open_last_tick_us;
  int open_percent;             /* the share read last told, in % */
  double last_threshold_redraw_ms, max_threshold_redraw_ms;
  int threshold_redraws;
  guint gap_timer;
  guint pulse_timer;
  guint busy_timer;
  gint64 last_tick_us;
  gboolean prev_tick_in_pipeline;
  int pipeline_active;    /* runs started whose result is not on screen yet */
  double max_gap_ms;      /* longest main loop stall while a step ran */
  double run_max_gap_ms;  /* ... during the last run */
  gboolean sorting;       /* the source table sorts for a script, metered */
  gint64 sort_t0_us, sort_done_us;
  double sort_ms;         /* the last such sort, asked to placed */
  double sort_max_gap_ms; /* the main loop's longest stall during it */
  gboolean table_metering; /* the source table makes, filters or sorts rows */
  gint64 table_done_us;
  double table_max_gap_ms; /* the main loop's longest stall meanwhile */
  char *last_error;
  GtkWidget *error_dialog;          /* the one error dialog, while shown */
  int errors_in_dialog;             /* errors it has shown since it opened */
  GtkWidget *input_error_control;   /* whose typed text the status line refuses */
  char *input_error;
  gboolean disposed;

  /* The viewer's tools (sky-window-viewer.c) */
  SkyOverlaySet *overlays;
  GtkWidget *header_window;
  GtkSearchEntry *header_search;
  GtkTextView *header_view;
  GtkLabel *header_count;
  int header_shown, header_total;
  GtkEntry *smooth_entry;
  char *smooth;                  /* the detection's kernel (--smooth), or NULL */
  GtkDropDown *picture_smooth_dropdown;
  GtkSpinButton *match_radius_spin;
  char *display_smooth;          /* the picture's kernel, for the eye, or NULL */
  char *display_smoothed;        /* ... the one drawn now */
  GCancellable *display_smoothing;

  /* Frames and the cube animator (sky-window-frames.c, sky-window-cube.c) */
  struct _SkyFrames *frames;
  struct _SkyCube *cube;
};

/* sky-window-jobs.c */
SkyJob *sky_window_job_new (SkyJobKind kind, const char *path, SkyStep step);
void sky_window_queue_job (SkyWindow *self, SkyJob *job);   /* takes job */
void sky_window_push_job (SkyWindow *self, SkyJobKind kind, const char *path, SkyStep step,
                          gboolean is_demo);
void sky_window_jobs_clear (SkyWindow *self);
void sky_window_job_finished (SkyWindow *self);   /* the current job is done */

/* sky-window-open.c */
void sky_window_open_start (SkyWindow *self, SkyJob *job);
void sky_window_set_status (SkyWindow *self, const char *text);
char *sky_window_ran_text (const SkyRun *run, gboolean already_shown);

/* sky-window.c */
void sky_window_apply_image (SkyWindow *self, SkyImageData *image, const char *path);
void sky_window_apply_run (SkyWindow *self, SkyRun *run, SkyStep shown);
void sky_window_changed (SkyWindow *self);   /* describe () would say something new */
/* The readout under the image for the pointer at view's image point (x, y)
 * (0-based, fractional), over image and run; frame > 0 names the frame
 * (a tile other than the window's view). */
void sky_window_show_readout (SkyWindow *self, SkyImageView *view, SkyImageData *image, SkyRun *run,
                              int frame, gboolean inside, double x, double y);
/* The source table asked for rows: meter the main loop until they are
 * shown (the state's table_max_gap_ms). */
void sky_window_meter_table (SkyWindow *self);

/* sky-window-layout.c */
void sky_window_layout_init (SkyWindow *self);
gboolean sky_window_set_panels (SkyWindow *self, const char *where);
void sky_window_keep_panel_width (SkyWindow *self);

/* sky-window-controls.c */
void sky_window_controls_init (SkyWindow *self);
/* Binds the controls' handlers that sky-window.ui names. */
void sky_window_controls_class_init (GtkWidgetClass *widget_class);
void sky_window_show_plane_control (SkyWindow *self, const SkyImage *img);
void sky_window_set_input_error (SkyWindow *self, GtkWidget *control, const char *text);
void sky_window_clear_input_error (SkyWindow *self, GtkWidget *control);
gboolean sky_window_set_threshold_checked (SkyWindow *self, double threshold, GError **error);
void sky_window_set_typed_limits (SkyWindow *self, double lo, double hi);
void sky_window_choose_limits (SkyWindow *self, SkyImageData *image);

/* sky-window-header.c */
/* The header window shows the image's header again (a new image). */
void sky_window_header_refresh (SkyWindow *self);

/* sky-window-viewer.c */
void sky_window_viewer_init (SkyWindow *self);
void sky_window_viewer_class_init (GtkWidgetClass *widget_class);
void sky_window_viewer_dispose (SkyWindow *self);
void sky_window_viewer_image_changed (SkyWindow *self);
void sky_window_viewer_run_changed (SkyWindow *self);
void sky_window_viewer_load_overlay (SkyWindow *self, const char *path);
void sky_window_viewer_describe (SkyWindow *self, GString *out);
/* A cancel: the Smooth field back to the kernel of the results shown,
 * said in moved (a GString of items) where it changed. */
void sky_window_viewer_restore_smooth (SkyWindow *self, GString *moved);
/* app.display's smooth=KERNEL (none: the image's own pixels). */
gboolean sky_window_set_display_smooth (SkyWindow *self, const char *kernel);
/* sky-window-method.c */
void sky_window_method_class_init (GtkWidgetClass *widget_class);
void sky_window_method_init (SkyWindow *self);
/* A new run shown (after the window took it): the banner, the background
 * view, the stats line of a local run. */
void sky_window_method_apply_run (SkyWindow *self, SkyRun *run, gboolean new_step);
/* The status line of a run the CPU did because the GPU has no such steps,
 * and of a local run's background step. */
char *sky_window_cpu_only_text (const SkyRun *run, const char *found, const char *ran);
char *sky_window_maps_text (const SkyRun *run);
/* step, or where the method in use has no such step, the one of its own
 * that stands for it (clip for background, flood for segment...). */
SkyStep sky_window_method_step (SkyWindow *self, SkyStep step);
/* What the view shows in the image's place ("background", "rms", "image −
 * background"), or NULL for the image itself. */
const char *sky_window_shown_map_name (SkyWindow *self);
/* A cancel: the method and local parameters back to the run shown's. */
void sky_window_method_restore (SkyWindow *self, GString *moved);
/* The method's part of describe (): a JSON member list with a leading ", ". */
void sky_window_describe_method (SkyWindow *self, GString *out);

/* sky-window-frames.c: the frame operation of a SKY_JOB_FRAME job; the
 * window's image about to be replaced by incoming, and replaced; the
 * state's "frames" and "cube" members (a leading ", "). */
void sky_window_frames_init (SkyWindow *self);
void sky_window_frames_dispose (SkyWindow *self);
void sky_window_frames_run_job (SkyWindow *self, SkyJob *job);
void sky_window_frames_image_leaving (SkyWindow *self, SkyImageData *incoming);
void sky_window_frames_image_applied (SkyWindow *self);
void sky_window_frames_describe (SkyWindow *self, GString *out);
void sky_window_frames_add_menu (SkyWindow *self);   /* sky-window-frames-menu.c */
/* sky-window-cube.c: the animator under the image, for the current frame */
void sky_window_cube_init (SkyWindow *self, GtkWidget *image_area);
void sky_window_cube_dispose (SkyWindow *self);
void sky_window_cube_image_changed (SkyWindow *self);
void sky_window_cube_describe (SkyWindow *self, GString *out);

/* sky-window-files.c */
void sky_window_files_init (SkyWindow *self);
void sky_window_files_add_recent (SkyWindow *self, const char *path);
void sky_window_open_dialog (SkyWindow *self);
/* The same, the image chosen opening into a new frame where new_frame. */
void sky_window_open_dialog_into (SkyWindow *self, gboolean new_frame);
void sky_window_export_catalogue_dialog (SkyWindow *self);
void sky_window_export_view_dialog (SkyWindow *self);

G_END_DECLS
