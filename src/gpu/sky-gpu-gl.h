/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-gpu-gl.h: CUDA/OpenGL interop for the display: GL textures and
 * buffer objects registered with CUDA and written from device memory, so that a
 * result already on the device reaches the screen without crossing the bus.
 *
 * Plain C; GL names and enums are passed as unsigned ints so that this
 * header needs neither GL's nor CUDA's headers. Every call needs a GL
 * context current on the calling thread (the one the objects belong to),
 * and a registration must be undone (sky_gpu_gl_unregister) before that
 * context goes. A registered texture's size and format are fixed: to give
 * it new storage, unregister, call glTexImage2D, register again.
 *
 * Failures return SKY_ERR_UNAVAILABLE (or SKY_ERR_ARGUMENT) with the CUDA
 * call and its message in sky_last_error(). */
#ifndef SKY_GPU_GL_H
#define SKY_GPU_GL_H

#include <stddef.h>
#include <stdint.h>

#include "sky-gpu.h"

#ifdef __cplusplus
extern "C" {
#endif

/* SKY_OK when the current GL context runs on CUDA device `device`
 * (cudaGLGetDevices: the context is the NVIDIA driver's, on that GPU).
 * Otherwise SKY_ERR_UNAVAILABLE and why gets the reason ("the OpenGL
 * context is on no CUDA device", "CUDA refuses: ..."). */
int sky_gpu_gl_check (int device, char *why, size_t why_size);

/* One GL object registered with CUDA, for writing only (the device never
 * reads what GL had in it: write-discard). */
typedef struct SkyGpuGl SkyGpuGl;

/* A 2D texture (target GL_TEXTURE_2D, 0x0DE1) whose level 0 already has
 * its storage (glTexImage2D), of a format CUDA maps: R8UI, R32I, R32F,
 * RGBA8 and the like. */
int sky_gpu_gl_register_texture (unsigned texture, unsigned target, SkyGpuGl **out);

/* A buffer object (a pixel buffer, a buffer texture's store) with its
 * storage (glBufferData or glBufferStorage); its size is fixed as a
 * texture's: to resize, unregister, give it storage, register again. */
int sky_gpu_gl_register_buffer (unsigned buffer, SkyGpuGl **out);

/* Undoes a registration; NULL is allowed. */
void sky_gpu_gl_unregister (SkyGpuGl *obj);

/* Maps the texture, copies rows rows of row_bytes bytes from device memory
 * src (rows packed one after the other) into its level 0, and unmaps it,
 * all on gpu's stream (the default stream when gpu is NULL), so that the
 * copy follows whatever was enqueued there before and GL sees it once the
 * unmap returns. ms (if not NULL) gets the time from just before the map
 * to just after the unmap, from CUDA events (waits for them). */
int sky_gpu_gl_write_texture (SkyGpu *gpu, SkyGpuGl *tex, const void *src, size_t row_bytes,
                              size_t rows, double *ms);

/* Several textures in one map and one unmap (fewer driver round trips):
 * tex[i] gets rows[i] rows of row_bytes[i] from src[i]. */
int sky_gpu_gl_write_textures (SkyGpu *gpu, int n, SkyGpuGl *const *tex,
                               const void *const *src, const size_t *row_bytes,
                               const size_t *rows, double *ms);

/* Maps the buffer, copies bytes bytes from device memory src to its start,
 * and unmaps it, on gpu's stream; ms as above. The buffer is linear
 * memory, so this is a plain device copy: the image view reads its mask
 * and labels from such buffers (buffer textures), and GL can also move a
 * buffer's pixels into a texture itself (glTexSubImage2D with the buffer
 * bound to GL_PIXEL_UNPACK_BUFFER). */
int sky_gpu_gl_write_buffer (SkyGpu *gpu, SkyGpuGl *buf, const void *src, size_t bytes,
                             double *ms);

/* Several buffers in one map and one unmap: buf[i] gets bytes[i] bytes
 * from src[i]. */
int sky_gpu_gl_write_buffers (SkyGpu *gpu, int n, SkyGpuGl *const *buf,
                              const void *const *src, const size_t *bytes, double *ms);

/* The context's last 2D convolution output (sky_gpu_convolve_output) into
 * level 0 of a registered R32F 2D texture of its size: copied as it is when
 * it is float32, rounded to float on the device first when float64 (as a C
 * cast rounds); on gpu's stream, between a map and an unmap as above. ms
 * (if not NULL) as above, the rounding included. SKY_ERR_ARGUMENT when
 * the context holds no output. */
int sky_gpu_gl_write_convolved (SkyGpu *gpu, SkyGpuGl *tex, double *ms);

/* The display's colour mapping on the device: writes nx x ny RGBA8 pixels
 * (rows packed) into the registered buffer, pixel i the colour of src[i]
 * (device memory, float): v = (x - lo) / (hi - lo) clamped to [0, 1], the
 * stretch (SkyStretch of src/ui/sky-colormap.h: 0 linear, 1 log, 2 sqrt,
 * 3 asinh; histogram equalisation is not offered here), entry
 * int (s * 255 + 0.5) of cmap (256 RGBA entries), alpha 255; NaN pixels
 * get blank (RGBA). In double, as the CPU does it. ms as above. */
int sky_gpu_gl_colormap (SkyGpu *gpu, SkyGpuGl *buf, const float *src, int64_t nx, int64_t ny,
                         double lo, double hi, int stretch, const uint8_t *cmap,
                         const uint8_t blank[4], double *ms);

#ifdef __cplusplus
}
#endif

#endif /* SKY_GPU_GL_H */
