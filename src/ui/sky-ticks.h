/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-ticks.h: where the colour bar puts its ticks. Plain C, no GTK. */
#ifndef SKY_TICKS_H
#define SKY_TICKS_H

#include "sky-colormap.h"

typedef struct {
  double value;     /* in the image's unit: a digit times a power of ten, or 0 */
  double t;         /* where on the bar, 0 at lo to 1 at hi (stretched) */
  char label[24];   /* the value as the bar writes it */
} SkyTick;

/* Chooses up to max_ticks round values between lo and hi for a bar
 * width_px wide whose labels take char_px a character: the roundest first
 * (zero, then larger powers of ten, then 1, 5 and 2 before other digits),
 * each where the stretch puts it and where its label keeps clear of the
 * others by two characters. Labels share one notation: plain decimals
 * ("0.05", "2") unless the values are beyond 10^4 or below 10^-4, then
 * powers of ten ("3e+38"). Returns how many, left to right; eq is the
 * equalisation table for SKY_STRETCH_HISTEQ (NULL for the others). */
int sky_ticks_choose (SkyStretch stretch, double lo, double hi, const float *eq,
                      double width_px, double char_px, SkyTick *ticks, int max_ticks);

#endif /* SKY_TICKS_H */
