/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-gpu-deblend-tree.cuh: whether an island splits at all, from the tree
 * of its components over the levels, built in one pass from the top level
 * down (sky-gpu-deblend.cu's island kernel asks before it climbs the levels
 * one union-find each). Included by sky-gpu-deblend.cu only, inside its
 * anonymous namespace, after sky-gpu-deblend-block.cuh.
 *
 * The CPU's frames, read on the tree: a frame is a node (a component of
 * the island above a level, the island itself at the start); its children
 * are its components above the next level; it is a core when none of them
 * is significant, and otherwise each significant child is a frame (the
 * CPU's nsig == 1 and nsig > 1 cases alike). The cores are therefore the
 * nodes reached from the island through significant nodes that have no
 * significant child, and there are two or more exactly when some node so
 * reached has two significant children. Bottom up: a node is good when it
 * has two significant children or a significant good child; the island
 * splits exactly when it is good.
 *
 * One union-find, roots the least pixels, serves every level: going down a
 * level adds the pixels that lie above it but not above the level before
 * and the edges they bring, so components only merge. A component's flux,
 * area and top are its merged components' plus its new pixels'; its
 * children are the components of the level above that merged into it.
 * Flux sums come in another order than the CPU's: a node within the
 * climb's rounding margin of mincont makes the answer unknown, and so do
 * levels that do not rise (the tree needs nested sets), and so does a tree
 * of more nodes than the scratch holds (2 p).
 *
 * The cores too: each level's components are nodes (numbered as they
 * appear, the top level's first), each with the node it merges into one
 * level down; a node is alive when it and every node below it on the way
 * to the island is significant, a core when alive with no significant
 * child; a pixel belongs to the first core on its way down from the node
 * of the highest level it lies above. A core is named by its least pixel,
 * as the climb names its frames, and the watershed follows as after the
 * climb. */

constexpr int kTreeLevels = 64;   /* more levels: the climb decides alone */
/* Larger islands too: then the node count (at most the levels times the
 * pixels) and the node ids fit in 32 bits. */
constexpr int64_t kTreePixels = (int64_t) 1 << 24;

struct TreeShared {
  double t[kTreeLevels];
  int32_t start[kTreeLevels];   /* the first node of each level */
  int32_t nsig, good, nodes, cores;
};

/* The tree's own words in the island's scratch (tree_words of them): per
 * pixel bits, leaf node, node id at the level just done and the one
 * before; per node (2 p at most) the node below, its root, its flags
 * (significant 1, a significant child 2, alive 4, core 8). */
struct TreeWords {
  int32_t *bits, *leaf, *id_even, *id_odd, *down, *root, *info;
  int64_t cap;
};

__host__ __device__ __forceinline__ int64_t
tree_words (int64_t p)
{
  return 10 * p;
}

__device__ __forceinline__ TreeWords
tree_words_at (int32_t *w, int64_t p)
{
  return TreeWords { w, w + p, w + 2 * p, w + 3 * p, w + 4 * p, w + 6 * p, w + 8 * p, 2 * p };
}

/* 0: unknown (the climb decides); 1: the island does not split; more:
 * it splits into that many cores (with cores set), owner[j] then the
 * core's least pixel + 1 (0: left for the watershed). Works in the climb's
 * words (lvl over frame: the caller sets frame again) and its own tw.
 * Every thread of the block calls it and gets the same answer. bits[j]
 * is read and written only by the thread that owns pixel j (j = tid +
 * k kBlock): bit 0 significant, bit 1 good, bit 2 a root at the level
 * just done. */
__device__ int32_t
tree_decide (const float *val, const int32_t *nb, int nn, int64_t p,
             const SkyGpuDetectParams &lp, double peak, double floor_flux, double slack,
             int32_t *lvl, int32_t *parent, double *flux, int32_t *area, uint32_t *top,
             int32_t *nsig, int32_t *good, int32_t *owner, const TreeWords &tw, bool cores)
{
  __shared__ TreeShared ts;
  int32_t *bits = tw.bits;
  const int nlevels = lp.nthresh - 1;
  const int tid = threadIdx.x;

  if (nlevels < 1 || nlevels > kTreeLevels || p > kTreePixels)
    return 0;
  if (tid < nlevels)
    ts.t[tid] = level_at (lp.flood_sigma, peak, lp.nthresh, tid);
  if (tid == 0)
    {
      ts.nsig = 0;
      ts.good = 0;
      ts.nodes = 0;
      ts.cores = 0;
    }
  __syncthreads ();
  for (int l = 1; l < nlevels; l++)
    if (!(ts.t[l] > ts.t[l - 1]))
      return 0;
  for (int64_t j = tid; j < p; j += kBlock)
    {
      int c = 0;
      while (c < nlevels && (double) val[j] > ts.t[c])
        c++;
      lvl[j] = c;   /* above levels 0 .. c - 1 */
      parent[j] = (int32_t) j;
      flux[j] = 0;
      area[j] = 0;
      top[j] = 0;
      nsig[j] = 0;
      good[j] = 0;
      bits[j] = 0;
      tw.leaf[j] = -1;
    }
  __syncthreads ();
  for (int l = nlevels - 1; l >= 0; l--)
    {
      int32_t *id_now = l & 1 ? tw.id_odd : tw.id_even, *id_up = l & 1 ? tw.id_even : tw.id_odd;
      if (tid == 0)
        ts.start[l] = ts.nodes;
      /* The edges that appear at this level: both ends above it, one
       * not above the level before. */
      for (int64_t j = tid; j < p; j += kBlock)
        {
          const int32_t lj = lvl[j];
          if (lj <= l)
            continue;
          for (int d = 0; d < nn; d++)
            {
              const int32_t q = nb[j * nn + d];
              if (q < 0 || q >= j)
                continue;
              const int32_t lq = lvl[q];
              if (lq > l && (lj < lq ? lj : lq) == l + 1)
                uf_union (parent, (int32_t) j, q);
            }
        }
      __syncthreads ();
      for (int64_t j = tid; j < p; j += kBlock)
        if (lvl[j] > l)
          {
            const int32_t r = uf_find (parent, (int32_t) j);
            atomicMin (parent + j, r);   /* others still read it */
            if (r == j)
              {
                nsig[j] = 0;
                good[j] = 0;
                const int32_t id = atomicAdd (&ts.nodes, 1);
                id_now[j] = id;
                if (id < tw.cap)
                  {
                    tw.down[id] = -1;
                    tw.root[id] = (int32_t) j;
                  }
              }
          }
      __syncthreads ();
      const bool room = ts.nodes <= tw.cap;
      /* New pixels into their components; the roots of the level above
       * into theirs, as children (and, merged, with their sums). */
      for (int64_t j = tid; j < p; j += kBlock)
        {
          if (lvl[j] <= l)
            continue;
          const int32_t r = parent[j];
          if (lvl[j] == l + 1)
            {
              tw.leaf[j] = id_now[r];
              atomicAdd (flux + r, (double) val[j]);
              atomicAdd (area + r, 1);
              atomicMax (top + r, order_key (val[j]));
              continue;
            }
          const int32_t b = bits[j];
          if (!(b & 4))
            continue;
          if (room)
            tw.down[id_up[j]] = id_now[r];
          if (b & 1)
            {
              atomicAdd (nsig + r, 1);
              if (b & 2)
                atomicOr (good + r, 1);
            }
          if (r != j)
            {
              atomicAdd (flux + r, vload (flux + j));
              atomicAdd (area + r, vload (area + j));
              atomicMax (top + r, vload (top + j));
            }
        }
      __syncthreads ();
      /* This level's nodes: significant as the climb tests it, good. */
      const double t = ts.t[l];
      int unsure = 0;
      for (int64_t j = tid; j < p; j += kBlock)
        {
          if (lvl[j] <= l)
            continue;
          if (parent[j] != j)
            {
              bits[j] = 0;
              continue;
            }
          const double a = flux[j];
          bool sig = area[j] >= lp.min_area && (double) key_float (top[j]) - t >= lp.prominence;
          if (sig)
            {
              const double e = 0x1p-50 * (double) area[j] * a + slack;
              if (!(a > floor_flux + e))
                {
                  sig = false;
                  unsure |= !(a < floor_flux - e);
                }
            }
          const bool gd = nsig[j] >= 2 || good[j] != 0;
          bits[j] = (sig ? 1 : 0) | (gd ? 2 : 0) | 4;
          if (room)
            tw.info[id_now[j]] = (sig ? 1 : 0) | (nsig[j] > 0 ? 2 : 0);
        }
      if (__syncthreads_or (unsure))
        return 0;
    }
  /* The island: its children are the components above level 0. */
  for (int64_t j = tid; j < p; j += kBlock)
    {
      const int32_t b = bits[j];
      if ((b & 5) == 5)
        {
          atomicAdd (&ts.nsig, 1);
          if (b & 2)
            atomicOr (&ts.good, 1);
        }
    }
  __syncthreads ();
  const int split = ts.nsig >= 2 || ts.good != 0;
  const int32_t nodes = ts.nodes;
  if (!split)
    return 1;
  if (!cores || nodes > tw.cap)
    return 0;
  /* Alive and core, from the island up, a level at a time. */
  for (int l = 0; l < nlevels; l++)
    {
      const int32_t end = l > 0 ? ts.start[l - 1] : nodes;
      for (int32_t id = ts.start[l] + tid; id < end; id += kBlock)
        {
          const int32_t info = tw.info[id], down = tw.down[id];
          const bool alive = (info & 1) && (down < 0 || (tw.info[down] & 4));
          tw.info[id] = info | (alive ? 4 : 0) | (alive && !(info & 2) ? 8 : 0);
          if (alive && !(info & 2))
            atomicAdd (&ts.cores, 1);
        }
      __syncthreads ();
    }
  for (int64_t j = tid; j < p; j += kBlock)
    {
      int32_t id = tw.leaf[j];
      while (id >= 0 && !(tw.info[id] & 8))
        id = tw.down[id];
      owner[j] = id >= 0 ? tw.root[id] + 1 : 0;
    }
  __syncthreads ();
  return ts.cores;
}
