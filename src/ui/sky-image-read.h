/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-image-read.h: the app's read of an uncompressed plane in chunks on
 * every core, each chunk counted for the display statistics while it is
 * still in cache; with the share read so far for a progress bar, a cancel
 * between chunks, and for a big image first a reduced view read from
 * every k-th row. */
#pragma once

#include <gio/gio.h>

#include "sky-image-data.h"

G_BEGIN_DECLS

/* What the window learns while an image loads: written by the loader's
 * thread, read on the main loop. Reference counted. */
typedef struct _SkyOpenProgress SkyOpenProgress;

SkyOpenProgress *sky_open_progress_new (void);
SkyOpenProgress *sky_open_progress_ref (SkyOpenProgress *p);
void sky_open_progress_unref (SkyOpenProgress *p);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SkyOpenProgress, sky_open_progress_unref)

/* The share of the pixels read, 0 to 1. */
double sky_open_progress_fraction (SkyOpenProgress *p);

/* The reduced view, once: NULL before it is made and after it was taken. */
SkyImageData *sky_open_progress_take_preview (SkyOpenProgress *p);

/* Images of at least this many pixels get a reduced view first and their
 * zoom-out levels after the first frame: 2^26 (8192 x 8192), or
 * $SKYSIFT_PROGRESSIVE_MIN_PIXELS. */
gint64 sky_image_read_progressive_min_pixels (void);

typedef enum {
  SKY_IMAGE_READ_DONE,        /* data->image and data->stats are filled */
  SKY_IMAGE_READ_CANNOT,      /* not a plane this reader reads: use sky_image_load */
  SKY_IMAGE_READ_FAILED,      /* *error says why, naming the file */
  SKY_IMAGE_READ_CANCELLED,
} SkyImageReadResult;

/* Sets data's WCS, orientation (has_wcs, flip_x) and display name from
 * its image's header and path (sky-image-data.c). */
void sky_image_data_describe (SkyImageData *data, const char *path);

/* Reads the plane of opts from path into data->image, counts it into
 * data->stats, and, where the image has progressive_min_pixels or more and
 * progress is not NULL, first makes a reduced view for
 * sky_open_progress_take_preview, facing as data will (data is described
 * with sky_image_data_describe as soon as its header is read), whose
 * histogram is then data's: a sample (data->stats.sampled;
 * sky_image_data_make_levels_async makes the exact one), with the extremes
 * and non-blank count of every pixel. The pixels are those of
 * sky_image_load to the bit (the core's own conversion). */
SkyImageReadResult sky_image_read (const char *path, const SkyLoadOptions *opts,
                                   SkyImageData *data, SkyOpenProgress *progress,
                                   GCancellable *cancellable, GError **error);

G_END_DECLS
