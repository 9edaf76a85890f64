/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The mask and labels as the image view holds them where it can: in linear
 * buffer objects that its shader reads as buffer textures (texelFetch at
 * y * nx + x), filled from host memory (glBufferSubData) or through
 * CUDA/OpenGL interop (a plain device copy into the mapped buffer).
 *
 * Each picture is drawn by a small shader that reads what the view's does
 * (the mask, the label, and the four neighbours' labels for outlines),
 * once from buffer textures and once from 2D textures, and compared with
 * the same computed on the CPU: the two layouts must draw the same. */
#include "test-gl-interop.h"

#ifdef SKYSIFT_HAVE_GPU_GL
#include <cuda_gl_interop.h>   /* after epoxy's GL header, which it needs */
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char vs_src[] =
  "#version 330 core\n"
  "void main () {\n"
  "  vec2 p = vec2 (float ((gl_VertexID << 1) & 2), float (gl_VertexID & 2));\n"
  "  gl_Position = vec4 (p * 2.0 - 1.0, 0.0, 1.0);\n"
  "}\n";

/* BUFFERS is defined 0 or 1 in front of this. */
static const char fs_src[] =
  "uniform ivec2 u_size;\n"
  "uniform int u_zoom;          // framebuffer pixels per image pixel\n"
  "uniform int u_edges;         // read the four neighbours' labels\n"
  "#if BUFFERS\n"
  "uniform usamplerBuffer u_mask;\n"
  "uniform isamplerBuffer u_labels;\n"
  "#define MASK(q) texelFetch (u_mask, (q).y * u_size.x + (q).x).r\n"
  "#define LABEL(q) texelFetch (u_labels, (q).y * u_size.x + (q).x).r\n"
  "#else\n"
  "uniform usampler2D u_mask;\n"
  "uniform isampler2D u_labels;\n"
  "#define MASK(q) texelFetch (u_mask, q, 0).r\n"
  "#define LABEL(q) texelFetch (u_labels, q, 0).r\n"
  "#endif\n"
  "out vec4 frag_color;\n"
  "int label_at (ivec2 q) {\n"
  "  if (any (lessThan (q, ivec2 (0))) || any (greaterThanEqual (q, u_size))) return 0;\n"
  "  return LABEL (q);\n"
  "}\n"
  "void main () {\n"
  "  ivec2 q = ivec2 (gl_FragCoord.xy) / u_zoom;\n"
  "  uint m = MASK (q);\n"
  "  int l = LABEL (q);\n"
  "  int e = u_edges == 0 ? 0 : int (label_at (q + ivec2 (-1, 0)) != l) + int (label_at (q + ivec2 (1, 0)) != l)\n"
  "          + int (label_at (q + ivec2 (0, -1)) != l) + int (label_at (q + ivec2 (0, 1)) != l);\n"
  "  frag_color = vec4 (float (m), float (l & 255), float ((l >> 8) & 255), float (e * 63)) / 255.0;\n"
  "}\n";

/* The same picture on the CPU. */
static void
cpu_picture (const uint8_t *mask, const int32_t *labels, int nx, int ny, uint8_t *out)
{
  for (int y = 0; y < ny; y++)
    for (int x = 0; x < nx; x++, out += 4)
      {
        size_t i = (size_t) y * nx + x;
        int32_t l = labels[i];
        int e = (x > 0 ? labels[i - 1] : 0) != l;
        e += (x < nx - 1 ? labels[i + 1] : 0) != l;
        e += (y > 0 ? labels[i - nx] : 0) != l;
        e += (y < ny - 1 ? labels[i + nx] : 0) != l;
        out[0] = mask[i];
        out[1] = (uint8_t) (l & 255);
        out[2] = (uint8_t) ((l >> 8) & 255);
        out[3] = (uint8_t) (e * 63);
      }
}

typedef struct {
  GLuint prog[2];          /* [0] 2D textures, [1] buffer textures */
  GLuint vao, fbo, target;
  GLuint tbo[2];           /* buffer textures over the mask and label buffers */
  int nx, ny;
} Drawer;

static GLuint
compile (GLenum type, const char *const *src, int n)
{
  GLuint s = glCreateShader (type);
  GLint ok = 0;
  glShaderSource (s, n, src, NULL);
  glCompileShader (s);
  glGetShaderiv (s, GL_COMPILE_STATUS, &ok);
  if (!ok)
    {
      char log[1024] = "";
      glGetShaderInfoLog (s, sizeof log, NULL, log);
      printf ("# shader: %s\n", log);
    }
  return s;
}

/* What the timing draws: zoom framebuffer pixels an image pixel, with or
 * without the neighbours' labels (outlines); the pictures checked against
 * the CPU's are zoom 1 with edges. */
static void
draw_mode (Drawer *d, int zoom, int edges)
{
  for (int b = 0; b < 2; b++)
    {
      glUseProgram (d->prog[b]);
      glUniform1i (glGetUniformLocation (d->prog[b], "u_zoom"), zoom);
      glUniform1i (glGetUniformLocation (d->prog[b], "u_edges"), edges);
    }
  glUseProgram (0);
}

static int
drawer_init (Drawer *d, int nx, int ny)
{
  int ok = 1;

  memset (d, 0, sizeof *d);
  d->nx = nx;
  d->ny = ny;
  for (int b = 0; b < 2; b++)
    {
      const char *fs[3] = { "#version 330 core\n", b ? "#define BUFFERS 1\n" : "#define BUFFERS 0\n",
                            fs_src };
      const char *vs[1] = { vs_src };
      GLint linked = 0;
      d->prog[b] = glCreateProgram ();
      glAttachShader (d->prog[b], compile (GL_VERTEX_SHADER, vs, 1));
      glAttachShader (d->prog[b], compile (GL_FRAGMENT_SHADER, fs, 3));
      glLinkProgram (d->prog[b]);
      glGetProgramiv (d->prog[b], GL_LINK_STATUS, &linked);
      ok &= linked;
      glUseProgram (d->prog[b]);
      glUniform1i (glGetUniformLocation (d->prog[b], "u_mask"), 0);
      glUniform1i (glGetUniformLocation (d->prog[b], "u_labels"), 1);
      glUniform2i (glGetUniformLocation (d->prog[b], "u_size"), nx, ny);
    }
  draw_mode (d, 1, 1);
  glGenVertexArrays (1, &d->vao);
  glGenTextures (1, &d->target);
  glBindTexture (GL_TEXTURE_2D, d->target);
  glTexImage2D (GL_TEXTURE_2D, 0, GL_RGBA8, nx, ny, 0, GL_RGBA, GL_UNSIGNED_BYTE, NULL);
  glGenFramebuffers (1, &d->fbo);
  glBindFramebuffer (GL_FRAMEBUFFER, d->fbo);
  glFramebufferTexture2D (GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, d->target, 0);
  ok &= glCheckFramebufferStatus (GL_FRAMEBUFFER) == GL_FRAMEBUFFER_COMPLETE;
  glGenTextures (2, d->tbo);
  return ok;
}

static void
drawer_free (Drawer *d)
{
  glBindFramebuffer (GL_FRAMEBUFFER, 0);
  glDeleteFramebuffers (1, &d->fbo);
  glDeleteTextures (1, &d->target);
  glDeleteTextures (2, d->tbo);
  glDeleteVertexArrays (1, &d->vao);
  glDeleteProgram (d->prog[0]);
  glDeleteProgram (d->prog[1]);
}

/* Draws from the mask and labels in buffer objects (buffers) or in 2D
 * textures (R8UI, R32I). */
static void
draw (Drawer *d, int buffers, GLuint mask, GLuint labels)
{
  glBindFramebuffer (GL_FRAMEBUFFER, d->fbo);
  glViewport (0, 0, d->nx, d->ny);
  glUseProgram (d->prog[buffers]);
  for (int k = 0; k < 2; k++)
    {
      glActiveTexture (GL_TEXTURE0 + k);
      if (buffers)
        {
          glBindTexture (GL_TEXTURE_BUFFER, d->tbo[k]);
          glTexBuffer (GL_TEXTURE_BUFFER, k ? GL_R32I : GL_R8UI, k ? labels : mask);
        }
      else
        glBindTexture (GL_TEXTURE_2D, k ? labels : mask);
    }
  glBindVertexArray (d->vao);
  glDrawArrays (GL_TRIANGLES, 0, 3);
  glBindVertexArray (0);
  glActiveTexture (GL_TEXTURE0);
}

/* Pixels of the last draw that differ from want. */
static size_t
picture_diff (Drawer *d, const uint8_t *want)
{
  size_t n = (size_t) d->nx * d->ny * 4, diff = 0;
  uint8_t *got = malloc (n);
  glBindFramebuffer (GL_FRAMEBUFFER, d->fbo);
  glPixelStorei (GL_PACK_ALIGNMENT, 1);
  glReadPixels (0, 0, d->nx, d->ny, GL_RGBA, GL_UNSIGNED_BYTE, got);
  for (size_t i = 0; i < n; i += 4)
    diff += memcmp (got + i, want + i, 4) != 0;
  free (got);
  return diff;
}

static GLuint
int_texture (int labels, int nx, int ny, const void *pixels)
{
  return gl_texture (labels ? GL_R32I : GL_R8UI, GL_RED_INTEGER,
                     labels ? GL_INT : GL_UNSIGNED_BYTE, nx, ny, pixels);
}

/* A buffer object of bytes bytes: usage a glBufferData hint, or 0 for
 * immutable storage the host never maps (glBufferStorage, GL 4.4). */
static GLuint
buffer (size_t bytes, GLenum usage, const void *data)
{
  GLuint b;
  glGenBuffers (1, &b);
  glBindBuffer (GL_TEXTURE_BUFFER, b);
  if (usage)
    glBufferData (GL_TEXTURE_BUFFER, (GLsizeiptr) bytes, data, usage);
  else
    glBufferStorage (GL_TEXTURE_BUFFER, (GLsizeiptr) bytes, data, GL_DYNAMIC_STORAGE_BIT);
  glBindBuffer (GL_TEXTURE_BUFFER, 0);
  return b;
}

static size_t
buffer_diff (GLuint b, size_t bytes, const void *want)
{
  uint8_t *got = malloc (bytes);
  size_t diff = 0;
  glBindBuffer (GL_TEXTURE_BUFFER, b);
  glGetBufferSubData (GL_TEXTURE_BUFFER, 0, (GLsizeiptr) bytes, got);
  glBindBuffer (GL_TEXTURE_BUFFER, 0);
  for (size_t i = 0; i < bytes; i++)
    diff += got[i] != ((const uint8_t *) want)[i];
  free (got);
  return diff;
}

static void
buffer_write (GLuint b, size_t bytes, const void *data)
{
  glBindBuffer (GL_TEXTURE_BUFFER, b);
  glBufferSubData (GL_TEXTURE_BUFFER, 0, (GLsizeiptr) bytes, data);
  glBindBuffer (GL_TEXTURE_BUFFER, 0);
}

void
buffers_gl_checks (void)
{
  const int nx = 517, ny = 389;   /* odd width: a row is no whole number of words */
  const size_t n = (size_t) nx * ny;
  GLint max_texels = 0;
  Drawer d;

  glGetIntegerv (GL_MAX_TEXTURE_BUFFER_SIZE, &max_texels);
  printf ("# GL_MAX_TEXTURE_BUFFER_SIZE %d texels\n", max_texels);
  check (drawer_init (&d, nx, ny) && glGetError () == GL_NO_ERROR,
         "the overlay shaders (buffer and 2D textures) link and the framebuffer is complete");
  uint8_t *mask = make_bytes (n), *want = malloc (n * 4);
  int32_t *labels = make_bytes (n * 4);
  /* Small labels in runs, as real ones are, so that outlines occur. */
  for (size_t i = 0; i < n; i++)
    labels[i] = labels[i] % 7 == 0 ? 0 : (int32_t) (i / 3 % 1000) - 3;
  cpu_picture (mask, labels, nx, ny, want);

  GLuint tm = int_texture (0, nx, ny, mask), tl = int_texture (1, nx, ny, labels);
  draw (&d, 0, tm, tl);
  size_t dt = picture_diff (&d, want);
  check (dt == 0, "2D textures: the picture is the CPU's (%zu of %zu pixels differ)", dt, n);

  /* The view's buffers: storage once, then glBufferSubData per update. */
  GLuint bm = buffer (n, GL_DYNAMIC_DRAW, NULL), bl = buffer (n * 4, GL_DYNAMIC_DRAW, NULL);
  buffer_write (bm, n, mask);
  buffer_write (bl, n * 4, labels);
  size_t db = buffer_diff (bm, n, mask) + buffer_diff (bl, n * 4, labels);
  draw (&d, 1, bm, bl);
  size_t dp = picture_diff (&d, want);
  check (db == 0 && dp == 0 && glGetError () == GL_NO_ERROR, "buffer textures: the buffers "
         "read back (%zu bytes differ) and the picture is the CPU's (%zu pixels differ)", db, dp);

  /* A second result into the same storage must be what the next draw
   * reads (nothing cached from the first). */
  for (size_t i = 0; i < n; i++)
    {
      mask[i] ^= 0xFF;
      labels[i] = labels[i] ? labels[i] + 1 : 0;
    }
  cpu_picture (mask, labels, nx, ny, want);
  buffer_write (bm, n, mask);
  buffer_write (bl, n * 4, labels);
  draw (&d, 1, bm, bl);
  dp = picture_diff (&d, want);
  check (dp == 0, "buffer textures, second result in the same buffers: the picture is the "
         "CPU's (%zu pixels differ)", dp);
  glDeleteBuffers (1, &bm);
  glDeleteBuffers (1, &bl);
  glDeleteTextures (1, &tm);
  glDeleteTextures (1, &tl);
  drawer_free (&d);
  free (mask);
  free (labels);
  free (want);
}

#ifdef SKYSIFT_HAVE_GPU_GL
/* ------------------------------------------------------- interop half */

void
buffers_cuda_round (const char *when, int nx, int ny, const void *mask, const void *labels,
                    const void *dev_mask, const void *dev_labels)
{
  const size_t n = (size_t) nx * ny;
  uint8_t *poison = malloc (n * 4), *want = malloc (n * 4);
  Drawer d;

  memset (poison, 0xA5, n * 4);
  GLuint b[2] = { buffer (n, GL_DYNAMIC_DRAW, poison), buffer (n * 4, GL_DYNAMIC_DRAW, poison) };
  SkyGpuGl *obj[2] = { NULL, NULL };
  const void *src[2] = { dev_mask, dev_labels };
  size_t bytes[2] = { n, n * 4 };
  double ms = -1;
  int ret = sky_gpu_gl_register_buffer (b[0], &obj[0]);
  if (ret == SKY_OK)
    ret = sky_gpu_gl_register_buffer (b[1], &obj[1]);
  if (ret == SKY_OK)
    ret = sky_gpu_gl_write_buffers (NULL, 2, obj, src, bytes, &ms);
  size_t db = ret == SKY_OK ? buffer_diff (b[0], n, mask) + buffer_diff (b[1], n * 4, labels)
                            : (size_t) -1;
  check (ret == SKY_OK && db == 0 && ms >= 0, "%s: mask and label buffers written from device "
         "memory in one map read back bit for bit (%s%zu bytes differ, %.3f ms)", when,
         ret == SKY_OK ? "" : sky_last_error (), db, ms);
  /* And the shader sees what CUDA wrote once the unmap returned. */
  cpu_picture (mask, labels, nx, ny, want);
  size_t dp = (size_t) -1;
  if (ret == SKY_OK && drawer_init (&d, nx, ny))
    {
      draw (&d, 1, b[0], b[1]);
      dp = picture_diff (&d, want);
      drawer_free (&d);
    }
  check (dp == 0, "%s: drawn from those buffers, the picture is the CPU's (%zu pixels differ)",
         when, dp);
  sky_gpu_gl_unregister (obj[0]);
  sky_gpu_gl_unregister (obj[1]);
  glDeleteBuffers (2, b);
  free (poison);
  free (want);
}

/* -------------------------------------------------------------- timing */

static const struct {
  GLenum usage;
  const char *name;
} usages[] = {
  { GL_DYNAMIC_DRAW, "dynamic" },   /* the image view's */
  { GL_STATIC_DRAW, "static" },
  { GL_STREAM_DRAW, "stream" },
  { 0, "storage" },                 /* glBufferStorage, where GL 4.4 or ARB_buffer_storage */
};

/* Where the main thread's time goes in a buffer write: host clock around
 * the map, the copies' enqueueing, the unmap and the wait for the stream,
 * with each registration flag CUDA offers for writing. */
static void
host_side (const GLuint b[2], const void *const src[2], const size_t bytes[2], int repeats,
           double *t)
{
  static const struct { unsigned flags; const char *name; } regs[] = {
    { cudaGraphicsRegisterFlagsWriteDiscard, "write-discard" },
    { cudaGraphicsRegisterFlagsNone, "none" },
  };
  for (int g = 0; g < 2; g++)
    {
      cudaGraphicsResource_t res[2];
      double *tm = t, *tc = t + repeats, *tu = t + 2 * repeats, *ts = t + 3 * repeats;
      CU (cudaGraphicsGLRegisterBuffer (&res[0], b[0], regs[g].flags));
      CU (cudaGraphicsGLRegisterBuffer (&res[1], b[1], regs[g].flags));
      for (int r = -10; r < repeats; r++)
        {
          double h0 = now_ms ();
          CU (cudaGraphicsMapResources (2, res, 0));
          double h1 = now_ms ();
          for (int k = 0; k < 2; k++)
            {
              void *ptr;
              size_t size;
              CU (cudaGraphicsResourceGetMappedPointer (&ptr, &size, res[k]));
              CU (cudaMemcpyAsync (ptr, src[k], bytes[k], cudaMemcpyDeviceToDevice, 0));
            }
          double h2 = now_ms ();
          CU (cudaGraphicsUnmapResources (2, res, 0));
          double h3 = now_ms ();
          CU (cudaStreamSynchronize (0));
          double h4 = now_ms ();
          if (r < 0)
            continue;
          tm[r] = h1 - h0;
          tc[r] = h2 - h1;
          tu[r] = h3 - h2;
          ts[r] = h4 - h3;
        }
      printf ("#   host clock, registered %s: map %.4f, copies enqueued %.4f, unmap %.4f, "
              "stream wait %.4f ms\n", regs[g].name, median (tm, repeats), median (tc, repeats),
              median (tu, repeats), median (ts, repeats));
      printf ("BENCH host-side flags=%s map_ms=%.4f enqueue_ms=%.4f unmap_ms=%.4f "
              "sync_ms=%.4f\n", regs[g].name, median (tm, repeats), median (tc, repeats),
              median (tu, repeats), median (ts, repeats));
      cudaGraphicsUnregisterResource (res[0]);
      cudaGraphicsUnregisterResource (res[1]);
    }
}

int
bench_buffers (int side, int repeats)
{
  const size_t n = (size_t) side * side;
  char why[512] = "";
  GlHeadless gl;
  Drawer d;
  double *t = malloc (sizeof *t * repeats * 4);

  if (open_cuda_gl (&gl, why, sizeof why) != 0)
    {
      check (0, "buffers bench: %s", why);
      return 1;
    }
  uint8_t *mask = make_bytes (n), *want = malloc (n * 4);
  int32_t *labels = make_bytes (n * 4);
  for (size_t i = 0; i < n; i++)
    labels[i] = labels[i] % 7 == 0 ? 0 : (int32_t) (i / 5 % 100000);
  cpu_picture (mask, labels, side, side, want);
  const void *src[2] = { to_device (mask, n), to_device (labels, n * 4) };
  size_t bytes[2] = { n, n * 4 }, none[2] = { 0, 0 };
  void *down[2] = { malloc (n), malloc (n * 4) };   /* pageable, as the app's */
  GLuint query;
  GLint max_texels = 0;

  glGenQueries (1, &query);
  glGetIntegerv (GL_MAX_TEXTURE_BUFFER_SIZE, &max_texels);
  printf ("# buffers: %d x %d result (mask 1 B + labels 4 B a pixel, 20 MiB at 2048), "
          "GL_MAX_TEXTURE_BUFFER_SIZE %d; %d repeats after 10 warm-ups, medians in ms\n",
          side, side, max_texels, repeats);
  if (!drawer_init (&d, side, side))
    check (0, "buffers bench: the overlay shaders do not link");
  for (size_t u = 0; u < sizeof usages / sizeof usages[0]; u++)
    {
      if (usages[u].usage == 0 && !epoxy_has_gl_extension ("GL_ARB_buffer_storage")
          && epoxy_gl_version () < 44)
        continue;
      GLuint b[2] = { buffer (n, usages[u].usage, NULL), buffer (n * 4, usages[u].usage, NULL) };
      SkyGpuGl *obj[2] = { NULL, NULL };
      if (sky_gpu_gl_register_buffer (b[0], &obj[0]) != SKY_OK
          || sky_gpu_gl_register_buffer (b[1], &obj[1]) != SKY_OK)
        {
          check (0, "register %s buffers: %s", usages[u].name, sky_last_error ());
          continue;
        }
      /* Used as the view uses them before timing: a draw reads them. */
      draw (&d, 1, b[0], b[1]);
      glFinish ();
      for (int r = -10; r < repeats; r++)
        {
          double ms = 0, one = 0, both = 0, w0 = now_ms ();
          if (sky_gpu_gl_write_buffers (NULL, 2, obj, src, bytes, &ms) != SKY_OK)
            {
              check (0, "interop write: %s", sky_last_error ());
              break;
            }
          double w1 = now_ms ();
          /* Each buffer in its own map, as when only one overlay is due. */
          for (int k = 0; k < 2; k++)
            {
              sky_gpu_gl_write_buffer (NULL, obj[k], src[k], bytes[k], &one);
              both += one;
            }
          double none_ms = 0;
          sky_gpu_gl_write_buffers (NULL, 2, obj, src, none, &none_ms);
          if (r < 0)
            continue;
          t[r] = ms;
          t[repeats + r] = w1 - w0;
          t[2 * repeats + r] = both;
          t[3 * repeats + r] = none_ms;
        }
      draw (&d, 1, b[0], b[1]);
      size_t dp = picture_diff (&d, want);
      double mi = median (t, repeats), wall = median (t + repeats, repeats);
      double sep = median (t + 2 * repeats, repeats), mu = median (t + 3 * repeats, repeats);
      printf ("#   %s buffers: interop (one map, two copies, unmap; CUDA events) %.4f ms, host "
              "clock %.4f ms; each in its own map %.4f ms; map and unmap alone %.4f ms\n",
              usages[u].name, mi, wall, sep, mu);
      printf ("BENCH result-buffers-%s side=%d interop_ms=%.4f interop_wall_ms=%.4f "
              "separate_ms=%.4f map_unmap_ms=%.4f\n", usages[u].name, side, mi, wall, sep, mu);
      check (dp == 0, "%s buffers: drawn after the timed writes, the picture is the CPU's (%zu "
             "pixels differ)", usages[u].name, dp);
      if (usages[u].usage == GL_DYNAMIC_DRAW)
        check (mi <= 0.2, "result into the view's buffers through interop: median %.4f ms, "
               "target 0.2 ms", mi);
      sky_gpu_gl_unregister (obj[0]);
      sky_gpu_gl_unregister (obj[1]);

      /* The host path into the view's buffers: download, glBufferSubData,
       * glFinish. */
      if (usages[u].usage == GL_DYNAMIC_DRAW)
        {
          for (int r = -10; r < repeats; r++)
            {
              double h0 = now_ms ();
              for (int k = 0; k < 2; k++)
                CU (cudaMemcpy (down[k], src[k], bytes[k], cudaMemcpyDeviceToHost));
              double h1 = now_ms ();
              buffer_write (b[0], n, down[0]);
              buffer_write (b[1], n * 4, down[1]);
              glFinish ();
              double h2 = now_ms ();
              if (r < 0)
                continue;
              t[r] = h2 - h0;
              t[repeats + r] = h1 - h0;
              t[2 * repeats + r] = h2 - h1;
            }
          draw (&d, 1, b[0], b[1]);
          dp = picture_diff (&d, want);
          double mh = median (t, repeats);
          printf ("#   host path into the buffers %.4f ms = download %.4f + glBufferSubData to "
                  "glFinish %.4f (host clock); host / interop %.1fx\n", mh,
                  median (t + repeats, repeats), median (t + 2 * repeats, repeats), mh / mi);
          printf ("BENCH result-buffers-host side=%d host_ms=%.4f d2h_ms=%.4f upload_ms=%.4f\n",
                  side, mh, median (t + repeats, repeats), median (t + 2 * repeats, repeats));
          check (dp == 0, "host path into the buffers: the picture is the CPU's (%zu pixels "
                 "differ)", dp);

          /* What the layout costs a frame: the same overlay shader over
           * the whole result, from the buffers and from 2D textures. */
          GLuint tm = int_texture (0, side, side, mask), tl = int_texture (1, side, side, labels);
          int nd = repeats / 3 > 10 ? repeats / 3 : 10;
          static const int modes[3][2] = { { 1, 1 }, { 1, 0 }, { 4, 1 } };
          for (int md = 0; md < 3; md++)
            {
              draw_mode (&d, modes[md][0], modes[md][1]);
              for (int layout = 0; layout < 2; layout++)
                {
                  for (int r = -5; r < nd; r++)
                    {
                      GLuint64 ns = 0;
                      glBeginQuery (GL_TIME_ELAPSED, query);
                      draw (&d, layout, layout ? b[0] : tm, layout ? b[1] : tl);
                      glEndQuery (GL_TIME_ELAPSED);
                      glGetQueryObjectui64v (query, GL_QUERY_RESULT, &ns);
                      if (r >= 0)
                        t[layout * repeats + r] = ns / 1e6;
                    }
                  if (md == 0)
                    {
                      dp = picture_diff (&d, want);
                      check (dp == 0, "drawn from %s: the picture is the CPU's (%zu pixels "
                             "differ)", layout ? "buffer textures" : "2D textures", dp);
                    }
                }
              double d2 = median (t, nd), db = median (t + repeats, nd);
              printf ("#   drawing %d x %d pixels from them at zoom %d (mask, label%s; GL "
                      "timer): 2D textures %.4f ms, buffer textures %.4f ms\n", side, side,
                      modes[md][0], modes[md][1] ? ", 4 neighbours" : "", d2, db);
              printf ("BENCH draw side=%d zoom=%d edges=%d tex2d_ms=%.4f buffer_ms=%.4f\n",
                      side, modes[md][0], modes[md][1], d2, db);
            }
          draw_mode (&d, 1, 1);
          host_side (b, src, bytes, repeats, t);
          glDeleteTextures (1, &tm);
          glDeleteTextures (1, &tl);
        }
      glDeleteBuffers (2, b);
    }
  drawer_free (&d);
  glDeleteQueries (1, &query);
  gl_headless_close (&gl);
  cudaFree ((void *) src[0]);
  cudaFree ((void *) src[1]);
  free (down[0]);
  free (down[1]);
  free (mask);
  free (labels);
  free (want);
  free (t);
  return nfailed ? 1 : 0;
}
#endif
