/* Connected-component labelling in four phases:
 *
 *  1. scan (one band of rows per thread): each source pixel takes a
 *     neighbour's provisional id or a new one, and ids that meet are joined
 *     in a union-find table whose roots are always the smallest id;
 *  2. join: the first row of each band is joined to the last of the band
 *     above;
 *  3. number: in increasing id order a root gets the next label and any
 *     other id its parent's, which is smaller and so already numbered;
 *  4. relabel (one band per thread): every source pixel gets its label.
 *
 * Ids grow in raster order (within a band as it is scanned, and bands are
 * in row order), and a component's first pixel always opens a new id, so the
 * smallest id of a component is that of its first pixel: numbering roots in
 * id order numbers components in raster order of their first pixel, exactly
 * as scipy.ndimage.label does. Nothing recurses, so a checkerboard of
 * single-pixel sources is as safe as one large source. */
#include "sky-cpu.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
  const uint8_t *mask;
  int32_t *labels;     /* provisional ids until phase 4 */
  uint32_t *parent;    /* union-find over ids, then id -> label */
  int64_t nx, ny;
  int64_t ids_per_row; /* at most this many new ids open in one row */
  int connectivity;
  int nbands;
  int64_t *next_id;    /* per band: one past the last id it opened */
} Labeller;

static void
band_rows (const Labeller *l, int band, int64_t *r0, int64_t *r1)
{
  *r0 = l->ny * band / l->nbands;
  *r1 = l->ny * (band + 1) / l->nbands;
}

static inline uint32_t
find_root (uint32_t *parent, uint32_t x)
{
  while (parent[x] != x)
    {
      parent[x] = parent[parent[x]];
      x = parent[x];
    }
  return x;
}

/* Joins the sets of a and b; the smaller root becomes the root. */
static inline void
unite (uint32_t *parent, uint32_t a, uint32_t b)
{
  a = find_root (parent, a);
  b = find_root (parent, b);
  if (a < b)
    parent[b] = a;
  else if (b < a)
    parent[a] = b;
}

/* Next source pixel at or after x in a mask row, 8 bytes at a time over
 * background: most of an astronomical image is empty sky. */
static inline int64_t
next_source (const uint8_t *m, int64_t x, int64_t nx)
{
  while (x + 8 <= nx)
    {
      uint64_t word;
      memcpy (&word, m + x, sizeof word);
      if (word != 0)
        break;
      x += 8;
    }
  while (x < nx && m[x] == 0)
    x++;
  return x;
}

/* The provisional id of pixel x of the current row, given the row above. */
static inline uint32_t
scan_pixel (Labeller *l, const uint8_t *mu, const int32_t *lu, const int32_t *row, int64_t x,
            uint32_t *next)
{
  uint32_t *parent = l->parent;
  uint32_t left = x > 0 ? (uint32_t) row[x - 1] : 0; /* 0 where background */
  int64_t nx = l->nx;

  if (l->connectivity == 4)
    {
      uint32_t up = mu != NULL && mu[x] ? (uint32_t) lu[x] : 0;
      if (left && up && left != up)
        unite (parent, left, up);
      if (left || up)
        return left ? left : up;
    }
  else
    {
      /* The pixel above joins everything else above and to the left; else
       * the one above right, joined to the left or above-left one (those
       * two are already joined to each other through each other). */
      uint32_t up = mu != NULL && mu[x] ? (uint32_t) lu[x] : 0;
      uint32_t up_left = mu != NULL && x > 0 && mu[x - 1] ? (uint32_t) lu[x - 1] : 0;
      uint32_t up_right = mu != NULL && x + 1 < nx && mu[x + 1] ? (uint32_t) lu[x + 1] : 0;

      if (up)
        {
          if (left && left != up)
            unite (parent, left, up);
          return up;
        }
      if (up_right)
        {
          uint32_t other = left ? left : up_left;
          if (other && other != up_right)
            unite (parent, other, up_right);
          return up_right;
        }
      if (left || up_left)
        return left ? left : up_left;
    }
  parent[*next] = *next;
  return (*next)++;
}

static void
scan_task (void *ctx, int band)
{
  Labeller *l = ctx;
  int64_t r0, r1, nx = l->nx;
  uint32_t next;

  band_rows (l, band, &r0, &r1);
  next = (uint32_t) (1 + r0 * l->ids_per_row);
  for (int64_t y = r0; y < r1; y++)
    {
      const uint8_t *m = l->mask + y * nx;
      const uint8_t *mu = y > r0 ? m - nx : NULL; /* bands meet in phase 2 */
      int32_t *row = l->labels + y * nx;
      const int32_t *lu = row - nx;
      int64_t x = 0;

      while (x < nx)
        {
          int64_t start = next_source (m, x, nx);
          memset (row + x, 0, (size_t) (start - x) * sizeof *row);
          for (x = start; x < nx && m[x]; x++)
            row[x] = (int32_t) scan_pixel (l, mu, lu, row, x, &next);
        }
    }
  l->next_id[band] = next;
}

static void
join_bands (Labeller *l)
{
  int64_t nx = l->nx;

  for (int band = 1; band < l->nbands; band++)
    {
      int64_t y, r1;
      band_rows (l, band, &y, &r1);
      if (y == 0 || y >= l->ny)
        continue;
      const uint8_t *m = l->mask + y * nx, *mu = m - nx;
      const int32_t *row = l->labels + y * nx, *lu = row - nx;

      for (int64_t x = next_source (m, 0, nx); x < nx; x = next_source (m, x + 1, nx))
        {
          int64_t from = x, to = x;
          if (l->connectivity == 8)
            {
              from = x > 0 ? x - 1 : x;
              to = x + 1 < nx ? x + 1 : x;
            }
          for (int64_t k = from; k <= to; k++)
            if (mu[k])
              unite (l->parent, (uint32_t) row[x], (uint32_t) lu[k]);
        }
    }
}

static int64_t
number_components (Labeller *l)
{
  uint32_t count = 0;

  for (int band = 0; band < l->nbands; band++)
    {
      int64_t r0, r1;
      band_rows (l, band, &r0, &r1);
      for (uint32_t id = (uint32_t) (1 + r0 * l->ids_per_row); id < l->next_id[band]; id++)
        l->parent[id] = l->parent[id] == id ? ++count : l->parent[l->parent[id]];
    }
  return count;
}

static void
relabel_task (void *ctx, int band)
{
  Labeller *l = ctx;
  int64_t r0, r1, nx = l->nx;

  band_rows (l, band, &r0, &r1);
  for (int64_t y = r0; y < r1; y++)
    {
      const uint8_t *m = l->mask + y * nx;
      int32_t *row = l->labels + y * nx;
      for (int64_t x = next_source (m, 0, nx); x < nx; x = next_source (m, x + 1, nx))
        row[x] = (int32_t) l->parent[row[x]];
    }
}

int
sky_cpu_label (const uint8_t *mask, int64_t nx, int64_t ny, int connectivity, int nthreads,
               int32_t *labels, int64_t *nlabels)
{
  Labeller l = { mask, labels, NULL, nx, ny, (nx + 1) / 2, connectivity, 1, NULL };
  int ret = SKY_OK;

  *nlabels = 0;
  if (connectivity != 4 && connectivity != 8)
    return sky_fail (SKY_ERR_ARGUMENT, "label: connectivity must be 4 or 8 (got %d)",
                     connectivity);
  if (nx <= 0 || ny <= 0 || ny * l.ids_per_row >= INT32_MAX)
    return sky_fail (SKY_ERR_SIZE, "label: cannot label a %lld x %lld image", (long long) nx,
                     (long long) ny);

  l.nbands = nthreads <= 0 ? sky_default_threads () : nthreads;
  if (l.nbands > ny)
    l.nbands = (int) ny;
  if (nx * ny < (1 << 18))
    l.nbands = 1;

  /* Ids are handed out per band from fixed ranges; the table's pages past
   * the ids actually opened are never touched, so it costs little memory. */
  l.parent = malloc ((size_t) (1 + ny * l.ids_per_row) * sizeof *l.parent);
  l.next_id = calloc ((size_t) l.nbands, sizeof *l.next_id);
  if (l.parent == NULL || l.next_id == NULL)
    {
      ret = sky_fail (SKY_ERR_MEMORY, "label: out of memory");
      goto exit;
    }

  sky_parallel_for (l.nbands, l.nbands, scan_task, &l);
  join_bands (&l);
  *nlabels = number_components (&l);
  sky_parallel_for (l.nbands, l.nbands, relabel_task, &l);

exit:
  free (l.parent);
  free (l.next_id);
  return ret;
}
