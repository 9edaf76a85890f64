/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-display-stats.h: what the viewer needs to know about an image before
 * it can draw it: display limits (min-max, percentiles, zscale), the pixel
 * distribution for histogram equalisation, a mean pyramid for zooming out,
 * and which way the sky's longitude runs. Plain C on sky-core, no GTK; the
 * loader computes all of it on its worker thread.
 */
#ifndef SKY_DISPLAY_STATS_H
#define SKY_DISPLAY_STATS_H

#include "sky-core.h"

typedef enum {
  SKY_LIMITS_MINMAX,
  SKY_LIMITS_99_5,    /* 0.25% to 99.75% */
  SKY_LIMITS_99_9,    /* 0.05% to 99.95% */
  SKY_LIMITS_ZSCALE,  /* IRAF's zscale, as astropy's ZScaleInterval */
  SKY_N_LIMITS
} SkyLimits;

/* Pixels are counted in buckets of the top 16 bits of an order-preserving
 * 32-bit key of their value: a bucket spans 1/128 of an octave, so
 * quantiles are good to a fraction of a percent whatever the dynamic range. */
#define SKY_DISPLAY_NBUCKETS 65536

typedef struct SkyDisplayStats {
  int64_t nvalid;       /* non-blank pixels (in the histogram, where sampled) */
  int sampled;          /* the histogram is of a sample (counts_add_sampled);
                         * min and max are still of every pixel */
  double min, max;      /* of the non-blank pixels; 0 when there are none */
  double lo[SKY_N_LIMITS], hi[SKY_N_LIMITS];
  uint64_t *cum;        /* SKY_DISPLAY_NBUCKETS + 1 running counts by bucket */
} SkyDisplayStats;

const char *sky_limits_name (SkyLimits l);  /* "minmax", "99.5", "99.9", "zscale" */
int sky_limits_from_name (const char *name); /* -1 if unknown */

/* Computes everything above on nthreads threads (0: every core). */
int sky_display_stats_compute (const SkyImage *img, int nthreads, SkyDisplayStats *out);
void sky_display_stats_clear (SkyDisplayStats *st);

/* The display statistics in parts: counts of the pixels handed to
 * sky_display_counts_add (one SkyDisplayCounts a thread, fewer than 2^32
 * pixels each), then merged by sky_display_stats_finish, which also takes
 * the zscale sample from img: the same statistics as
 * sky_display_stats_compute of the image whose pixels were all counted. */
typedef struct SkyDisplayCounts {
  uint32_t *hist;       /* SKY_DISPLAY_NBUCKETS counts, or NULL: none */
  float min, max;       /* of every non-blank pixel seen */
  int64_t n;            /* non-blank pixels in the histogram */
  int64_t nvalid;       /* non-blank pixels seen (n, or more where sampled) */
} SkyDisplayCounts;

int sky_display_counts_init (SkyDisplayCounts *c);
void sky_display_counts_add (SkyDisplayCounts *c, const float *pixels, int64_t n);
/* Every pixel for the extremes and the count of non-blank ones, but only
 * pixels[first], pixels[first + stride], ... into the histogram: a sample
 * of 1 in stride, for a first frame that cannot wait for the histogram of
 * every pixel (about four times a read's cost). */
void sky_display_counts_add_sampled (SkyDisplayCounts *c, const float *pixels, int64_t n,
                                     int64_t first, int64_t stride);
/* The extremes and the count of non-blank pixels alone, nothing into the
 * histogram (c->hist may be NULL): with another SkyDisplayCounts that
 * holds a histogram of a sample, sky_display_stats_finish makes the
 * statistics of a sampled histogram and the exact extremes. */
void sky_display_counts_add_extremes (SkyDisplayCounts *c, const float *pixels, int64_t n);
void sky_display_counts_clear (SkyDisplayCounts *c);
int sky_display_stats_finish (const SkyImage *img, const SkyDisplayCounts *counts, int ncounts,
                              SkyDisplayStats *out);

/* The value below which a fraction q (0..1) of the non-blank pixels lie. */
double sky_display_stats_quantile (const SkyDisplayStats *st, double q);

/* The fraction of non-blank pixels below x. Rises monotonically with x. */
double sky_display_stats_cdf (const SkyDisplayStats *st, double x);

/* Fills eq (SKY_EQ_SIZE entries) with the histogram equalisation between
 * lo and hi: eq[i] is the fraction of the pixels in [lo, hi] that lie below
 * lo + i / (SKY_EQ_SIZE - 1) * (hi - lo). Linear where the range is empty. */
void sky_display_stats_fill_eq (const SkyDisplayStats *st, double lo, double hi, float *eq);

/* IRAF zscale limits of a sample of up to nsamples pixels (astropy's
 * ZScaleInterval with its defaults: contrast 0.25, 2.5-sigma rejection). */
void sky_zscale (const SkyImage *img, int nsamples, double *lo, double *hi);

/* --------------------------------------------------------------- pyramid */

#define SKY_PYRAMID_MAX_LEVELS 24

/* Level k is max(1, nx >> k) by max(1, ny >> k), as OpenGL sizes mipmap
 * levels; each pixel is the mean of the non-blank pixels it covers (blank
 * only where all are). Level 0 is the image's own pixels, borrowed.
 * Levels first to nlevels - 1 are held: first is 0 but in a reduced view
 * of an image still loading (sky-image-read.c), whose only level is first
 * (and whose pixels are samples, not means). */
typedef struct SkyPyramid {
  int nlevels;
  int first;
  int64_t nx[SKY_PYRAMID_MAX_LEVELS], ny[SKY_PYRAMID_MAX_LEVELS];
  float *pixels[SKY_PYRAMID_MAX_LEVELS];
} SkyPyramid;

int sky_pyramid_build (const SkyImage *img, int nthreads, SkyPyramid *pyr);

/* Level 0 alone (the image's pixels, borrowed), for a first frame before
 * the zoom-out levels are made. */
void sky_pyramid_init_base (const SkyImage *img, SkyPyramid *pyr);

/* Moves the zoom-out levels of levels (sky_pyramid_build of the same
 * image) into pyr, which holds level 0 alone and may be read meanwhile on
 * other threads: they see the old count or the new levels whole. */
void sky_pyramid_publish (SkyPyramid *pyr, SkyPyramid *levels);

/* The levels held, as a reader on any thread must ask. */
static inline int
sky_pyramid_levels (const SkyPyramid *pyr)
{
  return __atomic_load_n (&pyr->nlevels, __ATOMIC_ACQUIRE);
}
void sky_pyramid_clear (SkyPyramid *pyr);

/* ------------------------------------------------------------ orientation */

/* Whether the display must mirror the image left-right to show the first
 * sky axis (RA, or longitude) increasing to the left: true when the header's
 * CD1_1, or CDELT1 times PC1_1, is positive. Without those cards it returns
 * false: x increases to the right, as DS9 shows an image with no WCS;
 * *has_wcs says which case it was. Only a celestial WCS says which way RA
 * runs: the caller mirrors only where it has one. */
int sky_header_flip_x (const char *header, int ncards, int *has_wcs);

#endif /* SKY_DISPLAY_STATS_H */
