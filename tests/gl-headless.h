/* SPDX-License-Identifier: GPL-3.0-or-later */
/* gl-headless.h: an OpenGL context with no window system, for tests that run
 * where there is no X server: an EGL display on the device platform
 * (EGL_EXT_platform_device), or Mesa's surfaceless platform, and a desktop
 * GL 3.3 core context current with no surface. Through libepoxy, which
 * loads libEGL.so.1 when first asked. */
#pragma once

#include <epoxy/egl.h>
#include <stddef.h>

typedef struct {
  EGLDisplay display;
  EGLContext context;
  EGLSurface surface;      /* EGL_NO_SURFACE where surfaceless contexts work */
  char what[256];          /* "EGL device 0 (NVIDIA), GL 4.6 ...": the test's log */
} GlHeadless;

/* cuda_device >= 0: only the EGL device whose CUDA device it is
 * (EGL_NV_device_cuda), else the first device (or platform) that gives a
 * context. 0 on success; otherwise -1 with why (size bytes) saying which
 * precondition is missing. */
int gl_headless_open (GlHeadless *gl, int cuda_device, char *why, size_t size);
void gl_headless_close (GlHeadless *gl);
