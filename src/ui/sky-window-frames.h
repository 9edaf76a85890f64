/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-window-frames.h: several images open at once in one window, as DS9's
 * frames: one is current (the pipeline, the table and the tools work on
 * it), the others wait with their results and view. Shown one at a time,
 * tiled, or blinking; locked on image pixels or on the sky (WCS), so that
 * a pan or zoom of one moves the others to the same position and angular
 * scale. And the animator over a cube's planes (sky-window-cube.c). */
#pragma once

#include "sky-window.h"

G_BEGIN_DECLS

typedef enum {
  SKY_FRAME_MODE_SINGLE,
  SKY_FRAME_MODE_TILE,
  SKY_FRAME_MODE_BLINK,
} SkyFrameMode;

typedef enum {
  SKY_FRAME_LOCK_NONE,
  SKY_FRAME_LOCK_IMAGE,
  SKY_FRAME_LOCK_WCS,
} SkyFrameLock;

/* Queued, in order with opens and runs: HDU hdu (1-based, 0 the first
 * with an image) and plane (0-based) of path open into a new frame, which
 * becomes current; a failed open leaves the frames as they were. */
void sky_window_frame_new (SkyWindow *self, const char *path, int hdu, gint64 plane);
/* Queued: frame number (from 1, as DS9 counts) becomes current; delete the
 * current frame (the next one becomes current; the last frame stays);
 * step through them (+1 next, -1 previous, wrapping). Numbers that do not
 * exist are refused with an error dialog and last_error. */
void sky_window_frame_switch (SkyWindow *self, int number);
void sky_window_frame_delete (SkyWindow *self);
void sky_window_frame_step (SkyWindow *self, int direction);
/* How frames show, "single", "tile" or "blink"; the lock, "none", "image"
 * or "wcs"; the blink interval in seconds (0.1 to 10). FALSE, with an
 * error dialog, for anything else. */
gboolean sky_window_set_frame_mode (SkyWindow *self, const char *mode);
gboolean sky_window_set_frame_lock (SkyWindow *self, const char *lock);
gboolean sky_window_set_blink_interval (SkyWindow *self, double seconds);
int sky_window_get_frame (SkyWindow *self);          /* from 1; 0 without an image */
int sky_window_get_frame_count (SkyWindow *self);
const char *sky_window_get_frame_mode (SkyWindow *self);
const char *sky_window_get_frame_lock (SkyWindow *self);
double sky_window_get_blink_interval (SkyWindow *self);

/* The cube animator: play or pause stepping through the planes of the
 * current frame's cube, one each interval (seconds, 0.05 to 10); a step
 * of +1 or -1 plane (wrapping). Refused with a message without a cube. */
void sky_window_set_cube_play (SkyWindow *self, gboolean play);
gboolean sky_window_get_cube_play (SkyWindow *self);
gboolean sky_window_set_cube_interval (SkyWindow *self, double seconds);
double sky_window_get_cube_interval (SkyWindow *self);
void sky_window_cube_step (SkyWindow *self, int direction);

G_END_DECLS
