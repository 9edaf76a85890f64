/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-gl-interop.h: the image view's mask and label textures written from
 * the GPU backend's device buffers through CUDA/OpenGL interop, where the
 * choice in sky-display-path.h allows it. All on the main thread with the
 * view's GL context current. */
#pragma once

#include <epoxy/gl.h>
#include <gtk/gtk.h>

#include "sky-pipeline.h"

G_BEGIN_DECLS

typedef struct _SkyGlInterop SkyGlInterop;

/* At realize, with the area's context current: chooses the display path
 * (and records it process-wide); never NULL. cpu_view: why the view draws
 * on the CPU, or NULL. Starting CUDA to check the context can take a
 * moment, once per process, and only on the NVIDIA driver. */
SkyGlInterop *sky_gl_interop_new (GdkGLContext *context, const char *cpu_view);

/* At unrealize, with the same context current: unregisters everything
 * (a re-realized area has a new context and registers again). */
void sky_gl_interop_free (SkyGlInterop *interop);

gboolean sky_gl_interop_active (const SkyGlInterop *interop);

enum { SKY_GL_INTEROP_MASK, SKY_GL_INTEROP_LABELS, SKY_GL_INTEROP_IMAGE };

/* Fills the view's mask (R8UI) or labels (R32I) with run's from device
 * memory: tex is a buffer object where is_buffer (the caller gave it
 * storage of the image's size, rows packed), else a 2D texture (given
 * storage of the image's size here). Registers it (once a size), maps,
 * copies, unmaps, and puts the CUDA event time in *ms. FALSE where the
 * device does not hold exactly that run's results (a CPU run, a later GPU
 * run, the GPU busy) or interop is off: the caller then uploads from host
 * memory. */
gboolean sky_gl_interop_write (SkyGlInterop *interop, int which, GLuint tex, gboolean is_buffer,
                               const SkyRun *run, double *ms);

/* Fills level 0 of the view's float image texture tex (R32F, nx x ny,
 * given its storage by the caller) with the GPU context's kept 2D
 * convolution output, where the bridge published it under the number
 * serial (sky_display_publish_convolved) and it is nx x ny: registers tex
 * (once a storage), maps, copies (float64 rounded to float on the device),
 * unmaps, and puts the CUDA event time in *ms. FALSE where the device holds
 * another output (a later convolution, none), the GPU is busy, or interop
 * is off: the caller then uploads from host memory. */
gboolean sky_gl_interop_write_convolved (SkyGlInterop *interop, GLuint tex, guint64 serial,
                                         gint64 nx, gint64 ny, double *ms);

/* Before the caller gives tex new storage (a texture from host memory, a
 * buffer a new size): a registered object must not change size or format
 * under CUDA. */
void sky_gl_interop_forget (SkyGlInterop *interop, int which);

G_END_DECLS
