/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-gpu-convolve.cu: 2D convolution with zero fill (full, same, valid as
 * scipy.signal.convolve2d) and 1D full convolution (np.convolve) on the
 * device, float32 and float64, accumulating in the element type as the CPU
 * backend does.
 *
 * Every output is the full convolution at (x + x0, y + y0), where
 * sky_convolve_geometry gives the output's size and x0, y0; since
 * convolution commutes, that one formula also covers valid mode with a
 * kernel larger than the image.
 *
 * Paths: a rank-1 kernel (sky_kernel_separate) runs the separable kernel,
 * one launch: a block loads its input tile with the kernel's halo into
 * shared memory, convolves the tile's rows with the row vector into a
 * second shared tile, then its columns with the column vector. Any other
 * kernel runs the direct kernel: the same input tile, each output summing
 * the whole kernel (read from shared memory). Where the tiles would not fit
 * in shared memory (kernels of more than about 40 x 40 in float64), a plain
 * global-memory kernel computes the same sums. Odd square kernels of 3 to 15
 * (the lesson's is 15 x 15) and 1D kernels of 3 and 15 values run versions
 * compiled for their size, with the same sums in the same order (in float64,
 * two consecutive outputs a thread, with 16-byte loads and stores). */
#include "sky-gpu-private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { CONV_TX = 32, CONV_TY = 32, CONV_BX = 32, CONV_BY = 8 };
enum { CONV1_T = 1024, CONV1_THREADS = 256 };
static const size_t kSmemLimit = 48 * 1024;
/* The most blocks a grid's y dimension takes. */
static const int64_t kMaxGridY = 65535;

/* A block's input tile with the kernel's halo, zero outside the image:
 * rows iy0 .. iy0 + rows - 1 and columns ix0 .. ix0 + cols - 1 of in, into
 * s_in at a row stride of stride. */
template <typename T>
__device__ __forceinline__ void
load_tile (const T *__restrict__ in, int nx, int ny, int ix0, int iy0, int cols, int rows,
           int stride, T *s_in)
{
  for (int r = threadIdx.y; r < rows; r += blockDim.y)
    {
      int iy = iy0 + r;
      for (int c = threadIdx.x; c < cols; c += blockDim.x)
        {
          int ix = ix0 + c;
          s_in[r * stride + c] = (iy >= 0 && iy < ny && ix >= 0 && ix < nx)
                                   ? in[(int64_t) iy * nx + ix] : T (0);
        }
    }
}

/* A block's 1D window, zero outside a: a[a0 .. a0 + w - 1] into s_a. */
template <typename T>
__device__ __forceinline__ void
load_window (const T *__restrict__ a, int64_t n, int64_t a0, int w, T *s_a)
{
  for (int i = threadIdx.x; i < w; i += blockDim.x)
    {
      int64_t ia = a0 + i;
      s_a[i] = (ia >= 0 && ia < n) ? a[ia] : T (0);
    }
}

/* One output of the 1D full convolution: the m taps (shared memory, or
 * registers when m is known at compile time) over the window's values
 * p[0], p[-1] .. p[-(m - 1)]. */
template <typename T, typename Taps>
__device__ __forceinline__ T
conv1_output (const T *p, const Taps &taps, int m)
{
  T acc = 0;
  for (int k = 0; k < m; k++)
    acc += p[-k] * taps[k];
  return acc;
}

/* Stores f (r, c), for each output (r, c) of the block's tile that lies in
 * the output, at its place in out. */
template <typename T, typename F>
__device__ __forceinline__ void
store_tile (T *__restrict__ out, int onx, int ony, int ox0, int oy0, F f)
{
  for (int r = threadIdx.y; r < CONV_TY; r += blockDim.y)
    {
      int oy = oy0 + r;
      if (oy >= ony)
        break;
      for (int c = threadIdx.x; c < CONV_TX; c += blockDim.x)
        {
          int ox = ox0 + c;
          if (ox >= onx)
            break;
          out[(int64_t) oy * onx + ox] = f (r, c);
        }
    }
}

template <typename T>
__global__ void
conv2dSeparableKernel (const T *__restrict__ in, int nx, int ny, T *__restrict__ out, int onx,
                       int ony, int x0, int y0, int by0, const T *__restrict__ col,
                       const T *__restrict__ row, int kx, int ky)
{
  extern __shared__ unsigned char s_raw[];
  T *s_row = reinterpret_cast<T *> (s_raw);
  T *s_col = s_row + kx;
  const int sw = CONV_TX + kx - 1, sh = CONV_TY + ky - 1;
  T *s_in = s_col + ky;
  T *s_mid = s_in + sh * sw;
  const int tid = threadIdx.y * blockDim.x + threadIdx.x, nt = blockDim.x * blockDim.y;
  const int ox0 = blockIdx.x * CONV_TX, oy0 = (by0 + (int) blockIdx.y) * CONV_TY;
  const int ix0 = ox0 + x0 - (kx - 1), iy0 = oy0 + y0 - (ky - 1);

  sky_grid_wait ();
  for (int i = tid; i < kx; i += nt)
    s_row[i] = row[i];
  for (int i = tid; i < ky; i += nt)
    s_col[i] = col[i];
  load_tile (in, nx, ny, ix0, iy0, sw, sh, sw, s_in);
  __syncthreads ();
  /* rows: mid[r][c] = sum_j in[r][c + kx - 1 - j] * row[j] */
  for (int r = threadIdx.y; r < sh; r += blockDim.y)
    for (int c = threadIdx.x; c < CONV_TX; c += blockDim.x)
      {
        const T *p = s_in + r * sw + c + kx - 1;
        T acc = 0;
        for (int j = 0; j < kx; j++)
          acc += p[-j] * s_row[j];
        s_mid[r * CONV_TX + c] = acc;
      }
  __syncthreads ();
  /* columns: out[r][c] = sum_i mid[r + ky - 1 - i][c] * col[i] */
  store_tile (out, onx, ony, ox0, oy0, [&] (int r, int c) {
    const T *p = s_mid + (r + ky - 1) * CONV_TX + c;
    T acc = 0;
    for (int i = 0; i < ky; i++)
      acc += p[-i * CONV_TX] * s_col[i];
    return acc;
  });
}

template <typename T>
__global__ void
conv2dDirectKernel (const T *__restrict__ in, int nx, int ny, T *__restrict__ out, int onx,
                    int ony, int x0, int y0, int by0, const T *__restrict__ k, int kx, int ky)
{
  extern __shared__ unsigned char s_raw[];
  T *s_k = reinterpret_cast<T *> (s_raw);
  const int sw = CONV_TX + kx - 1, sh = CONV_TY + ky - 1;
  T *s_in = s_k + kx * ky;
  const int tid = threadIdx.y * blockDim.x + threadIdx.x, nt = blockDim.x * blockDim.y;
  const int ox0 = blockIdx.x * CONV_TX, oy0 = (by0 + (int) blockIdx.y) * CONV_TY;
  const int ix0 = ox0 + x0 - (kx - 1), iy0 = oy0 + y0 - (ky - 1);

  sky_grid_wait ();
  for (int i = tid; i < kx * ky; i += nt)
    s_k[i] = k[i];
  load_tile (in, nx, ny, ix0, iy0, sw, sh, sw, s_in);
  __syncthreads ();
  store_tile (out, onx, ony, ox0, oy0, [&] (int r, int c) {
    T acc = 0;
    for (int i = 0; i < ky; i++)
      {
        const T *p = s_in + (r + ky - 1 - i) * sw + c + kx - 1;
        const T *kr = s_k + i * kx;
        for (int j = 0; j < kx; j++)
          acc += p[-j] * kr[j];
      }
    return acc;
  });
}

/* Any size: each output sums over the kernel straight from global memory. */
template <typename T>
__global__ void
conv2dGlobalKernel (const T *__restrict__ in, int nx, int ny, T *__restrict__ out, int onx,
                    int ony, int x0, int y0, int by0, const T *__restrict__ k, int kx, int ky)
{
  sky_grid_wait ();
  int ox = blockIdx.x * blockDim.x + threadIdx.x;
  int oy = (by0 + (int) blockIdx.y) * blockDim.y + threadIdx.y;
  if (ox >= onx || oy >= ony)
    return;
  int fx = ox + x0, fy = oy + y0;
  /* i over kernel rows with 0 <= fy - i < ny, j likewise */
  int i0 = max (0, fy - ny + 1), i1 = min (ky - 1, fy);
  int j0 = max (0, fx - nx + 1), j1 = min (kx - 1, fx);
  T acc = 0;
  for (int i = i0; i <= i1; i++)
    for (int j = j0; j <= j1; j++)
      acc += in[(int64_t) (fy - i) * nx + (fx - j)] * k[(int64_t) i * kx + j];
  out[(int64_t) oy * onx + ox] = acc;
}

/* 1D full: out[j] = sum_k a[j - k] * v[k], j < n + m - 1. A block makes
 * CONV1_T outputs from a[j0 - m + 1 .. j0 + CONV1_T - 1] in shared memory. */
template <typename T>
__global__ void
conv1dTiledKernel (const T *__restrict__ a, int64_t n, const T *__restrict__ v, int m,
                   T *__restrict__ out, int64_t nout)
{
  extern __shared__ unsigned char s_raw[];
  T *s_v = reinterpret_cast<T *> (s_raw);
  T *s_a = s_v + m;
  const int64_t j0 = (int64_t) blockIdx.x * CONV1_T;
  const int64_t a0 = j0 - (m - 1);
  const int w = CONV1_T + m - 1;

  sky_grid_wait ();
  for (int i = threadIdx.x; i < m; i += blockDim.x)
    s_v[i] = v[i];
  load_window (a, n, a0, w, s_a);
  __syncthreads ();
  for (int t = threadIdx.x; t < CONV1_T; t += blockDim.x)
    {
      int64_t j = j0 + t;
      if (j >= nout)
        break;
      out[j] = conv1_output (s_a + t + m - 1, s_v, m);
    }
}

template <typename T>
__global__ void
conv1dGlobalKernel (const T *__restrict__ a, int64_t n, const T *__restrict__ v, int64_t m,
                    T *__restrict__ out, int64_t nout)
{
  sky_grid_wait ();
  int64_t j = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= nout)
    return;
  int64_t k0 = j - n + 1 > 0 ? j - n + 1 : 0, k1 = j < m - 1 ? j : m - 1;
  T acc = 0;
  for (int64_t k = k0; k <= k1; k++)
    acc += a[j - k] * v[k];
  out[j] = acc;
}

/* A kernel of N taps known at compile time into registers (the fixed-size
 * kernels keep their taps in registers, not shared memory). */
template <typename T, int N>
__device__ __forceinline__ void
load_taps (const T *__restrict__ src, T (&taps)[N])
{
#pragma unroll
  for (int k = 0; k < N; k++)
    taps[k] = src[k];
}

/* The separable kernel for a kernel size known at compile time (the
 * lesson's 15 x 15 and other small odd squares): the same sums in the same
 * order as conv2dSeparableKernel, with each thread making CONV_RB outputs of a
 * pass from one window of values held in registers. Row pass: consecutive
 * threads take consecutive tile rows (odd row strides keep the banks
 * apart); column pass: consecutive threads take consecutive columns. */
enum { CONV_RB = 4 };

template <typename T, int KX, int KY>
__global__ void __launch_bounds__ (CONV_BX * CONV_BY)
conv2dSeparableFixedKernel (const T *__restrict__ in, int nx, int ny, T *__restrict__ out,
                            int onx, int ony, int x0, int y0, int by0,
                            const T *__restrict__ col, const T *__restrict__ row)
{
  constexpr int SH = CONV_TY + KY - 1, SWL = CONV_TX + KX - 1, SW = SWL | 1;
  constexpr int MW = CONV_TX + 1;
  constexpr int GX = CONV_TX / CONV_RB, GY = CONV_TY / CONV_RB;
  __shared__ T s_in[SH * SW];
  __shared__ T s_mid[SH * MW];
  const int tid = threadIdx.y * blockDim.x + threadIdx.x, nt = blockDim.x * blockDim.y;
  const int ox0 = blockIdx.x * CONV_TX, oy0 = (by0 + (int) blockIdx.y) * CONV_TY;
  const int ix0 = ox0 + x0 - (KX - 1), iy0 = oy0 + y0 - (KY - 1);
  T rk[KX], ck[KY];

  sky_grid_wait ();
  load_taps (row, rk);
  load_taps (col, ck);
  load_tile (in, nx, ny, ix0, iy0, SWL, SH, SW, s_in);
  __syncthreads ();
  for (int w = tid; w < SH * GX; w += nt)
    {
      const int r = w % SH, g = w / SH;
      const T *p = s_in + r * SW + g * CONV_RB;
      T v[CONV_RB + KX - 1];
#pragma unroll
      for (int i = 0; i < CONV_RB + KX - 1; i++)
        v[i] = p[i];
#pragma unroll
      for (int o = 0; o < CONV_RB; o++)
        {
          T acc = 0;
#pragma unroll
          for (int j = 0; j < KX; j++)
            acc += v[o + KX - 1 - j] * rk[j];
          s_mid[r * MW + g * CONV_RB + o] = acc;
        }
    }
  __syncthreads ();
  for (int w = tid; w < CONV_TX * GY; w += nt)
    {
      const int c = w % CONV_TX, g = w / CONV_TX, ox = ox0 + c;
      T v[CONV_RB + KY - 1];
#pragma unroll
      for (int i = 0; i < CONV_RB + KY - 1; i++)
        v[i] = s_mid[(g * CONV_RB + i) * MW + c];
#pragma unroll
      for (int o = 0; o < CONV_RB; o++)
        {
          const int oy = oy0 + g * CONV_RB + o;
          T acc = 0;
#pragma unroll
          for (int i = 0; i < KY; i++)
            acc += v[o + KY - 1 - i] * ck[i];
          if (ox < onx && oy < ony)
            out[(int64_t) oy * onx + ox] = acc;
        }
    }
}

/* conv1dTiledKernel for a kernel length known at compile time. */
template <typename T, int M>
__global__ void
conv1dFixedKernel (const T *__restrict__ a, int64_t n, const T *__restrict__ v,
                   T *__restrict__ out, int64_t nout)
{
  constexpr int W = CONV1_T + M - 1;
  __shared__ T s_a[W];
  const int64_t j0 = (int64_t) blockIdx.x * CONV1_T;
  T vk[M];

  sky_grid_wait ();
  load_taps (v, vk);
  load_window (a, n, j0 - (M - 1), W, s_a);
  __syncthreads ();
#pragma unroll 4
  for (int t = threadIdx.x; t < CONV1_T; t += blockDim.x)
    {
      int64_t j = j0 + t;
      if (j >= nout)
        break;
      out[j] = conv1_output (s_a + t + M - 1, vk, M);
    }
}

/* float64 1D for a kernel length known at compile time (M odd, so M - 1 is
 * even): each thread makes pairs of consecutive outputs with 16-byte loads
 * and stores (double2), the same sums in the same order as conv1dFixedKernel.
 * A block stages its window of CONV1P_T + M - 1 values
 * through shared memory (double2 loads; the window starts at an even index,
 * so it is 16-byte aligned), and each thread makes CONV1P_T / 2 /
 * CONV1P_THREADS pairs from it, thread p of a pass reading the M + 1 values
 * from its pair on as (M + 1) / 2 double2, consecutive across threads (no
 * bank conflicts). */
enum { CONV1P_T = 2048, CONV1P_THREADS = 256 };

template <int M>
__device__ __forceinline__ void
conv1d_pair (const double (&w)[M + 1], const double (&vk)[M], double &o0, double &o1)
{
  double acc0 = 0, acc1 = 0;
#pragma unroll
  for (int k = 0; k < M; k++)
    {
      acc0 += w[M - 1 - k] * vk[k];
      acc1 += w[M - k] * vk[k];
    }
  o0 = acc0;
  o1 = acc1;
}

__device__ __forceinline__ void
conv1d_store_pair (double *__restrict__ out, int64_t j, int64_t nout, double o0, double o1)
{
  if (j + 1 < nout)
    *reinterpret_cast<double2 *> (out + j) = make_double2 (o0, o1);
  else if (j < nout)
    out[j] = o0;
}

template <int M>
__global__ void __launch_bounds__ (CONV1P_THREADS)
conv1dPairsKernel (const double *__restrict__ a, int64_t n, const double *__restrict__ v,
                   double *__restrict__ out, int64_t nout)
{
  static_assert (M % 2 == 1, "odd kernel length");
  constexpr int W2 = (CONV1P_T + M - 1) / 2;
  __shared__ double2 s_a[W2];
  const int64_t j0 = (int64_t) blockIdx.x * CONV1P_T;
  const int64_t a0 = j0 - (M - 1);
  double vk[M];

  sky_grid_wait ();
  load_taps (v, vk);
  const double2 *a2 = reinterpret_cast<const double2 *> (a);
#pragma unroll 4
  for (int i = threadIdx.x; i < W2; i += CONV1P_THREADS)
    {
      int64_t ia = a0 + 2 * (int64_t) i;
      double2 x;
      if (ia >= 0 && ia + 1 < n)
        x = __ldg (a2 + ia / 2);
      else
        {
          x.x = (ia >= 0 && ia < n) ? a[ia] : 0.0;
          x.y = (ia + 1 >= 0 && ia + 1 < n) ? a[ia + 1] : 0.0;
        }
      s_a[i] = x;
    }
  __syncthreads ();
#pragma unroll
  for (int q = 0; q < CONV1P_T / 2 / CONV1P_THREADS; q++)
    {
      const int p = threadIdx.x + q * CONV1P_THREADS;
      const int64_t j = j0 + 2 * (int64_t) p;
      if (j >= nout)
        break;
      double w[M + 1];
#pragma unroll
      for (int i = 0; i < (M + 1) / 2; i++)
        {
          double2 x = s_a[p + i];
          w[2 * i] = x.x;
          w[2 * i + 1] = x.y;
        }
      double o0, o1;
      conv1d_pair<M> (w, vk, o0, o1);
      conv1d_store_pair (out, j, nout, o0, o1);
    }
}

namespace {

/* Device buffers and events of one call, freed on every way out. */
struct ConvBuffers {
  void *d_in = nullptr, *d_out = nullptr, *d_k = nullptr;   /* d_out: 1D only */
  cudaEvent_t ev[4] = {};
  ~ConvBuffers ()
  {
    cudaFree (d_in);
    cudaFree (d_out);
    cudaFree (d_k);
    for (cudaEvent_t e : ev)
      if (e != nullptr)
        cudaEventDestroy (e);
  }
};

int
fill_times (const ConvBuffers &b, SkyGpuConvolveTimes *times, SkyConvolvePath path)
{
  float up = 0, kern = 0, down = 0;

  SKY_CUDA (cudaEventElapsedTime (&up, b.ev[0], b.ev[1]));
  SKY_CUDA (cudaEventElapsedTime (&kern, b.ev[1], b.ev[2]));
  SKY_CUDA (cudaEventElapsedTime (&down, b.ev[2], b.ev[3]));
  if (times != nullptr)
    {
      times->upload_ms = up;
      times->kernel_ms = kern;
      times->download_ms = down;
      times->total_ms = up + kern + down;
      times->path = path;
    }
  return SKY_OK;
}

template <typename T>
int
convolve2d (SkyGpu *gpu, const T *in, int64_t nx, int64_t ny, const SkyKernel *kernel,
            SkyConvolveMode mode, SkyConvolvePath path, T *out, SkyGpuConvolveTimes *times)
{
  int64_t onx, ony, x0, y0;
  int swapped, ret;
  const int kx = kernel->nx, ky = kernel->ny;
  const size_t es = sizeof (T);

  /* From here on the kept output is this call's, or none if it fails. */
  if (gpu != nullptr)
    gpu->conv_nx = gpu->conv_ny = 0;
  if (gpu == nullptr || in == nullptr || out == nullptr)
    return sky_fail (SKY_ERR_ARGUMENT, "GPU convolution: no context, input or output");
  if ((ret = sky_convolve_geometry (nx, ny, kernel, mode, &onx, &ony, &x0, &y0, &swapped))
      != SKY_OK)
    return ret;
  if (nx > INT32_MAX || ny > INT32_MAX || onx > INT32_MAX || ony > INT32_MAX)
    return sky_fail (SKY_ERR_ARGUMENT, "GPU convolution: an axis is over 2^31 - 1");

  /* which path, and the kernel's values in T as that path reads them */
  const int64_t kn = (int64_t) kx * ky;
  double *col = (double *) malloc ((size_t) (ky + kx) * sizeof (double));
  T *h_k = (T *) malloc ((size_t) (kn > kx + ky ? kn : kx + ky) * es);
  if (col == nullptr || h_k == nullptr)
    {
      free (col);
      free (h_k);
      return sky_fail (SKY_ERR_MEMORY, "GPU convolution: out of host memory");
    }
  int rank1 = sky_kernel_separate (kernel, SKY_KERNEL_RANK1_TOLERANCE, col, col + ky);
  if (path == SKY_CONVOLVE_SEPARABLE && !rank1)
    {
      free (col);
      free (h_k);
      return sky_fail (SKY_ERR_ARGUMENT, "GPU convolution: the separable path needs a "
                                         "kernel of rank 1");
    }
  int use_sep = rank1 && path != SKY_CONVOLVE_DIRECT;
  size_t smem_sep = ((size_t) kx + ky + (size_t) (CONV_TY + ky - 1) * (CONV_TX + kx - 1)
                     + (size_t) (CONV_TY + ky - 1) * CONV_TX) * es;
  size_t smem_dir = ((size_t) kn + (size_t) (CONV_TY + ky - 1) * (CONV_TX + kx - 1)) * es;
  int kind;  /* 0 separable, 1 direct (tiled), 2 direct (global) */
  if (use_sep && smem_sep <= kSmemLimit)
    kind = 0;
  else if (smem_dir <= kSmemLimit)
    kind = 1;
  else
    kind = 2;
  int64_t nk = kind == 0 ? kx + ky : kn;
  if (kind == 0)
    for (int i = 0; i < ky + kx; i++)
      h_k[i] = (T) col[i];  /* col then row */
  else
    for (int64_t i = 0; i < kn; i++)
      h_k[i] = (T) kernel->values[i];
  free (col);

  ConvBuffers b;
  size_t in_bytes = (size_t) (nx * ny) * es, out_bytes = (size_t) (onx * ony) * es;
  cudaError_t err = cudaSuccess;
#define CONV_TRY(call)                                                          \
  do                                                                            \
    {                                                                           \
      if ((err = (call)) != cudaSuccess)                                        \
        {                                                                       \
          free (h_k);                                                            \
          return sky_gpu_cuda_fail (err, #call, __FILE__, __LINE__);            \
        }                                                                       \
    }                                                                           \
  while (0)
  /* The output goes into the context's kept buffer (sky_gpu_convolve_output),
   * which stays for a display to read; it is replaced only when too small,
   * and counts as held, so only a larger one is new memory. */
  size_t out_alloc = out_bytes > 0 ? out_bytes : es;
  if (gpu->conv_out_bytes < out_alloc)
    {
      cudaFree (gpu->d_conv_out);
      gpu->d_conv_out = nullptr;
      gpu->conv_out_bytes = 0;
    }
  if ((ret = sky_gpu_check_memory_limit (gpu, in_bytes + (size_t) nk * es
                                                + (gpu->d_conv_out ? 0 : out_alloc),
                                         "the convolution")) != SKY_OK)
    {
      free (h_k);
      return ret;
    }
  for (cudaEvent_t &e : b.ev)
    CONV_TRY (cudaEventCreate (&e));
  CONV_TRY (cudaMalloc (&b.d_in, in_bytes > 0 ? in_bytes : es));
  if (gpu->d_conv_out == nullptr)
    {
      CONV_TRY (cudaMalloc (&gpu->d_conv_out, out_alloc));
      gpu->conv_out_bytes = out_alloc;
    }
  CONV_TRY (cudaMalloc (&b.d_k, (size_t) nk * es));
  CONV_TRY (cudaEventRecord (b.ev[0], gpu->stream));
  CONV_TRY (cudaMemcpyAsync (b.d_in, in, in_bytes, cudaMemcpyHostToDevice, gpu->stream));
  CONV_TRY (cudaMemcpyAsync (b.d_k, h_k, (size_t) nk * es, cudaMemcpyHostToDevice,
                             gpu->stream));
  CONV_TRY (cudaEventRecord (b.ev[1], gpu->stream));
  /* h_k must live until the copy has read it: pageable copies return only
   * once the source is staged, so it can go now. */
  free (h_k);
  h_k = nullptr;
#undef CONV_TRY

  const T *d_in = (const T *) b.d_in, *d_k = (const T *) b.d_k;
  T *d_out = (T *) gpu->d_conv_out;
  /* A grid's y dimension holds at most 65535 blocks: a taller output goes
   * in slices of block rows, each launch told its first (by0). */
  const int by = kind == 2 ? 8 : CONV_TY;
  const int64_t nby = (ony + by - 1) / by;
  for (int64_t by0 = 0; onx > 0 && by0 < nby; by0 += kMaxGridY)
    {
      const unsigned gy = (unsigned) (nby - by0 < kMaxGridY ? nby - by0 : kMaxGridY);
      if (kind == 2)
        {
          dim3 block (32, 8), grid ((unsigned) ((onx + 31) / 32), gy);
          SKY_LAUNCH (conv2dGlobalKernel<T>, grid, block, 0, gpu->stream, d_in, (int) nx,
                      (int) ny, d_out, (int) onx, (int) ony, (int) x0, (int) y0, (int) by0, d_k,
                      kx, ky);
        }
      else
        {
          dim3 block (CONV_BX, CONV_BY);
          dim3 grid ((unsigned) ((onx + CONV_TX - 1) / CONV_TX), gy);
          int fixed = kind == 0 && kx == ky && kx <= 15 && kx % 2 == 1 && kx >= 3;
#define CONV_FIXED(K)                                                           \
  case K:                                                                       \
    SKY_LAUNCH ((conv2dSeparableFixedKernel<T, K, K>), grid, block, 0, gpu->stream, d_in, \
                (int) nx, (int) ny, d_out, (int) onx, (int) ony, (int) x0, (int) y0, \
                (int) by0, d_k, d_k + ky);                                      \
    break;
          if (fixed)
            switch (kx)
              {
                CONV_FIXED (3)
                CONV_FIXED (5)
                CONV_FIXED (7)
                CONV_FIXED (9)
                CONV_FIXED (11)
                CONV_FIXED (13)
                CONV_FIXED (15)
              }
#undef CONV_FIXED
          else if (kind == 0)
            SKY_LAUNCH (conv2dSeparableKernel<T>, grid, block, smem_sep, gpu->stream, d_in,
                        (int) nx, (int) ny, d_out, (int) onx, (int) ony, (int) x0, (int) y0,
                        (int) by0, d_k, d_k + ky, kx, ky);
          else
            SKY_LAUNCH (conv2dDirectKernel<T>, grid, block, smem_dir, gpu->stream, d_in,
                        (int) nx, (int) ny, d_out, (int) onx, (int) ony, (int) x0, (int) y0,
                        (int) by0, d_k, kx, ky);
        }
    }
  SKY_CUDA (cudaEventRecord (b.ev[2], gpu->stream));
  SKY_CUDA (cudaMemcpyAsync (out, d_out, out_bytes, cudaMemcpyDeviceToHost, gpu->stream));
  SKY_CUDA (cudaEventRecord (b.ev[3], gpu->stream));
  SKY_CUDA (cudaStreamSynchronize (gpu->stream));
  if ((ret = fill_times (b, times, kind == 0 ? SKY_CONVOLVE_SEPARABLE
                                             : SKY_CONVOLVE_DIRECT)) != SKY_OK)
    return ret;
  /* Only a complete output is offered to a display. */
  gpu->conv_nx = onx;
  gpu->conv_ny = ony;
  gpu->conv_f64 = sizeof (T) == 8;
  return SKY_OK;
}

template <typename T>
int
convolve1d (SkyGpu *gpu, const T *a, int64_t n, const T *v, int64_t m, T *out,
            SkyGpuConvolveTimes *times)
{
  const size_t es = sizeof (T);

  if (gpu == nullptr || a == nullptr || v == nullptr || out == nullptr || n < 1 || m < 1)
    return sky_fail (SKY_ERR_ARGUMENT, "GPU 1D convolution: empty input or no context");
  const int64_t nout = n + m - 1;
  size_t smem = ((size_t) m + CONV1_T + (size_t) m - 1) * es;
  int tiled = smem <= kSmemLimit;
  ConvBuffers b;
  int ret = sky_gpu_check_memory_limit (gpu, (size_t) (n + m + nout) * es, "the convolution");

  if (ret != SKY_OK)
    return ret;
  for (cudaEvent_t &e : b.ev)
    SKY_CUDA (cudaEventCreate (&e));
  SKY_CUDA (cudaMalloc (&b.d_in, (size_t) n * es));
  SKY_CUDA (cudaMalloc (&b.d_k, (size_t) m * es));
  SKY_CUDA (cudaMalloc (&b.d_out, (size_t) nout * es));
  SKY_CUDA (cudaEventRecord (b.ev[0], gpu->stream));
  SKY_CUDA (cudaMemcpyAsync (b.d_in, a, (size_t) n * es, cudaMemcpyHostToDevice, gpu->stream));
  SKY_CUDA (cudaMemcpyAsync (b.d_k, v, (size_t) m * es, cudaMemcpyHostToDevice, gpu->stream));
  SKY_CUDA (cudaEventRecord (b.ev[1], gpu->stream));
  const T *d_a = (const T *) b.d_in, *d_v = (const T *) b.d_k;
  T *d_out = (T *) b.d_out;
  if (sizeof (T) == 8 && (m == 15 || m == 3))
    {
      const double *d_a8 = (const double *) d_a, *d_v8 = (const double *) d_v;
      double *d_out8 = (double *) d_out;
      unsigned blocks = (unsigned) ((nout + CONV1P_T - 1) / CONV1P_T);
      if (m == 15)
        SKY_LAUNCH ((conv1dPairsKernel<15>), dim3 (blocks), dim3 (CONV1P_THREADS), 0,
                    gpu->stream, d_a8, n, d_v8, d_out8, nout);
      else
        SKY_LAUNCH ((conv1dPairsKernel<3>), dim3 (blocks), dim3 (CONV1P_THREADS), 0,
                    gpu->stream, d_a8, n, d_v8, d_out8, nout);
    }
  else if (m == 15 || m == 3)
    {
      unsigned blocks = (unsigned) ((nout + CONV1_T - 1) / CONV1_T);
      if (m == 15)
        SKY_LAUNCH ((conv1dFixedKernel<T, 15>), dim3 (blocks), dim3 (CONV1_THREADS), 0, gpu->stream,
                    d_a, n, d_v, d_out, nout);
      else
        SKY_LAUNCH ((conv1dFixedKernel<T, 3>), dim3 (blocks), dim3 (CONV1_THREADS), 0, gpu->stream,
                    d_a, n, d_v, d_out, nout);
    }
  else if (tiled)
    {
      unsigned blocks = (unsigned) ((nout + CONV1_T - 1) / CONV1_T);
      SKY_LAUNCH (conv1dTiledKernel<T>, dim3 (blocks), dim3 (CONV1_THREADS), smem, gpu->stream, d_a,
                  n, d_v, (int) m, d_out, nout);
    }
  else
    {
      unsigned blocks = (unsigned) ((nout + 255) / 256);
      SKY_LAUNCH (conv1dGlobalKernel<T>, dim3 (blocks), dim3 (256), 0, gpu->stream, d_a, n, d_v, m,
                  d_out, nout);
    }
  SKY_CUDA (cudaEventRecord (b.ev[2], gpu->stream));
  SKY_CUDA (cudaMemcpyAsync (out, b.d_out, (size_t) nout * es, cudaMemcpyDeviceToHost,
                             gpu->stream));
  SKY_CUDA (cudaEventRecord (b.ev[3], gpu->stream));
  SKY_CUDA (cudaStreamSynchronize (gpu->stream));
  return fill_times (b, times, SKY_CONVOLVE_DIRECT);
}

__global__ void
roundToFloatKernel (const double *__restrict__ in, int64_t n, float *__restrict__ out)
{
  sky_grid_wait ();
  for (int64_t i = blockIdx.x * (int64_t) blockDim.x + threadIdx.x; i < n;
       i += (int64_t) gridDim.x * blockDim.x)
    out[i] = (float) in[i];   /* round to nearest, as the host's cast */
}

} // namespace

extern "C" int
sky_gpu_convolve_output (const SkyGpu *gpu, SkyGpuConvolveOutput *out)
{
  memset (out, 0, sizeof *out);
  if (gpu == nullptr || gpu->conv_nx <= 0 || gpu->conv_ny <= 0)
    return sky_fail (SKY_ERR_ARGUMENT, "the GPU context holds no 2D convolution output");
  out->data = gpu->d_conv_out;
  out->nx = gpu->conv_nx;
  out->ny = gpu->conv_ny;
  out->f64 = gpu->conv_f64;
  return SKY_OK;
}

int
sky_gpu_convolve_output_f32 (SkyGpu *gpu, const float **out)
{
  SkyGpuConvolveOutput o;
  int ret;

  *out = nullptr;
  if ((ret = sky_gpu_convolve_output (gpu, &o)) != SKY_OK)
    return ret;
  if (!o.f64)
    {
      *out = (const float *) o.data;
      return SKY_OK;
    }
  const int64_t n = o.nx * o.ny;
  const size_t bytes = (size_t) n * sizeof (float);
  if (gpu->conv_f32_bytes < bytes)
    {
      cudaFree (gpu->d_conv_f32);
      gpu->d_conv_f32 = nullptr;
      gpu->conv_f32_bytes = 0;
      if ((ret = sky_gpu_check_memory_limit (gpu, bytes, "the convolution's float copy"))
          != SKY_OK)
        return ret;
      SKY_CUDA (cudaMalloc ((void **) &gpu->d_conv_f32, bytes));
      gpu->conv_f32_bytes = bytes;
    }
  const int64_t blocks = (n + 255) / 256 < 65536 ? (n + 255) / 256 : 65536;
  SKY_LAUNCH (roundToFloatKernel, dim3 ((unsigned) blocks), dim3 (256), 0, gpu->stream,
              (const double *) o.data, n, gpu->d_conv_f32);
  *out = gpu->d_conv_f32;
  return SKY_OK;
}

extern "C" int
sky_gpu_convolve2d_f32 (SkyGpu *gpu, const float *in, int64_t nx, int64_t ny,
                        const SkyKernel *kernel, SkyConvolveMode mode, SkyConvolvePath path,
                        float *out, SkyGpuConvolveTimes *times)
{
  return convolve2d<float> (gpu, in, nx, ny, kernel, mode, path, out, times);
}

extern "C" int
sky_gpu_convolve2d_f64 (SkyGpu *gpu, const double *in, int64_t nx, int64_t ny,
                        const SkyKernel *kernel, SkyConvolveMode mode, SkyConvolvePath path,
                        double *out, SkyGpuConvolveTimes *times)
{
  return convolve2d<double> (gpu, in, nx, ny, kernel, mode, path, out, times);
}

extern "C" int
sky_gpu_convolve1d_f32 (SkyGpu *gpu, const float *a, int64_t n, const float *v, int64_t m,
                        float *out, SkyGpuConvolveTimes *times)
{
  return convolve1d<float> (gpu, a, n, v, m, out, times);
}

extern "C" int
sky_gpu_convolve1d_f64 (SkyGpu *gpu, const double *a, int64_t n, const double *v, int64_t m,
                        double *out, SkyGpuConvolveTimes *times)
{
  return convolve1d<double> (gpu, a, n, v, m, out, times);
}
