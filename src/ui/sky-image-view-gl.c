/* SPDX-License-Identifier: GPL-3.0-or-later */
/* SkyImageView's OpenGL side: one program, the image uploaded once as an
 * R32F texture (its zoom-out pyramid as mipmap levels), the results as
 * integer data (buffer textures on desktop GL, 2D textures on GLES or for
 * images too large for a buffer texture), and a draw that sets uniforms.
 * GL 3.3 core or GLES 3.0, whichever GTK hands out: the shaders differ only
 * in their first lines. */
#include "sky-image-view-private.h"
#include "sky-display-path.h"

#include <math.h>

#define SHADER_PATH "/io/github/skysift/SkySift/shaders/"

/* GLES 3.0 has no buffer textures (3.2 has); CUDA interop, the reason for
 * them, takes desktop GL only, so ES keeps the 2D textures. */
static const char gl_prefix[] = "#version 330 core\n#define OVERLAY_BUFFERS 1\n";
static const char gles_prefix[] =
  "#version 300 es\n"
  "#define OVERLAY_BUFFERS 0\n"
  "precision highp float;\n"
  "precision highp int;\n"
  "precision highp sampler2D;\n"
  "precision highp usampler2D;\n"
  "precision highp isampler2D;\n";

enum { UNIT_IMAGE, UNIT_CMAP, UNIT_EQ, UNIT_MASK, UNIT_LABELS, UNIT_MASK_BUF, UNIT_LABELS_BUF };

static GLuint
compile_shader (GLenum type, const char *resource, gboolean es, GError **error)
{
  g_autoptr (GBytes) bytes = g_resources_lookup_data (resource, 0, error);
  const char *sources[2];
  GLint lengths[2], ok = 0;
  GLuint shader;
  gsize size;

  if (bytes == NULL)
    return 0;
  sources[0] = es ? gles_prefix : gl_prefix;
  lengths[0] = (GLint) strlen (sources[0]);
  sources[1] = g_bytes_get_data (bytes, &size);
  lengths[1] = (GLint) size;
  shader = glCreateShader (type);
  glShaderSource (shader, 2, sources, lengths);
  glCompileShader (shader);
  glGetShaderiv (shader, GL_COMPILE_STATUS, &ok);
  if (!ok)
    {
      char log[2048] = "";
      glGetShaderInfoLog (shader, sizeof log, NULL, log);
      g_set_error (error, SKY_UI_ERROR, SKY_UI_ERROR_GL, "%s does not compile: %s", resource, log);
      glDeleteShader (shader);
      return 0;
    }
  return shader;
}

static GLuint
link_program (gboolean es, GError **error)
{
  GLuint vs, fs, program;
  GLint ok = 0;

  if ((vs = compile_shader (GL_VERTEX_SHADER, SHADER_PATH "image.vert", es, error)) == 0)
    return 0;
  if ((fs = compile_shader (GL_FRAGMENT_SHADER, SHADER_PATH "image.frag", es, error)) == 0)
    {
      glDeleteShader (vs);
      return 0;
    }
  program = glCreateProgram ();
  glAttachShader (program, vs);
  glAttachShader (program, fs);
  glLinkProgram (program);
  glDeleteShader (vs);
  glDeleteShader (fs);
  glGetProgramiv (program, GL_LINK_STATUS, &ok);
  if (!ok)
    {
      char log[2048] = "";
      glGetProgramInfoLog (program, sizeof log, NULL, log);
      g_set_error (error, SKY_UI_ERROR, SKY_UI_ERROR_GL, "the image shader does not link: %s", log);
      glDeleteProgram (program);
      return 0;
    }
  return program;
}

static GLuint
new_texture (void)
{
  GLuint tex;
  glGenTextures (1, &tex);
  glBindTexture (GL_TEXTURE_2D, tex);
  glTexParameteri (GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
  glTexParameteri (GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
  glTexParameteri (GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
  glTexParameteri (GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
  glTexParameteri (GL_TEXTURE_2D, GL_TEXTURE_MAX_LEVEL, 0);
  return tex;
}

void
sky_image_view_gl_realize (SkyImageView *self)
{
  GtkGLArea *area = GTK_GL_AREA (self->area);
  GdkGLContext *context;
  g_autoptr (GError) error = NULL;
  gboolean es;
  int major, minor;

  double t0 = g_get_monotonic_time ();

  gtk_gl_area_make_current (area);
  if (gtk_gl_area_get_error (area) != NULL)
    {
      g_free (self->gl_info);
      self->gl_info = g_strdup_printf ("No OpenGL: %s", gtk_gl_area_get_error (area)->message);
      return;
    }
  context = gtk_gl_area_get_context (area);
  es = gdk_gl_context_get_use_es (context);
  gdk_gl_context_get_version (context, &major, &minor);
  g_free (self->gl_info);
  self->gl_info = g_strdup_printf ("%s %d.%d, %s", es ? "OpenGL ES" : "OpenGL", major, minor,
                                   (const char *) glGetString (GL_RENDERER));
  if ((es && major < 3) || (!es && (major * 10 + minor) < 33))
    {
      g_set_error (&error, SKY_UI_ERROR, SKY_UI_ERROR_GL,
                   "the image view needs OpenGL 3.3 or OpenGL ES 3.0; this context is %s", self->gl_info);
      gtk_gl_area_set_error (area, error);
      return;
    }
  if ((self->program = link_program (es, &error)) == 0)
    {
      gtk_gl_area_set_error (area, error);
      return;
    }
#define U(name) self->u.name = glGetUniformLocation (self->program, "u_" #name)
  U (center); U (half); U (fb_zoom); U (flip); U (size); U (lod); U (base_lod); U (lo); U (hi);
  U (stretch); U (overlay); U (selected); U (reach); U (background); U (blank);
#undef U
  glUseProgram (self->program);
  glUniform1i (glGetUniformLocation (self->program, "u_image"), UNIT_IMAGE);
  glUniform1i (glGetUniformLocation (self->program, "u_cmap"), UNIT_CMAP);
  glUniform1i (glGetUniformLocation (self->program, "u_eq"), UNIT_EQ);
  glUniform1i (glGetUniformLocation (self->program, "u_mask"), UNIT_MASK);
  glUniform1i (glGetUniformLocation (self->program, "u_labels"), UNIT_LABELS);
  self->max_buffer_texels = 0;
  if (!es)
    {
      glUniform1i (glGetUniformLocation (self->program, "u_mask_buf"), UNIT_MASK_BUF);
      glUniform1i (glGetUniformLocation (self->program, "u_labels_buf"), UNIT_LABELS_BUF);
      self->u_buffers = glGetUniformLocation (self->program, "u_buffers");
      glGetIntegerv (GL_MAX_TEXTURE_BUFFER_SIZE, &self->max_buffer_texels);
      glGenBuffers (1, &self->buf_mask);
      glGenBuffers (1, &self->buf_labels);
      glGenTextures (1, &self->tbo_mask);
      glGenTextures (1, &self->tbo_labels);
      self->buf_bytes[0] = self->buf_bytes[1] = 0;
    }

  glGenVertexArrays (1, &self->vao);
  self->tex_image = new_texture ();
  self->tex_cmap = new_texture ();
  self->tex_eq = new_texture ();
  self->tex_mask = new_texture ();
  self->tex_labels = new_texture ();
  glGetIntegerv (GL_MAX_TEXTURE_SIZE, &self->max_texture_size);
  /* A smaller limit, for the tests of an image wider than a texture. */
  if (g_getenv ("SKYSIFT_GL_MAX_TEXTURE_SIZE") != NULL)
    self->max_texture_size = MIN (self->max_texture_size,
                                  (GLint) g_ascii_strtoll (g_getenv ("SKYSIFT_GL_MAX_TEXTURE_SIZE"),
                                                           NULL, 10));
  /* The display path, with this context current: a re-realize brings a
   * new context and chooses (and registers) again. */
  self->interop = sky_gl_interop_new (context, NULL);
  g_debug ("GL ready in %.1f ms: %s", (g_get_monotonic_time () - t0) / 1000.0, self->gl_info);
  self->image_dirty = self->cmap_dirty = self->eq_dirty = TRUE;
  self->mask_dirty = self->labels_dirty = TRUE;
}

void
sky_image_view_gl_unrealize (SkyImageView *self)
{
  GLuint textures[] = { self->tex_image, self->tex_cmap, self->tex_eq, self->tex_mask,
                        self->tex_labels, self->tbo_mask, self->tbo_labels };
  GLuint buffers[] = { self->buf_mask, self->buf_labels };

  gtk_gl_area_make_current (GTK_GL_AREA (self->area));
  if (gtk_gl_area_get_error (GTK_GL_AREA (self->area)) == NULL)
    {
      /* Unregister before the textures go, with their context current. */
      g_clear_pointer (&self->interop, sky_gl_interop_free);
      if (self->tex_image)
        glDeleteTextures (G_N_ELEMENTS (textures), textures);
      if (self->buf_mask)
        glDeleteBuffers (G_N_ELEMENTS (buffers), buffers);
      if (self->vao)
        glDeleteVertexArrays (1, &self->vao);
      if (self->program)
        glDeleteProgram (self->program);
    }
  self->tex_image = self->tex_cmap = self->tex_eq = self->tex_mask = self->tex_labels = 0;
  self->texture_holds_preview = FALSE;
  self->buf_mask = self->buf_labels = self->tbo_mask = self->tbo_labels = 0;
  self->buf_bytes[0] = self->buf_bytes[1] = 0;
  self->vao = self->program = 0;
  /* Without a context nothing can be unregistered; the registrations died
   * with it. */
  g_clear_pointer (&self->interop, g_free);
}

static void
upload_image (SkyImageView *self)
{
  const SkyPyramid *pyr = &sky_image_view_pixels (self)->pyramid;
  int nlevels = sky_pyramid_levels (pyr);
  int base = pyr->first;

  while (base < nlevels - 1
         && (pyr->nx[base] > self->max_texture_size || pyr->ny[base] > self->max_texture_size))
    base++;
  self->levels_uploaded = 0;
  /* Level 0 alone of an image too big for one texture: until its zoom-out
   * levels come (sky_image_view_levels_changed), the texture keeps the
   * reduced view of it drawn before, if it holds that, and its base level
   * (the shader draws level max (lod, base)). */
  if (pyr->nx[base] > self->max_texture_size || pyr->ny[base] > self->max_texture_size)
    {
      if (!self->texture_holds_preview)
        self->base_lod = base;
      return;
    }
  self->base_lod = base;
  self->levels_uploaded = nlevels;
  self->texture_holds_preview = sky_image_view_pixels (self)->is_preview;
  /* Buffer textures hold any image of up to max_buffer_texels pixels
   * (2^27 on NVIDIA's driver and Mesa); 2D ones only an image that fits
   * whole in a texture. */
  self->overlay_buffers = self->max_buffer_texels > 0
                          && self->image->image.nx * self->image->image.ny
                             <= (gint64) self->max_buffer_texels;
  self->overlays_uploadable = self->overlay_buffers || base == 0;
  glBindTexture (GL_TEXTURE_2D, self->tex_image);
  glPixelStorei (GL_UNPACK_ALIGNMENT, 4);
  /* Any storage given below is new: a registration of the old must go. */
  sky_gl_interop_forget (self->interop, SKY_GL_INTEROP_IMAGE);
  if (self->image_on_device != 0 && base == 0 && sky_gl_interop_active (self->interop))
    {
      double ms = 0, t0 = g_get_monotonic_time ();
      /* Storage for every level, level 0 written by the device (it is the
       * whole image: base 0), then the zoom-out levels from the host:
       * after the write, since a write-discard registration may leave the
       * texture's other contents undefined. */
      for (int k = 0; k < nlevels; k++)
        glTexImage2D (GL_TEXTURE_2D, k, GL_R32F, (GLsizei) pyr->nx[k], (GLsizei) pyr->ny[k], 0,
                      GL_RED, GL_FLOAT, NULL);
      if (sky_gl_interop_write_convolved (self->interop, self->tex_image, self->image_on_device,
                                          pyr->nx[0], pyr->ny[0], &ms))
        {
          /* Unregistered before OpenGL writes the other levels: while the
           * texture stayed registered for write-discard, NVIDIA's driver
           * kept none of them, and the view at Fit (which samples them)
           * was black. */
          sky_gl_interop_forget (self->interop, SKY_GL_INTEROP_IMAGE);
          for (int k = 1; k < nlevels; k++)
            glTexSubImage2D (GL_TEXTURE_2D, k, 0, 0, (GLsizei) pyr->nx[k], (GLsizei) pyr->ny[k],
                             GL_RED, GL_FLOAT, pyr->pixels[k]);
          g_free (self->image_fill);
          self->image_fill = g_strdup_printf ("through CUDA/GL interop from the GPU's output "
                                              "(%.3f ms, CUDA events; %.1f ms with the zoom-out "
                                              "levels from the host)", ms,
                                              (g_get_monotonic_time () - t0) / 1000.0);
          goto levels;
        }
      /* The device holds another output, or is busy: the host, as below. */
      sky_gl_interop_forget (self->interop, SKY_GL_INTEROP_IMAGE);
    }
  {
    double t0 = g_get_monotonic_time ();
    for (int k = base; k < nlevels; k++)
      glTexImage2D (GL_TEXTURE_2D, k - base, GL_R32F, (GLsizei) pyr->nx[k],
                    (GLsizei) pyr->ny[k], 0, GL_RED, GL_FLOAT, pyr->pixels[k]);
    g_free (self->image_fill);
    self->image_fill = g_strdup_printf ("from host memory (glTexImage2D, %.1f ms)",
                                        (g_get_monotonic_time () - t0) / 1000.0);
  }
levels:
  glTexParameteri (GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST_MIPMAP_NEAREST);
  glTexParameteri (GL_TEXTURE_2D, GL_TEXTURE_BASE_LEVEL, 0);
  glTexParameteri (GL_TEXTURE_2D, GL_TEXTURE_MAX_LEVEL, nlevels - 1 - base);
}

/* Storage of bytes bytes for the overlay buffer which, with its buffer
 * texture over it; kept while the size holds, so that an update (either
 * way) writes into the same buffer and a CUDA registration stays valid. */
static void
ensure_buffer (SkyImageView *self, int which, gsize bytes)
{
  GLuint buf = which == SKY_GL_INTEROP_MASK ? self->buf_mask : self->buf_labels;
  GLuint tbo = which == SKY_GL_INTEROP_MASK ? self->tbo_mask : self->tbo_labels;

  if (self->buf_bytes[which] == bytes)
    return;
  sky_gl_interop_forget (self->interop, which);
  glBindBuffer (GL_TEXTURE_BUFFER, buf);
  glBufferData (GL_TEXTURE_BUFFER, (GLsizeiptr) bytes, NULL, GL_DYNAMIC_DRAW);
  glBindBuffer (GL_TEXTURE_BUFFER, 0);
  glBindTexture (GL_TEXTURE_BUFFER, tbo);
  glTexBuffer (GL_TEXTURE_BUFFER, which == SKY_GL_INTEROP_MASK ? GL_R8UI : GL_R32I, buf);
  glBindTexture (GL_TEXTURE_BUFFER, 0);
  self->buf_bytes[which] = bytes;
}

/* One overlay, from device memory where the display path is interop and
 * the device holds this run's results, else from the host; each way's
 * time goes to the display line. Into the overlay buffers where this image
 * has them, else into the 2D texture tex. */
static void
upload_overlay (SkyImageView *self, int which, GLuint tex, GLint format, GLenum type,
                const void *pixels, double times[2])
{
  const SkyImage *img = &self->image->image;
  static const guint32 zero = 0;
  gsize bytes = (gsize) img->nx * img->ny * (which == SKY_GL_INTEROP_MASK ? 1 : 4);
  double ms = 0, t0;

  if (pixels != NULL && self->overlay_buffers)
    {
      GLuint buf = which == SKY_GL_INTEROP_MASK ? self->buf_mask : self->buf_labels;
      ensure_buffer (self, which, bytes);
      if (self->run != NULL
          && sky_gl_interop_write (self->interop, which, buf, TRUE, self->run, &ms))
        {
          times[1] += ms;
          return;
        }
      t0 = g_get_monotonic_time ();
      glBindBuffer (GL_TEXTURE_BUFFER, buf);
      glBufferSubData (GL_TEXTURE_BUFFER, 0, (GLsizeiptr) bytes, pixels);
      glBindBuffer (GL_TEXTURE_BUFFER, 0);
      times[0] += (g_get_monotonic_time () - t0) / 1000.0;
      return;
    }
  if (pixels != NULL && self->overlays_uploadable && self->run != NULL
      && sky_gl_interop_write (self->interop, which, tex, FALSE, self->run, &ms))
    {
      times[1] += ms;
      return;
    }
  sky_gl_interop_forget (self->interop, which);
  t0 = g_get_monotonic_time ();
  glBindTexture (GL_TEXTURE_2D, tex);
  glPixelStorei (GL_UNPACK_ALIGNMENT, 1);
  if (pixels != NULL && self->overlays_uploadable)
    glTexImage2D (GL_TEXTURE_2D, 0, format, (GLsizei) img->nx, (GLsizei) img->ny, 0,
                  GL_RED_INTEGER, type, pixels);
  else
    glTexImage2D (GL_TEXTURE_2D, 0, format, 1, 1, 0, GL_RED_INTEGER, type, &zero);
  glPixelStorei (GL_UNPACK_ALIGNMENT, 4);
  if (pixels != NULL && self->overlays_uploadable)
    times[0] += (g_get_monotonic_time () - t0) / 1000.0;
}

/* The zoom-out levels that came after the image's level 0 was uploaded
 * (sky_image_view_levels_changed): those alone, into the same texture. A
 * texture the device wrote, or none yet, is made anew. */
static void
upload_new_levels (SkyImageView *self)
{
  const SkyPyramid *pyr = &sky_image_view_pixels (self)->pyramid;
  int nlevels = sky_pyramid_levels (pyr), base = self->base_lod;
  double t0 = g_get_monotonic_time ();

  if (self->levels_uploaded == 0 || self->image_on_device != 0)
    {
      upload_image (self);
      return;
    }
  glBindTexture (GL_TEXTURE_2D, self->tex_image);
  glPixelStorei (GL_UNPACK_ALIGNMENT, 4);
  for (int k = self->levels_uploaded; k < nlevels; k++)
    glTexImage2D (GL_TEXTURE_2D, k - base, GL_R32F, (GLsizei) pyr->nx[k], (GLsizei) pyr->ny[k],
                  0, GL_RED, GL_FLOAT, pyr->pixels[k]);
  glTexParameteri (GL_TEXTURE_2D, GL_TEXTURE_MAX_LEVEL, nlevels - 1 - base);
  self->levels_uploaded = nlevels;
  g_debug ("zoom-out levels uploaded to the GPU in %.1f ms",
           (g_get_monotonic_time () - t0) / 1000.0);
}

static void
upload_dirty (SkyImageView *self)
{
  if (self->image_dirty)
    {
      double t0 = g_get_monotonic_time ();
      upload_image (self);
      self->image_dirty = self->levels_dirty = FALSE;
      g_debug ("image uploaded to the GPU in %.1f ms", (g_get_monotonic_time () - t0) / 1000.0);
    }
  if (self->levels_dirty)
    {
      upload_new_levels (self);
      self->levels_dirty = FALSE;
    }
  if (self->cmap_dirty)
    {
      guint8 rgba[SKY_CMAP_SIZE * 4];
      sky_colormap_fill (self->colormap, rgba);
      glBindTexture (GL_TEXTURE_2D, self->tex_cmap);
      glTexImage2D (GL_TEXTURE_2D, 0, GL_RGBA8, SKY_CMAP_SIZE, 1, 0, GL_RGBA, GL_UNSIGNED_BYTE,
                    rgba);
      self->cmap_dirty = FALSE;
    }
  if (self->eq_dirty)
    {
      glBindTexture (GL_TEXTURE_2D, self->tex_eq);
      glTexImage2D (GL_TEXTURE_2D, 0, GL_R32F, SKY_EQ_SIZE, 1, 0, GL_RED, GL_FLOAT, self->eq);
      self->eq_dirty = FALSE;
    }
}

/* The mask and the labels go up only when a frame shows them: a label image
 * is four bytes a pixel, 16 MiB at 2048 x 2048, and at a fitted zoom with
 * only markers drawn nothing reads it. */
static void
upload_overlays (SkyImageView *self, int overlay)
{
  double times[2] = { 0, 0 };   /* ms from the host, through interop */
  gboolean any = FALSE;

  if (self->mask_dirty && (overlay & 1))
    {
      upload_overlay (self, SKY_GL_INTEROP_MASK, self->tex_mask, GL_R8UI, GL_UNSIGNED_BYTE,
                      self->run ? self->run->mask : NULL, times);
      self->mask_dirty = FALSE;
      any = TRUE;
    }
  if (self->labels_dirty && (overlay & 6))
    {
      upload_overlay (self, SKY_GL_INTEROP_LABELS, self->tex_labels, GL_R32I, GL_INT,
                      self->run ? self->run->labels : NULL, times);
      self->labels_dirty = FALSE;
      any = TRUE;
    }
  if (any && times[0] > 0)
    sky_display_note_update (FALSE, times[0]);
  if (any && times[1] > 0)
    sky_display_note_update (TRUE, times[1]);
}

static void
bind_unit (int unit, GLuint tex)
{
  glActiveTexture (GL_TEXTURE0 + unit);
  glBindTexture (GL_TEXTURE_2D, tex);
}

gboolean
sky_image_view_gl_render (SkyImageView *self)
{
  int scale = gtk_widget_get_scale_factor (self->area);
  int width = gtk_widget_get_width (self->area) * scale;
  int height = gtk_widget_get_height (self->area) * scale;
  double fb_zoom = self->zoom * scale, lo, hi;
  const SkyImage *img;
  int lod = 0, overlay = 0;

  glClearColor (0.23f, 0.23f, 0.24f, 1.0f);
  glClear (GL_COLOR_BUFFER_BIT);
  if (self->program == 0 || self->image == NULL)
    {
      self->render_current = TRUE;
      return TRUE;
    }
  img = &self->image->image;
  glActiveTexture (GL_TEXTURE0);
  upload_dirty (self);

  sky_image_view_frame_setup (self, fb_zoom, &lod, &overlay);
  sky_image_view_get_scale (self, &lo, &hi, NULL);
  upload_overlays (self, overlay);
  glViewport (0, 0, width, height);
  glUseProgram (self->program);
  bind_unit (UNIT_IMAGE, self->tex_image);
  bind_unit (UNIT_CMAP, self->tex_cmap);
  bind_unit (UNIT_EQ, self->tex_eq);
  bind_unit (UNIT_MASK, self->tex_mask);
  bind_unit (UNIT_LABELS, self->tex_labels);
  if (self->max_buffer_texels > 0)
    {
      glActiveTexture (GL_TEXTURE0 + UNIT_MASK_BUF);
      glBindTexture (GL_TEXTURE_BUFFER, self->tbo_mask);
      glActiveTexture (GL_TEXTURE0 + UNIT_LABELS_BUF);
      glBindTexture (GL_TEXTURE_BUFFER, self->tbo_labels);
      glUniform1i (self->u_buffers, self->overlay_buffers);
    }
  glActiveTexture (GL_TEXTURE0);

  glUniform2f (self->u.center, (float) self->cx, (float) self->cy);
  glUniform2f (self->u.half, width / 2.0f, height / 2.0f);
  glUniform1f (self->u.fb_zoom, (float) fb_zoom);
  glUniform1f (self->u.flip, self->flip_x ? -1.0f : 1.0f);
  glUniform2i (self->u.size, (GLint) img->nx, (GLint) img->ny);
  glUniform1i (self->u.lod, lod);
  glUniform1i (self->u.base_lod, self->base_lod);
  glUniform1f (self->u.lo, (float) lo);
  glUniform1f (self->u.hi, (float) hi);
  glUniform1i (self->u.stretch, self->stretch);
  glUniform1i (self->u.overlay, overlay);
  glUniform1i (self->u.selected, (GLint) (self->selected + 1));
  glUniform1f (self->u.reach, fb_zoom < 1 ? (float) MIN (0.5 / fb_zoom, 4.0) : 0.0f);
  glUniform3f (self->u.background, 0.23f, 0.23f, 0.24f);
  glUniform3f (self->u.blank, 0.55f, 0.62f, 0.75f);

  glBindVertexArray (self->vao);
  glDrawArrays (GL_TRIANGLES, 0, 3);
  if (g_getenv ("SKYSIFT_GL_FINISH"))
    {
      double t0 = g_get_monotonic_time ();
      glFinish ();
      g_debug ("frame: %d x %d, lod %d, drawn in %.1f ms", width, height, lod,
               (g_get_monotonic_time () - t0) / 1000.0);
    }
  glBindVertexArray (0);
  glUseProgram (0);
  self->render_current = TRUE;
  return TRUE;
}
