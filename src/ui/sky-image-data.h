/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-image-data.h: an image as the app holds it, loaded on a worker thread
 * with everything the display needs, then shared read-only (reference
 * counted) between the view, the pipeline workers and the exporters.
 */
#pragma once

#include <gio/gio.h>

#include "sky-core.h"
#include "sky-display-stats.h"
#include "sky-ui-error.h"
#include "sky-ui-shared.h"

G_BEGIN_DECLS

typedef struct _SkyImageData {
  SkyImage image;
  SkyDisplayStats stats;
  SkyPyramid pyramid;
  char *display_name;     /* the file's name for titles and messages */
  gboolean has_wcs;       /* a celestial WCS: wcs is set */
  gboolean flip_x;        /* mirror to show RA increasing to the left */
  SkyWcs *wcs;            /* the celestial WCS, or NULL; main thread only
                           * (wcslib keeps scratch state in it) */
  gboolean is_demo;
  /* A reduced view of an image still loading (sky-image-read.c): sizes,
   * orientation, name and display statistics of its own sample, no pixels
   * (image.pixels NULL), its one pyramid level pyramid.first. Only the
   * view shows one. */
  gboolean is_preview;
  /* The zoom-out levels are still to be made (sky_image_data_make_levels):
   * pyramid holds level 0 alone meanwhile. */
  gboolean levels_pending;
  /* Pixels far outside the central 99.99% when such pixels stretch the
   * min-max range a thousandfold over it (junk values such as ±3e38), else
   * 0: the window then shows 99.9% limits, not min-max, and says why. */
  gint64 minmax_outliers;
  double load_ms;         /* reading the file (with the histogram where the
                           * reader counts it as it reads) */
  double prepare_ms;      /* limits, histogram and pyramid, as far as made
                           * before the first frame */
  double levels_ms;       /* the zoom-out levels made after it, or 0 */
} SkyImageData;

#define SKY_TYPE_IMAGE_DATA (sky_image_data_get_type ())
SKY_DECLARE_SHARED_TYPE (SkyImageData, sky_image_data)

/* Loads the image of path on a worker thread: the HDU and plane of opts,
 * or with opts NULL, plane 0 of the first HDU with an image. With
 * make_demo, a missing file is first made with sky_synth_write: that is how
 * the demo image comes to be in the cache directory. Errors are in
 * SKY_UI_ERROR with the core's status as code and its message, which names
 * the file and the reason. */
/* With progress (may be NULL), the share read so far and, for an image
 * of sky_image_read_progressive_min_pixels or more, a reduced view first
 * (sky-image-read.h); such an image comes back with levels_pending. */
typedef struct _SkyOpenProgress SkyOpenProgress;
void sky_image_data_load_async (const char *path,
                                const SkyLoadOptions *opts,
                                gboolean make_demo,
                                SkyOpenProgress *progress,
                                GCancellable *cancellable,
                                GAsyncReadyCallback callback,
                                gpointer user_data);
SkyImageData *sky_image_data_load_finish (GAsyncResult *result, GError **error);

/* Makes the zoom-out levels of an image that came back with
 * levels_pending, on a worker thread, and puts them in its pyramid (readers
 * on other threads see them whole or not at all; sky_pyramid_levels);
 * where its histogram was of a sample, also the exact statistics (and
 * minmax_outliers), which _finish puts in the image on the main thread. */
void sky_image_data_make_levels_async (SkyImageData *data,
                                       GCancellable *cancellable,
                                       GAsyncReadyCallback callback,
                                       gpointer user_data);
gboolean sky_image_data_make_levels_finish (GAsyncResult *result, GError **error);

/* Where the demo image lives: $XDG_CACHE_HOME/skysift/gc_like_demo_2048.fits,
 * the same file scripts/demo makes with skysift-cli synth. */
char *sky_image_data_demo_path (void);

G_END_DECLS
