/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-gpu-deblend-tree.cuh: the tree of an island's components over the
 * levels, built in one pass from the top level down, and the CPU's
 * decisions read off it (sky-gpu-deblend.cu's island kernel asks it before
 * anything climbs the levels one union-find each). Included by
 * sky-gpu-deblend.cu only, inside its anonymous namespace, after
 * sky-gpu-deblend-block.cuh.
 *
 * The CPU's frames, read on the tree: a frame is a node (a component of
 * the island above a level, the island itself at the start); its children
 * are its components above the next level; it is a core when none of them
 * is significant, and otherwise each significant child is a frame (the
 * CPU's nsig == 1 and nsig > 1 cases alike). The cores are therefore the
 * nodes reached from the island through significant nodes that have no
 * significant child, and there are two or more exactly when some node so
 * reached has two significant children. (Bottom up, the CPU's recursion:
 * a node is good when it has two significant children or a significant
 * good child; the island splits exactly when it is good, that is when it
 * or an alive node, below, has two significant children.)
 *
 * One union-find (a group's: below) serves every level: going down a
 * level adds the pixels that lie above it but not above the level before
 * and the edges they bring, so components only merge. The pixels are
 * bucketed by the highest level they lie above (a counting sort), so a
 * level visits only its new pixels and the nodes of the level above: each
 * pixel and each node is visited once over the whole tree, not once a
 * level. A node's flux, area and top are its children's plus its new
 * pixels'; nodes are numbered as they appear (the top level's first), and
 * their words are indexed by that number. A level costs two block
 * barriers, not four: its unions run beside the sums of the level above
 * (which need only that level's names, kept until the next find), and
 * whether each node is significant, and what follows from it, is decided
 * for every node at once after the last level (each node's significance
 * rests on its own sums and level alone; whether it is alive, on the
 * nodes below it, read along its way down). Flux sums come in another order
 * than the CPU's: a node within the climb's rounding margin of mincont
 * makes the answer unknown, and so do levels that do not rise (the tree
 * needs nested sets), and so does a tree of more nodes than the scratch
 * holds (2 p).
 *
 * The cores: a node is alive when it and every node below it on the way to
 * the island is significant, a core when alive with no significant child;
 * a pixel belongs to the first core on its way down from the node of the
 * highest level it lies above. A core is named by a pixel of its own (its
 * node's root: the climb names its frames by their least pixels, but only
 * which pixels share a name reaches the watershed and the parts, which are
 * numbered by their first pixels), and the watershed follows as after the
 * climb. */

constexpr int kTreeLevels = 64;   /* more levels: the climb decides alone */
/* Larger islands too: then the node count (at most the levels times the
 * pixels) and the node ids fit in 32 bits. */
constexpr int64_t kTreePixels = (int64_t) 1 << 24;

/* TreeWords.info: a node's level, and whether it is significant. */
enum { kNodeSig = 1, kNodeLevelShift = 8 };

struct TreeShared {
  double t[kTreeLevels];
  int32_t start[kTreeLevels];           /* the first node of each level */
  int32_t bucket[kTreeLevels + 2];      /* bucket c: order[bucket[c] .. bucket[c + 1]) */
  int32_t cursor[kTreeLevels + 2];
  int32_t count[2];                     /* each group's nodes */
  int32_t nsig, cores, fail;
};

/* The tree's own words in the island's scratch (tree_words of them): per
 * pixel its leaf node (the node of the highest level it lies above), its
 * node id where it is a root at the level just done, the pixels in order
 * of that level, its node at the lower group's top level (link), and the
 * upper group's parent and node id (where shared memory is short); per node (2 p at most) the node below, its root
 * pixel, its flags and level, area, top, significant children, and its
 * flux (8-byte aligned). */
struct TreeWords {
  int32_t *leaf, *id_of, *order, *link, *parent2, *id_of2;
  int32_t *down, *root, *info, *area, *nsig;
  uint32_t *top;
  double *flux;
  int64_t cap;
};

__host__ __device__ __forceinline__ int64_t
tree_words (int64_t p)
{
  return 6 * p + 8 * (2 * p) + 2;
}

__device__ __forceinline__ TreeWords
tree_words_at (int32_t *w, int64_t p)
{
  const int64_t cap = 2 * p;
  int32_t *node = w + 6 * p;
  /* flux after the six word arrays, on an 8-byte boundary */
  const uintptr_t f = reinterpret_cast<uintptr_t> (node + 6 * cap);
  double *flux = reinterpret_cast<double *> ((f + 7) & ~(uintptr_t) 7);
  return TreeWords { w,         w + p,     w + 2 * p, w + 3 * p, w + 4 * p, w + 5 * p,
                     node,      node + cap, node + 2 * cap,
                     node + 3 * cap, node + 4 * cap,
                     reinterpret_cast<uint32_t *> (node + 5 * cap), flux, cap };
}

/* The tree's union-find: a set's root is its pixel of the highest level,
 * the least of those (not its least pixel: a level's new pixels then link
 * under the roots above them, each its own word, instead of moving every
 * root to the new least pixel, all at one word, and paths stay short).
 * Links only ever point to a higher root, so a path halved by a
 * compare-and-swap stays a path to the same root. */
__device__ __forceinline__ bool
tree_above (const int32_t *lvl, int32_t a, int32_t b)
{
  const int32_t la = lvl[a], lb = lvl[b];
  return la > lb || (la == lb && a < b);
}

__device__ int32_t
tree_find (int32_t *parent, int32_t x)
{
  for (;;)
    {
      const int32_t up = vload (parent + x);
      if (up == x)
        return x;
      const int32_t upup = vload (parent + up);
      if (upup != up)
        atomicCAS (parent + x, up, upup);
      x = upup;
    }
}

__device__ void
tree_union (int32_t *parent, const int32_t *lvl, int32_t a, int32_t b)
{
  for (;;)
    {
      a = tree_find (parent, a);
      b = tree_find (parent, b);
      if (a == b)
        return;
      if (tree_above (lvl, a, b))
        {
          const int32_t t = a;
          a = b;
          b = t;
        }
      /* a, the lower root, under b, while a is still a root */
      if (atomicCAS (parent + a, a, b) == a)
        return;
    }
}

/* The levels [lo, top) of the tree, built from top - 1 down by a group of
 * the block's threads (gt of gs, ended by barrier bar: 0 the block's own)
 * with its own union-find and node ids (id0 .. id0 + cap). bulk: the
 * levels above top are another group's, so that top - 1 starts from no
 * nodes: all its pixels are new there (the edges among them too), and
 * those of the higher levels keep their node at top - 1 in link (their
 * leaf is the other group's), which joins the trees afterwards. */
struct TreeGroup {
  int32_t *parent, *id_of;
  int top, lo;
  bool bulk;
  int32_t id0, cap;
  int gt, gs, bar;
};

__device__ __forceinline__ void
group_sync (const TreeGroup &g)
{
  if (g.bar == 0)
    __syncthreads ();
  else
    asm volatile ("bar.sync %0, %1;" : : "r"(g.bar), "r"(g.gs) : "memory");
}

/* The group's new pixels at level l: order[*lo .. *lo + return). */
__device__ __forceinline__ int32_t
group_new (const TreeGroup &g, const TreeShared &ts, int nlevels, int l, int32_t *lo)
{
  *lo = ts.bucket[l + 1];
  return (g.bulk && l == g.top - 1 ? ts.bucket[nlevels + 1] : ts.bucket[l + 2]) - *lo;
}

/* false: more nodes than the group's share of the scratch (the same for
 * each thread of the group). */
template <typename PhaseDone>
__device__ bool
tree_levels (const TreeGroup &g, const float *val, const int32_t *nb, int nn, int nlevels,
             const int32_t *lvl, const TreeWords &tw, TreeShared &ts, int32_t *count,
             const PhaseDone &phase_done)
{
  for (int l = g.top - 1; l >= g.lo - 1; l--)
    {
      /* The sums of the level above (l + 1), whose nodes the last find
       * named: its new pixels into their nodes, the nodes of the level
       * above it into theirs, as children; spread from the group's last
       * thread down, beside this level's unions from the first up. */
      if (l + 1 < g.top)
        {
          const int u = l + 1;
          int32_t new_lo;
          const int32_t m = group_new (g, ts, nlevels, u, &new_lo);
          const int32_t old_lo = u + 1 < g.top ? ts.start[u + 1] : ts.start[u];
          const int32_t items = m + (ts.start[u] - old_lo);
          for (int32_t i = g.gs - 1 - g.gt; i < items; i += g.gs)
            {
              if (i < m)
                {
                  const int32_t j = tw.order[new_lo + i];
                  int32_t *at = lvl[j] == u + 1 ? tw.leaf + j : tw.link + j;
                  const int32_t id = g.id_of[*at];
                  *at = id;
                  atomicAdd (tw.flux + id, (double) val[j]);
                  atomicAdd (tw.area + id, 1);
                  atomicMax (tw.top + id, order_key (val[j]));
                  continue;
                }
              const int32_t o = old_lo + i - m, id = g.id_of[tw.down[o]];
              tw.down[o] = id;
              atomicAdd (tw.flux + id, tw.flux[o]);
              atomicAdd (tw.area + id, tw.area[o]);
              atomicMax (tw.top + id, tw.top[o]);
            }
        }
      if (l < g.lo)
        break;
      int32_t new_lo;
      const int32_t m = group_new (g, ts, nlevels, l, &new_lo);
      const int32_t first = g.id0 + *count;   /* this level's nodes are numbered from here */
      const int32_t old_lo = l + 1 < g.top ? ts.start[l + 1] : first;
      const int32_t items = m + (first - old_lo);
      /* The edges that appear at this level: a new pixel's to its
       * neighbours above it (to a new one, once); a thread an edge, so that
       * a level's latency is one union, not a pixel's nn one after another. */
      for (int32_t e = g.gt; e < m * nn; e += g.gs)
        {
          const int32_t j = tw.order[new_lo + e / nn], q = nb[(int64_t) j * nn + e % nn];
          if (q < 0)
            continue;
          const int32_t lj = lvl[j], lq = lvl[q];
          if (lq > lj || (lq == lj && q < j))
            tree_union (g.parent, lvl, j, q);
        }
      if (g.gt == 0)
        ts.start[l] = first;
      group_sync (g);
      phase_done (kPhaseUnion);
      /* This level's nodes: the roots among the new pixels and the roots
       * of the level above (every root is one or the other). Each new
       * pixel keeps its root in its leaf (or link) word, each node of the
       * level above its node's root in its down word, until the sums above
       * name them (id_of holds this level's names until the next find). */
      for (int32_t i = g.gt; i < items; i += g.gs)
        {
          const int32_t x = i < m ? tw.order[new_lo + i] : tw.root[old_lo + i - m];
          const int32_t r = tree_find (g.parent, x);
          atomicExch (g.parent + x, r);   /* others still read it */
          if (i >= m)
            tw.down[old_lo + i - m] = r;
          else if (lvl[x] == l + 1)
            tw.leaf[x] = r;
          else
            tw.link[x] = r;
          if (r == x)
            {
              const int32_t id = g.id0 + atomicAdd (count, 1);
              g.id_of[x] = id;
              if (id < g.id0 + g.cap)
                {
                  tw.down[id] = -1;
                  tw.root[id] = x;
                  tw.info[id] = l << kNodeLevelShift;
                  tw.area[id] = 0;
                  tw.top[id] = 0;
                  tw.nsig[id] = 0;
                  tw.flux[id] = 0;
                }
            }
        }
      group_sync (g);
      phase_done (kPhaseFind);
      if (*count > g.cap)
        return false;
    }
  return true;
}

/* 0: unknown (the climb decides); 1: the island does not split; more:
 * it splits into that many cores (with cores set), owner[j] then the
 * core's name (a pixel of it) + 1 (0: left for the watershed). parent is the
 * caller's union-find (shared memory where p <= room, the work words at
 * the start of smem); each pixel's level and root node id go to shared
 * memory too where 3 p words fit, else to lvl_words (the caller's frame
 * words, set again afterwards) and the tree's words. Every thread of the
 * block calls it and gets the same answer. */
__device__ int32_t
tree_decide (const float *val, const int32_t *nb, int nn, int64_t p,
             const SkyGpuDetectParams &lp, double peak, double floor_flux, double slack,
             int32_t *lvl_words, int32_t *parent, int32_t *smem, int64_t room,
             int32_t *owner, const TreeWords &tw, bool cores, int groups, long long *phase)
{
  __shared__ TreeShared ts;
  /* the first thread's clock where each phase of a level ends, summed over
   * the levels into phase[] (SKYSIFT_GPU_DEBLEND_PROFILE) */
  long long clock_at = clock64 ();
  const auto phase_done = [&] (int which) {
    if (threadIdx.x == 0)
      {
        const long long now = clock64 ();
        phase[which] += now - clock_at;
        clock_at = now;
      }
  };
  const int nlevels = lp.deblend.nthresh - 1;
  const int tid = threadIdx.x;
  const bool near = 3 * p <= room;
  int32_t *lvl = near ? smem + 2 * p : lvl_words;
  int32_t *id_of = near ? smem + p : tw.id_of;
  const bool near2 = 5 * p <= room;
  int32_t *parent2 = near2 ? smem + 3 * p : tw.parent2, *id_of2 = near2 ? smem + 4 * p : tw.id_of2;
  if (nlevels < 2)
    groups = 1;

  if (nlevels < 1 || nlevels > kTreeLevels || p > kTreePixels)
    return 0;
  if (tid < nlevels)
    ts.t[tid] = level_at (lp.deblend.flood, peak, lp.deblend.nthresh, tid);
  if (tid < nlevels + 2)
    ts.bucket[tid] = 0;
  if (tid == 0)
    {
      ts.nsig = 0;
      ts.count[0] = 0;
      ts.count[1] = 0;
      ts.fail = 0;
      ts.cores = 0;
    }
  __syncthreads ();
  for (int l = 1; l < nlevels; l++)
    if (!(ts.t[l] > ts.t[l - 1]))
      return 0;
  /* Each pixel's level (it lies above levels 0 .. c - 1), then the
   * pixels bucketed by it: bucket c holds those new at level c - 1. */
  for (int64_t j = tid; j < p; j += kBlock)
    {
      int c = 0;
      while (c < nlevels && (double) val[j] > ts.t[c])
        c++;
      lvl[j] = c;
      parent[j] = (int32_t) j;
      if (groups > 1)
        parent2[j] = (int32_t) j;
      tw.leaf[j] = -1;
      if (c > 0)
        atomicAdd (&ts.bucket[c], 1);
    }
  __syncthreads ();
  if (tid == 0)
    {
      int32_t run = 0;
      for (int c = 1; c <= nlevels; c++)
        {
          const int32_t count = ts.bucket[c];
          ts.bucket[c] = run;
          ts.cursor[c] = run;
          run += count;
        }
      ts.bucket[nlevels + 1] = run;
    }
  __syncthreads ();
  for (int64_t j = tid; j < p; j += kBlock)
    {
      const int c = lvl[j];
      if (c > 0)
        tw.order[atomicAdd (&ts.cursor[c], 1)] = (int32_t) j;
    }
  __syncthreads ();
  phase_done (kPhaseInit);
  {
    /* One group, or two of half the block each: the upper levels' and the
     * lower ones', at once (the lower from all the pixels above its top). */
    const int upper = groups > 1 && tid >= kBlock / 2;
    const int split_at = groups > 1 ? nlevels / 2 : 0;
    TreeGroup g;
    if (groups > 1)
      {
        const int32_t upper_cap = (int32_t) (tw.cap / 2);
        g = upper ? TreeGroup { parent2, id_of2, nlevels, split_at, false, 0, upper_cap,
                                tid - kBlock / 2, kBlock / 2, 2 }
                  : TreeGroup { parent, id_of, split_at, 0, true, upper_cap,
                                (int32_t) tw.cap - upper_cap, tid, kBlock / 2, 1 };
      }
    else
      g = TreeGroup { parent, id_of, nlevels, 0, false, 0, (int32_t) tw.cap, tid, kBlock, 0 };
    if (!tree_levels (g, val, nb, nn, nlevels, lvl, tw, ts, &ts.count[upper], phase_done)
        && g.gt == 0)
      ts.fail = 1;
    __syncthreads ();
    if (ts.fail)
      return 0;
    /* The upper group's lowest nodes onto the lower group's top ones. */
    if (groups > 1)
      {
        const int32_t hi = ts.count[1];
        for (int32_t id = ts.start[split_at] + tid; id < hi; id += kBlock)
          tw.down[id] = tw.link[tw.root[id]];
      }
  }
  __syncthreads ();
  phase_done (kPhaseSums);
  /* Every node: significant as the climb tests it at its level, counted
   * as a significant child of the node below (of the island, at level 0). */
  /* the nodes: the upper group's ids 0 .. count[1], then the lower
   * group's from lower_from (0 for one group) */
  const int32_t upper_nodes = ts.count[1], nodes = upper_nodes + ts.count[0];
  const int32_t lower_from = groups > 1 ? (int32_t) (tw.cap / 2) : 0;
  const auto node_at = [&] (int32_t i) { return i < upper_nodes ? i : lower_from + i - upper_nodes; };
  int unsure = 0;
  for (int32_t i = tid; i < nodes; i += kBlock)
    {
      const int32_t id = node_at (i);
      const double a = tw.flux[id], t = ts.t[tw.info[id] >> kNodeLevelShift];
      const int32_t area = tw.area[id];
      bool sig = area >= lp.deblend.min_area
                 && (double) key_float (tw.top[id]) - t >= lp.deblend.prominence;
      if (sig)
        {
          const double e = 0x1p-50 * (double) area * a + slack;
          if (!(a > floor_flux + e))
            {
              sig = false;
              unsure |= !(a < floor_flux - e);
            }
        }
      if (sig)
        {
          tw.info[id] |= kNodeSig;
          const int32_t down = tw.down[id];
          atomicAdd (down >= 0 ? tw.nsig + down : &ts.nsig, 1);
        }
    }
  if (__syncthreads_or (unsure))
    return 0;
  /* The island splits exactly when it, or a node reached from it through
   * significant nodes (alive), has two significant children: the bottom-up
   * "good" of the CPU's frames, read along each node's way down. */
  int good = 0;
  for (int32_t i = tid; i < nodes && !good; i += kBlock)
    if (const int32_t id = node_at (i); tw.nsig[id] >= 2)
      {
        int32_t x = id;
        while (x >= 0 && (tw.info[x] & kNodeSig))
          x = tw.down[x];
        good = x < 0;
      }
  const int split = __syncthreads_or (good) || ts.nsig >= 2;
  phase_done (kPhaseDecide);
  if (!split)
    return 1;
  if (!cores)
    return 0;
  /* The cores: alive with no significant child; marked by a significant
   * child count of -1 (while others read the flags of the nodes below). */
  for (int32_t i = tid; i < nodes; i += kBlock)
    {
      const int32_t id = node_at (i);
      int32_t x = id;
      while (x >= 0 && (tw.info[x] & kNodeSig))
        x = tw.down[x];
      if (x < 0 && tw.nsig[id] == 0)
        {
          tw.nsig[id] = -1;
          atomicAdd (&ts.cores, 1);
        }
    }
  __syncthreads ();
  for (int64_t j = tid; j < p; j += kBlock)
    {
      int32_t id = tw.leaf[j];
      while (id >= 0 && tw.nsig[id] >= 0)
        id = tw.down[id];
      owner[j] = id >= 0 ? tw.root[id] + 1 : 0;
    }
  __syncthreads ();
  return ts.cores;
}
