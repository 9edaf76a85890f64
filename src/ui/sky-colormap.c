/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Stretches and colour maps, the CPU twin of resources/shaders/image.frag. */
#include "sky-colormap.h"

#include <math.h>
#include <string.h>

static const char *const stretch_names[SKY_N_STRETCHES] = {
  "linear", "log", "sqrt", "asinh", "histeq",
};

static const char *const colormap_names[SKY_N_COLORMAPS] = {
  "grey-r", "grey", "inferno", "viridis", "heat",
};

const char *
sky_stretch_name (SkyStretch s)
{
  return s >= 0 && s < SKY_N_STRETCHES ? stretch_names[s] : "";
}

const char *
sky_colormap_name (SkyColormap c)
{
  return c >= 0 && c < SKY_N_COLORMAPS ? colormap_names[c] : "";
}

int
sky_stretch_from_name (const char *name)
{
  for (int i = 0; name && i < SKY_N_STRETCHES; i++)
    if (strcmp (name, stretch_names[i]) == 0)
      return i;
  return -1;
}

int
sky_colormap_from_name (const char *name)
{
  for (int i = 0; name && i < SKY_N_COLORMAPS; i++)
    if (strcmp (name, colormap_names[i]) == 0)
      return i;
  return -1;
}

static double
clamp01 (double v)
{
  return v < 0 ? 0 : v > 1 ? 1 : v;
}

/* Polynomial fits of matplotlib's inferno and viridis (Matt Zucconi, CC0):
 * within one 8-bit step of the published tables, and no table to carry. */
static const double inferno_c[7][3] = {
  { 0.0002189403691192265, 0.001651004631001012, -0.01948089843709184 },
  { 0.1065134194856116, 0.5639564367884091, 3.932712388889277 },
  { 11.60249308247187, -3.972853965665698, -15.9423941062914 },
  { -41.70399613139459, 17.43639888205313, 44.35414519872813 },
  { 77.162935699427, -33.40235894210092, -81.80730925738993 },
  { -71.31942824499214, 32.62606426397723, 73.20951985803202 },
  { 25.13112622477341, -12.24266895238567, -23.07032500287172 },
};

static const double viridis_c[7][3] = {
  { 0.2777273272234177, 0.005407344544966578, 0.3340998053353061 },
  { 0.1050930431085774, 1.404613529898575, 1.384590162594685 },
  { -0.3308618287255563, 0.214847559468213, 0.09509516302823659 },
  { -4.634230498983486, -5.799100973351585, -19.33244095627987 },
  { 6.228269936347081, 14.17993336680509, 56.69055260068105 },
  { 4.776384997670288, -13.74514537774601, -65.35303263337234 },
  { -5.435455855934631, 4.645852612178535, 26.3124352495832 },
};

static void
poly_colour (const double c[7][3], double t, double rgb[3])
{
  for (int k = 0; k < 3; k++)
    {
      double v = c[6][k];
      for (int i = 5; i >= 0; i--)
        v = c[i][k] + t * v;
      rgb[k] = clamp01 (v);
    }
}

void
sky_colormap_fill (SkyColormap c, uint8_t *rgba)
{
  for (int i = 0; i < SKY_CMAP_SIZE; i++)
    {
      double t = (double) i / (SKY_CMAP_SIZE - 1);
      double rgb[3];

      switch (c)
        {
        case SKY_COLORMAP_GREY:
          rgb[0] = rgb[1] = rgb[2] = t;
          break;
        case SKY_COLORMAP_INFERNO:
          poly_colour (inferno_c, t, rgb);
          break;
        case SKY_COLORMAP_VIRIDIS:
          poly_colour (viridis_c, t, rgb);
          break;
        case SKY_COLORMAP_HEAT:
          /* Black, red, yellow, white, like matplotlib's "hot". */
          rgb[0] = clamp01 (t / 0.365);
          rgb[1] = clamp01 ((t - 0.365) / 0.381);
          rgb[2] = clamp01 ((t - 0.746) / 0.254);
          break;
        case SKY_COLORMAP_GREY_R:
        default:
          rgb[0] = rgb[1] = rgb[2] = 1.0 - t;
          break;
        }
      for (int k = 0; k < 3; k++)
        rgba[4 * i + k] = (uint8_t) lround (rgb[k] * 255.0);
      rgba[4 * i + 3] = 255;
    }
}

/* Linear interpolation in the equalisation table, as the shader does. */
static double
eq_lookup (const float *eq, double v)
{
  double p = clamp01 (v) * (SKY_EQ_SIZE - 1);
  int i = (int) p;
  if (eq == NULL)
    return v;
  if (i >= SKY_EQ_SIZE - 1)
    return eq[SKY_EQ_SIZE - 1];
  return eq[i] + (p - i) * (eq[i + 1] - eq[i]);
}

double
sky_stretch_apply (SkyStretch s, double v, const float *eq)
{
  v = clamp01 (v);
  switch (s)
    {
    case SKY_STRETCH_LOG:
      return log1p (SKY_LOG_A * v) / log1p (SKY_LOG_A);
    case SKY_STRETCH_SQRT:
      return sqrt (v);
    case SKY_STRETCH_ASINH:
      return asinh (SKY_ASINH_B * v) / asinh (SKY_ASINH_B);
    case SKY_STRETCH_HISTEQ:
      return eq_lookup (eq, v);
    case SKY_STRETCH_LINEAR:
    default:
      return v;
    }
}

double
sky_stretch_invert (SkyStretch s, double t, const float *eq)
{
  t = clamp01 (t);
  switch (s)
    {
    case SKY_STRETCH_LOG:
      return expm1 (t * log1p (SKY_LOG_A)) / SKY_LOG_A;
    case SKY_STRETCH_SQRT:
      return t * t;
    case SKY_STRETCH_ASINH:
      return sinh (t * asinh (SKY_ASINH_B)) / SKY_ASINH_B;
    case SKY_STRETCH_HISTEQ:
      {
        /* The table rises monotonically: bisect it. */
        double lo = 0, hi = 1;
        if (eq == NULL)
          return t;
        for (int i = 0; i < 40; i++)
          {
            double mid = 0.5 * (lo + hi);
            if (eq_lookup (eq, mid) < t)
              lo = mid;
            else
              hi = mid;
          }
        return 0.5 * (lo + hi);
      }
    case SKY_STRETCH_LINEAR:
    default:
      return t;
    }
}
