/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A coordinate grid over a pixel rectangle, from the WCS alone: which
 * lines (round values at a spacing that gives a few of each), where they
 * run (world to pixel along each line, subdivided until the polyline
 * follows the curve, clipped to the rectangle), where they meet its edges
 * (pixel to world along each edge and bisection, so a crossing is exact
 * whatever the path's sampling), and their labels.
 *
 * Longitudes are handled as offsets from the rectangle's centre, wrapped
 * to (-180, 180], so a field across longitude 0 has one range; a pole
 * inside the rectangle makes every meridian cross it. */
#include "sky-core.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define EDGE_SAMPLES 256      /* first pass along each edge */
#define EDGE_DEPTH 14         /* at most 2^14 more per first interval */
#define TRACE_SAMPLES 128     /* first pass along each line */
#define TRACE_DEPTH 14
#define INTERIOR 33           /* interior samples a side, for the ranges */
#define MAX_LINES 7           /* of each coordinate, at most about */

/* ------------------------------------------------------- small arrays */

typedef struct {
  double *x, *y;
  int64_t n, cap;
} Points;

/* array, of *cap elements of size bytes, grown to twice as many (first
 * when empty); NULL, the array kept, where memory runs out. */
static void *
grow (void *array, int *cap, int first, size_t size)
{
  int n = *cap ? *cap * 2 : first;
  void *grown = realloc (array, (size_t) n * size);

  if (grown != NULL)
    *cap = n;
  return grown;
}

/* Two parallel arrays reallocated to a_bytes and b_bytes together:
 * SKY_OK, or SKY_ERR_MEMORY with each still valid (the first maybe
 * grown) where memory runs out. */
static int
grow_columns (void **a, size_t a_bytes, void **b, size_t b_bytes)
{
  void *ga = realloc (*a, a_bytes), *gb;

  if (ga == NULL)
    return SKY_ERR_MEMORY;
  *a = ga;
  gb = realloc (*b, b_bytes);
  if (gb == NULL)
    return SKY_ERR_MEMORY;
  *b = gb;
  return SKY_OK;
}

static int
points_add (Points *p, double x, double y)
{
  if (p->n == p->cap)
    {
      int64_t cap = p->cap ? p->cap * 2 : 256;
      if (grow_columns ((void **) &p->x, (size_t) cap * sizeof *p->x, (void **) &p->y,
                        (size_t) cap * sizeof *p->y) != SKY_OK)
        return SKY_ERR_MEMORY;
      p->cap = cap;
    }
  p->x[p->n] = x;
  p->y[p->n] = y;
  p->n++;
  return SKY_OK;
}

static void
points_clear (Points *p)
{
  free (p->x);
  free (p->y);
  memset (p, 0, sizeof *p);
}

static double
wrap180 (double d)
{
  d = fmod (d, 360.0);
  if (d > 180.0)
    d -= 360.0;
  else if (d <= -180.0)
    d += 360.0;
  return d;
}

static double
wrap360 (double d)
{
  d = fmod (d, 360.0);
  if (d < 0)
    d += 360.0;
  if (d >= 360.0 - 1e-9)
    d = 0.0;
  return d;
}

/* ------------------------------------------------------------ edges */

typedef struct {
  double s, lng, lat;   /* s in [0, 1] along the edge; NaN where no sky */
} EdgeSample;

typedef struct {
  EdgeSample *v;
  int n, cap;
} EdgeSamples;

static void
edge_point (const double rect[4], SkyEdge edge, double s, double *x, double *y)
{
  switch (edge)
    {
    case SKY_EDGE_X0: *x = rect[0]; *y = rect[1] + s * (rect[3] - rect[1]); break;
    case SKY_EDGE_X1: *x = rect[2]; *y = rect[1] + s * (rect[3] - rect[1]); break;
    case SKY_EDGE_Y0: *x = rect[0] + s * (rect[2] - rect[0]); *y = rect[1]; break;
    case SKY_EDGE_Y1: default: *x = rect[0] + s * (rect[2] - rect[0]); *y = rect[3]; break;
    }
}

static EdgeSample
edge_sample (SkyWcs *wcs, const double rect[4], SkyEdge edge, double s)
{
  EdgeSample e = { s, NAN, NAN };
  double x, y;

  edge_point (rect, edge, s, &x, &y);
  if (sky_wcs_pix2world (wcs, x, y, &e.lng, &e.lat) != SKY_OK)
    e.lng = e.lat = NAN;
  return e;
}

static int
edge_add (EdgeSamples *es, EdgeSample e)
{
  if (es->n == es->cap)
    {
      EdgeSample *v = grow (es->v, &es->cap, 512, sizeof *v);
      if (v == NULL)
        return SKY_ERR_MEMORY;
      es->v = v;
    }
  es->v[es->n++] = e;
  return SKY_OK;
}

/* Whether an interval of the edge changes too much to be searched by a
 * sign change alone: more than a quarter of the spacing in either
 * coordinate (two crossings of one line could hide in it, or a longitude
 * jump look like a crossing). */
static int
edge_too_coarse (const EdgeSample *a, const EdgeSample *b, const double step[2])
{
  if (isnan (a->lng) || isnan (b->lng))
    return !isnan (a->lng) || !isnan (b->lng); /* find where the sky ends */
  return fabs (wrap180 (b->lng - a->lng)) > step[0] / 4 || fabs (b->lat - a->lat) > step[1] / 4;
}

static int
edge_refine (SkyWcs *wcs, const double rect[4], SkyEdge edge, const EdgeSample *a,
             const EdgeSample *b, const double step[2], int depth, EdgeSamples *out)
{
  EdgeSample m;
  int ret;

  if (depth >= EDGE_DEPTH || !edge_too_coarse (a, b, step))
    return edge_add (out, *b);
  m = edge_sample (wcs, rect, edge, 0.5 * (a->s + b->s));
  if ((ret = edge_refine (wcs, rect, edge, a, &m, step, depth + 1, out)) != SKY_OK)
    return ret;
  return edge_refine (wcs, rect, edge, &m, b, step, depth + 1, out);
}

/* The line's function along the edge: zero where the line crosses. */
static double
line_offset (const SkyGridLine *line, double lng, double lat)
{
  return line->axis == 0 ? wrap180 (lng - line->value) : lat - line->value;
}

static int
add_crossing (SkyGrid *g, int *cap, int line, SkyEdge edge, double x, double y)
{
  if (g->ncrossings == *cap)
    {
      SkyGridCrossing *c = grow (g->crossings, cap, 64, sizeof *c);
      if (c == NULL)
        return SKY_ERR_MEMORY;
      g->crossings = c;
    }
  g->crossings[g->ncrossings++] = (SkyGridCrossing) { line, edge, x, y };
  return SKY_OK;
}

/* Each line's crossings of one edge: a sign change of its offset between
 * neighbouring samples (never across a longitude's wrap), then bisection
 * on the edge. */
static int
edge_crossings (SkyWcs *wcs, const double rect[4], SkyEdge edge, const EdgeSamples *es,
                SkyGrid *g, int *cap)
{
  for (int l = 0; l < g->nlines; l++)
    for (int i = 0; i + 1 < es->n; i++)
      {
        const EdgeSample *a = &es->v[i], *b = &es->v[i + 1];
        double fa, fb, sa = a->s, sb = b->s, x, y;
        int ret;

        if (isnan (a->lng) || isnan (b->lng))
          continue;
        fa = line_offset (&g->lines[l], a->lng, a->lat);
        fb = line_offset (&g->lines[l], b->lng, b->lat);
        /* A longitude's offset jumps by 360 where it wraps, opposite the
         * line: no crossing there. */
        if ((fa < 0) == (fb < 0) || (g->lines[l].axis == 0 && (fabs (fa) > 90 || fabs (fb) > 90)))
          continue;
        for (int it = 0; it < 60 && sb - sa > 1e-13; it++)
          {
            double sm = 0.5 * (sa + sb);
            EdgeSample m = edge_sample (wcs, rect, edge, sm);
            double fm;
            if (isnan (m.lng))
              break;
            fm = line_offset (&g->lines[l], m.lng, m.lat);
            if ((fm < 0) == (fa < 0))
              sa = sm;
            else
              sb = sm;
          }
        edge_point (rect, edge, 0.5 * (sa + sb), &x, &y);
        if ((ret = add_crossing (g, cap, l, edge, x, y)) != SKY_OK)
          return ret;
      }
  return SKY_OK;
}

/* ------------------------------------------------------ spacing, text */

/* Round spacings: seconds of time, arcseconds, degrees. */
static const double hour_steps_s[] = {
  0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 20, 30, 60, 120, 300, 600, 900, 1200, 1800,
  3600, 7200, 10800, 14400, 21600,
};
static const double arc_steps_as[] = {
  0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 20, 30, 60, 120, 300, 600, 900, 1200, 1800,
  3600, 7200, 18000, 36000, 54000, 72000, 108000, 162000,
};
static const double degree_steps[] = {
  1e-4, 2e-4, 5e-4, 1e-3, 2e-3, 5e-3, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 30,
  45, 60, 90,
};

/* The smallest listed spacing (in degrees, from units of unit degrees)
 * that gives at most MAX_LINES - 1 intervals over span degrees. */
static double
choose_step (const double *steps, size_t n, double unit, double span)
{
  for (size_t i = 0; i < n; i++)
    if (span / (steps[i] * unit) <= MAX_LINES - 1)
      return steps[i] * unit;
  return steps[n - 1] * unit;
}

/* Decimals needed to write multiples of step (a listed spacing) exactly. */
static int
decimals_of (double step)
{
  int d = 0;
  while (d < 6 && fabs (step * pow (10, d) - round (step * pow (10, d))) > 1e-6)
    d++;
  return d;
}

static void
format_hours (double deg, double step_deg, char *buf, size_t size)
{
  double step_s = step_deg * 240.0;
  int dec = decimals_of (step_s);
  double scale = pow (10, dec);
  long long u = llround (wrap360 (deg) * 240.0 * scale) % llround (86400 * scale);
  long long whole = u / (long long) scale;
  int h = (int) (whole / 3600 % 24), m = (int) (whole / 60 % 60), sec = (int) (whole % 60);

  if (fmod (step_s, 3600) == 0)
    snprintf (buf, size, "%dh", h);
  else if (fmod (step_s, 60) == 0)
    snprintf (buf, size, "%dh%02dm", h, m);
  else if (dec == 0)
    snprintf (buf, size, "%dh%02dm%02ds", h, m, sec);
  else
    snprintf (buf, size, "%dh%02dm%0*.*fs", h, m, dec + 3, dec,
              (double) (u % (60 * (long long) scale)) / scale);
}

static void
format_sexagesimal (double deg, double step_deg, char *buf, size_t size)
{
  double step_as = step_deg * 3600.0;
  int dec = decimals_of (step_as);
  double scale = pow (10, dec);
  long long u = llround (fabs (deg) * 3600.0 * scale);
  long long whole = u / (long long) scale;
  int d = (int) (whole / 3600 % 1000), m = (int) (whole / 60 % 60), sec = (int) (whole % 60);
  const char *sign = deg < 0 && u != 0 ? "-" : "";

  if (fmod (step_as, 3600) == 0)
    snprintf (buf, size, "%s%d°", sign, d);
  else if (fmod (step_as, 60) == 0)
    snprintf (buf, size, "%s%d°%02d′", sign, d, m);
  else if (dec == 0)
    snprintf (buf, size, "%s%d°%02d′%02d″", sign, d, m, sec);
  else
    snprintf (buf, size, "%s%d°%02d′%0*.*f″", sign, d, m, dec + 3, dec,
              (double) (u % (60 * (long long) scale)) / scale);
}

static void
format_degrees (double deg, double step_deg, char *buf, size_t size)
{
  int dec = decimals_of (step_deg);
  double v = round (deg * pow (10, dec)) / pow (10, dec);
  snprintf (buf, size, "%.*f°", dec, v == 0 ? 0.0 : v);
}

/* ---------------------------------------------------------- tracing */

typedef struct {
  SkyWcs *wcs;
  const SkyGridLine *line;
  double nudge;         /* degrees added to a meridian's longitude */
  double tol, max_len, jump;
  Points raw;           /* the traced line, NaN between pieces */
} Trace;

static void
trace_eval (Trace *t, double param, double *x, double *y)
{
  double lng = t->line->axis == 0 ? t->line->value + t->nudge : param;
  double lat = t->line->axis == 0 ? param : t->line->value;

  if (sky_wcs_world2pix (t->wcs, lng, lat, x, y) != SKY_OK)
    *x = *y = NAN;
}

static int
trace_break (Trace *t)
{
  if (t->raw.n > 0 && isnan (t->raw.x[t->raw.n - 1]))
    return SKY_OK;
  return points_add (&t->raw, NAN, NAN);
}

/* Emits the path from (xa, ya) at ta to (xb, yb) at tb, the first point
 * already emitted: halves the interval until the chord follows the curve
 * to tol and is at most max_len long; a chord still over jump pixels at
 * the depth limit is a discontinuity (the projection's seam), and breaks
 * the path. */
static int
trace_refine (Trace *t, double ta, double xa, double ya, double tb, double xb, double yb,
              int depth)
{
  double tm = 0.5 * (ta + tb), xm, ym;
  int va = !isnan (xa), vb = !isnan (xb), ret;

  if (!va && !vb)
    return SKY_OK;
  if (depth >= TRACE_DEPTH)
    {
      if (!va || !vb || hypot (xb - xa, yb - ya) > t->jump)
        {
          if ((ret = trace_break (t)) != SKY_OK)
            return ret;
        }
      return vb ? points_add (&t->raw, xb, yb) : SKY_OK;
    }
  trace_eval (t, tm, &xm, &ym);
  if (va && vb && !isnan (xm) && hypot (xb - xa, yb - ya) <= t->max_len
      && hypot (xm - 0.5 * (xa + xb), ym - 0.5 * (ya + yb)) <= t->tol)
    return points_add (&t->raw, xb, yb);
  if ((ret = trace_refine (t, ta, xa, ya, tm, xm, ym, depth + 1)) != SKY_OK)
    return ret;
  return trace_refine (t, tm, xm, ym, tb, xb, yb, depth + 1);
}

static int
trace_line (Trace *t, double t0, double t1)
{
  double xa, ya;
  int ret;

  trace_eval (t, t0, &xa, &ya);
  if (!isnan (xa) && (ret = points_add (&t->raw, xa, ya)) != SKY_OK)
    return ret;
  for (int i = 1; i <= TRACE_SAMPLES; i++)
    {
      double ta = t0 + (t1 - t0) * (i - 1) / TRACE_SAMPLES;
      double tb = t0 + (t1 - t0) * i / TRACE_SAMPLES, xb, yb;
      trace_eval (t, tb, &xb, &yb);
      if (isnan (xa) && !isnan (xb) && (ret = trace_break (t)) != SKY_OK)
        return ret;
      if ((ret = trace_refine (t, ta, xa, ya, tb, xb, yb, 0)) != SKY_OK)
        return ret;
      if (isnan (xb) && (ret = trace_break (t)) != SKY_OK)
        return ret;
      xa = xb;
      ya = yb;
    }
  return trace_break (t);
}

/* Liang-Barsky: the part of segment a-b inside rect, as fractions. */
static int
clip_segment (const double rect[4], double ax, double ay, double bx, double by, double *u0,
              double *u1)
{
  double p[4] = { -(bx - ax), bx - ax, -(by - ay), by - ay };
  double q[4] = { ax - rect[0], rect[2] - ax, ay - rect[1], rect[3] - ay };

  *u0 = 0;
  *u1 = 1;
  for (int i = 0; i < 4; i++)
    {
      if (p[i] == 0)
        {
          if (q[i] < 0)
            return 0;
          continue;
        }
      double r = q[i] / p[i];
      if (p[i] < 0)
        *u0 = fmax (*u0, r);
      else
        *u1 = fmin (*u1, r);
    }
  return *u0 <= *u1;
}

typedef struct {
  Points pts;
  int *path_line;
  int64_t *path_start;
  int npaths, cap;
} PathSet;

static int
path_begin (PathSet *ps, int line)
{
  if (ps->npaths + 1 >= ps->cap)
    {
      int cap = ps->cap ? ps->cap * 2 : 64;
      /* path_start has one more: the end of the last path */
      if (grow_columns ((void **) &ps->path_line, (size_t) cap * sizeof *ps->path_line,
                        (void **) &ps->path_start,
                        (size_t) (cap + 1) * sizeof *ps->path_start) != SKY_OK)
        return SKY_ERR_MEMORY;
      ps->cap = cap;
    }
  ps->path_line[ps->npaths] = line;
  ps->path_start[ps->npaths] = ps->pts.n;
  ps->npaths++;
  return SKY_OK;
}

/* The traced pieces, clipped to rect, as paths of line. */
static int
clip_trace (const double rect[4], const Points *raw, int line, PathSet *ps)
{
  int open = 0, ret;

  for (int64_t i = 0; i + 1 < raw->n; i++)
    {
      double ax = raw->x[i], ay = raw->y[i], bx = raw->x[i + 1], by = raw->y[i + 1], u0, u1;

      if (isnan (ax) || isnan (bx) || !clip_segment (rect, ax, ay, bx, by, &u0, &u1))
        {
          open = 0;
          continue;
        }
      if (!open || u0 > 0)
        {
          if ((ret = path_begin (ps, line)) != SKY_OK
              || (ret = points_add (&ps->pts, ax + u0 * (bx - ax), ay + u0 * (by - ay))) != SKY_OK)
            return ret;
        }
      if ((ret = points_add (&ps->pts, ax + u1 * (bx - ax), ay + u1 * (by - ay))) != SKY_OK)
        return ret;
      open = u1 >= 1;
    }
  return SKY_OK;
}

/* ------------------------------------------------------------ ranges */

typedef struct {
  double lng_c;             /* longitude at the centre: offsets are from it */
  double off_min, off_max;  /* longitude offsets seen, degrees */
  double lat_min, lat_max;
  int full_circle;
  int pole;                 /* +1, -1: that pole is in the rectangle; 2: both */
} Ranges;

static void
ranges_see (Ranges *r, double lng, double lat)
{
  double off;

  if (isnan (lng))
    return;
  if (isnan (r->lng_c))
    r->lng_c = lng;
  off = wrap180 (lng - r->lng_c);
  r->off_min = fmin (r->off_min, off);
  r->off_max = fmax (r->off_max, off);
  r->lat_min = fmin (r->lat_min, lat);
  r->lat_max = fmax (r->lat_max, lat);
}

static int
inside (const double rect[4], double x, double y)
{
  return x >= rect[0] && x <= rect[2] && y >= rect[1] && y <= rect[3];
}

static void
find_ranges (SkyWcs *wcs, const double rect[4], const EdgeSamples es[4], Ranges *r)
{
  double lng, lat, x, y;

  r->lng_c = NAN;
  r->off_min = r->lat_min = INFINITY;
  r->off_max = r->lat_max = -INFINITY;
  if (sky_wcs_pix2world (wcs, 0.5 * (rect[0] + rect[2]), 0.5 * (rect[1] + rect[3]), &lng, &lat)
      == SKY_OK)
    r->lng_c = lng;
  for (int j = 0; j < INTERIOR; j++)
    for (int i = 0; i < INTERIOR; i++)
      if (sky_wcs_pix2world (wcs, rect[0] + (rect[2] - rect[0]) * i / (INTERIOR - 1),
                             rect[1] + (rect[3] - rect[1]) * j / (INTERIOR - 1), &lng, &lat)
          == SKY_OK)
        ranges_see (r, lng, lat);
  for (int e = 0; e < 4; e++)
    for (int i = 0; i < es[e].n; i++)
      ranges_see (r, es[e].v[i].lng, es[e].v[i].lat);
  r->pole = 0;
  for (int p = 1; p >= -1; p -= 2)
    if (sky_wcs_world2pix (wcs, 0.0, 90.0 * p, &x, &y) == SKY_OK && inside (rect, x, y))
      {
        r->pole = r->pole != 0 ? 2 : p;   /* 2: both, an all-sky map */
        if (p > 0)
          r->lat_max = 90;
        else
          r->lat_min = -90;
      }
  r->full_circle = r->pole != 0 || r->off_max - r->off_min > 340;
}

/* ------------------------------------------------------------- public */

static int
add_line (SkyGrid *g, int *cap, int axis, double value)
{
  if (g->nlines == *cap)
    {
      SkyGridLine *l = grow (g->lines, cap, 16, sizeof *l);
      if (l == NULL)
        return SKY_ERR_MEMORY;
      g->lines = l;
    }
  g->lines[g->nlines++] = (SkyGridLine) { .axis = axis, .value = value };
  return SKY_OK;
}

static int
choose_lines (SkyWcs *wcs, const Ranges *r, SkyGrid *g)
{
  int cap = 0, ret;
  double lng_span = r->full_circle ? 360.0 : r->off_max - r->off_min;
  double lat_span = r->lat_max - r->lat_min;

  g->lng_hours = sky_wcs_system (wcs) == SKY_COORD_EQUATORIAL;
  g->step[0] = g->lng_hours
    ? choose_step (hour_steps_s, sizeof hour_steps_s / sizeof *hour_steps_s, 1 / 240.0, lng_span)
    : choose_step (degree_steps, sizeof degree_steps / sizeof *degree_steps, 1.0, lng_span);
  g->step[1] = g->lng_hours
    ? choose_step (arc_steps_as, sizeof arc_steps_as / sizeof *arc_steps_as, 1 / 3600.0, lat_span)
    : choose_step (degree_steps, sizeof degree_steps / sizeof *degree_steps, 1.0, lat_span);

  if (r->full_circle)
    {
      int n = (int) llround (360.0 / g->step[0]);
      for (int k = 0; k < n; k++)
        if ((ret = add_line (g, &cap, 0, wrap360 (k * g->step[0]))) != SKY_OK)
          return ret;
    }
  else
    {
      double lo = r->lng_c + r->off_min, hi = r->lng_c + r->off_max;
      for (double k = ceil (lo / g->step[0]); k * g->step[0] <= hi; k++)
        if ((ret = add_line (g, &cap, 0, wrap360 (k * g->step[0]))) != SKY_OK)
          return ret;
    }
  for (double k = ceil (r->lat_min / g->step[1]); k * g->step[1] <= r->lat_max; k++)
    if (fabs (k * g->step[1]) < 90.0 - 1e-9
        && (ret = add_line (g, &cap, 1, k * g->step[1])) != SKY_OK)
      return ret;

  for (int l = 0; l < g->nlines; l++)
    {
      SkyGridLine *line = &g->lines[l];
      if (line->axis == 0 && g->lng_hours)
        format_hours (line->value, g->step[0], line->text, sizeof line->text);
      else if (line->axis == 1 && g->lng_hours)
        format_sexagesimal (line->value, g->step[1], line->text, sizeof line->text);
      else
        format_degrees (line->value, g->step[line->axis], line->text, sizeof line->text);
    }
  return SKY_OK;
}

int
sky_wcs_grid (SkyWcs *wcs, double x0, double y0, double x1, double y1, SkyGrid *g)
{
  const double rect[4] = { x0, y0, x1, y1 };
  EdgeSamples coarse[4] = { { 0 } }, fine[4] = { { 0 } };
  PathSet ps;
  Ranges r;
  Trace t = { 0 };
  double size = fmax (x1 - x0, y1 - y0);
  int ret = SKY_OK, ccap = 0;

  memset (g, 0, sizeof *g);
  memset (&ps, 0, sizeof ps);
  if (!(x1 > x0) || !(y1 > y0))
    return sky_fail (SKY_ERR_ARGUMENT, "grid: the rectangle (%g, %g)-(%g, %g) is empty",
                     x0, y0, x1, y1);
  for (int e = 0; e < 4; e++)
    for (int i = 0; i <= EDGE_SAMPLES; i++)
      if ((ret = edge_add (&coarse[e], edge_sample (wcs, rect, e, (double) i / EDGE_SAMPLES)))
          != SKY_OK)
        goto exit;
  find_ranges (wcs, rect, coarse, &r);
  if (isnan (r.lng_c))
    {
      ret = sky_fail (SKY_ERR_ARGUMENT, "grid: no pixel of (%g, %g)-(%g, %g) has a sky position",
                      x0, y0, x1, y1);
      goto exit;
    }
  g->pole_inside = r.pole;
  if ((ret = choose_lines (wcs, &r, g)) != SKY_OK)
    goto exit;

  /* Paths: meridians over the latitudes seen, parallels over the
   * longitudes seen, each with a margin so that they reach the edges. */
  t.wcs = wcs;
  t.tol = fmax (size / 10000.0, 0.01);
  t.max_len = size / 50.0;
  t.jump = size / 20.0;
  for (int l = 0; l < g->nlines; l++)
    {
      double lo, hi, margin;
      t.line = &g->lines[l];
      t.raw.n = 0;
      if (t.line->axis == 0)
        {
          margin = 0.1 * (r.lat_max - r.lat_min) + g->step[1];
          lo = fmax (r.lat_min - margin, -90.0);
          hi = fmin (r.lat_max + margin, 90.0);
        }
      else if (r.full_circle)
        {
          lo = 0.0;
          hi = 360.0;
        }
      else
        {
          margin = fmin (0.1 * (r.off_max - r.off_min) + g->step[0],
                         0.5 * (360.0 - (r.off_max - r.off_min)));
          lo = r.lng_c + r.off_min - margin;
          hi = r.lng_c + r.off_max + margin;
        }
      t.nudge = 0;
      if ((ret = trace_line (&t, lo, hi)) != SKY_OK || (ret = clip_trace (rect, &t.raw, l, &ps)) != SKY_OK)
        goto exit;
      /* A meridian on the projection's seam (an all-sky map's edge) is
       * both its left and its right border: a hair's breadth either side
       * of it lands on each. */
      if (t.line->axis == 0)
        {
          double xa, ya, xb, yb, b = 0.5 * (lo + hi);
          t.nudge = -1e-7;
          trace_eval (&t, b, &xa, &ya);
          t.nudge = 1e-7;
          trace_eval (&t, b, &xb, &yb);
          if (hypot (xb - xa, yb - ya) > t.jump)
            {
              for (int side = -1; side <= 1; side += 2)
                {
                  t.nudge = side * 1e-7;
                  t.raw.n = 0;
                  if ((ret = trace_line (&t, lo, hi)) != SKY_OK
                      || (ret = clip_trace (rect, &t.raw, l, &ps)) != SKY_OK)
                    goto exit;
                }
            }
        }
    }
  /* Crossings, on each edge sampled finely enough for the spacing. */
  for (int e = 0; e < 4; e++)
    {
      if ((ret = edge_add (&fine[e], coarse[e].v[0])) != SKY_OK)
        goto exit;
      for (int i = 0; i + 1 < coarse[e].n; i++)
        if ((ret = edge_refine (wcs, rect, e, &coarse[e].v[i], &coarse[e].v[i + 1], g->step, 0,
                                &fine[e])) != SKY_OK)
          goto exit;
      if ((ret = edge_crossings (wcs, rect, e, &fine[e], g, &ccap)) != SKY_OK)
        goto exit;
    }

  if (ps.path_start == NULL && (ps.path_start = calloc (1, sizeof *ps.path_start)) == NULL)
    {
      ret = SKY_ERR_MEMORY;
      goto exit;
    }
  ps.path_start[ps.npaths] = ps.pts.n;
  g->px = ps.pts.x;
  g->py = ps.pts.y;
  g->path_line = ps.path_line;
  g->path_start = ps.path_start;
  g->npaths = ps.npaths;
  memset (&ps, 0, sizeof ps);

exit:
  for (int e = 0; e < 4; e++)
    {
      free (coarse[e].v);
      free (fine[e].v);
    }
  points_clear (&t.raw);
  points_clear (&ps.pts);
  free (ps.path_line);
  free (ps.path_start);
  if (ret != SKY_OK)
    sky_grid_free (g);
  return ret;
}

void
sky_grid_free (SkyGrid *g)
{
  if (g == NULL)
    return;
  free (g->lines);
  free (g->path_line);
  free (g->path_start);
  free (g->px);
  free (g->py);
  free (g->crossings);
  memset (g, 0, sizeof *g);
}

int
sky_wcs_north_east (SkyWcs *wcs, double x, double y, double north[2], double east[2])
{
  const double d = 1.0 / 3600.0;
  double lng, lat, nx, ny, ex, ey, sign = 1, len;
  int ret;

  if ((ret = sky_wcs_pix2world (wcs, x, y, &lng, &lat)) != SKY_OK)
    return ret;
  if (fabs (lat) > 90.0 - 2 * d)
    return sky_fail (SKY_ERR_ARGUMENT, "pixel (%g, %g) is at a pole: north and east are "
                     "not defined there", x, y);
  /* Towards the pole, or away from the other side where a step north
   * would pass the pole. */
  if (sky_wcs_world2pix (wcs, lng, lat + d, &nx, &ny) != SKY_OK)
    {
      sign = -1;
      if ((ret = sky_wcs_world2pix (wcs, lng, lat - d, &nx, &ny)) != SKY_OK)
        return ret;
    }
  if ((ret = sky_wcs_world2pix (wcs, lng + d / cos (lat * M_PI / 180.0), lat, &ex, &ey)) != SKY_OK)
    return ret;
  len = hypot (nx - x, ny - y);
  north[0] = sign * (nx - x) / len;
  north[1] = sign * (ny - y) / len;
  len = hypot (ex - x, ey - y);
  east[0] = (ex - x) / len;
  east[1] = (ey - y) / len;
  return SKY_OK;
}
