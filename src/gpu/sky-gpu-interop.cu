/* SPDX-License-Identifier: GPL-3.0-or-later */
/* CUDA/OpenGL interop (sky-gpu-gl.h): registering GL objects, writing them
 * from device memory between a map and an unmap, and the display's colour
 * mapping as a kernel. */

/* libepoxy's header first: it defines the GL types and guards that
 * cuda_gl_interop.h would otherwise take from <GL/gl.h>, and epoxy refuses
 * to be included after that header. */
#include <epoxy/gl.h>

#include <cuda_gl_interop.h>
#include <stdio.h>
#include <stdlib.h>

#include "sky-gpu-gl.h"
#include "sky-gpu-private.h"

struct SkyGpuGl {
  cudaGraphicsResource_t res;
  int is_texture;
};

int
sky_gpu_gl_check (int device, char *why, size_t why_size)
{
  unsigned count = 0;
  int devices[8];
  cudaError_t err;

  err = cudaGLGetDevices (&count, devices, 8, cudaGLDeviceListAll);
  if (err != cudaSuccess)
    {
      /* cudaErrorNoDevice here means: no CUDA device behind this GL context
       * (Mesa, another vendor's driver, an NVIDIA GPU CUDA cannot use). */
      snprintf (why, why_size, "CUDA refuses the OpenGL context: %s (%s)",
                cudaGetErrorString (err), cudaGetErrorName (err));
      cudaGetLastError ();
      return sky_fail (SKY_ERR_UNAVAILABLE, "%s", why);
    }
  for (unsigned i = 0; i < count && i < 8; i++)
    if (devices[i] == device)
      {
        snprintf (why, why_size, "the OpenGL context runs on CUDA device %d", device);
        return SKY_OK;
      }
  snprintf (why, why_size, "the OpenGL context runs on %u CUDA device(s), not on device %d",
            count, device);
  return sky_fail (SKY_ERR_UNAVAILABLE, "%s", why);
}

static int
wrap (cudaGraphicsResource_t res, int is_texture, SkyGpuGl **out)
{
  SkyGpuGl *obj = (SkyGpuGl *) calloc (1, sizeof *obj);

  if (obj == NULL)
    {
      cudaGraphicsUnregisterResource (res);
      return sky_fail (SKY_ERR_MEMORY, "out of memory for a GL registration");
    }
  obj->res = res;
  obj->is_texture = is_texture;
  *out = obj;
  return SKY_OK;
}

int
sky_gpu_gl_register_texture (unsigned texture, unsigned target, SkyGpuGl **out)
{
  cudaGraphicsResource_t res = NULL;

  *out = NULL;
  SKY_CUDA (cudaGraphicsGLRegisterImage (&res, texture, target,
                                         cudaGraphicsRegisterFlagsWriteDiscard));
  return wrap (res, 1, out);
}

int
sky_gpu_gl_register_buffer (unsigned buffer, SkyGpuGl **out)
{
  cudaGraphicsResource_t res = NULL;

  *out = NULL;
  SKY_CUDA (cudaGraphicsGLRegisterBuffer (&res, buffer, cudaGraphicsRegisterFlagsWriteDiscard));
  return wrap (res, 0, out);
}

void
sky_gpu_gl_unregister (SkyGpuGl *obj)
{
  if (obj == NULL)
    return;
  cudaGraphicsUnregisterResource (obj->res);
  cudaGetLastError ();
  free (obj);
}

/* Events for the optional timing, made per call: a display update is one
 * call a frame, and two events cost microseconds. */
typedef struct {
  cudaEvent_t a, b;
} Timer;

static int
timer_start (Timer *t, cudaStream_t s, double *ms)
{
  t->a = t->b = NULL;
  if (ms == NULL)
    return SKY_OK;
  SKY_CUDA (cudaEventCreate (&t->a));
  SKY_CUDA (cudaEventCreate (&t->b));
  SKY_CUDA (cudaEventRecord (t->a, s));
  return SKY_OK;
}

static int
timer_stop (Timer *t, cudaStream_t s, double *ms)
{
  float f = 0;

  if (ms == NULL)
    return SKY_OK;
  SKY_CUDA (cudaEventRecord (t->b, s));
  SKY_CUDA (cudaEventSynchronize (t->b));
  SKY_CUDA (cudaEventElapsedTime (&f, t->a, t->b));
  *ms = f;
  return SKY_OK;
}

static void
timer_free (Timer *t)
{
  if (t->a)
    cudaEventDestroy (t->a);
  if (t->b)
    cudaEventDestroy (t->b);
}

/* Unmaps the n objects even after a failed write: GL must get them back.
 * Returns the write's status ret, or the unmap's failure after a good one. */
static int
unmap (int n, cudaGraphicsResource_t *res, cudaStream_t s, int ret)
{
  cudaError_t err = cudaGraphicsUnmapResources (n, res, s);

  if (ret == SKY_OK && err != cudaSuccess)
    ret = sky_gpu_cuda_fail (err, "cudaGraphicsUnmapResources", __FILE__, __LINE__);
  return ret;
}

static int
write_textures (cudaStream_t s, int n, SkyGpuGl *const *tex, const void *const *src,
                const size_t *row_bytes, const size_t *rows)
{
  cudaGraphicsResource_t res[8];
  int ret = SKY_OK;

  if (n < 1 || n > 8)
    return sky_fail (SKY_ERR_ARGUMENT, "1 to 8 textures a write (got %d)", n);
  for (int i = 0; i < n; i++)
    {
      if (!tex[i]->is_texture)
        return sky_fail (SKY_ERR_ARGUMENT, "a buffer is not a texture");
      res[i] = tex[i]->res;
    }
  SKY_CUDA (cudaGraphicsMapResources (n, res, s));
  for (int i = 0; i < n && ret == SKY_OK; i++)
    {
      cudaArray_t array = NULL;
      cudaError_t err = cudaGraphicsSubResourceGetMappedArray (&array, res[i], 0, 0);
      /* The copy engine: 20 MiB (an R8UI mask and an R32I label image of
       * 2048 x 2048) in 0.23 ms on an H200, of which the map and unmap
       * are 0.004 ms. A kernel storing each element through a surface
       * object took 0.52 ms: not kept. */
      if (err == cudaSuccess)
        err = cudaMemcpy2DToArrayAsync (array, 0, 0, src[i], row_bytes[i], row_bytes[i], rows[i],
                                        cudaMemcpyDeviceToDevice, s);
      if (err != cudaSuccess)
        ret = sky_gpu_cuda_fail (err, "cudaMemcpy2DToArrayAsync", __FILE__, __LINE__);
    }
  return unmap (n, res, s, ret);
}

int
sky_gpu_gl_write_textures (SkyGpu *gpu, int n, SkyGpuGl *const *tex, const void *const *src,
                           const size_t *row_bytes, const size_t *rows, double *ms)
{
  cudaStream_t s = gpu ? gpu->stream : 0;
  Timer t;
  int ret;

  if ((ret = timer_start (&t, s, ms)) == SKY_OK
      && (ret = write_textures (s, n, tex, src, row_bytes, rows)) == SKY_OK)
    ret = timer_stop (&t, s, ms);
  timer_free (&t);
  return ret;
}

int
sky_gpu_gl_write_texture (SkyGpu *gpu, SkyGpuGl *tex, const void *src, size_t row_bytes,
                          size_t rows, double *ms)
{
  return sky_gpu_gl_write_textures (gpu, 1, &tex, &src, &row_bytes, &rows, ms);
}

static int
write_buffers (cudaStream_t s, int n, SkyGpuGl *const *buf, const void *const *src,
               const size_t *bytes)
{
  cudaGraphicsResource_t res[8];
  int ret = SKY_OK;

  if (n < 1 || n > 8)
    return sky_fail (SKY_ERR_ARGUMENT, "1 to 8 buffers a write (got %d)", n);
  for (int i = 0; i < n; i++)
    {
      if (buf[i]->is_texture)
        return sky_fail (SKY_ERR_ARGUMENT, "a texture is not a buffer");
      res[i] = buf[i]->res;
    }
  SKY_CUDA (cudaGraphicsMapResources (n, res, s));
  for (int i = 0; i < n && ret == SKY_OK; i++)
    {
      void *d_ptr = NULL;
      size_t size = 0;
      cudaError_t err = cudaGraphicsResourceGetMappedPointer (&d_ptr, &size, res[i]);
      /* A buffer is linear memory: a plain device copy at the memory's
       * bandwidth, where a texture's tiled array takes the copy engine's
       * slower 2D path (see the textures' write above). */
      if (err == cudaSuccess && size < bytes[i])
        ret = sky_fail (SKY_ERR_ARGUMENT, "the buffer holds %zu bytes, %zu to write", size,
                        bytes[i]);
      else if (err == cudaSuccess && bytes[i] > 0)
        err = cudaMemcpyAsync (d_ptr, src[i], bytes[i], cudaMemcpyDeviceToDevice, s);
      if (ret == SKY_OK && err != cudaSuccess)
        ret = sky_gpu_cuda_fail (err, "cudaMemcpyAsync", __FILE__, __LINE__);
    }
  return unmap (n, res, s, ret);
}

int
sky_gpu_gl_write_buffers (SkyGpu *gpu, int n, SkyGpuGl *const *buf, const void *const *src,
                          const size_t *bytes, double *ms)
{
  cudaStream_t s = gpu ? gpu->stream : 0;
  Timer t;
  int ret;

  if ((ret = timer_start (&t, s, ms)) == SKY_OK
      && (ret = write_buffers (s, n, buf, src, bytes)) == SKY_OK)
    ret = timer_stop (&t, s, ms);
  timer_free (&t);
  return ret;
}

int
sky_gpu_gl_write_buffer (SkyGpu *gpu, SkyGpuGl *buf, const void *src, size_t bytes, double *ms)
{
  return sky_gpu_gl_write_buffers (gpu, 1, &buf, &src, &bytes, ms);
}

int
sky_gpu_gl_write_convolved (SkyGpu *gpu, SkyGpuGl *tex, double *ms)
{
  SkyGpuConvolveOutput o;
  const float *d_src = NULL;
  Timer t;
  int ret;

  if (gpu == NULL)
    return sky_fail (SKY_ERR_ARGUMENT, "no GPU context for its convolution output");
  if ((ret = sky_gpu_convolve_output (gpu, &o)) != SKY_OK)
    return ret;
  const void *d_src_v;
  size_t row = (size_t) o.nx * sizeof (float), rows = (size_t) o.ny;
  if ((ret = timer_start (&t, gpu->stream, ms)) == SKY_OK
      && (ret = sky_gpu_convolve_output_f32 (gpu, &d_src)) == SKY_OK
      && ((d_src_v = d_src), (ret = write_textures (gpu->stream, 1, &tex, &d_src_v, &row, &rows)))
           == SKY_OK)
    ret = timer_stop (&t, gpu->stream, ms);
  timer_free (&t);
  return ret;
}

/* ------------------------------------------------------------ colour map */

__constant__ uchar4 c_cmap[256];

/* sky_stretch_apply () of src/ui/sky-colormap.c, in double like it, for
 * the four stretches that need no table. */
__device__ static double
stretch (int s, double v)
{
  v = v < 0 ? 0 : v > 1 ? 1 : v;
  switch (s)
    {
    case 1: return log1p (1000.0 * v) / log1p (1000.0);
    case 2: return sqrt (v);
    case 3: return asinh (10.0 * v) / asinh (10.0);
    default: return v;
    }
}

__global__ static void
colormapKernel (const float *d_src, int64_t n, double lo, double range, int s, uchar4 blank,
                uchar4 *d_out)
{
  for (int64_t i = blockIdx.x * (int64_t) blockDim.x + threadIdx.x; i < n;
       i += (int64_t) gridDim.x * blockDim.x)
    {
      float x = d_src[i];
      uchar4 c = blank;
      if (!isnan (x))
        {
          uchar4 e = c_cmap[(int) (stretch (s, (x - lo) / range) * 255 + 0.5)];
          c = make_uchar4 (e.x, e.y, e.z, 255);
        }
      d_out[i] = c;
    }
}

/* Maps the pixel buffer, colours n values into it, and unmaps it. */
static int
colormap_mapped (cudaStream_t s, SkyGpuGl *buf, const float *d_src, int64_t n, double lo,
                 double hi, int stretch_kind, const uint8_t blank[4])
{
  void *d_ptr = NULL;
  size_t size = 0;
  int ret = SKY_OK;

  SKY_CUDA (cudaGraphicsMapResources (1, &buf->res, s));
  cudaError_t err = cudaGraphicsResourceGetMappedPointer (&d_ptr, &size, buf->res);
  if (err == cudaSuccess && size < (size_t) n * 4)
    ret = sky_fail (SKY_ERR_ARGUMENT, "the pixel buffer holds %zu bytes, %lld needed", size,
                    (long long) n * 4);
  else if (err != cudaSuccess)
    ret = sky_gpu_cuda_fail (err, "cudaGraphicsResourceGetMappedPointer", __FILE__, __LINE__);
  if (ret == SKY_OK)
    {
      int blocks = (int) ((n + 255) / 256 < 65536 ? (n + 255) / 256 : 65536);
      colormapKernel<<<blocks, 256, 0, s>>> (d_src, n, lo, hi - lo, stretch_kind,
                                             make_uchar4 (blank[0], blank[1], blank[2], blank[3]),
                                             (uchar4 *) d_ptr);
      if ((err = cudaGetLastError ()) != cudaSuccess)
        ret = sky_gpu_cuda_fail (err, "colormapKernel<<<>>>", __FILE__, __LINE__);
    }
  return unmap (1, &buf->res, s, ret);
}

int
sky_gpu_gl_colormap (SkyGpu *gpu, SkyGpuGl *buf, const float *src, int64_t nx, int64_t ny,
                     double lo, double hi, int stretch_kind, const uint8_t *cmap,
                     const uint8_t blank[4], double *ms)
{
  cudaStream_t s = gpu ? gpu->stream : 0;
  const int64_t n = nx * ny;
  Timer t;
  int ret;

  if (buf->is_texture)
    return sky_fail (SKY_ERR_ARGUMENT, "the colour map writes a buffer, not a texture");
  if (stretch_kind < 0 || stretch_kind > 3 || !(hi > lo) || n <= 0)
    return sky_fail (SKY_ERR_ARGUMENT, "colour map: stretch %d, limits %g..%g, %lld pixels",
                     stretch_kind, lo, hi, (long long) n);
  SKY_CUDA (cudaMemcpyToSymbolAsync (c_cmap, cmap, 256 * 4, 0, cudaMemcpyHostToDevice, s));
  /* The timer's events are freed on every way out, a failed map included. */
  if ((ret = timer_start (&t, s, ms)) == SKY_OK
      && (ret = colormap_mapped (s, buf, src, n, lo, hi, stretch_kind, blank)) == SKY_OK)
    ret = timer_stop (&t, s, ms);
  timer_free (&t);
  return ret;
}
