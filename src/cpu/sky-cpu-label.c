/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Connected-component labelling over runs of the mask, in four phases:
 *
 *  1. scan (one band of rows per thread): each row is packed to one bit per
 *     pixel; each run of source pixels that touches no source pixel of the
 *     row above opens a new id, any other run takes the set of what it
 *     touches, and sets that meet are joined (union-find, the smaller id
 *     the root). Provisional ids live in two row buffers, not in the label
 *     image;
 *  2. join: the first row of each band is joined to the last of the band
 *     above;
 *  3. number: in increasing id order each root gets the next label and any
 *     other id its root's;
 *  4. relabel (one band per thread): the scan is replayed on the bits and
 *     every pixel is written once, with its final label: a run that touches
 *     the row above takes the label found there (the same component), any
 *     other run is the next id of the scan and takes that id's label.
 *
 * Ids grow in raster order of the runs that open them and a component's
 * first pixel always opens an id, so the smallest id of a component is that
 * of its first pixel: numbering roots in id order numbers components in
 * raster order of their first pixel, exactly as scipy.ndimage.label does.
 *
 * Most ids never meet another (a checkerboard's 4-connected pixels, most
 * sources' first runs): only ids that stop being roots are written to the
 * parent table and flagged in a bitmap, so the table stays untouched for
 * them and a root's label is a running count. Whole 64-pixel words are
 * handled at once where no run crosses their edges and either no run
 * touches the row above (every run opens an id) or every source pixel
 * touches it (every pixel copies the label above): checkerboards, stripes
 * and the inside of large sources cost a few instructions per 8 pixels.
 * Nothing recurses; memory is bounded by the image size. */
#include "sky-cpu.h"

#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

typedef struct {
  int64_t r0, r1;        /* rows */
  uint32_t base, next;   /* ids [base, next) opened; base is a multiple of 64 */
  int64_t first_label;   /* labels of the bands above */
  int32_t *cur, *up;     /* provisional ids of this row and the one above */
  int32_t *first, *last; /* provisional ids of the band's first and last rows */
} Band;

typedef struct {
  const uint8_t *mask;
  int32_t *labels;
  int64_t nx, ny, nw;   /* nw: 64-bit words per row of bits */
  int connectivity;
  int nbands;
  uint64_t *bits;       /* the mask, one bit per pixel, bit i of word w = pixel 64w + i */
  uint64_t *zero_row;   /* nw zero words: the row above a band's first row */
  uint32_t *parent;     /* for linked ids: a smaller id of the set; after phase 3 the label */
  uint64_t *linked;     /* one bit per id: set once the id is no longer a root */
  uint32_t *roots_before; /* per word of linked: roots of smaller id (phase 3) */
  Band *bands;
} Labeller;

/* Word-level cases: MIXED, run by run; NEW, no run touches the row above;
 * UNDER, every source pixel has one directly above; COVERED (8-connected
 * only), every source pixel touches one above. */
enum { WORD_MIXED, WORD_NEW, WORD_UNDER, WORD_COVERED };

/* ------------------------------------------------------- word-level tables */

/* PREFIX[s][j]: run starts among bits 0..j of the byte s; MASK[b][j]: -1
 * where bit j of b is set. Compile-time tables, so no start-up race. */
#define B_(s, i) (((s) >> (i)) & 1)
#define P0_(s) B_ (s, 0)
#define P1_(s) P0_ (s) + B_ (s, 1)
#define P2_(s) P1_ (s) + B_ (s, 2)
#define P3_(s) P2_ (s) + B_ (s, 3)
#define P4_(s) P3_ (s) + B_ (s, 4)
#define P5_(s) P4_ (s) + B_ (s, 5)
#define P6_(s) P5_ (s) + B_ (s, 6)
#define P7_(s) P6_ (s) + B_ (s, 7)
#define PREFIX_ROW(s) { P0_ (s), P1_ (s), P2_ (s), P3_ (s), P4_ (s), P5_ (s), P6_ (s), P7_ (s) }
#define MASK_ROW(s)                                                                     \
  { -B_ (s, 0), -B_ (s, 1), -B_ (s, 2), -B_ (s, 3), -B_ (s, 4), -B_ (s, 5), -B_ (s, 6), \
    -B_ (s, 7) }
#define X4_(R, n) R (n), R (n + 1), R (n + 2), R (n + 3)
#define X16_(R, n) X4_ (R, n), X4_ (R, n + 4), X4_ (R, n + 8), X4_ (R, n + 12)
#define X64_(R, n) X16_ (R, n), X16_ (R, n + 16), X16_ (R, n + 32), X16_ (R, n + 48)
#define X256_(R) X64_ (R, 0), X64_ (R, 64), X64_ (R, 128), X64_ (R, 192)

static const int32_t PREFIX[256][8] __attribute__ ((aligned (32))) = { X256_ (PREFIX_ROW) };
static const int32_t MASK[256][8] __attribute__ ((aligned (32))) = { X256_ (MASK_ROW) };

/* Bits set in x. Not __builtin_popcountll: without -mpopcnt (the generic
 * x86-64 target) that is a library call, which cost a third of the time
 * on a checkerboard. */
static inline uint32_t
popcount64 (uint64_t x)
{
  x -= (x >> 1) & 0x5555555555555555u;
  x = (x & 0x3333333333333333u) + ((x >> 2) & 0x3333333333333333u);
  x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fu;
  return (uint32_t) ((x * 0x0101010101010101u) >> 56);
}

/* Four lanes of int32 (GCC and Clang vector extensions: SSE2 on x86-64,
 * plain code elsewhere); the loops below are not vectorized otherwise. */
typedef int32_t V4 __attribute__ ((vector_size (16)));

static inline V4
load4 (const int32_t *p)
{
  V4 v;
  memcpy (&v, p, sizeof v);
  return v;
}

static inline void
store4 (int32_t *p, V4 v)
{
  memcpy (p, &v, sizeof v);
}

/* dst[j] = before + (run starts at or before j) where bit j of c is set, 0
 * elsewhere, for the 64 pixels of a word. */
static inline void
write_runs (int32_t *dst, uint64_t c, uint64_t starts, int32_t before)
{
  V4 base = { before, before, before, before };
  for (int k = 0; k < 8; k++, dst += 8, c >>= 8, starts >>= 8)
    {
      const int32_t *pf = PREFIX[starts & 255], *mk = MASK[c & 255];
      store4 (dst, (base + load4 (pf)) & load4 (mk));
      store4 (dst + 4, (base + load4 (pf + 4)) & load4 (mk + 4));
      base += pf[7];
    }
}

/* dst[j] = src[j] where bit j of c is set, 0 elsewhere. */
static inline void
copy_masked (int32_t *dst, const int32_t *src, uint64_t c)
{
  for (int k = 0; k < 8; k++, dst += 8, src += 8, c >>= 8)
    {
      const int32_t *mk = MASK[c & 255];
      store4 (dst, load4 (src) & load4 (mk));
      store4 (dst + 4, load4 (src + 4) & load4 (mk + 4));
    }
}

/* ----------------------------------------------------------------- bits */

static void
pack_row (const uint8_t *m, int64_t nx, uint64_t *out)
{
  int64_t w = 0;

#ifdef __SSE2__
  const __m128i zero = _mm_setzero_si128 ();
  for (; w * 64 + 64 <= nx; w++)
    {
      uint64_t word = 0;
      for (int k = 0; k < 4; k++)
        {
          __m128i v = _mm_loadu_si128 ((const __m128i *) (m + w * 64 + 16 * k));
          unsigned z = (unsigned) _mm_movemask_epi8 (_mm_cmpeq_epi8 (v, zero));
          word |= (uint64_t) (~z & 0xffffu) << (16 * k);
        }
      out[w] = word;
    }
#endif
  for (; w * 64 < nx; w++)
    {
      uint64_t word = 0;
      for (int64_t x = w * 64; x < nx && x < w * 64 + 64; x++)
        word |= (uint64_t) (m[x] != 0) << (x - w * 64);
      out[w] = word;
    }
}

/* First pixel in [from, limit) whose bit is set (want 1) or clear (want 0),
 * or limit. Bits past the row's end are clear. */
static inline int64_t
next_bit (const uint64_t *row, int64_t from, int64_t limit, int want)
{
  int64_t w = from >> 6;
  uint64_t word;

  if (from >= limit)
    return limit;
  word = (want ? row[w] : ~row[w]) & (~(uint64_t) 0 << (from & 63));
  while (word == 0)
    {
      if (++w * 64 >= limit)
        return limit;
      word = want ? row[w] : ~row[w];
    }
  from = w * 64 + __builtin_ctzll (word);
  return from < limit ? from : limit;
}

/* Which word-level case word w of row C is, under row P. */
static inline int
classify (const Labeller *l, const uint64_t *C, const uint64_t *P, int64_t w)
{
  uint64_t c = C[w], p = P[w], reach = p;

  if (w * 64 + 64 > l->nx                              /* a partial last word */
      || ((c & 1) && w > 0 && (C[w - 1] >> 63))        /* a run enters */
      || ((c >> 63) && w + 1 < l->nw && (C[w + 1] & 1))) /* a run leaves */
    return WORD_MIXED;
  if (l->connectivity == 8)
    {
      reach |= p << 1 | p >> 1;
      if (w > 0)
        reach |= P[w - 1] >> 63;
      if (w + 1 < l->nw)
        reach |= P[w + 1] << 63;
    }
  if ((c & reach) == 0)
    return WORD_NEW;
  if ((c & ~p) == 0)
    return WORD_UNDER;
  if ((c & ~reach) == 0)
    return WORD_COVERED;
  return WORD_MIXED;
}

/* A word of a packed row that holds a source pixel: its index w, its
 * bits c and the first bits of its runs (starts), its pixels [x0, end).
 * The scan and its replay (relabel) walk a row's words alike, with
 * next_source_word and word_case. */
typedef struct {
  int64_t w, x0, end;
  uint64_t c, starts;
} SourceWord;

/* The next word after sw->w (-1 to start) with a source pixel; 0 past the
 * row's last word. */
static inline int
next_source_word (const Labeller *l, const uint64_t *C, SourceWord *sw)
{
  while (++sw->w < l->nw)
    if ((sw->c = C[sw->w]) != 0)
      {
        sw->starts = sw->c & ~(sw->c << 1);
        sw->x0 = sw->w * 64;
        sw->end = sw->x0 + 64 < l->nx ? sw->x0 + 64 : l->nx;
        return 1;
      }
  return 0;
}

/* The word's case, or MIXED where a run of an earlier word reaches into
 * it (the pixels before x are done). */
static inline int
word_case (const Labeller *l, const uint64_t *C, const uint64_t *P, const SourceWord *sw,
           int64_t x)
{
  return sw->x0 >= x ? classify (l, C, P, sw->w) : WORD_MIXED;
}

/* The pixels of the row above that a run [s, e) touches: [lo, hi). */
static inline void
reach_of (const Labeller *l, int64_t s, int64_t e, int64_t *lo, int64_t *hi)
{
  *lo = s;
  *hi = e;
  if (l->connectivity == 8)
    {
      *lo = s > 0 ? s - 1 : 0;
      *hi = e < l->nx ? e + 1 : l->nx;
    }
}

/* ----------------------------------------------------------- union-find */

static inline int
is_linked (const uint64_t *linked, uint32_t id)
{
  return (int) ((linked[id >> 6] >> (id & 63)) & 1);
}

static inline uint32_t
find_root (Labeller *l, uint32_t x)
{
  while (is_linked (l->linked, x))
    {
      uint32_t p = l->parent[x];
      if (is_linked (l->linked, p))
        {
          p = l->parent[p]; /* path halving */
          l->parent[x] = p;
        }
      x = p;
    }
  return x;
}

/* Joins two roots; returns the smaller, the new root. */
static inline uint32_t
link_roots (Labeller *l, uint32_t a, uint32_t b)
{
  uint32_t lo = a < b ? a : b, hi = a < b ? b : a;
  if (lo != hi)
    {
      l->parent[hi] = lo;
      l->linked[hi >> 6] |= (uint64_t) 1 << (hi & 63);
    }
  return lo;
}

/* Opens n ids; their words of the linked bitmap are cleared as they come. */
static inline uint32_t
open_ids (Labeller *l, Band *b, uint32_t n)
{
  uint32_t id = b->next;
  for (uint32_t w = (id + 63) >> 6; w * 64 < id + n; w++)
    l->linked[w] = 0;
  b->next += n;
  return id;
}

/* ----------------------------------------------------------- 1. scan */

/* The root of the set of run [s, e) of the current row: its contacts with
 * the row above joined, or a new id. */
static uint32_t
scan_run (Labeller *l, Band *b, const uint64_t *P, int64_t s, int64_t e)
{
  int64_t lo, hi, t;
  uint32_t root = UINT32_MAX;

  reach_of (l, s, e, &lo, &hi);
  for (t = next_bit (P, lo, hi, 1); t < hi; t = next_bit (P, next_bit (P, t, hi, 0), hi, 1))
    {
      uint32_t a = (uint32_t) b->up[t]; /* one per run above: ids are constant along runs */
      if (root == UINT32_MAX)
        root = find_root (l, a);
      else if (a != root)
        root = link_roots (l, root, find_root (l, a));
    }
  return root != UINT32_MAX ? root : open_ids (l, b, 1);
}

/* Word w of a covered 8-connected row takes one id if every source pixel
 * it can touch above has the same one (then no set needs joining). */
static int
scan_covered8 (Band *b, const uint64_t *P, int64_t w, int64_t nx, int64_t nw, uint64_t c)
{
  int64_t x0 = w * 64;
  int64_t t = next_bit (P, x0 > 0 ? x0 - 1 : 0, x0 + 64 < nx ? x0 + 65 : nx, 1);
  int32_t id = b->up[t], diff = 0;
  uint64_t p = P[w];

  if (w > 0 && (P[w - 1] >> 63))
    diff |= b->up[x0 - 1] ^ id;
  if (w + 1 < nw && (P[w + 1] & 1))
    diff |= b->up[x0 + 64] ^ id;
  V4 ids = { id, id, id, id }, d = { diff, 0, 0, 0 };
  for (int k = 0; k < 8; k++, p >>= 8)
    {
      const int32_t *mk = MASK[p & 255], *up = b->up + x0 + 8 * k;
      d |= ((load4 (up) ^ ids) & load4 (mk)) | ((load4 (up + 4) ^ ids) & load4 (mk + 4));
    }
  if ((d[0] | d[1] | d[2] | d[3]) != 0)
    return 0;
  for (int k = 0; k < 8; k++, c >>= 8)
    {
      const int32_t *mk = MASK[c & 255];
      store4 (b->cur + x0 + 8 * k, ids & load4 (mk));
      store4 (b->cur + x0 + 8 * k + 4, ids & load4 (mk + 4));
    }
  return 1;
}

static void
scan_row (Labeller *l, Band *b, const uint64_t *C, const uint64_t *P)
{
  int64_t nx = l->nx, x = 0;
  SourceWord sw = { -1, 0, 0, 0, 0 };

  while (next_source_word (l, C, &sw))
    {
      int kind = word_case (l, C, P, &sw, x);

      if (kind == WORD_NEW)
        {
          uint32_t id = open_ids (l, b, (uint32_t) popcount64 (sw.starts));
          write_runs (b->cur + sw.x0, sw.c, sw.starts, (int32_t) id - 1);
          x = sw.end;
          continue;
        }
      if (kind == WORD_UNDER)
        {
          /* Every run lies under one run above (the diagonal pixels an
           * 8-connected run touches extend that run), whose id it takes. */
          copy_masked (b->cur + sw.x0, b->up + sw.x0, sw.c);
          x = sw.end;
          continue;
        }
      if (kind == WORD_COVERED && scan_covered8 (b, P, sw.w, nx, l->nw, sw.c))
        {
          x = sw.end;
          continue;
        }
      for (int64_t s = next_bit (C, x > sw.x0 ? x : sw.x0, sw.end, 1); s < sw.end;
           s = next_bit (C, x, sw.end, 1))
        {
          int64_t e = next_bit (C, s + 1, nx, 0);
          int32_t id = (int32_t) scan_run (l, b, P, s, e);
          for (int64_t i = s; i < e; i++)
            b->cur[i] = id;
          x = e;
        }
    }
}

static void
scan_task (void *ctx, int band)
{
  Labeller *l = ctx;
  Band *b = &l->bands[band];

  for (int64_t y = b->r0; y < b->r1; y++)
    {
      uint64_t *C = l->bits + y * l->nw;
      int32_t *swap;

      pack_row (l->mask + y * l->nx, l->nx, C);
      scan_row (l, b, C, y > b->r0 ? C - l->nw : l->zero_row); /* bands meet in phase 2 */
      if (y == b->r0)
        memcpy (b->first, b->cur, (size_t) l->nx * sizeof *b->cur);
      if (y == b->r1 - 1)
        memcpy (b->last, b->cur, (size_t) l->nx * sizeof *b->cur);
      swap = b->up;
      b->up = b->cur;
      b->cur = swap;
    }
}

/* ----------------------------------------------------------- 2. join */

static void
join_bands (Labeller *l)
{
  for (int band = 1; band < l->nbands; band++)
    {
      Band *b = &l->bands[band];
      const uint64_t *C = l->bits + b->r0 * l->nw, *P = C - l->nw;
      const int32_t *above = l->bands[band - 1].last;

      for (int64_t s = next_bit (C, 0, l->nx, 1); s < l->nx; s = next_bit (C, s, l->nx, 1))
        {
          int64_t e = next_bit (C, s + 1, l->nx, 0), lo, hi;
          uint32_t root = find_root (l, (uint32_t) b->first[s]);

          reach_of (l, s, e, &lo, &hi);
          for (int64_t t = next_bit (P, lo, hi, 1); t < hi;
               t = next_bit (P, next_bit (P, t, hi, 0), hi, 1))
            root = link_roots (l, root, find_root (l, (uint32_t) above[t]));
          s = e;
        }
    }
}

/* ----------------------------------------------------------- 3. number */

static int64_t
number_components (Labeller *l)
{
  int64_t count = 0;

  for (int band = 0; band < l->nbands; band++)
    {
      Band *b = &l->bands[band];
      b->first_label = count;
      for (uint32_t w = b->base >> 6; w * 64 < b->next; w++)
        {
          uint64_t valid = b->next - w * 64 >= 64 ? ~(uint64_t) 0
                                                  : ((uint64_t) 1 << (b->next - w * 64)) - 1;
          l->roots_before[w] = (uint32_t) count;
          count += popcount64 (valid & ~l->linked[w]);
          /* A linked id's parent is smaller, so it already holds its label
           * if it is linked too; a root's label is the roots before it. */
          for (uint64_t lk = l->linked[w]; lk != 0; lk &= lk - 1)
            {
              uint32_t id = w * 64 + (uint32_t) __builtin_ctzll (lk), p = l->parent[id];
              uint32_t pw = p >> 6;
              uint64_t below = ((uint64_t) 1 << (p & 63)) - 1;
              l->parent[id] = is_linked (l->linked, p)
                                  ? l->parent[p]
                                  : l->roots_before[pw]
                                        + (uint32_t) popcount64 (~l->linked[pw] & below)
                                        + 1;
            }
        }
    }
  return count;
}

/* ----------------------------------------------------------- 4. relabel */

typedef struct {
  uint32_t next;  /* the scan's next id */
  int64_t count;  /* labels given to roots so far */
} Replay;

/* The label of the next id the scan opened. */
static inline int32_t
replay_id (Labeller *l, Replay *r)
{
  uint32_t id = r->next++;
  return (int32_t) (is_linked (l->linked, id) ? l->parent[id] : ++r->count);
}

/* Whether any of the n (at most 64) ids from id is linked. */
static inline int
any_linked (const uint64_t *linked, uint32_t id, uint32_t n)
{
  uint32_t off = id & 63;
  uint64_t bits = linked[id >> 6] >> off;
  if (n == 0)
    return 0;
  if (off + n > 64)
    bits |= linked[(id >> 6) + 1] << (64 - off);
  return (bits & (n == 64 ? ~(uint64_t) 0 : ((uint64_t) 1 << n) - 1)) != 0;
}

/* Word w of an 8-connected row where every source pixel touches the row
 * above: each takes the label of what it touches there, the same for all
 * it touches (they all touch this pixel), so the bitwise or of the three
 * labels above is that label. */
static inline void
relabel_covered8 (const Labeller *l, int32_t *row, const int32_t *above, int64_t w, uint64_t c)
{
  int64_t x0 = w * 64;
  int32_t win[68], any[64];
  const int32_t *src = above + x0 - 1; /* src[j .. j + 2] lie above pixel x0 + j */

  if (x0 == 0 || x0 + 64 >= l->nx)
    {
      /* At the row's ends a copy stands in for the pixels past them. */
      win[0] = x0 > 0 ? above[x0 - 1] : 0;
      memcpy (win + 1, above + x0, 64 * sizeof *win);
      win[65] = x0 + 64 < l->nx ? above[x0 + 64] : 0;
      win[66] = win[67] = 0;
      src = win;
    }
  for (int j = 0; j < 64; j += 4)
    store4 (any + j, load4 (src + j) | load4 (src + j + 1) | load4 (src + j + 2));
  copy_masked (row + x0, any, c);
}

static void
relabel_row (Labeller *l, Replay *r, int32_t *row, const int32_t *above, const uint64_t *C,
             const uint64_t *P)
{
  int64_t nx = l->nx, x = 0; /* pixels before x are written */
  SourceWord sw = { -1, 0, 0, 0, 0 };

  while (next_source_word (l, C, &sw))
    {
      int kind = word_case (l, C, P, &sw, x);

      if (kind == WORD_NEW)
        {
          uint32_t n = (uint32_t) popcount64 (sw.starts);
          if (!any_linked (l->linked, r->next, n))
            {
              memset (row + x, 0, (size_t) (sw.x0 - x) * sizeof *row);
              write_runs (row + sw.x0, sw.c, sw.starts, (int32_t) r->count);
              r->next += n;
              r->count += n;
              x = sw.end;
              continue;
            }
        }
      if (kind == WORD_UNDER || kind == WORD_COVERED)
        {
          memset (row + x, 0, (size_t) (sw.x0 - x) * sizeof *row);
          if (kind == WORD_UNDER)
            copy_masked (row + sw.x0, above + sw.x0, sw.c);
          else
            relabel_covered8 (l, row, above, sw.w, sw.c);
          x = sw.end;
          continue;
        }
      for (int64_t s = next_bit (C, x > sw.x0 ? x : sw.x0, sw.end, 1); s < sw.end;
           s = next_bit (C, x, sw.end, 1))
        {
          int64_t e = next_bit (C, s + 1, nx, 0), lo, hi, t;
          int32_t label;

          reach_of (l, s, e, &lo, &hi);
          t = next_bit (P, lo, hi, 1);
          label = t < hi ? above[t] : replay_id (l, r);
          memset (row + x, 0, (size_t) (s - x) * sizeof *row);
          for (int64_t i = s; i < e; i++)
            row[i] = label;
          x = e;
        }
    }
  memset (row + x, 0, (size_t) (nx - x) * sizeof *row);
}

static void
relabel_task (void *ctx, int band)
{
  Labeller *l = ctx;
  Band *b = &l->bands[band];
  Replay r = { b->base, b->first_label };

  for (int64_t y = b->r0; y < b->r1; y++)
    {
      const uint64_t *C = l->bits + y * l->nw;
      int32_t *row = l->labels + y * l->nx;
      relabel_row (l, &r, row, row - l->nx, C, y > b->r0 ? C - l->nw : l->zero_row);
    }
}

/* ----------------------------------------------------------------- entry */

int
sky_cpu_label (const uint8_t *mask, int64_t nx, int64_t ny, int connectivity, int nthreads,
               int32_t *labels, int64_t *nlabels)
{
  Labeller l = { mask, labels, nx, ny, (nx + 63) / 64, connectivity, 1,
                 NULL, NULL, NULL, NULL, NULL, NULL };
  int64_t ids_per_row = (nx + 1) / 2, capacity = 0; /* a row has at most this many runs */
  int32_t *rows = NULL;
  int ret = SKY_OK;

  *nlabels = 0;
  if (connectivity != 4 && connectivity != 8)
    return sky_fail (SKY_ERR_ARGUMENT, "label: connectivity must be 4 or 8 (got %d)",
                     connectivity);
  if (nx <= 0 || ny <= 0 || ny * ids_per_row + 64 * ny >= INT32_MAX)
    return sky_fail (SKY_ERR_SIZE, "label: cannot label a %lld x %lld image", (long long) nx,
                     (long long) ny);

  l.nbands = nthreads <= 0 ? sky_default_threads () : nthreads;
  if (l.nbands > ny)
    l.nbands = (int) ny;
  if (nx * ny < (1 << 18))
    l.nbands = 1;

  l.bands = calloc ((size_t) l.nbands, sizeof *l.bands);
  rows = calloc ((size_t) (4 * l.nbands * nx), sizeof *rows);
  if (l.bands == NULL || rows == NULL)
    goto oom;
  for (int band = 0; band < l.nbands; band++)
    {
      Band *b = &l.bands[band];
      b->r0 = ny * band / l.nbands;
      b->r1 = ny * (band + 1) / l.nbands;
      b->base = b->next = (uint32_t) capacity;
      capacity += ((b->r1 - b->r0) * ids_per_row + 63) / 64 * 64;
      b->cur = rows + 4 * band * nx;
      b->up = b->cur + nx;
      b->first = b->up + nx;
      b->last = b->first + nx;
    }

  /* The id tables are sized for the worst case (every row full of one-pixel
   * runs); only the part for ids actually opened is touched, and of the
   * parent table only the entries of ids that stopped being roots. */
  l.bits = malloc ((size_t) (l.nw * ny) * sizeof *l.bits);
  l.zero_row = calloc ((size_t) l.nw, sizeof *l.zero_row);
  l.parent = malloc ((size_t) capacity * sizeof *l.parent);
  l.linked = malloc ((size_t) (capacity / 64 + 1) * sizeof *l.linked);
  l.roots_before = malloc ((size_t) (capacity / 64 + 1) * sizeof *l.roots_before);
  if (l.bits == NULL || l.zero_row == NULL || l.parent == NULL || l.linked == NULL
      || l.roots_before == NULL)
    goto oom;

  sky_parallel_for (l.nbands, l.nbands, scan_task, &l);
  join_bands (&l);
  *nlabels = number_components (&l);
  sky_parallel_for (l.nbands, l.nbands, relabel_task, &l);
  goto exit;

oom:
  ret = sky_fail (SKY_ERR_MEMORY, "label: out of memory");
exit:
  free (l.bands);
  free (rows);
  free (l.bits);
  free (l.zero_row);
  free (l.parent);
  free (l.linked);
  free (l.roots_before);
  return ret;
}
