/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The view's textures from device memory (sky-gl-interop.h). */
#include "sky-gl-interop.h"
#include "sky-display-path.h"
#include "sky-pipeline-gpu.h"

#ifdef SKYSIFT_HAVE_GPU_GL
#include "sky-gpu-gl.h"
#endif

typedef struct {
  GLuint tex;                /* a 2D texture, or a buffer where is_buffer */
  gboolean is_buffer;
  gint64 nx, ny;
#ifdef SKYSIFT_HAVE_GPU_GL
  SkyGpuGl *obj;
#endif
} Registered;

struct _SkyGlInterop {
  gboolean active;
  Registered reg[3];   /* mask, labels, float image */
};

SkyGlInterop *
sky_gl_interop_new (GdkGLContext *context, const char *cpu_view)
{
  SkyGlInterop *interop = g_new0 (SkyGlInterop, 1);
  g_autofree char *gpu_why = NULL, *refusal = NULL;
  SkyDisplayFacts f = {
    .forced = g_getenv ("SKYSIFT_DISPLAY"),
#ifdef SKYSIFT_HAVE_GPU_GL
    .build_has_interop = TRUE,
#endif
    .cpu_view = cpu_view,
    .gpu_ok = TRUE,
    .gl_on_gpu = TRUE,
  };

  if (cpu_view == NULL && context != NULL)
    {
      f.es = gdk_gl_context_get_use_es (context);
      f.vendor = (const char *) glGetString (GL_VENDOR);
      f.renderer = (const char *) glGetString (GL_RENDERER);
    }
  /* CUDA is asked only once everything cheaper allows interop. */
  refusal = sky_display_refusal (&f);
  if (refusal == NULL)
    {
      f.gpu_ok = sky_pipeline_gpu_available (&gpu_why);
      f.gpu_why = gpu_why;
      refusal = sky_display_refusal (&f);
    }
#ifdef SKYSIFT_HAVE_GPU_GL
  char gl_why[512] = "";
  if (refusal == NULL)
    {
      f.gl_on_gpu = sky_gpu_gl_check (0, gl_why, sizeof gl_why) == SKY_OK;
      f.gl_why = gl_why;
      refusal = sky_display_refusal (&f);
    }
#endif
  interop->active = refusal == NULL;
  sky_display_set_path (refusal);
  return interop;
}

gboolean
sky_gl_interop_active (const SkyGlInterop *interop)
{
  return interop != NULL && interop->active;
}

void
sky_gl_interop_forget (SkyGlInterop *interop, int which)
{
  if (interop == NULL)
    return;
#ifdef SKYSIFT_HAVE_GPU_GL
  g_clear_pointer (&interop->reg[which].obj, sky_gpu_gl_unregister);
#endif
  interop->reg[which].tex = 0;
  interop->reg[which].is_buffer = FALSE;
  interop->reg[which].nx = interop->reg[which].ny = 0;
}

void
sky_gl_interop_free (SkyGlInterop *interop)
{
  if (interop == NULL)
    return;
  sky_gl_interop_forget (interop, SKY_GL_INTEROP_MASK);
  sky_gl_interop_forget (interop, SKY_GL_INTEROP_LABELS);
  sky_gl_interop_forget (interop, SKY_GL_INTEROP_IMAGE);
  g_free (interop);
}

#ifdef SKYSIFT_HAVE_GPU_GL
/* The registration for this object at the image's size: a mask or label
 * texture gets its storage here; a buffer, and the float image's texture
 * (with its mipmap levels), have it from the view already. */
static gboolean
ensure_registered (SkyGlInterop *interop, int which, GLuint tex, gboolean is_buffer, gint64 nx,
                   gint64 ny)
{
  Registered *r = &interop->reg[which];
  int ret;

  if (r->obj != NULL && r->tex == tex && r->is_buffer == is_buffer && r->nx == nx && r->ny == ny)
    return TRUE;
  sky_gl_interop_forget (interop, which);
  if (is_buffer)
    ret = sky_gpu_gl_register_buffer (tex, &r->obj);
  else if (which == SKY_GL_INTEROP_IMAGE)
    ret = sky_gpu_gl_register_texture (tex, GL_TEXTURE_2D, &r->obj);
  else
    {
      glBindTexture (GL_TEXTURE_2D, tex);
      if (which == SKY_GL_INTEROP_MASK)
        glTexImage2D (GL_TEXTURE_2D, 0, GL_R8UI, (GLsizei) nx, (GLsizei) ny, 0, GL_RED_INTEGER,
                      GL_UNSIGNED_BYTE, NULL);
      else
        glTexImage2D (GL_TEXTURE_2D, 0, GL_R32I, (GLsizei) nx, (GLsizei) ny, 0, GL_RED_INTEGER,
                      GL_INT, NULL);
      ret = sky_gpu_gl_register_texture (tex, GL_TEXTURE_2D, &r->obj);
    }
  if (ret != SKY_OK)
    {
      /* Refused for this texture: the host path serves from now on. */
      g_message ("CUDA/GL interop: %s; the view uploads from host memory", sky_last_error ());
      interop->active = FALSE;
      sky_display_set_path (is_buffer ? "CUDA refused to register a buffer"
                                      : "CUDA refused to register a texture");
      return FALSE;
    }
  r->tex = tex;
  r->is_buffer = is_buffer;
  r->nx = nx;
  r->ny = ny;
  return TRUE;
}
#endif

gboolean
sky_gl_interop_write (SkyGlInterop *interop, int which, GLuint tex, gboolean is_buffer,
                      const SkyRun *run, double *ms)
{
#ifdef SKYSIFT_HAVE_GPU_GL
  GMutex *lock = NULL;
  gpointer source_gpu;
  gconstpointer source_mask, source_labels;
  const SkyImage *img = &run->image->image;
  gconstpointer key = which == SKY_GL_INTEROP_MASK ? (gconstpointer) run->mask
                                                   : (gconstpointer) run->labels;
  SkyGpuDeviceBuffers buf;
  gboolean done = FALSE;

  /* What the bridge published is read with its lock held; trylock: the
   * main thread never waits for a GPU run. */
  if (sky_gl_interop_active (interop))
    sky_display_source (&source_gpu, &lock, &source_mask, &source_labels);
  if (lock == NULL || key == NULL || !g_mutex_trylock (lock))
    return FALSE;
  sky_display_source (&source_gpu, &lock, &source_mask, &source_labels);
  /* The device holds this run's results only if the bridge said so since
   * its last run; host buffers are unique while the run holds them. */
  if (source_gpu != NULL
      && key == (which == SKY_GL_INTEROP_MASK ? source_mask : source_labels)
      && sky_gpu_device_buffers (source_gpu, &buf) == SKY_OK
      && img->nx * img->ny <= buf.capacity
      && ensure_registered (interop, which, tex, is_buffer, img->nx, img->ny))
    {
      const void *src = which == SKY_GL_INTEROP_MASK ? (const void *) buf.mask
                                                     : (const void *) buf.labels;
      size_t row = (size_t) img->nx * (which == SKY_GL_INTEROP_MASK ? 1 : 4);
      SkyGpuGl *obj = interop->reg[which].obj;
      /* A buffer takes one linear copy; a texture the copy into its tiled
       * array, about 14 times slower on an H200 (docs/ui.md). */
      done = (is_buffer ? sky_gpu_gl_write_buffer (source_gpu, obj, src, row * img->ny, ms)
                        : sky_gpu_gl_write_texture (source_gpu, obj, src, row,
                                                    (size_t) img->ny, ms)) == SKY_OK;
      if (!done)
        g_message ("CUDA/GL interop: %s; this update goes through the host", sky_last_error ());
    }
  g_mutex_unlock (lock);
  return done;
#else
  return FALSE;
#endif
}

gboolean
sky_gl_interop_write_convolved (SkyGlInterop *interop, GLuint tex, guint64 serial, gint64 nx,
                                gint64 ny, double *ms)
{
#ifdef SKYSIFT_HAVE_GPU_GL
  GMutex *lock = NULL;
  gpointer source_gpu;
  guint64 source_serial;
  SkyGpuConvolveOutput out;
  gboolean done = FALSE;

  /* As for the runs: the bridge's lock only if free, never a wait. */
  if (sky_gl_interop_active (interop))
    sky_display_source_convolved (&source_gpu, &lock, &source_serial);
  if (lock == NULL || serial == 0 || !g_mutex_trylock (lock))
    return FALSE;
  sky_display_source_convolved (&source_gpu, &lock, &source_serial);
  if (source_gpu != NULL && source_serial == serial
      && sky_gpu_convolve_output (source_gpu, &out) == SKY_OK && out.nx == nx && out.ny == ny
      && ensure_registered (interop, SKY_GL_INTEROP_IMAGE, tex, FALSE, nx, ny))
    {
      done = sky_gpu_gl_write_convolved (source_gpu, interop->reg[SKY_GL_INTEROP_IMAGE].obj, ms)
             == SKY_OK;
      if (!done)
        g_message ("CUDA/GL interop: %s; this image goes up from host memory", sky_last_error ());
    }
  g_mutex_unlock (lock);
  return done;
#else
  return FALSE;
#endif
}
