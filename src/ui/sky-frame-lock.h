/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-frame-lock.h: the view of one image that shows what a view of
 * another shows, for frames locked on image pixels or on the sky. */
#pragma once

#include "sky-image-data.h"

G_BEGIN_DECLS

/* Where b must be looked at to show what a shows centred on (x, y) (0-based
 * pixels) at zoom (screen pixels per image pixel): on_sky FALSE, the same
 * pixel and zoom; TRUE, the same sky position (converted between galactic
 * and equatorial where the images differ) at the same angle per screen
 * pixel, the local pixel sizes at both centres (the geometric mean of a
 * step along each axis). FALSE where it cannot: no celestial WCS, systems
 * with no conversion, a position off b's projection. Main thread only
 * (the images' SkyWcs). */
gboolean sky_frame_lock_view (SkyImageData *a, SkyImageData *b, gboolean on_sky, double zoom,
                              double x, double y, double *tzoom, double *tx, double *ty);

G_END_DECLS
