/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Contour lines by marching squares. Each cell (four neighbouring pixel
 * centres) gives at most two segments between the crossings on its edges;
 * segments that share an edge are joined into paths as the cells are
 * visited, row by row, so joining needs one row of edges' memory rather
 * than a sort of every segment's ends. */
#include "sky-core.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A cell's edges, as its corners' bits are numbered: bottom-left 1,
 * bottom-right 2, top-right 4, top-left 8. */
enum { BOTTOM, RIGHT, TOP, LEFT };

/* The segments of each case (corners above the level), as pairs of edges;
 * the saddles 5 and 10 have a second table for a centre above the level. */
static const signed char cases[16][4] = {
  { -1, -1, -1, -1 }, { LEFT, BOTTOM, -1, -1 }, { BOTTOM, RIGHT, -1, -1 },
  { LEFT, RIGHT, -1, -1 }, { RIGHT, TOP, -1, -1 }, { LEFT, BOTTOM, RIGHT, TOP },
  { BOTTOM, TOP, -1, -1 }, { LEFT, TOP, -1, -1 }, { TOP, LEFT, -1, -1 },
  { BOTTOM, TOP, -1, -1 }, { BOTTOM, RIGHT, TOP, LEFT }, { RIGHT, TOP, -1, -1 },
  { LEFT, RIGHT, -1, -1 }, { BOTTOM, RIGHT, -1, -1 }, { LEFT, BOTTOM, -1, -1 },
  { -1, -1, -1, -1 },
};
/* With the centre above: case 5's high corners join through it, case
 * 10's low ones are cut off apart. */
static const signed char saddle_high[16][4] = {
  [5] = { BOTTOM, RIGHT, TOP, LEFT },
  [10] = { LEFT, BOTTOM, RIGHT, TOP },
};

typedef struct {
  double *x;            /* 2 per segment: its ends */
  double *y;
  int64_t *link;        /* 2 per segment: the joined end of the next, or -1 */
  int64_t n, cap;
} Segments;

static int
segments_grow (Segments *s)
{
  int64_t cap = s->cap ? s->cap * 2 : 1024;
  double *x = realloc (s->x, (size_t) cap * 2 * sizeof *x);
  double *y;
  int64_t *l;

  if (x == NULL)
    return SKY_ERR_MEMORY;
  s->x = x;
  if ((y = realloc (s->y, (size_t) cap * 2 * sizeof *y)) == NULL)
    return SKY_ERR_MEMORY;
  s->y = y;
  if ((l = realloc (s->link, (size_t) cap * 2 * sizeof *l)) == NULL)
    return SKY_ERR_MEMORY;
  s->link = l;
  s->cap = cap;
  return SKY_OK;
}

/* The crossing on an edge, interpolated always from the same corner of
 * that edge, so both cells that share it compute the same point. */
static void
crossing (const float *z, int64_t nx, int64_t i, int64_t j, int edge, double level, double *x,
          double *y)
{
  int64_t ai = i, aj = j, bi = i, bj = j;
  double za, zb, t;

  switch (edge)
    {
    case BOTTOM: bi = i + 1; break;
    case TOP: aj = bj = j + 1; bi = i + 1; break;
    case LEFT: bj = j + 1; break;
    case RIGHT: default: ai = bi = i + 1; bj = j + 1; break;
    }
  za = z[aj * nx + ai];
  zb = z[bj * nx + bi];
  t = (level - za) / (zb - za);
  *x = (double) ai + t * (double) (bi - ai);
  *y = (double) aj + t * (double) (bj - aj);
}

static void
join (Segments *s, int64_t a, int64_t b)
{
  if (a >= 0 && b >= 0)
    {
      s->link[a] = b;
      s->link[b] = a;
    }
}

static int
march (const float *z, int64_t nx, int64_t ny, double level, Segments *s)
{
  /* The segment end lying on each bottom edge of the row of cells being
   * visited (from the row below) and on each top edge (for the row
   * above), and on the left edge of the cell being visited. */
  int64_t *below = malloc ((size_t) nx * sizeof *below);
  int64_t *above = malloc ((size_t) nx * sizeof *above);
  int ret = SKY_OK;

  if (below == NULL || above == NULL)
    {
      ret = SKY_ERR_MEMORY;
      goto exit;
    }
  for (int64_t i = 0; i < nx; i++)
    below[i] = -1;
  for (int64_t j = 0; j + 1 < ny; j++)
    {
      int64_t left = -1;
      for (int64_t i = 0; i < nx; i++)
        above[i] = -1;
      for (int64_t i = 0; i + 1 < nx; i++)
        {
          float bl = z[j * nx + i], br = z[j * nx + i + 1];
          float tr = z[(j + 1) * nx + i + 1], tl = z[(j + 1) * nx + i];
          int c;
          const signed char *edges;
          int64_t at[4] = { -1, -1, -1, -1 };

          if (isnan (bl) || isnan (br) || isnan (tr) || isnan (tl))
            {
              left = -1;
              continue;
            }
          c = (bl > level) | (br > level) << 1 | (tr > level) << 2 | (tl > level) << 3;
          edges = cases[c];
          if ((c == 5 || c == 10)
              && ((double) bl + (double) br + (double) tr + (double) tl) / 4.0 > level)
            edges = saddle_high[c];
          for (int k = 0; k < 4 && edges[k] >= 0; k += 2)
            {
              int64_t seg;
              if (s->n == s->cap && (ret = segments_grow (s)) != SKY_OK)
                goto exit;
              seg = s->n++;
              for (int e = 0; e < 2; e++)
                {
                  int64_t end = 2 * seg + e;
                  crossing (z, nx, i, j, edges[k + e], level, &s->x[end], &s->y[end]);
                  s->link[end] = -1;
                  at[edges[k + e]] = end;
                }
            }
          join (s, at[BOTTOM], below[i]);
          join (s, at[LEFT], left);
          above[i] = at[TOP];
          left = at[RIGHT];
        }
      memcpy (below, above, (size_t) nx * sizeof *below);
    }

exit:
  free (below);
  free (above);
  return ret;
}

int
sky_contour_trace (const float *pixels, int64_t nx, int64_t ny, double level, SkyContour *c)
{
  Segments s = { 0 };
  uint8_t *seen = NULL;
  int64_t npts = 0, npaths = 0;
  int ret;

  memset (c, 0, sizeof *c);
  if ((ret = march (pixels, nx, ny, level, &s)) != SKY_OK)
    goto exit;
  /* At most one point per segment end plus a closing point per path, and
   * at most one path per segment. */
  seen = calloc ((size_t) s.n + 1, 1);
  c->px = malloc (((size_t) s.n * 2 + 1) * sizeof *c->px);
  c->py = malloc (((size_t) s.n * 2 + 1) * sizeof *c->py);
  c->path_start = malloc (((size_t) s.n + 1) * sizeof *c->path_start);
  c->closed = malloc ((size_t) s.n + 1);
  if (seen == NULL || c->px == NULL || c->py == NULL || c->path_start == NULL
      || c->closed == NULL)
    {
      ret = SKY_ERR_MEMORY;
      goto exit;
    }
  for (int64_t first = 0; first < s.n; first++)
    {
      int64_t cur = first, out, n;
      int closed = 0;

      if (seen[first])
        continue;
      /* Back to the path's start: an end joined to nothing, or round to
       * the first segment again. */
      out = 0;
      while ((n = s.link[2 * cur + out]) >= 0)
        {
          cur = n / 2;
          out = 1 - n % 2;
          if (cur == first)
            {
              closed = 1;
              break;
            }
        }
      if (closed)
        {
          cur = first;
          out = 1;
        }
      else
        out = 1 - out;
      /* Forward: the entry end of the start, then each segment's exit. */
      c->path_start[npaths] = npts;
      c->closed[npaths] = (uint8_t) closed;
      c->px[npts] = s.x[2 * cur + 1 - out];
      c->py[npts++] = s.y[2 * cur + 1 - out];
      for (;;)
        {
          seen[cur] = 1;
          c->px[npts] = s.x[2 * cur + out];
          c->py[npts++] = s.y[2 * cur + out];
          n = s.link[2 * cur + out];
          if (n < 0 || seen[n / 2])
            break;
          cur = n / 2;
          out = 1 - n % 2;
        }
      npaths++;
    }
  c->path_start[npaths] = npts;
  c->npaths = npaths;

exit:
  free (s.x);
  free (s.y);
  free (s.link);
  free (seen);
  if (ret != SKY_OK)
    sky_contour_free (c);
  return ret;
}

void
sky_contour_free (SkyContour *c)
{
  if (c == NULL)
    return;
  free (c->path_start);
  free (c->closed);
  free (c->px);
  free (c->py);
  memset (c, 0, sizeof *c);
}
