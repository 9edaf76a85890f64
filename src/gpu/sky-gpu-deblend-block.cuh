/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-gpu-deblend-block.cuh: what a block deblending one island works with
 * (sky-gpu-deblend.cu): floats as ordered keys for atomicMax, a union-find
 * whose roots are the least pixels of their sets, and the block's sums and
 * ranks. Included by sky-gpu-deblend.cu only, inside its anonymous
 * namespace, after kBlock. */

/* The threads of the block deblending an island: kBlock for the large
 * islands, fewer for the small ones (one kernel, launched twice). */
__device__ __forceinline__ int
block_threads ()
{
  return (int) blockDim.x;
}

/* A float's bits as an unsigned key in the floats' order. */
__device__ __forceinline__ uint32_t
order_key (float v)
{
  const uint32_t b = __float_as_uint (v);
  return (b & 0x80000000u) ? ~b : b | 0x80000000u;
}

__device__ __forceinline__ float
key_float (uint32_t key)
{
  return __uint_as_float ((key & 0x80000000u) ? key & 0x7fffffffu : ~key);
}

template <typename T>
__device__ __forceinline__ T
vload (const T *p)
{
  return *(const volatile T *) p;
}

/* The root of x's tree, halving the path on the way: where x's parent is
 * not a root, halve (x's word, its parent, its grandparent) points x past
 * its parent, each union-find in the way that keeps its links' order. */
template <typename Halve>
__device__ __forceinline__ int32_t
find_halving (int32_t *parent, int32_t x, Halve halve)
{
  for (;;)
    {
      const int32_t up = vload (parent + x);
      if (up == x)
        return x;
      const int32_t upup = vload (parent + up);
      if (upup != up)
        halve (parent + x, up, upup);
      x = upup;
    }
}

/* Union-find over the island's pixels, each tree's root its least pixel.
 * Links only ever point lower, so halving a path with atomicMin never
 * undoes another thread's link. */
__device__ int32_t
uf_find (int32_t *parent, int32_t x)
{
  return find_halving (parent, x, [] (int32_t *link, int32_t, int32_t to) { atomicMin (link, to); });
}

__device__ void
uf_union (int32_t *parent, int32_t a, int32_t b)
{
  bool done;
  do
    {
      a = uf_find (parent, a);
      b = uf_find (parent, b);
      if (a < b)
        {
          const int32_t old = atomicMin (parent + b, a);
          done = old == b;
          b = old;
        }
      else if (b < a)
        {
          const int32_t old = atomicMin (parent + a, b);
          done = old == a;
          a = old;
        }
      else
        done = true;
    }
  while (!done);
}

enum { kMarkStart, kMarkGathered, kMarkTree, kMarkClimbed, kMarkLevels, kMarkCores, kMarks };
/* the component tree's phases, summed over its levels */
enum { kPhaseInit, kPhaseUnion, kPhaseFind, kPhaseSums, kPhaseDecide, kPhases };

__device__ __forceinline__ void
mark (long long *marks, int which)
{
  if (threadIdx.x == 0)
    marks[which] = clock64 ();
}

struct BlockShared {   /* for up to kBlock threads */
  double sum[kBlock / 32];
  int32_t rank[kBlock / 32 + 1];
  int32_t count, cores, frames;
  int32_t front[2];   /* the watershed's fronts' lengths */
  /* SKYSIFT_GPU_DEBLEND_PROFILE: the first thread's clock where each phase
   * of an island ends (0: not reached), the watershed's steps, the tree's
   * answer */
  long long mark[kMarks], phase[kPhases];
  int32_t steps[2], tree;
};

/* Puts a pixel on the watershed's next front. */
struct FrontPush {
  int32_t *to, *length;

  __device__ __forceinline__ void
  operator() (int32_t j) const
  {
    to[atomicAdd (length, 1)] = j;
  }
};

/* The watershed's sweeps, a front at a time: every pixel u of the front
 * (front[0], sh.front[0] long, to start) is visited once through each of
 * its nn neighbour slots, visit (u, d, step, push), a thread a slot (a
 * step's latency is then one neighbour's, not nn one after another), and
 * the pixels it pushes make the next front; until a front is empty. The
 * steps taken go to sh.steps (the first sweep's, then the second's) for
 * the profile. */
template <typename Visit>
__device__ __forceinline__ void
sweep_fronts (int32_t *const (&front)[2], int nn, BlockShared &sh, Visit visit)
{
  for (int step = 0;; step++)
    {
      const int now = step & 1, next = now ^ 1;
      const int32_t count = sh.front[now];
      if (count == 0)
        {
          if (threadIdx.x == 0)
            sh.steps[sh.steps[0] == 0 ? 0 : 1] = step;
          break;
        }
      const FrontPush push = { front[next], &sh.front[next] };
      for (int32_t f = threadIdx.x; f < count * nn; f += block_threads ())
        visit (front[now][f / nn], f % nn, step, push);
      __syncthreads ();
      if (threadIdx.x == 0)
        sh.front[now] = 0;
      __syncthreads ();
    }
}

__device__ double
block_sum (double v, BlockShared &sh)
{
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (int o = 16; o > 0; o >>= 1)
    v += __shfl_down_sync (0xffffffffu, v, o);
  if (lane == 0)
    sh.sum[warp] = v;
  __syncthreads ();
  if (threadIdx.x == 0)
    {
      double s = 0;
      for (int w = 0; w < block_threads () / 32; w++)
        s += sh.sum[w];
      sh.sum[0] = s;
    }
  __syncthreads ();
  v = sh.sum[0];
  __syncthreads ();
  return v;
}

/* This thread's rank among the block's threads with flag set (in thread
 * order); *total: how many have it. */
__device__ int32_t
block_rank (bool flag, BlockShared &sh, int32_t *total)
{
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const unsigned ballot = __ballot_sync (0xffffffffu, flag);
  const int32_t below = __popc (ballot & ((1u << lane) - 1));
  if (lane == 0)
    sh.rank[warp] = __popc (ballot);
  __syncthreads ();
  if (threadIdx.x == 0)
    {
      int32_t run = 0;
      for (int w = 0; w < block_threads () / 32; w++)
        {
          const int32_t c = sh.rank[w];
          sh.rank[w] = run;
          run += c;
        }
      sh.rank[block_threads () / 32] = run;
    }
  __syncthreads ();
  const int32_t r = sh.rank[warp] + below;
  *total = sh.rank[block_threads () / 32];
  __syncthreads ();
  return r;
}
