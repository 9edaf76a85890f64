/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Whether two backends' results agree, check by check, as docs/contract.md
 * words it: skysift-cli --backend both, the app and the GPU parity tests
 * share it. */
#include "sky-core.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

typedef struct {
  char *buf;
  size_t size, len;
  int failed;
} Report;

static void report (Report *r, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));

/* Appends one failed check to the report. */
static void
report (Report *r, const char *fmt, ...)
{
  va_list ap;
  int k;

  r->failed++;
  if (r->buf == NULL || r->len + 1 >= r->size)
    return;
  if (r->len > 0)
    {
      k = snprintf (r->buf + r->len, r->size - r->len, "; ");
      r->len += k > 0 ? (size_t) k : 0;
      if (r->len >= r->size)
        {
          r->len = r->size - 1;
          return;
        }
    }
  va_start (ap, fmt);
  k = vsnprintf (r->buf + r->len, r->size - r->len, fmt, ap);
  va_end (ap);
  r->len += k > 0 ? (size_t) k : 0;
  if (r->len >= r->size)
    r->len = r->size - 1;
}

/* |a - b| <= tol * max (|a|, |b|, floor); two NaNs agree. */
static int
close_to (double a, double b, double tol, double floor)
{
  if (isnan (a) || isnan (b))
    return isnan (a) && isnan (b);
  if (a == b)
    return 1;
  return fabs (a - b) <= tol * fmax (fmax (fabs (a), fabs (b)), floor);
}

static void
compare_stats (const SkyResult *a, const SkyResult *b, Report *r)
{
  const SkyClipStats *s = &a->stats, *t = &b->stats;

  if (s->ninput != t->ninput || s->n != t->n || s->iterations != t->iterations
      || s->converged != t->converged || s->flat != t->flat)
    report (r, "clip: counts differ (pixels in %lld/%lld, kept %lld/%lld, passes %d/%d, "
               "converged %d/%d, flat %d/%d)",
            (long long) s->ninput, (long long) t->ninput, (long long) s->n, (long long) t->n,
            s->iterations, t->iterations, s->converged, t->converged, s->flat, t->flat);
  if (!close_to (s->median, t->median, 1e-6, 0))
    report (r, "clip: median %.17g vs %.17g", s->median, t->median);
  if (!close_to (s->sigma, t->sigma, 1e-6, 0))
    report (r, "clip: sigma %.17g vs %.17g", s->sigma, t->sigma);
  if (!close_to (s->mean, t->mean, 1e-6, fabs (s->sigma)))
    report (r, "clip: mean %.17g vs %.17g", s->mean, t->mean);
  if (!close_to (a->threshold_value, b->threshold_value, 1e-6, 0))
    report (r, "threshold %.17g vs %.17g", a->threshold_value, b->threshold_value);
}

static void
compare_labels (const SkyResult *a, const SkyResult *b, Report *r)
{
  const int64_t n = a->nx * a->ny;

  if (a->labels == NULL || b->labels == NULL || a->nx != b->nx || a->ny != b->ny)
    return;
  for (int64_t i = 0; i < n; i++)
    if (a->labels[i] != b->labels[i])
      {
        int64_t count = 0;
        for (int64_t j = i; j < n; j++)
          count += a->labels[j] != b->labels[j];
        report (r, "labels: %lld pixels differ, first at x %lld, y %lld (%d vs %d)",
                (long long) count, (long long) (i % a->nx), (long long) (i / a->nx),
                a->labels[i], b->labels[i]);
        return;
      }
}

static void
compare_catalogue (const SkyCatalogue *c, const SkyCatalogue *d, Report *r)
{
  int64_t bad_count = 0, bad_sum = 0, bad_centroid = 0, bad_peak = 0, bad_box = 0;
  int64_t first_count = -1, first_sum = -1, first_centroid = -1, first_peak = -1, first_box = -1;

  for (int64_t i = 0; i < c->n && i < d->n; i++)
    {
      if (c->npix[i] != d->npix[i] && bad_count++ == 0)
        first_count = i;
      if (!close_to (c->sum[i], d->sum[i], 1e-6, 1e-300) && bad_sum++ == 0)
        first_sum = i;
      if (!(fabs (c->x[i] - d->x[i]) <= 1e-4 && fabs (c->y[i] - d->y[i]) <= 1e-4)
          && bad_centroid++ == 0)
        first_centroid = i;
      if ((c->peak[i] != d->peak[i] || c->peak_x[i] != d->peak_x[i]
           || c->peak_y[i] != d->peak_y[i])
          && bad_peak++ == 0)
        first_peak = i;
      if ((c->xmin[i] != d->xmin[i] || c->xmax[i] != d->xmax[i] || c->ymin[i] != d->ymin[i]
           || c->ymax[i] != d->ymax[i])
          && bad_box++ == 0)
        first_box = i;
    }
  if (bad_count)
    report (r, "npix: %lld sources differ, first source %lld (%lld vs %lld)",
            (long long) bad_count, (long long) first_count + 1,
            (long long) c->npix[first_count], (long long) d->npix[first_count]);
  if (bad_sum)
    report (r, "sum: %lld sources beyond 1e-6 relative, first source %lld (%.17g vs %.17g)",
            (long long) bad_sum, (long long) first_sum + 1, c->sum[first_sum], d->sum[first_sum]);
  if (bad_centroid)
    report (r, "centroid: %lld sources beyond 1e-4 px, first source %lld (%.9f, %.9f vs "
               "%.9f, %.9f)",
            (long long) bad_centroid, (long long) first_centroid + 1, c->x[first_centroid],
            c->y[first_centroid], d->x[first_centroid], d->y[first_centroid]);
  if (bad_peak)
    report (r, "peak: %lld sources differ, first source %lld (%.9g at %d,%d vs %.9g at %d,%d)",
            (long long) bad_peak, (long long) first_peak + 1, (double) c->peak[first_peak],
            c->peak_x[first_peak], c->peak_y[first_peak], (double) d->peak[first_peak],
            d->peak_x[first_peak], d->peak_y[first_peak]);
  if (bad_box)
    report (r, "box: %lld sources differ, first source %lld ([%d,%d]x[%d,%d] vs [%d,%d]x[%d,%d])",
            (long long) bad_box, (long long) first_box + 1, c->xmin[first_box],
            c->xmax[first_box], c->ymin[first_box], c->ymax[first_box], d->xmin[first_box],
            d->xmax[first_box], d->ymin[first_box], d->ymax[first_box]);
}

/* The local method's columns: the maps at the peak and the flags exactly
 * (each is one pixel's float or an OR of tests on pixels), sum_err as a
 * sum (1e-6 relative), the windowed centroid as a centroid (1e-4 pixel). */
static void
compare_local (const SkyCatalogue *c, const SkyCatalogue *d, Report *r)
{
  int64_t bad_maps = 0, bad_flags = 0, bad_err = 0, bad_win = 0;
  int64_t first_maps = -1, first_flags = -1, first_err = -1, first_win = -1;

  for (int64_t i = 0; i < c->n && i < d->n; i++)
    {
      if ((c->background[i] != d->background[i] || c->rms[i] != d->rms[i]
           || !close_to (c->peak_err[i], d->peak_err[i], 0, 0))
          && bad_maps++ == 0)
        first_maps = i;
      if (c->flags[i] != d->flags[i] && bad_flags++ == 0)
        first_flags = i;
      if (!close_to (c->sum_err[i], d->sum_err[i], 1e-6, 1e-300) && bad_err++ == 0)
        first_err = i;
      if (!(fabs (c->x_win[i] - d->x_win[i]) <= 1e-4 && fabs (c->y_win[i] - d->y_win[i]) <= 1e-4)
          && bad_win++ == 0)
        first_win = i;
    }
  if (bad_maps)
    report (r, "maps at the peak: %lld sources differ, first source %lld (background %.9g "
               "rms %.9g vs %.9g %.9g)",
            (long long) bad_maps, (long long) first_maps + 1, (double) c->background[first_maps],
            (double) c->rms[first_maps], (double) d->background[first_maps],
            (double) d->rms[first_maps]);
  if (bad_flags)
    report (r, "flags: %lld sources differ, first source %lld (%u vs %u)", (long long) bad_flags,
            (long long) first_flags + 1, c->flags[first_flags], d->flags[first_flags]);
  if (bad_err)
    report (r, "sum_err: %lld sources beyond 1e-6 relative, first source %lld (%.17g vs %.17g)",
            (long long) bad_err, (long long) first_err + 1, c->sum_err[first_err],
            d->sum_err[first_err]);
  if (bad_win)
    report (r, "windowed centroid: %lld sources beyond 1e-4 px, first source %lld (%.9f, %.9f "
               "vs %.9f, %.9f)",
            (long long) bad_win, (long long) first_win + 1, c->x_win[first_win],
            c->y_win[first_win], d->x_win[first_win], d->y_win[first_win]);
}

int
sky_result_compare (const SkyImage *img, const SkyResult *ref, const SkyResult *res, char *what,
                    size_t what_size)
{
  Report r = { what, what_size, 0, 0 };

  if (what != NULL && what_size > 0)
    what[0] = '\0';
  if (ref->nx != res->nx || ref->ny != res->ny)
    report (&r, "shape: %lld x %lld vs %lld x %lld", (long long) ref->nx, (long long) ref->ny,
            (long long) res->nx, (long long) res->ny);
  compare_stats (ref, res, &r);
  if (ref->nsources != res->nsources)
    report (&r, "sources: %lld vs %lld", (long long) ref->nsources, (long long) res->nsources);
  compare_labels (ref, res, &r);
  if (ref->catalogue.n == res->catalogue.n)
    compare_catalogue (&ref->catalogue, &res->catalogue, &r);
  if (ref->method == SKY_METHOD_LOCAL || res->method == SKY_METHOD_LOCAL)
    {
      if (ref->method != res->method)
        report (&r, "method: %s vs %s", sky_method_name (ref->method),
                sky_method_name (res->method));
      if (ref->nislands != res->nislands || ref->ndeblended != res->ndeblended)
        report (&r, "islands: %lld (%lld split) vs %lld (%lld split)", (long long) ref->nislands,
                (long long) ref->ndeblended, (long long) res->nislands,
                (long long) res->ndeblended);
      if ((ref->catalogue.flags == NULL) != (res->catalogue.flags == NULL))
        report (&r, "local columns: %s vs %s", ref->catalogue.flags ? "present" : "missing",
                res->catalogue.flags ? "present" : "missing");
      else if (ref->catalogue.flags != NULL && ref->catalogue.n == res->catalogue.n)
        compare_local (&ref->catalogue, &res->catalogue, &r);
    }

  /* The one allowed source of difference: a pixel exactly on the bound,
   * which the two thresholds' last bits put on different sides. */
  if (r.failed && img != NULL && !isnan (ref->threshold_value) && !isnan (res->threshold_value))
    {
      float a = sky_threshold_bound (ref->threshold_value);
      float b = sky_threshold_bound (res->threshold_value);
      float lo = fminf (a, b), hi = fmaxf (a, b);
      int64_t on = 0;
      if (lo != hi)
        for (int64_t i = 0; i < img->nx * img->ny; i++)
          on += img->pixels[i] > lo && img->pixels[i] <= hi;
      if (on > 0 && r.buf != NULL && r.len + 1 < r.size)
        {
          int k = snprintf (r.buf + r.len, r.size - r.len,
                            " [%lld pixels lie exactly on the threshold boundary: allowed]",
                            (long long) on);
          r.len += k > 0 ? (size_t) k : 0;
        }
    }
  if (!r.failed && what != NULL && what_size > 0)
    snprintf (what, what_size, "agree");
  return r.failed;
}
