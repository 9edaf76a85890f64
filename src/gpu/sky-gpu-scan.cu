/* SPDX-License-Identifier: GPL-3.0-or-later */
/* An exclusive scan whose length is found on the device (islands, sources):
 * the launches are sized for the capacity, and every block loops over the
 * chunks that the count read on the device asks for, so nothing waits for
 * the host. Three kernels: chunk sums, the chunks' offsets (one block), and
 * each chunk's scan from its offset. */
#include "sky-gpu-detect-private.h"

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

namespace {

constexpr int kThreads = 256;
constexpr int kItems = 8;                       /* per thread */
constexpr int kChunk = kThreads * kItems;       /* per block and pass */
constexpr int kOffsetThreads = 1024;

typedef unsigned long long u64;

__device__ __forceinline__ int64_t
scan_count (const u64 *d_count, int64_t cap)
{
  return d_count != NULL ? (int64_t) *d_count : cap;
}

__global__ void __launch_bounds__ (kThreads)
scanChunkSumsKernel (const u64 *__restrict__ in, int64_t cap, const u64 *__restrict__ d_count,
                     u64 *__restrict__ chunk)
{
  typedef cub::BlockReduce<u64, kThreads> Reduce;
  __shared__ typename Reduce::TempStorage tmp;
  sky_grid_wait ();
  const int64_t n = scan_count (d_count, cap), nchunks = (n + kChunk - 1) / kChunk;

  for (int64_t c = blockIdx.x; c < nchunks; c += gridDim.x)
    {
      u64 sum = 0;
      for (int k = 0; k < kItems; k++)
        {
          const int64_t i = c * kChunk + k * kThreads + threadIdx.x;
          sum += i < n ? in[i] : 0;
        }
      sum = Reduce (tmp).Sum (sum);
      if (threadIdx.x == 0)
        chunk[c] = sum;
      __syncthreads ();
    }
}

__global__ void __launch_bounds__ (kOffsetThreads)
scanChunkOffsetsKernel (int64_t cap, const u64 *__restrict__ d_count, u64 *__restrict__ chunk,
                        u64 *__restrict__ total)
{
  typedef cub::BlockScan<u64, kOffsetThreads> Scan;
  __shared__ typename Scan::TempStorage tmp;
  __shared__ u64 s_carry;
  sky_grid_wait ();
  const int64_t n = scan_count (d_count, cap), nchunks = (n + kChunk - 1) / kChunk;

  if (threadIdx.x == 0)
    s_carry = 0;
  __syncthreads ();
  for (int64_t c0 = 0; c0 < nchunks; c0 += kOffsetThreads)
    {
      const int64_t c = c0 + threadIdx.x;
      u64 v = c < nchunks ? chunk[c] : 0, excl, sum;
      Scan (tmp).ExclusiveSum (v, excl, sum);
      const u64 carry = s_carry;
      if (c < nchunks)
        chunk[c] = carry + excl;
      __syncthreads ();
      if (threadIdx.x == 0)
        s_carry = carry + sum;
      __syncthreads ();
    }
  if (threadIdx.x == 0)
    *total = s_carry;
}

__global__ void __launch_bounds__ (kThreads)
scanApplyKernel (const u64 *__restrict__ in, u64 *__restrict__ out, int64_t cap,
                 const u64 *__restrict__ d_count, const u64 *__restrict__ chunk)
{
  typedef cub::BlockScan<u64, kThreads> Scan;
  __shared__ typename Scan::TempStorage tmp;
  sky_grid_wait ();
  const int64_t n = scan_count (d_count, cap), nchunks = (n + kChunk - 1) / kChunk;

  for (int64_t c = blockIdx.x; c < nchunks; c += gridDim.x)
    {
      /* Each thread takes kItems consecutive items. */
      const int64_t i0 = c * kChunk + (int64_t) threadIdx.x * kItems;
      u64 v[kItems], sum = 0, excl;
      for (int k = 0; k < kItems; k++)
        {
          v[k] = i0 + k < n ? in[i0 + k] : 0;
          sum += v[k];
        }
      Scan (tmp).ExclusiveSum (sum, excl);
      excl += chunk[c];
      for (int k = 0; k < kItems; k++)
        {
          if (i0 + k < n)
            out[i0 + k] = excl;
          excl += v[k];
        }
      __syncthreads ();
    }
}

} /* namespace */

int
sky_gpu_scan_enqueue (SkyGpu *gpu, const unsigned long long *in, unsigned long long *out,
                      int64_t cap, const unsigned long long *d_count, unsigned long long *d_total)
{
  cudaStream_t s = gpu->stream;
  const int64_t nchunks = (cap + kChunk - 1) / kChunk;
  const int64_t most = (int64_t) gpu->nsm * 8;
  const unsigned blocks = (unsigned) (nchunks < 1 ? 1 : nchunks < most ? nchunks : most);
  u64 *chunk = gpu->detect->d_chunk;

  if (nchunks > gpu->detect->chunk_cap)
    return sky_fail (SKY_ERR_ARGUMENT, "scan: %lld items pass the scan's capacity",
                     (long long) cap);
  SKY_LAUNCH (scanChunkSumsKernel, blocks, kThreads, 0, s, in, cap, d_count, chunk);
  SKY_LAUNCH (scanChunkOffsetsKernel, 1, kOffsetThreads, 0, s, cap, d_count, chunk, d_total);
  SKY_LAUNCH (scanApplyKernel, blocks, kThreads, 0, s, in, out, cap, d_count, chunk);
  return SKY_OK;
}
