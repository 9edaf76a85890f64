/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-cpu-background-private.h: pieces of the background mesh that the
 * unit tests check on their own. Not part of the CPU backend's API. */
#ifndef SKY_CPU_BACKGROUND_PRIVATE_H
#define SKY_CPU_BACKGROUND_PRIVATE_H

#include <stdint.h>

#include "sky-cpu.h"

#define SKY_BACKGROUND_MAX_LEVELS 4096 /* histogram bins of a box at most */

/* Work space of one box's estimate: prefix sums over its occupied bins. */
typedef struct SkyHistogramWork {
  int first, last;
  int32_t count[SKY_BACKGROUND_MAX_LEVELS + 1];
  int64_t moment1[SKY_BACKGROUND_MAX_LEVELS + 1], moment2[SKY_BACKGROUND_MAX_LEVELS + 1];
} SkyHistogramWork;

/* SExtractor's background and rms of a box from its histogram: histo
 * holds nlevels counts (bin i is centred on qzero + i * qscale), box_mean
 * the box's clipped mean. */
void sky_background_histogram_mode (const int32_t *histo, int nlevels, float qzero,
                                    float qscale, float box_mean, SkyHistogramWork *work,
                                    float *back, float *rms);

/* Fills the unusable boxes of an unfinished mesh (raw statistics, -1e30
 * where unusable) into back_out and rms_out (nbx * nby each; usable boxes
 * are copied): the mean of the usable boxes nearest to each, as SEP. */
int sky_background_fill_bad (const SkyBackgroundMesh *mesh, float *back_out, float *rms_out);

#endif
