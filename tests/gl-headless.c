/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A headless GL context through EGL (gl-headless.h). */
#include "gl-headless.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#ifndef EGL_CUDA_DEVICE_NV
#define EGL_CUDA_DEVICE_NV 0x323A
#endif

/* A context on display d (already initialised), current, surfaceless where
 * the display allows it, else on a small pbuffer. */
static int
make_context (GlHeadless *gl, EGLDisplay d, char *why, size_t size)
{
  static const EGLint config_attrs[] = {
    EGL_SURFACE_TYPE, EGL_PBUFFER_BIT, EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT,
    EGL_RED_SIZE, 8, EGL_GREEN_SIZE, 8, EGL_BLUE_SIZE, 8, EGL_NONE,
  };
  static const EGLint context_attrs[] = {
    EGL_CONTEXT_MAJOR_VERSION, 3, EGL_CONTEXT_MINOR_VERSION, 3,
    EGL_CONTEXT_OPENGL_PROFILE_MASK, EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT, EGL_NONE,
  };
  static const EGLint pbuffer_attrs[] = { EGL_WIDTH, 16, EGL_HEIGHT, 16, EGL_NONE };
  EGLConfig config;
  EGLint n = 0;

  if (!eglBindAPI (EGL_OPENGL_API))
    {
      snprintf (why, size, "this EGL has no desktop OpenGL (eglBindAPI: 0x%x)", eglGetError ());
      return -1;
    }
  if (!eglChooseConfig (d, config_attrs, &config, 1, &n) || n < 1)
    {
      snprintf (why, size, "no EGL config for an OpenGL pbuffer (0x%x)", eglGetError ());
      return -1;
    }
  gl->context = eglCreateContext (d, config, EGL_NO_CONTEXT, context_attrs);
  if (gl->context == EGL_NO_CONTEXT)
    {
      snprintf (why, size, "no OpenGL 3.3 core context (0x%x)", eglGetError ());
      return -1;
    }
  gl->surface = EGL_NO_SURFACE;
  if (!epoxy_has_egl_extension (d, "EGL_KHR_surfaceless_context"))
    gl->surface = eglCreatePbufferSurface (d, config, pbuffer_attrs);
  if (!eglMakeCurrent (d, gl->surface, gl->surface, gl->context))
    {
      snprintf (why, size, "eglMakeCurrent failed (0x%x)", eglGetError ());
      eglDestroyContext (d, gl->context);
      gl->context = EGL_NO_CONTEXT;
      return -1;
    }
  gl->display = d;
  return 0;
}

static EGLDisplay
init_display (EGLenum platform, void *native)
{
  EGLDisplay d = eglGetPlatformDisplayEXT (platform, native, NULL);
  EGLint major, minor;

  if (d == EGL_NO_DISPLAY || !eglInitialize (d, &major, &minor))
    return EGL_NO_DISPLAY;
  return d;
}

int
gl_headless_open (GlHeadless *gl, int cuda_device, char *why, size_t size)
{
  EGLDeviceEXT devices[16];
  EGLint ndevices = 0;
  int seen_cuda = 0;

  memset (gl, 0, sizeof *gl);
  gl->display = EGL_NO_DISPLAY;
  /* libepoxy aborts when libEGL cannot be loaded: ask first. */
  if (dlopen ("libEGL.so.1", RTLD_NOW | RTLD_GLOBAL) == NULL)
    {
      snprintf (why, size, "no EGL: libEGL.so.1 cannot be loaded (%s)", dlerror ());
      return -1;
    }
  if (!epoxy_has_egl_extension (EGL_NO_DISPLAY, "EGL_EXT_platform_base"))
    {
      snprintf (why, size, "this EGL has no platform displays (EGL_EXT_platform_base)");
      return -1;
    }
  /* EGL_EXT_device_base is enumeration and query together (NVIDIA's EGL
   * lists it alone). */
  if ((epoxy_has_egl_extension (EGL_NO_DISPLAY, "EGL_EXT_device_enumeration")
       || epoxy_has_egl_extension (EGL_NO_DISPLAY, "EGL_EXT_device_base"))
      && epoxy_has_egl_extension (EGL_NO_DISPLAY, "EGL_EXT_platform_device")
      && eglQueryDevicesEXT (16, devices, &ndevices))
    for (EGLint i = 0; i < ndevices; i++)
      {
        const char *ext = eglQueryDeviceStringEXT (devices[i], EGL_EXTENSIONS);
        EGLAttrib cuda = -1;
        EGLDisplay d;

        if (cuda_device >= 0)
          {
            if (ext == NULL || strstr (ext, "EGL_NV_device_cuda") == NULL
                || !eglQueryDeviceAttribEXT (devices[i], EGL_CUDA_DEVICE_NV, &cuda))
              continue;
            seen_cuda++;
            if (cuda != cuda_device)
              continue;
          }
        if ((d = init_display (EGL_PLATFORM_DEVICE_EXT, devices[i])) == EGL_NO_DISPLAY)
          continue;
        if (make_context (gl, d, why, size) == 0)
          {
            snprintf (gl->what, sizeof gl->what, "EGL device %d of %d (%s%s), %s, %s",
                      (int) i, (int) ndevices, eglQueryString (d, EGL_VENDOR),
                      cuda >= 0 ? ", CUDA device matched" : "",
                      (const char *) glGetString (GL_VERSION),
                      (const char *) glGetString (GL_RENDERER));
            return 0;
          }
        eglTerminate (d);
      }
  /* No matching device: the surfaceless platform picks the driver's
   * default GPU. Some drivers offer it but enumerate no devices (the
   * NVIDIA driver in a virtual machine without its modeset device); the
   * caller then checks the GPU with CUDA (sky_gpu_gl_check). */
  if (epoxy_has_egl_extension (EGL_NO_DISPLAY, "EGL_MESA_platform_surfaceless"))
    {
      EGLDisplay d = init_display (EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY);
      const char *vendor = d != EGL_NO_DISPLAY ? eglQueryString (d, EGL_VENDOR) : NULL;
      if (d != EGL_NO_DISPLAY && make_context (gl, d, why, size) == 0)
        {
          snprintf (gl->what, sizeof gl->what, "EGL surfaceless (%s; %d EGL devices, %d with "
                    "EGL_NV_device_cuda), %s, %s", vendor ? vendor : "?", (int) ndevices,
                    seen_cuda, (const char *) glGetString (GL_VERSION),
                    (const char *) glGetString (GL_RENDERER));
          return 0;
        }
    }
  if (cuda_device >= 0 && seen_cuda == 0)
    snprintf (why, size, "no EGL device with EGL_NV_device_cuda among %d, and no surfaceless "
              "EGL context (the NVIDIA EGL driver is not loaded: "
              "__EGL_VENDOR_LIBRARY_FILENAMES?)", (int) ndevices);
  else if (why[0] == '\0')
    snprintf (why, size, "no EGL device or surfaceless platform gives an OpenGL context");
  return -1;
}

void
gl_headless_close (GlHeadless *gl)
{
  if (gl->display == EGL_NO_DISPLAY)
    return;
  eglMakeCurrent (gl->display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
  if (gl->surface != EGL_NO_SURFACE)
    eglDestroySurface (gl->display, gl->surface);
  if (gl->context != EGL_NO_CONTEXT)
    eglDestroyContext (gl->display, gl->context);
  eglTerminate (gl->display);
  gl->display = EGL_NO_DISPLAY;
}
