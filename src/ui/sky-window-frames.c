/* SPDX-License-Identifier: GPL-3.0-or-later */
/* SkyWindow's frames. The window's own image, run and view are always the
 * current frame's: everything else in the window (the pipeline, the table,
 * the tools, the scripts' actions) works on them unchanged. A frame that
 * is not current keeps its image, run, step shown and view (zoom and
 * centre) here; switching hands them to the window (sky_window_apply_image
 * and _apply_run) and keeps the outgoing frame's. Where frames are tiled
 * or blink, each frame that is not current is drawn by an image view of
 * its own beside the window's, in one grid that takes the view's place.
 *
 * Frame operations are jobs in the window's queue, so that a script's
 * frame-new, run and frame switch happen in the order sent. */
#include "sky-window-private.h"
#include "sky-window-frames.h"
#include "sky-ui-json.h"

#include <math.h>
#include <string.h>

#include "sky-frame-lock.h"

enum { FRAME_OP_NEW, FRAME_OP_SWITCH, FRAME_OP_DELETE, FRAME_OP_STEP };

typedef struct {
  SkyImageData *image;   /* NULL while the frame is current: the window holds it */
  char *path;
  SkyRun *run;
  SkyStep shown;
  double zoom, x, y;     /* the view: zoom and centre (0-based pixels) */
  gboolean fitted;
  SkyImageView *view;    /* drawing it while tiled or blinking, not current */
} SkyFrame;

typedef struct _SkyFrames SkyFrames;

struct _SkyFrames {
  GPtrArray *list;       /* SkyFrame *; one for the window's image, once shown */
  guint current;
  gboolean pending_new;  /* the open below brings a new frame's image */
  gconstpointer new_job; /* that open (compared, never read) and when it was asked */
  gint64 new_job_us;
  SkyFrameMode mode;
  SkyFrameLock lock;
  double blink_interval; /* seconds */
  guint blink_timer;
  guint blink_shown;     /* the frame a blink shows now */
  GtkGrid *grid;         /* in the view's place: every frame's view */
  gboolean switching;    /* the window takes a frame's image: no bookkeeping */
  gboolean following;    /* views being moved by the lock */
  /* The view before a new plane of the same image came (kept through it) */
  gboolean leaving;
  char *leaving_path;
  int leaving_hdu;
  gint64 leaving_nx, leaving_ny;
  double leaving_zoom, leaving_x, leaving_y;
  gboolean leaving_fitted, new_frame;
};

#define FRAME_MARK ", frame "

static const char *const mode_names[] = { "single", "tile", "blink" };
static const char *const lock_names[] = { "none", "image", "wcs" };

static void relayout (SkyWindow *self);
static void on_view_moved (SkyImageView *view, SkyWindow *self);

static void
frame_free (SkyFrame *f)
{
  g_clear_pointer (&f->image, sky_image_data_unref);
  g_clear_pointer (&f->run, sky_run_unref);
  g_free (f->path);
  if (f->view != NULL && gtk_widget_get_parent (GTK_WIDGET (f->view)) != NULL)
    gtk_grid_remove (GTK_GRID (gtk_widget_get_parent (GTK_WIDGET (f->view))),
                     GTK_WIDGET (f->view));
  g_free (f);
}

static SkyFrame *
frame_at (SkyWindow *self, guint i)
{
  return self->frames->list->pdata[i];
}

/* The image, and the view that draws it now (NULL where none does). */
static SkyImageData *
frame_image (SkyWindow *self, guint i)
{
  return i == self->frames->current ? self->image : frame_at (self, i)->image;
}

static SkyImageView *
frame_view (SkyWindow *self, guint i)
{
  return i == self->frames->current ? self->view : frame_at (self, i)->view;
}

/* The view's zoom and centre, drawn or kept. */
static void
frame_get_view (SkyWindow *self, guint i, double *zoom, double *x, double *y)
{
  SkyImageView *view = frame_view (self, i);

  if (view != NULL && sky_image_view_get_image (view) != NULL)
    {
      *zoom = sky_image_view_get_zoom (view);
      sky_image_view_get_center (view, x, y);
    }
  else
    {
      *zoom = frame_at (self, i)->zoom;
      *x = frame_at (self, i)->x;
      *y = frame_at (self, i)->y;
    }
}

/* -------------------------------------------------------------- the lock */

static gboolean
locked_view (SkyWindow *self, guint from, guint to, double zoom, double x, double y,
             double *tzoom, double *tx, double *ty)
{
  return sky_frame_lock_view (frame_image (self, from), frame_image (self, to),
                              self->frames->lock == SKY_FRAME_LOCK_WCS, zoom, x, y, tzoom, tx, ty);
}

/* Frame `from` moved: the others follow, drawn or kept. */
static void
follow (SkyWindow *self, guint from)
{
  SkyFrames *fr = self->frames;
  double zoom, x, y;

  if (fr->lock == SKY_FRAME_LOCK_NONE || fr->following || from >= fr->list->len)
    return;
  frame_get_view (self, from, &zoom, &x, &y);
  fr->following = TRUE;
  for (guint i = 0; i < fr->list->len; i++)
    {
      double tz, tx, ty;
      SkyImageView *view;

      if (i == from || !locked_view (self, from, i, zoom, x, y, &tz, &tx, &ty))
        continue;
      view = frame_view (self, i);
      if (view != NULL && sky_image_view_get_image (view) != NULL)
        sky_image_view_set_center_zoom (view, tz, tx, ty);
      if (i != fr->current)
        {
          SkyFrame *f = frame_at (self, i);
          f->zoom = tz;
          f->x = tx;
          f->y = ty;
          f->fitted = FALSE;
        }
    }
  fr->following = FALSE;
  sky_window_changed (self);
}

static void
on_view_moved (SkyImageView *view, SkyWindow *self)
{
  SkyFrames *fr = self->frames;

  if (fr == NULL || fr->switching)
    return;
  for (guint i = 0; i < fr->list->len; i++)
    if (frame_view (self, i) == view)
      {
        follow (self, i);
        return;
      }
}

/* ------------------------------------------------------------ the views */

static void frame_clicked (GtkGestureClick *gesture, int n, double x, double y, SkyWindow *self);

/* The limits' rule follows the window's; typed limits are the current
 * image's values, which mean nothing for another image. */
static gboolean
limits_but_typed (GBinding *binding, const GValue *from, GValue *to, gpointer data)
{
  if (g_value_get_uint (from) == SKY_LIMITS_TYPED)
    return FALSE;
  g_value_set_uint (to, g_value_get_uint (from));
  return TRUE;
}

/* The readout follows the pointer over any tile, naming the frame. */
static void
on_tile_pointer (SkyImageView *view, gboolean inside, double x, double y, SkyWindow *self)
{
  for (guint i = 0; i < self->frames->list->len; i++)
    if (frame_at (self, i)->view == view)
      {
        SkyFrame *f = frame_at (self, i);
        sky_window_show_readout (self, view, f->image, f->run, (int) i + 1, inside, x, y);
        return;
      }
}

/* A view for a frame that is not current, drawn as the window's view is. */
static SkyImageView *
make_view (SkyWindow *self, SkyFrame *f)
{
  SkyImageView *view = SKY_IMAGE_VIEW (sky_image_view_new ());
  GtkGesture *click = gtk_gesture_click_new ();
  guint stretch, limits, colormap;

  g_object_get (self->view, "stretch", &stretch, "limits", &limits, "colormap", &colormap, NULL);
  if (limits == SKY_LIMITS_TYPED)
    limits = SKY_LIMITS_MINMAX;
  gtk_widget_set_hexpand (GTK_WIDGET (view), TRUE);
  gtk_widget_set_vexpand (GTK_WIDGET (view), TRUE);
  sky_image_view_set_image (view, f->image);
  g_object_set (view, "stretch", stretch, "limits", limits, "colormap", colormap,
                "show-mask", f->shown == SKY_STEP_SEGMENT,
                "show-labels", f->shown == SKY_STEP_LABEL || f->shown == SKY_STEP_FLOOD
                               || f->shown == SKY_STEP_DEBLEND,
                "show-markers", f->shown == SKY_STEP_MEASURE, NULL);
  /* The stretch and colour map are the window's, in every frame. */
  g_object_bind_property (self->view, "stretch", view, "stretch", G_BINDING_DEFAULT);
  g_object_bind_property (self->view, "colormap", view, "colormap", G_BINDING_DEFAULT);
  g_object_bind_property_full (self->view, "limits", view, "limits", G_BINDING_DEFAULT,
                               limits_but_typed, NULL, NULL, NULL);
  if (f->run != NULL)
    sky_image_view_set_run (view, f->run);
  if (!f->fitted)
    sky_image_view_set_center_zoom (view, f->zoom, f->x, f->y);
  gtk_widget_set_tooltip_text (GTK_WIDGET (view), f->image->display_name);
  /* A click makes the frame current, as in DS9. */
  gtk_gesture_single_set_button (GTK_GESTURE_SINGLE (click), GDK_BUTTON_PRIMARY);
  g_signal_connect (click, "released", G_CALLBACK (frame_clicked), self);
  gtk_widget_add_controller (GTK_WIDGET (view), GTK_EVENT_CONTROLLER (click));
  g_signal_connect (view, "view-moved", G_CALLBACK (on_view_moved), self);
  g_signal_connect (view, "pointer-moved", G_CALLBACK (on_tile_pointer), self);
  return view;
}

typedef struct {
  SkyWindow *self;
  int number;
} ClickedFrame;

static gboolean
switch_later (gpointer data)
{
  ClickedFrame *c = data;

  if (!c->self->disposed)
    sky_window_frame_switch (c->self, c->number);
  g_object_unref (c->self);
  g_free (c);
  return G_SOURCE_REMOVE;
}

/* From the main loop, not from within the gesture: the switch drops the
 * clicked view, which GTK is still delivering the click to. */
static void
frame_clicked (GtkGestureClick *gesture, int n, double x, double y, SkyWindow *self)
{
  GtkWidget *view = gtk_event_controller_get_widget (GTK_EVENT_CONTROLLER (gesture));

  for (guint i = 0; i < self->frames->list->len; i++)
    if (GTK_WIDGET (frame_at (self, i)->view) == view)
      {
        ClickedFrame *c = g_new (ClickedFrame, 1);
        c->self = g_object_ref (self);
        c->number = (int) i + 1;
        g_idle_add (switch_later, c);
        return;
      }
}

static void
place (GtkGrid *grid, GtkWidget *widget, int column, int row, gboolean visible)
{
  if (gtk_widget_get_parent (widget) != GTK_WIDGET (grid))
    gtk_grid_attach (grid, widget, column, row, 1, 1);
  else
    {
      GtkLayoutManager *layout = gtk_widget_get_layout_manager (GTK_WIDGET (grid));
      GtkGridLayoutChild *child =
        GTK_GRID_LAYOUT_CHILD (gtk_layout_manager_get_layout_child (layout, widget));
      gtk_grid_layout_child_set_column (child, column);
      gtk_grid_layout_child_set_row (child, row);
    }
  gtk_widget_set_visible (widget, visible);
}

/* The subtitle says which frame shows where there are several. */
static void
show_frame_number (SkyWindow *self)
{
  const char *text = gtk_label_get_text (self->subtitle_label);
  const char *mark = strstr (text, FRAME_MARK);
  g_autofree char *base = mark ? g_strndup (text, (gsize) (mark - text)) : g_strdup (text);
  g_autofree char *shown = self->frames->list->len > 1
    ? g_strdup_printf ("%s" FRAME_MARK "%u of %u", base, self->frames->current + 1,
                       self->frames->list->len)
    : g_strdup (base);

  if (!g_str_equal (shown, text))
    gtk_label_set_text (self->subtitle_label, shown);
}

/* Every frame's view where the mode wants it: tiled in a near-square grid,
 * or one at a time (the current one, or the one a blink shows). Views of
 * frames not shown are dropped: they cost textures. */
static void
relayout (SkyWindow *self)
{
  SkyFrames *fr = self->frames;
  guint n = fr->list->len;
  int columns = (int) ceil (sqrt ((double) MAX (n, 1)));

  for (guint i = 0; i < n; i++)
    {
      SkyFrame *f = frame_at (self, i);
      gboolean tile = fr->mode == SKY_FRAME_MODE_TILE;
      gboolean visible = tile || (fr->mode == SKY_FRAME_MODE_BLINK ? i == fr->blink_shown
                                                                   : i == fr->current);
      GtkWidget *widget;

      if (i == fr->current)
        widget = GTK_WIDGET (self->view);
      else if (fr->mode == SKY_FRAME_MODE_SINGLE || f->image == NULL)
        {
          if (f->view != NULL)
            {
              gtk_grid_remove (fr->grid, GTK_WIDGET (f->view));
              f->view = NULL;
            }
          continue;
        }
      else
        {
          if (f->view == NULL)
            f->view = make_view (self, f);
          widget = GTK_WIDGET (f->view);
        }
      place (fr->grid, widget, tile ? (int) i % columns : 0, tile ? (int) i / columns : 0, visible);
    }
  if (n > 1 && fr->mode == SKY_FRAME_MODE_TILE)
    gtk_widget_add_css_class (GTK_WIDGET (self->view), "current-frame");
  else
    gtk_widget_remove_css_class (GTK_WIDGET (self->view), "current-frame");
  show_frame_number (self);
  gtk_widget_set_visible (GTK_WIDGET (self->view), n == 0 || fr->mode == SKY_FRAME_MODE_TILE
                          || (fr->mode == SKY_FRAME_MODE_BLINK ? fr->blink_shown == fr->current
                                                               : TRUE));
}

static gboolean
blink_tick (gpointer data)
{
  SkyWindow *self = data;
  SkyFrames *fr = self->frames;

  if (fr->list->len > 0)
    fr->blink_shown = (fr->blink_shown + 1) % fr->list->len;
  relayout (self);
  sky_window_changed (self);
  return G_SOURCE_CONTINUE;
}

static void
restart_blink (SkyWindow *self)
{
  SkyFrames *fr = self->frames;

  g_clear_handle_id (&fr->blink_timer, g_source_remove);
  fr->blink_shown = fr->current;
  if (fr->mode == SKY_FRAME_MODE_BLINK)
    fr->blink_timer = g_timeout_add ((guint) (fr->blink_interval * 1000), blink_tick, self);
}

/* ----------------------------------------------------- switching frames */

/* The window's image, run and view into frame i's keeping. */
static void
keep_current (SkyWindow *self)
{
  SkyFrame *f = frame_at (self, self->frames->current);

  g_clear_pointer (&f->image, sky_image_data_unref);
  g_clear_pointer (&f->run, sky_run_unref);
  f->image = self->image ? sky_image_data_ref (self->image) : NULL;
  f->run = self->run ? sky_run_ref (self->run) : NULL;
  f->shown = self->shown_step;
  g_free (f->path);
  f->path = g_strdup (self->image_path);
  f->zoom = sky_image_view_get_zoom (self->view);
  sky_image_view_get_center (self->view, &f->x, &f->y);
  f->fitted = sky_image_view_get_fitted (self->view);
}

static void
switch_to (SkyWindow *self, guint target)
{
  SkyFrames *fr = self->frames;
  SkyFrame *f;

  if (target == fr->current || target >= fr->list->len)
    return;
  keep_current (self);
  f = frame_at (self, target);
  /* Its own view goes: the window's draws it now. */
  if (f->view != NULL)
    {
      gtk_grid_remove (fr->grid, GTK_WIDGET (f->view));
      f->view = NULL;
    }
  fr->switching = TRUE;
  fr->current = target;
  sky_window_apply_image (self, f->image, f->path);
  if (f->run != NULL)
    sky_window_apply_run (self, f->run, f->shown);
  if (!f->fitted)
    sky_image_view_set_center_zoom (self->view, f->zoom, f->x, f->y);
  g_clear_pointer (&f->image, sky_image_data_unref);
  g_clear_pointer (&f->run, sky_run_unref);
  fr->switching = FALSE;
  sky_window_cube_image_changed (self);
  relayout (self);
  restart_blink (self);
  sky_window_changed (self);
}

static void
frame_error (SkyWindow *self, const char *what, int number)
{
  g_autofree char *detail = g_strdup_printf ("There %s %u frame%s (1 to %u), not %d.",
                                             self->frames->list->len == 1 ? "is" : "are",
                                             self->frames->list->len,
                                             self->frames->list->len == 1 ? "" : "s",
                                             self->frames->list->len, number);
  sky_window_show_error (self, what, detail);
}

static void
delete_current (SkyWindow *self)
{
  SkyFrames *fr = self->frames;
  guint gone = fr->current, next;

  if (fr->list->len <= 1)
    {
      sky_window_show_error (self, "The last frame cannot be deleted",
                             "A window shows at least one frame; open another image instead.");
      return;
    }
  next = gone + 1 < fr->list->len ? gone + 1 : gone - 1;
  switch_to (self, next);
  g_ptr_array_remove_index (fr->list, gone);   /* frees it */
  if (fr->current > gone)
    fr->current--;
  relayout (self);
  restart_blink (self);
  sky_window_changed (self);
}

void
sky_window_frames_run_job (SkyWindow *self, SkyJob *job)
{
  SkyFrames *fr = self->frames;
  guint n = fr->list->len;

  switch (job->frame_op)
    {
    case FRAME_OP_NEW:
      {
        /* The open queued right behind this job (still waiting: it was
         * queued after it); a failed one leaves nothing pending for a
         * later open to take. */
        const SkyJob *open = job->frame_open;
        fr->pending_new = self->image != NULL && open != NULL;
        fr->new_job = open;
        fr->new_job_us = open ? open->queued_us : 0;
      }
      break;
    case FRAME_OP_SWITCH:
      if (job->frame < 1 || (guint) job->frame > n)
        frame_error (self, "There is no such frame", job->frame);
      else
        switch_to (self, (guint) job->frame - 1);
      break;
    case FRAME_OP_STEP:
      if (n > 1)
        switch_to (self, (fr->current + n + (guint) (job->frame > 0 ? 1 : n - 1)) % n);
      break;
    case FRAME_OP_DELETE:
      delete_current (self);
      break;
    default:
      g_assert_not_reached ();
    }
}

static void
queue_frame_job (SkyWindow *self, int op, int frame)
{
  SkyJob *job = sky_window_job_new (SKY_JOB_FRAME, NULL, SKY_STEP_NONE);

  job->frame_op = op;
  job->frame = frame;
  sky_window_queue_job (self, job);
}

void
sky_window_frame_new (SkyWindow *self, const char *path, int hdu, gint64 plane)
{
  SkyJob *job = sky_window_job_new (SKY_JOB_FRAME, NULL, SKY_STEP_NONE);
  SkyJob *open = sky_window_job_new (SKY_JOB_OPEN, path, SKY_STEP_NONE);

  open->hdu = hdu;
  open->plane = plane;
  job->frame_op = FRAME_OP_NEW;
  job->frame_open = open;
  sky_window_queue_job (self, job);
  sky_window_queue_job (self, open);
}

void
sky_window_frame_switch (SkyWindow *self, int number)
{
  queue_frame_job (self, FRAME_OP_SWITCH, number);
}

void
sky_window_frame_delete (SkyWindow *self)
{
  queue_frame_job (self, FRAME_OP_DELETE, 0);
}

void
sky_window_frame_step (SkyWindow *self, int direction)
{
  queue_frame_job (self, FRAME_OP_STEP, direction);
}

/* ------------------------------------------- the window's image changes */

/* Before the window takes incoming: into a new frame, keeping the current
 * one's; or the current frame's image replaced (another plane of it keeps
 * the view where it was). */
void
sky_window_frames_image_leaving (SkyWindow *self, SkyImageData *incoming)
{
  SkyFrames *fr = self->frames;

  if (fr == NULL || fr->switching)
    return;
  fr->leaving = FALSE;
  fr->new_frame = FALSE;
  if (fr->pending_new && self->image != NULL && fr->list->len > 0 && self->current != NULL
      && (gconstpointer) self->current == fr->new_job && self->current->queued_us == fr->new_job_us)
    {
      keep_current (self);
      g_ptr_array_add (fr->list, g_new0 (SkyFrame, 1));
      fr->current = fr->list->len - 1;
      fr->new_frame = TRUE;
    }
  else if (self->image != NULL && self->image_path != NULL)
    {
      fr->leaving = TRUE;
      g_free (fr->leaving_path);
      fr->leaving_path = g_strdup (self->image_path);
      fr->leaving_hdu = self->image->image.hdu;
      fr->leaving_nx = self->image->image.nx;
      fr->leaving_ny = self->image->image.ny;
      fr->leaving_zoom = sky_image_view_get_zoom (self->view);
      sky_image_view_get_center (self->view, &fr->leaving_x, &fr->leaving_y);
      fr->leaving_fitted = sky_image_view_get_fitted (self->view);
    }
  fr->pending_new = FALSE;
}

void
sky_window_frames_image_applied (SkyWindow *self)
{
  SkyFrames *fr = self->frames;
  const SkyImage *img;

  if (fr == NULL || fr->switching || self->image == NULL)
    return;
  img = &self->image->image;
  if (fr->list->len == 0)
    {
      g_ptr_array_add (fr->list, g_new0 (SkyFrame, 1));
      fr->current = 0;
    }
  /* Another plane of the same cube: the animator keeps the view. */
  if (fr->leaving && !fr->leaving_fitted && g_strcmp0 (fr->leaving_path, self->image_path) == 0
      && fr->leaving_hdu == img->hdu && fr->leaving_nx == img->nx && fr->leaving_ny == img->ny)
    sky_image_view_set_center_zoom (self->view, fr->leaving_zoom, fr->leaving_x, fr->leaving_y);
  fr->leaving = FALSE;
  relayout (self);
  /* A new frame joins the lock where the frame before it looks. */
  if (fr->new_frame && fr->lock != SKY_FRAME_LOCK_NONE && fr->list->len > 1)
    {
      guint before = fr->current > 0 ? fr->current - 1 : 1;
      follow (self, before);
    }
  fr->new_frame = FALSE;
  restart_blink (self);
  sky_window_cube_image_changed (self);
}

/* ------------------------------------------------------------- settings */

static int
name_index (const char *const *names, int n, const char *name)
{
  for (int i = 0; i < n; i++)
    if (g_str_equal (names[i], name))
      return i;
  return -1;
}

gboolean
sky_window_set_frame_mode (SkyWindow *self, const char *mode)
{
  int m = name_index (mode_names, G_N_ELEMENTS (mode_names), mode);

  if (m < 0)
    {
      g_autofree char *detail = g_strdup_printf ("Frames show single, tile or blink, not “%s”.",
                                                 mode);
      sky_window_show_error (self, "There is no such frame mode", detail);
      return FALSE;
    }
  self->frames->mode = m;
  relayout (self);
  restart_blink (self);
  sky_window_changed (self);
  return TRUE;
}

gboolean
sky_window_set_frame_lock (SkyWindow *self, const char *lock)
{
  int l = name_index (lock_names, G_N_ELEMENTS (lock_names), lock);

  if (l < 0)
    {
      g_autofree char *detail = g_strdup_printf ("Frames lock on none, image or wcs, not “%s”.",
                                                 lock);
      sky_window_show_error (self, "There is no such frame lock", detail);
      return FALSE;
    }
  self->frames->lock = l;
  /* The others come to where the current frame looks now. */
  if (self->image != NULL)
    follow (self, self->frames->current);
  sky_window_changed (self);
  return TRUE;
}

gboolean
sky_window_set_blink_interval (SkyWindow *self, double seconds)
{
  if (!(seconds >= 0.1 && seconds <= 10))
    {
      g_autofree char *detail = g_strdup_printf ("The blink interval is 0.1 to 10 seconds, "
                                                 "not %g.", seconds);
      sky_window_show_error (self, "That is not a blink interval", detail);
      return FALSE;
    }
  self->frames->blink_interval = seconds;
  restart_blink (self);
  sky_window_changed (self);
  return TRUE;
}

int
sky_window_get_frame (SkyWindow *self)
{
  return self->frames->list->len > 0 ? (int) self->frames->current + 1 : 0;
}

int
sky_window_get_frame_count (SkyWindow *self)
{
  return (int) self->frames->list->len;
}

const char *
sky_window_get_frame_mode (SkyWindow *self)
{
  return mode_names[self->frames->mode];
}

const char *
sky_window_get_frame_lock (SkyWindow *self)
{
  return lock_names[self->frames->lock];
}

double
sky_window_get_blink_interval (SkyWindow *self)
{
  return self->frames->blink_interval;
}

/* ---------------------------------------------------------------- state */

static void
json_double (GString *out, double v)
{
  if (isfinite (v))
    g_string_append_printf (out, "%.17g", v);
  else
    g_string_append (out, "null");
}

void
sky_window_frames_describe (SkyWindow *self, GString *out)
{
  SkyFrames *fr = self->frames;

  if (fr == NULL)
    return;
  g_string_append_printf (out, ", \"frames\": {\"n\": %u, \"current\": %d, \"mode\": \"%s\", "
                          "\"lock\": \"%s\", \"blink_interval\": %g, \"blink_shown\": %u, "
                          "\"list\": [", fr->list->len, sky_window_get_frame (self),
                          mode_names[fr->mode], lock_names[fr->lock], fr->blink_interval,
                          fr->blink_shown + 1);
  for (guint i = 0; i < fr->list->len; i++)
    {
      SkyImageData *image = frame_image (self, i);
      SkyImageView *view = frame_view (self, i);
      SkyRun *run = i == fr->current ? self->run : frame_at (self, i)->run;
      double zoom, x, y, lng = NAN, lat = NAN;

      frame_get_view (self, i, &zoom, &x, &y);
      if (image != NULL && image->has_wcs)
        sky_wcs_pix2world (image->wcs, x, y, &lng, &lat);
      g_string_append_printf (out, "%s{\"frame\": %u, \"image\": ", i ? ", " : "", i + 1);
      sky_ui_json_string (out, i == fr->current ? self->image_path : frame_at (self, i)->path);
      if (image != NULL)
        g_string_append_printf (out, ", \"plane\": %" G_GINT64_FORMAT ", \"nplanes\": %"
                                G_GINT64_FORMAT ", \"shape\": [%" G_GINT64_FORMAT ", %"
                                G_GINT64_FORMAT "]", image->image.plane, image->image.nplanes,
                                image->image.ny, image->image.nx);
      /* The centre in FITS pixels, from 1, as app.pan takes them. */
      g_string_append (out, ", \"zoom\": ");
      json_double (out, zoom);
      g_string_append (out, ", \"center\": [");
      json_double (out, x + 1);
      g_string_append (out, ", ");
      json_double (out, y + 1);
      g_string_append (out, "], \"world\": [");
      json_double (out, lng);
      g_string_append (out, ", ");
      json_double (out, lat);
      g_string_append (out, "], \"system\": ");
      sky_ui_json_string (out, image && image->has_wcs
                              ? sky_coord_system_name (sky_wcs_system (image->wcs)) : "");
      g_string_append (out, ", \"shown_step\": ");
      sky_ui_json_string (out, sky_step_name (i == fr->current ? self->shown_step
                                                                   : frame_at (self, i)->shown));
      g_string_append_printf (out, ", \"drawn\": %s, \"visible\": %s, \"nsources\": %"
                              G_GINT64_FORMAT "}",
                              view != NULL ? "true" : "false",
                              view != NULL && gtk_widget_get_visible (GTK_WIDGET (view))
                              ? "true" : "false",
                              run != NULL && sky_run_has_labels (run) ? run->nsources : 0);
    }
  g_string_append (out, "]}");
  sky_window_cube_describe (self, out);
}

/* --------------------------------------------------------------- set-up */

static GtkCssProvider *frame_css;

void
sky_window_frames_init (SkyWindow *self)
{
  SkyFrames *fr = g_new0 (SkyFrames, 1);
  GtkWidget *view = GTK_WIDGET (self->view);
  GtkWidget *overlay = gtk_widget_get_parent (view);

  self->frames = fr;
  if (frame_css == NULL)
    {
      /* The current frame, where frames are tiled, is outlined as DS9 does. */
      frame_css = gtk_css_provider_new ();
      gtk_css_provider_load_from_data (frame_css, "skyimageview.current-frame { outline: 3px solid "
                                       "#3584e4; outline-offset: -3px; }", -1);
      gtk_style_context_add_provider_for_display (gtk_widget_get_display (GTK_WIDGET (self)),
                                                  GTK_STYLE_PROVIDER (frame_css),
                                                  GTK_STYLE_PROVIDER_PRIORITY_APPLICATION);
    }
  fr->list = g_ptr_array_new_with_free_func ((GDestroyNotify) frame_free);
  fr->blink_interval = 0.5;
  /* The view moves into a grid that holds every frame's view. */
  fr->grid = GTK_GRID (gtk_grid_new ());
  gtk_grid_set_row_homogeneous (fr->grid, TRUE);
  gtk_grid_set_column_homogeneous (fr->grid, TRUE);
  gtk_grid_set_row_spacing (fr->grid, 2);
  gtk_grid_set_column_spacing (fr->grid, 2);
  gtk_widget_set_hexpand (GTK_WIDGET (fr->grid), TRUE);
  gtk_widget_set_vexpand (GTK_WIDGET (fr->grid), TRUE);
  g_object_ref (view);
  gtk_overlay_set_child (GTK_OVERLAY (overlay), GTK_WIDGET (fr->grid));
  gtk_grid_attach (fr->grid, view, 0, 0, 1, 1);
  g_object_unref (view);
  g_signal_connect (view, "view-moved", G_CALLBACK (on_view_moved), self);
  sky_window_cube_init (self, overlay);
  sky_window_frames_add_menu (self);
}

void
sky_window_frames_dispose (SkyWindow *self)
{
  SkyFrames *fr = self->frames;

  if (fr == NULL)
    return;
  sky_window_cube_dispose (self);
  g_clear_handle_id (&fr->blink_timer, g_source_remove);
  g_signal_handlers_disconnect_by_func (self->view, on_view_moved, self);
  g_ptr_array_unref (fr->list);
  g_free (fr->leaving_path);
  g_free (fr);
  self->frames = NULL;
}
