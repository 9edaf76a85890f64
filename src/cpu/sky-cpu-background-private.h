/* sky-cpu-background-private.h: pieces of the background mesh that the
 * unit tests check on their own. Not part of the CPU backend's API. */
#ifndef SKY_CPU_BACKGROUND_PRIVATE_H
#define SKY_CPU_BACKGROUND_PRIVATE_H

#include <stdint.h>

#define SKY_BACKGROUND_MAX_LEVELS 4096 /* histogram bins of a box at most */

/* SExtractor's background and rms of a box from its histogram: histo
 * holds nlevels counts (bin i is centred on qzero + i * qscale), box_mean
 * the box's clipped mean. prefix, moment1 and moment2 are work space of
 * nlevels + 1 entries each. */
void sky_background_histogram_mode (const int64_t *histo, int nlevels, float qzero,
                                    float qscale, float box_mean, int64_t *prefix,
                                    int64_t *moment1, int64_t *moment2, float *back,
                                    float *rms);

#endif
