/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-cpu-renumber.h: new numbers for the labels of a label image, as the
 * flood (islands kept) and deblending (islands split) give them. Internal
 * to the CPU backend. */
#pragma once

#include <stdint.h>

/* labels[i] = table[labels[i]] wherever labels[i] is not 0, in bands of
 * rows on up to nthreads threads (0: every core); with mask not NULL, also
 * mask[i] = whether the new label is not 0. */
void sky_cpu_renumber (int32_t *labels, uint8_t *mask, int64_t nx, int64_t ny,
                       const int32_t *table, int nthreads);
