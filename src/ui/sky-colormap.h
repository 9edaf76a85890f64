/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-colormap.h: the display's stretches and colour maps on the CPU side.
 *
 * The fragment shader does the same arithmetic per pixel; this is what the
 * colour bar, the tests and the shader's lookup tables are made from, so that
 * the bar and the image can never disagree. Plain C, no GTK.
 */
#ifndef SKY_COLORMAP_H
#define SKY_COLORMAP_H

#include <stdint.h>

/* Values match the shader's u_stretch and the order of the UI's choices. */
typedef enum {
  SKY_STRETCH_LINEAR,
  SKY_STRETCH_LOG,
  SKY_STRETCH_SQRT,
  SKY_STRETCH_ASINH,
  SKY_STRETCH_HISTEQ,
  SKY_N_STRETCHES
} SkyStretch;

typedef enum {
  SKY_COLORMAP_GREY_R,  /* the lesson's gray_r: faint is white, bright is black */
  SKY_COLORMAP_GREY,
  SKY_COLORMAP_INFERNO,
  SKY_COLORMAP_VIRIDIS,
  SKY_COLORMAP_HEAT,
  SKY_N_COLORMAPS
} SkyColormap;

/* Entries of the histogram-equalisation table (the shader's u_eq). */
#define SKY_EQ_SIZE 4096
/* Entries of a colour map table (the shader's u_cmap). */
#define SKY_CMAP_SIZE 256

/* The strength of the log and asinh stretches, as in DS9 (log exponent 1000)
 * and Lupton et al. (softening at a tenth of the range). */
#define SKY_LOG_A 1000.0
#define SKY_ASINH_B 10.0

/* Short names used by the UI and the actions ("log", "inferno", ...). */
const char *sky_stretch_name (SkyStretch s);
const char *sky_colormap_name (SkyColormap c);
int sky_stretch_from_name (const char *name);   /* -1 if unknown */
int sky_colormap_from_name (const char *name);  /* -1 if unknown */

/* Fills rgba (SKY_CMAP_SIZE * 4 bytes) with the colour map; entry i is the
 * colour of the stretched value i / (SKY_CMAP_SIZE - 1). */
void sky_colormap_fill (SkyColormap c, uint8_t *rgba);

/* The stretched value in [0, 1] of v in [0, 1] (v is the pixel's place
 * between the display limits, clamped). eq is the equalisation table for
 * SKY_STRETCH_HISTEQ and may be NULL for the others. */
double sky_stretch_apply (SkyStretch s, double v, const float *eq);

/* The inverse: the v in [0, 1] whose stretched value is t (the colour bar's
 * tick positions). */
double sky_stretch_invert (SkyStretch s, double t, const float *eq);

#endif /* SKY_COLORMAP_H */
