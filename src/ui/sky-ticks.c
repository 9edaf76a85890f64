/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Round values for the colour bar's ticks, placed where the stretch puts
 * them. Plain C, no GTK: the unit tests check it. */
#include "sky-ticks.h"

#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How far below the larger limit's decade candidates go: 0.001 of 2.5 is
 * the finest tick a bar from -0.07 to 2.5 gets. */
#define DECADES_BELOW 3

typedef struct {
  double value;
  int digit;      /* value = digit * 10^exponent, |digit| 1..9, or 0 */
  int exponent;
  double score;   /* rounder is higher */
} Candidate;

static int
rounder_first (const void *a, const void *b)
{
  double sa = ((const Candidate *) a)->score, sb = ((const Candidate *) b)->score;
  return (sa < sb) - (sa > sb);
}

static int
leftmost_first (const void *a, const void *b)
{
  double ta = ((const SkyTick *) a)->t, tb = ((const SkyTick *) b)->t;
  return (ta > tb) - (ta < tb);
}

/* Larger decades are rounder; within one, 1 before 5 before 2 before the
 * other digits; zero is the roundest of all. */
static double
roundness (int digit, int exponent)
{
  int d = abs (digit);

  if (digit == 0)
    return G_MAXDOUBLE;
  return exponent * 10.0 + (d == 1 ? 4 : d == 5 ? 3 : d == 2 ? 2 : 0);
}

static void
format_value (char *buf, size_t size, const Candidate *c, gboolean scientific)
{
  if (c->digit == 0)
    snprintf (buf, size, "0");
  else if (scientific)
    snprintf (buf, size, "%de%+d", c->digit, c->exponent);
  else
    snprintf (buf, size, "%.*f", MAX (0, -c->exponent), c->value);
}

/* A linear bar: evenly spaced multiples of the finest step of 1, 2 or 5
 * times a power of ten whose labels keep clear of each other. */
static int
linear_ticks (double lo, double hi, double width_px, double char_px, SkyTick *ticks,
              int max_ticks)
{
  double span = hi - lo;
  int e0 = (int) floor (log10 (span)) - 2;

  for (int e = e0; e <= e0 + 4; e++)
    for (int m = 0; m < 3; m++)
      {
        static const int mults[] = { 1, 2, 5 };
        double step = e >= 0 ? mults[m] * pow (10, e) : mults[m] / pow (10, -e);
        int decimals = MAX (0, -e), n = 0, widest = 0;
        gboolean scientific = fabs (lo) >= 1e5 || fabs (hi) >= 1e5 || e < -4;
        gint64 first = (gint64) ceil (lo / step), last = (gint64) floor (hi / step);

        if (last - first + 1 > max_ticks)
          continue;
        for (gint64 k = first; k <= last; k++)
          {
            SkyTick *tick = &ticks[n++];
            tick->value = e >= 0 ? k * step : k * mults[m] / pow (10, -e);
            tick->t = (tick->value - lo) / span;
            if (k == 0)
              snprintf (tick->label, sizeof tick->label, "0");
            else if (scientific)
              snprintf (tick->label, sizeof tick->label, "%.*e",
                        MAX (0, (int) floor (log10 (fabs (tick->value))) - e), tick->value);
            else
              snprintf (tick->label, sizeof tick->label, "%.*f", decimals, tick->value);
            widest = MAX (widest, (int) strlen (tick->label));
          }
        /* Evenly spaced: the widest label decides. */
        if (n >= 2 && (ticks[1].t - ticks[0].t) * width_px >= (widest + 2) * char_px)
          return n;
        if (n < 2 && e == e0 + 4)
          return n;
      }
  return 0;
}

int
sky_ticks_choose (SkyStretch stretch, double lo, double hi, const float *eq, double width_px,
                  double char_px, SkyTick *ticks, int max_ticks)
{
  double span = hi - lo, top = MAX (fabs (lo), fabs (hi));
  int e_top, e_low, ncand = 0, n = 0;
  gboolean scientific;
  Candidate *cand;

  if (!(span > 0) || !isfinite (span) || max_ticks <= 0 || width_px <= 0)
    return 0;
  e_top = (int) floor (log10 (top));
  if (stretch == SKY_STRETCH_LINEAR)
    return linear_ticks (lo, hi, width_px, char_px, ticks, max_ticks);
  /* No finer than a thousandth of the span. */
  e_low = MAX (e_top - DECADES_BELOW, (int) floor (log10 (span)) - 3);

  cand = g_new (Candidate, (gsize) (e_top - e_low + 1) * 18 + 1);
  if (lo <= 0 && hi >= 0)
    cand[ncand++] = (Candidate) { 0, 0, 0, roundness (0, 0) };
  for (int e = e_low; e <= e_top; e++)
    for (int d = -9; d <= 9; d++)
      {
        /* Divided for negative powers: 7 / 10 is the double nearest 0.7,
         * 7 * 0.1 is not. */
        double v = e >= 0 ? d * pow (10, e) : d / pow (10, -e);
        if (d != 0 && v >= lo && v <= hi)
          cand[ncand++] = (Candidate) { v, d, e, roundness (d, e) };
      }
  qsort (cand, ncand, sizeof *cand, rounder_first);
  /* One notation for the whole bar: plain decimals where they stay short,
   * else powers of ten. */
  scientific = FALSE;
  for (int i = 0; i < ncand; i++)
    scientific |= cand[i].digit != 0 && (cand[i].exponent > 4 || cand[i].exponent < -4);

  /* The roundest first, each where its label does not touch one taken. */
  for (int i = 0; i < ncand && n < max_ticks; i++)
    {
      SkyTick tick;
      double half, x;
      gboolean clear = TRUE;

      tick.value = cand[i].value;
      tick.t = sky_stretch_apply (stretch, (tick.value - lo) / span, eq);
      format_value (tick.label, sizeof tick.label, &cand[i], scientific);
      half = (g_utf8_strlen (tick.label, -1) * char_px + char_px * 2) / 2;
      x = tick.t * width_px;
      for (int k = 0; k < n && clear; k++)
        clear = fabs (ticks[k].t * width_px - x) >= half + (g_utf8_strlen (ticks[k].label, -1)
                                                             * char_px + char_px * 2) / 2;
      if (clear)
        ticks[n++] = tick;
    }
  g_free (cand);
  qsort (ticks, n, sizeof *ticks, leftmost_first);
  return n;
}
