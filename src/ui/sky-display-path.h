/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-display-path.h: how the image view's textures are filled, and why.
 *
 * Where the GPU backend has left a run's mask and labels in device memory
 * and the view's OpenGL context is the NVIDIA driver's on that GPU, they go
 * into the textures through CUDA/OpenGL interop (sky-gl-interop.h), never
 * crossing the bus; elsewhere from host memory. This holds the choice, as
 * a pure function of what was found (so that it is tested without a GPU or
 * a display), and the process-wide line that the about dialog and the
 * timings panel show, with the last update's times. GLib only. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* What the view found when its GL area was realized, in the order the
 * choice reads them; it stops at the first that refuses interop. */
typedef struct {
  const char *forced;        /* SKYSIFT_DISPLAY's value, or NULL */
  gboolean build_has_interop;
  const char *cpu_view;      /* why the view draws on the CPU, or NULL (GL) */
  gboolean es;               /* GTK gave an OpenGL ES context */
  const char *vendor;        /* GL_VENDOR */
  const char *renderer;      /* GL_RENDERER */
  gboolean gpu_ok;           /* the GPU backend can run here... */
  const char *gpu_why;       /* ...or why not */
  gboolean gl_on_gpu;        /* CUDA takes this GL context (cudaGLGetDevices)... */
  const char *gl_why;        /* ...or why not */
} SkyDisplayFacts;

/* NULL when the facts allow interop, else why not, as a clause that reads
 * after "because" (free it). */
char *sky_display_refusal (const SkyDisplayFacts *facts);

/* The NVIDIA driver's GL_VENDOR, the only one CUDA's GL interop takes. */
gboolean sky_display_vendor_is_nvidia (const char *vendor);

/* Records the choice (refusal NULL: interop) and logs it; the line reads
 * "display: CUDA/GL interop" or "display: host upload, because ...". */
void sky_display_set_path (const char *refusal);
/* The line; before any view chose, "display: not chosen yet (no image
 * view has started OpenGL)". Main thread. */
const char *sky_display_line (void);
gboolean sky_display_uses_interop (void);

/* A texture update of the view took ms (the mask and the labels of a
 * run), one way or the other; -1 where not measured yet. */
void sky_display_note_update (gboolean interop, double ms);
void sky_display_last_ms (double *host_ms, double *interop_ms);

/* The line and the times in one sentence for the timings panel. */
char *sky_display_describe (void);

/* Called (main thread) whenever the line or a time changes. */
guint sky_display_watch (void (*func) (gpointer data), gpointer data);
void sky_display_unwatch (guint id);

/* The GPU bridge's side, after every run on its context, with its lock
 * held: which results the context's device buffers hold, named by the host
 * buffers mask and labels that the run downloaded and that became the
 * SkyRun's (unique while that run lives). gpu is the SkyGpu (src/gpu),
 * lock the bridge's lock on it. After a failed run, or one whose host
 * buffers are freed rather than kept by a SkyRun (a check against the
 * CPU), mask and labels must be NULL. Without these calls every update
 * goes through the host. */
void sky_display_publish (gpointer gpu, GMutex *lock, gconstpointer mask, gconstpointer labels);
/* What was published; read *gpu, *mask and *labels only with *lock held. */
void sky_display_source (gpointer *gpu, GMutex **lock, gconstpointer *mask,
                         gconstpointer *labels);

/* The same for the Convolution lab: after every 2D convolution on the
 * context, with the bridge's lock held, which output the context keeps on
 * the device (sky_gpu_convolve_output), by a number the bridge gave it
 * (never 0; 0 after a failure: none). Unlike host addresses, a number is
 * never reused, so no other image can be taken for it. */
void sky_display_publish_convolved (gpointer gpu, GMutex *lock, guint64 serial);
/* Read *gpu and *serial only with *lock held. */
void sky_display_source_convolved (gpointer *gpu, GMutex **lock, guint64 *serial);

/* Forgets the choice and the times (tests). */
void sky_display_reset (void);

G_END_DECLS
