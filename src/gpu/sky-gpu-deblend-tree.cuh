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
 * One union-find serves every level: going down a
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
 * holds (tree_nodes).
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
  int32_t nsig, nodes, cores;
};

/* The most nodes an island's tree holds. A node is a set of the island's
 * pixels above its level, disjoint from the level's other nodes, so a
 * level has at most p; a node starts at a new pixel, or goes on from the
 * level above until it merges, so a large island's tree is mostly fewer
 * than 2 p nodes (more: the climb decides). A small island's few nodes go
 * down every level, though (17 pixels and 31 levels: 31 nodes or more),
 * so it gets p a level where that is no more than kSmallTreeNodes. */
constexpr int64_t kSmallTreeNodes = 1024;

__host__ __device__ __forceinline__ int64_t
tree_nodes (int64_t p, int nthresh)
{
  const int64_t every = p * (nthresh > 1 ? nthresh - 1 : 1);
  const int64_t small = every < kSmallTreeNodes ? every : kSmallTreeNodes;
  return 2 * p > small ? 2 * p : small;
}

/* The tree's own words in the island's scratch (tree_words of them): per
 * pixel its leaf node (the node of the highest level it lies above), its
 * node id where it is a root at the level just done, and the pixels in
 * order of that level; per node (tree_nodes of them) the node below, its
 * root pixel, its flags and level, area, top, significant children, and
 * its flux (8-byte aligned). */
struct TreeWords {
  int32_t *leaf, *id_of, *order;
  int32_t *down, *root, *info, *area, *nsig;
  uint32_t *top;
  double *flux;
  int64_t cap;
};

__host__ __device__ __forceinline__ int64_t
tree_words (int64_t p, int nthresh)
{
  return 3 * p + 8 * tree_nodes (p, nthresh) + 2;
}

__device__ __forceinline__ TreeWords
tree_words_at (int32_t *w, int64_t p, int nthresh)
{
  const int64_t cap = tree_nodes (p, nthresh);
  int32_t *node = w + 3 * p;
  /* flux after the six word arrays, on an 8-byte boundary */
  const uintptr_t f = reinterpret_cast<uintptr_t> (node + 6 * cap);
  double *flux = reinterpret_cast<double *> ((f + 7) & ~(uintptr_t) 7);
  return TreeWords { w,        w + p,    w + 2 * p, node, node + cap, node + 2 * cap,
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
  return find_halving (parent, x, [] (int32_t *link, int32_t from, int32_t to) {
    atomicCAS (link, from, to);
  });
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

/* A warp's lanes that add into the same node add up first (by the lowest
 * of them): a level's new pixels mostly join one node, whose words would
 * otherwise take every lane's atomic in turn. valid: the lane has an item
 * (every lane of the warp calls). */
__device__ __forceinline__ void
node_add (const TreeWords &tw, bool valid, int32_t id, double flux, int32_t area, uint32_t top)
{
  const unsigned same = __match_any_sync (0xffffffffu, valid ? id : -1);
  const int lane = threadIdx.x & 31;
  double f = 0;
  int32_t a = 0;
  uint32_t t = 0;
  for (int k = 0; k < 32; k++)
    {
      const double fk = __shfl_sync (0xffffffffu, flux, k);
      const int32_t ak = __shfl_sync (0xffffffffu, area, k);
      const uint32_t tk = __shfl_sync (0xffffffffu, top, k);
      if ((same >> k) & 1u)
        {
          f += fk;
          a += ak;
          t = tk > t ? tk : t;
        }
    }
  if (valid && lane == __ffs (same) - 1)
    {
      atomicAdd (tw.flux + id, f);
      atomicAdd (tw.area + id, a);
      atomicMax (tw.top + id, t);
    }
}

/* 0: unknown (the climb decides); 1: the island does not split; more:
 * it splits into that many cores (with cores set), owner[j] then the
 * core's name (a pixel of it) + 1 (0: left for the watershed). parent is the
 * caller's union-find (shared memory where p <= room, the work words at
 * the start of smem); each pixel's level and root node id go to shared
 * memory too where 3 p words fit, else to lvl_words (the caller's frame
 * words, set again afterwards) and the tree's words; the pixels' order by
 * level and their leaf words where 5 p fit, else the tree's. Every thread of the
 * block calls it and gets the same answer. */
__device__ int32_t
tree_decide (const float *val, const int32_t *nb, int nn, int64_t p,
             const SkyGpuDetectParams &lp, double peak, double floor_flux, double slack,
             int32_t *lvl_words, int32_t *parent, int32_t *smem, int64_t room,
             int32_t *owner, const TreeWords &tw, bool cores, long long *phase)
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
  /* The pixels' order by level and their leaf words too where 5 p words
   * fit: each level's loops start from them, and a level's time is the
   * latency of its chain of reads (most of an island's time is levels). */
  const bool nearer = 5 * p <= room;
  int32_t *const order = nearer ? smem + 3 * p : tw.order;
  int32_t *const leaf = nearer ? smem + 4 * p : tw.leaf;

  if (nlevels < 1 || nlevels > kTreeLevels || p > kTreePixels)
    return 0;
  if (tid < nlevels)
    ts.t[tid] = level_at (lp.deblend.flood, peak, lp.deblend.nthresh, tid);
  if (tid < nlevels + 2)
    ts.bucket[tid] = 0;
  if (tid == 0)
    {
      ts.nsig = 0;
      ts.nodes = 0;
      ts.cores = 0;
    }
  __syncthreads ();
  for (int l = 1; l < nlevels; l++)
    if (!(ts.t[l] > ts.t[l - 1]))
      return 0;
  /* Each pixel's level (it lies above levels 0 .. c - 1), then the
   * pixels bucketed by it: bucket c holds those new at level c - 1. */
  for (int64_t j = tid; j < p; j += block_threads ())
    {
      int c = 0;
      while (c < nlevels && (double) val[j] > ts.t[c])
        c++;
      lvl[j] = c;
      parent[j] = (int32_t) j;
      leaf[j] = -1;
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
  for (int64_t j = tid; j < p; j += block_threads ())
    {
      const int c = lvl[j];
      if (c > 0)
        order[atomicAdd (&ts.cursor[c], 1)] = (int32_t) j;
    }
  __syncthreads ();
  phase_done (kPhaseInit);
  for (int l = nlevels - 1; l >= -1; l--)
    {
      /* The sums of the level above (l + 1), whose nodes the last find
       * named: its new pixels into their nodes, the nodes of the level
       * above it into theirs, as children; spread from the block's last
       * warp down, beside this level's unions from the first up (each
       * warp's lanes all in or all out of a round, for node_add). */
      if (l + 1 < nlevels)
        {
          const int u = l + 1;
          const int32_t new_lo = ts.bucket[u + 1], m = ts.bucket[u + 2] - new_lo;
          const int32_t old_lo = u + 1 < nlevels ? ts.start[u + 1] : 0;
          const int32_t items = m + (ts.start[u] - old_lo);
          for (int32_t i0 = block_threads () - 32 - (tid & ~31); i0 < items;
               i0 += block_threads ())
            {
              const int32_t i = i0 + (tid & 31);
              int32_t id = -1, area = 0;
              double flux = 0;
              uint32_t top = 0;
              if (i < m)
                {
                  const int32_t j = order[new_lo + i];
                  id = id_of[leaf[j]];
                  leaf[j] = id;
                  flux = (double) val[j];
                  area = 1;
                  top = order_key (val[j]);
                }
              else if (i < items)
                {
                  const int32_t o = old_lo + i - m;
                  id = id_of[tw.down[o]];
                  tw.down[o] = id;
                  flux = tw.flux[o];
                  area = tw.area[o];
                  top = tw.top[o];
                }
              node_add (tw, i < items, id, flux, area, top);
            }
        }
      if (l < 0)
        break;
      const int32_t new_lo = ts.bucket[l + 1], m = ts.bucket[l + 2] - new_lo;
      const int32_t first = ts.nodes;   /* this level's nodes are numbered from here */
      const int32_t old_lo = l + 1 < nlevels ? ts.start[l + 1] : first;
      const int32_t items = m + (first - old_lo);
      /* The edges that appear at this level: a new pixel's to its
       * neighbours above it (to a new one, once); a thread an edge, so that
       * a level's latency is one union, not a pixel's nn one after another.
       * Direction-major: a warp's lanes take 32 pixels' edges of one
       * direction, not four pixels' eight, whose unions would all link the
       * same pixel and retry on its word (2048^2's largest island: unions
       * 243 -> 225 kcycles). */
      for (int32_t e = tid; e < m * nn; e += block_threads ())
        {
          const int32_t j = order[new_lo + e % m], q = nb[(int64_t) j * nn + e / m];
          if (q < 0)
            continue;
          const int32_t lj = lvl[j], lq = lvl[q];
          if (lq > lj || (lq == lj && q < j))
            tree_union (parent, lvl, j, q);
        }
      if (tid == 0)
        ts.start[l] = first;
      __syncthreads ();
      phase_done (kPhaseUnion);
      /* This level's nodes: the roots among the new pixels and the roots
       * of the level above (every root is one or the other). Each new
       * pixel keeps its root in its leaf word, each node of the level
       * above its node's root in its down word, until the sums above name
       * them (id_of holds this level's names until the next find). */
      for (int32_t i = tid; i < items; i += block_threads ())
        {
          const int32_t x = i < m ? order[new_lo + i] : tw.root[old_lo + i - m];
          const int32_t r = tree_find (parent, x);
          atomicExch (parent + x, r);   /* others still read it */
          if (i < m)
            leaf[x] = r;
          else
            tw.down[old_lo + i - m] = r;
          if (r == x)
            {
              const int32_t id = atomicAdd (&ts.nodes, 1);
              id_of[x] = id;
              if (id < tw.cap)
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
      __syncthreads ();
      phase_done (kPhaseFind);
      if (ts.nodes > tw.cap)
        return 0;
    }
  __syncthreads ();
  phase_done (kPhaseSums);
  /* Every node: significant as the climb tests it at its level, counted
   * as a significant child of the node below (of the island, at level 0). */
  const int32_t nodes = ts.nodes;
  int unsure = 0;
  for (int32_t id = tid; id < nodes; id += block_threads ())
    {
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
  for (int32_t id = tid; id < nodes && !good; id += block_threads ())
    if (tw.nsig[id] >= 2)
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
  for (int32_t id = tid; id < nodes; id += block_threads ())
    {
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
  for (int64_t j = tid; j < p; j += block_threads ())
    {
      int32_t id = leaf[j];
      while (id >= 0 && tw.nsig[id] >= 0)
        id = tw.down[id];
      owner[j] = id >= 0 ? tw.root[id] + 1 : 0;
    }
  __syncthreads ();
  return ts.cores;
}
