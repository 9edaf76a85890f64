/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-gl-interop.h: what test-gl-interop.c (textures) and
 * test-gl-interop-buffers.c (buffer objects read as buffer textures)
 * share: TAP checks, test data, and the CUDA/GL preconditions. */
#pragma once

#include <epoxy/gl.h>

#include <stddef.h>
#include <stdint.h>

#include "gl-headless.h"

#define SKIP 77

/* One TAP line; counts failures. */
void check (int ok, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));
extern int ntests, nfailed;

/* Random test data (a fixed sequence): a radio-like float field, bytes. */
float *make_image (int nx, int ny);
void *make_bytes (size_t n);

double now_ms (void);

/* A 2D texture of nx x ny with nearest sampling and one level, filled
 * from pixels (rows packed) or left undefined (NULL). */
GLuint gl_texture (GLenum internal, GLenum format, GLenum type, int nx, int ny,
                   const void *pixels);
double median (double *v, int n);   /* sorts v */

/* The host half on Mesa or any GL: a buffer texture's picture is the 2D
 * texture's and the CPU's. */
void buffers_gl_checks (void);

#ifdef SKYSIFT_HAVE_GPU_GL
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>

#include "sky-gpu-gl.h"

#define CU(call)                                                              \
  do {                                                                        \
    cudaError_t e_ = (call);                                                  \
    if (e_ != cudaSuccess)                                                    \
      {                                                                       \
        printf ("Bail out! %s: %s at line %d\n", #call, cudaGetErrorString (e_), __LINE__); \
        exit (1);                                                             \
      }                                                                       \
  } while (0)

void *to_device (const void *host, size_t bytes);
/* An EGL context on CUDA device 0, or -1 and why. */
int open_cuda_gl (GlHeadless *gl, char *why, size_t size);

/* The interop half for buffers, on the current context: mask and labels
 * written from device memory read back bit for bit. */
void buffers_cuda_round (const char *when, int nx, int ny, const void *mask,
                         const void *labels, const void *dev_mask, const void *dev_labels);

/* A side x side result written into buffers through interop (each usage
 * hint), through the host, and drawn from buffers and from 2D textures:
 * medians in ms, BENCH lines. Opens its own context. */
int bench_buffers (int side, int repeats);
#endif
