/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The background maps from a finished mesh: SExtractor's bicubic spline,
 * natural cubic splines down each column of boxes (their second
 * derivatives come with the mesh), then, for each row of pixels, along the
 * row through the values they give at that row.
 *
 * The nodes sit where SEP puts them, whatever the size of the last box:
 * at pixel (k + 1/2) box - 1/2 across (the box's centre) but (k + 1/2) box
 * down (half a pixel below it; SExtractor's row formula); beyond the
 * outermost nodes the end intervals' cubics extrapolate. As in
 * SEP, a mesh one box high is interpolated linearly along the row (it has
 * no derivatives along it). The arithmetic is SEP's, float for float (same
 * operations in the same order), so the maps agree with its to the last
 * bit wherever the meshes do.
 *
 * The position of each column in its interval is the same on every row, so
 * it is worked out once (accumulated as SEP accumulates it) and each row is
 * one pass of independent multiply-adds per interval. */
#include "sky-cpu.h"
#include "sky-background-math.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

typedef SkyBackgroundInterp Columns;

static void row_nodes (const SkyBackgroundMesh *m, const float *values, const float *dvalues,
                       int64_t y, float *node, float *dnode, float *u);

void
sky_background_interp_clear (SkyBackgroundInterp *c)
{
  free (c->start);
  free (c->dx);
  free (c->cdx);
  free (c->ax);
  free (c->bx);
  free (c->nodes);
  memset (c, 0, sizeof *c);
}

static int
columns_init (SkyBackgroundInterp *c, const SkyBackgroundMesh *m)
{
  const int box = m->box;
  const float xstep = (float) (1.0 / box);
  const int changepoint = box / 2;
  const float dx0 = (float) ((box + 1) % 2) * xstep / 2;
  float dx = (xstep - 1) / 2;
  int64_t node = 0, xbox = 0, i = 0;

  memset (c, 0, sizeof *c);
  c->start = calloc ((size_t) m->nbx + 1, sizeof *c->start);
  c->dx = malloc ((size_t) m->nx * sizeof (float));
  c->cdx = malloc ((size_t) m->nx * sizeof (float));
  c->ax = malloc ((size_t) m->nx * sizeof (float));
  c->bx = malloc ((size_t) m->nx * sizeof (float));
  if (!c->start || !c->dx || !c->cdx || !c->ax || !c->bx)
    {
      sky_background_interp_clear (c);
      return sky_fail (SKY_ERR_MEMORY, "no memory for the background spline of %lld columns",
                       (long long) m->nx);
    }
  /* SEP's walk: the interval moves on half a box past each inner node,
   * and the offset is a float running sum reset there. */
  for (int64_t p = 0; p < m->nx; p++, i++, dx += xstep)
    {
      if (i == changepoint && xbox > 0 && xbox < m->nbx - 1)
        {
          c->start[++node] = p;
          dx = dx0;
        }
      c->dx[p] = dx;
      c->cdx[p] = 1 - dx;
      c->ax[p] = c->cdx[p] * c->cdx[p] - 1;
      c->bx[p] = dx * dx - 1;
      if (i == box)
        {
          xbox++;
          i = 0;
        }
    }
  for (int64_t k = node + 1; k <= m->nbx; k++)
    c->start[k] = m->nx;
  c->mesh = m;
  return SKY_OK;
}

int
sky_background_interp_init (SkyBackgroundInterp *c, const SkyBackgroundMesh *m)
{
  const int64_t nbx = m->nbx;
  float *u;
  int ret = columns_init (c, m);

  if (ret != SKY_OK)
    return ret;
  c->nodes = malloc ((size_t) (4 * nbx * m->ny) * sizeof *c->nodes);
  u = malloc ((size_t) nbx * sizeof *u);
  if (c->nodes == NULL || u == NULL)
    {
      free (u);
      sky_background_interp_clear (c);
      return sky_fail (SKY_ERR_MEMORY, "no memory for the background spline of %lld rows",
                       (long long) m->ny);
    }
  for (int64_t y = 0; y < m->ny; y++)
    {
      float *nodes = c->nodes + 4 * nbx * y;
      row_nodes (m, m->back, m->dback, y, nodes, nodes + nbx, u);
      row_nodes (m, m->rms, m->drms, y, nodes + 2 * nbx, nodes + 3 * nbx, u);
    }
  free (u);
  return SKY_OK;
}

typedef struct {
  const SkyBackgroundMesh *mesh;
  const Columns *cols;
  int64_t y0, nrows;
  int ntasks;
  float *maps[2];
  atomic_int failed;
} Render;

/* The values and second derivatives of one map's spline along row y:
 * the column splines evaluated at the row (node), then the natural spline
 * through them (dnode); u is scratch. All nbx floats. */
static void
row_nodes (const SkyBackgroundMesh *m, const float *values, const float *dvalues, int64_t y,
           float *node, float *dnode, float *u)
{
  const int64_t nbx = m->nbx, nby = m->nby;

  if (nby < 2)
    {
      /* One row of boxes: the mesh itself, and no curvature along the row. */
      memcpy (node, values, (size_t) nbx * sizeof *node);
      memcpy (dnode, dvalues, (size_t) nbx * sizeof *dnode);
      return;
    }
  const SkySplineRow r = sky_background_spline_row (y, m->box, nby);
  const float *blo = values + r.yl * nbx, *bhi = blo + nbx;
  const float *dblo = dvalues + r.yl * nbx, *dbhi = dblo + nbx;
  for (int64_t x = 0; x < nbx; x++)
    node[x] = r.lo * blo[x] + r.hi * bhi[x] + r.dlo * dblo[x] + r.dhi * dbhi[x];

  dnode[0] = 0.0f;
  if (nbx > 1)
    {
      u[0] = 0.0f;
      for (int64_t x = 1; x < nbx - 1; x++)
        {
          float t = -1.0f / (dnode[x - 1] + 4.0f);
          dnode[x] = t;
          t *= u[x - 1] - 6.0f * (node[x + 1] + node[x - 1] - 2.0f * node[x]);
          u[x] = t;
        }
      dnode[nbx - 1] = 0.0f;
      for (int64_t x = nbx - 2; x >= 1; x--)
        dnode[x] = (float) ((dnode[x] * dnode[x + 1] + u[x]) / 6.0);
    }
}

/* Columns x0 .. x1 - 1 of a row from its nodes into line. Any range gives
 * the same values as the whole row: each column depends only on its own
 * interval. */
static void
row_eval (const Columns *c, const float *node, const float *dnode, int64_t x0, int64_t x1,
          float *line)
{
  const int64_t nbx = c->mesh->nbx;

  if (nbx < 2)
    {
      for (int64_t p = x0; p < x1; p++)
        line[p - x0] = node[0];
      return;
    }
  /* The interval that holds x0, by bisection: a short range costs its
   * own columns, not a walk along the row. */
  int64_t k = 0, hi = nbx - 1;
  while (hi - k > 1)
    {
      int64_t mid = (k + hi) / 2;
      if (c->start[mid] <= x0)
        k = mid;
      else
        hi = mid;
    }
  for (; k + 1 < nbx && c->start[k] < x1; k++)
    {
      const float n0 = node[k], n1 = node[k + 1], d0 = dnode[k], d1 = dnode[k + 1];
      const float *restrict dx = c->dx, *restrict cdx = c->cdx;
      const float *restrict ax = c->ax, *restrict bx = c->bx;
      float *restrict out = line - x0;
      int64_t p0 = c->start[k] > x0 ? c->start[k] : x0;
      int64_t p1 = c->start[k + 1] < x1 ? c->start[k + 1] : x1;
      for (int64_t p = p0; p < p1; p++)
        out[p] = cdx[p] * (n0 + ax[p] * d0) + dx[p] * (n1 + bx[p] * d1);
    }
}

void
sky_background_interp_row (const SkyBackgroundInterp *bi, int64_t y, int64_t x0, int64_t x1,
                           float *background, float *rms)
{
  const int64_t nbx = bi->mesh->nbx;
  const float *nodes = bi->nodes + 4 * nbx * y;

  if (background != NULL)
    row_eval (bi, nodes, nodes + nbx, x0, x1, background);
  if (rms != NULL)
    row_eval (bi, nodes + 2 * nbx, nodes + 3 * nbx, x0, x1, rms);
}

static void
render_task (void *ctx, int task)
{
  Render *r = ctx;
  const SkyBackgroundMesh *m = r->mesh;
  int64_t start = r->nrows * task / r->ntasks, end = r->nrows * (task + 1) / r->ntasks;
  float *buf = malloc ((size_t) (3 * m->nbx) * sizeof (float));

  if (buf == NULL)
    {
      atomic_store (&r->failed, 1);
      return;
    }
  for (int64_t y = start; y < end; y++)
    {
      for (int map = 0; map < 2; map++)
        if (r->maps[map] != NULL)
          {
            row_nodes (m, map == 0 ? m->back : m->rms, map == 0 ? m->dback : m->drms,
                       r->y0 + y, buf, buf + m->nbx, buf + 2 * m->nbx);
            row_eval (r->cols, buf, buf + m->nbx, 0, m->nx, r->maps[map] + y * m->nx);
          }
    }
  free (buf);
}

int
sky_cpu_background_rows (const SkyBackgroundMesh *mesh, int64_t y0, int64_t nrows,
                         int nthreads, float *background, float *rms)
{
  Columns cols = { 0 };
  Render r = { mesh, &cols, y0, nrows, 1, { background, rms }, 0 };

  int ret;

  if (y0 < 0 || nrows < 0 || y0 + nrows > mesh->ny)
    return sky_fail (SKY_ERR_ARGUMENT, "background rows %lld to %lld are outside the image (%lld rows)",
                     (long long) y0, (long long) (y0 + nrows - 1), (long long) mesh->ny);
  if (nrows == 0 || (background == NULL && rms == NULL))
    return SKY_OK;
  if ((ret = columns_init (&cols, mesh)) != SKY_OK)
    return ret;
  r.ntasks = nthreads <= 0 ? sky_default_threads () : nthreads;
  r.ntasks *= 4; /* bands small enough to even out the threads' loads */
  if (r.ntasks > nrows)
    r.ntasks = (int) nrows;
  sky_parallel_for (r.ntasks, nthreads, render_task, &r);
  sky_background_interp_clear (&cols);
  if (atomic_load (&r.failed))
    return sky_fail (SKY_ERR_MEMORY, "no memory to interpolate the background mesh");
  return SKY_OK;
}

int
sky_cpu_background (const SkyImage *img, const SkyParams *params, int nthreads,
                    float *background, float *rms)
{
  SkyBackgroundMesh mesh;
  int ret;

  if ((ret = sky_cpu_background_mesh (img, params, nthreads, &mesh)) != SKY_OK)
    return ret;
  ret = sky_cpu_background_rows (&mesh, 0, img->ny, nthreads, background, rms);
  sky_background_mesh_clear (&mesh);
  return ret;
}
