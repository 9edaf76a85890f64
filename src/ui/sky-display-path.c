/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The display path's choice and its process-wide line (sky-display-path.h). */
#include "sky-display-path.h"

#include <string.h>

static char *line;
static double last_host_ms = -1, last_interop_ms = -1;
static GHookList watchers;

gboolean
sky_display_vendor_is_nvidia (const char *vendor)
{
  return vendor != NULL && g_str_has_prefix (vendor, "NVIDIA");
}

char *
sky_display_refusal (const SkyDisplayFacts *f)
{
  if (f->forced != NULL && g_ascii_strcasecmp (f->forced, "host") == 0)
    return g_strdup ("SKYSIFT_DISPLAY=host asks for it");
  if (!f->build_has_interop)
    return g_strdup ("this build has no CUDA/OpenGL interop (built without CUDA or libepoxy)");
  if (f->cpu_view != NULL)
    return g_strdup_printf ("the view is %s", f->cpu_view);
  /* CUDA registers desktop OpenGL objects; an ES context would need the
   * EGL image route, which the view does not take. */
  if (f->es)
    return g_strdup ("GTK gave an OpenGL ES context, and CUDA's OpenGL interop takes desktop "
                     "OpenGL");
  if (!sky_display_vendor_is_nvidia (f->vendor))
    return g_strdup_printf ("OpenGL is %s's %s, not the NVIDIA driver",
                            f->vendor ? f->vendor : "an unknown vendor",
                            f->renderer ? f->renderer : "renderer");
  if (!f->gpu_ok)
    return g_strdup_printf ("no GPU backend here: %s", f->gpu_why ? f->gpu_why : "unknown");
  if (!f->gl_on_gpu)
    return g_strdup_printf ("CUDA does not take this OpenGL context: %s",
                            f->gl_why ? f->gl_why : "unknown");
  return NULL;
}

static void
notify (void)
{
  if (watchers.is_setup)
    g_hook_list_invoke (&watchers, FALSE);
}

void
sky_display_set_path (const char *refusal)
{
  char *next = refusal ? g_strdup_printf ("display: host upload, because %s", refusal)
                       : g_strdup ("display: CUDA/GL interop");

  if (g_strcmp0 (next, line) != 0)
    g_message ("%s", next);
  g_free (line);
  line = next;
  notify ();
}

const char *
sky_display_line (void)
{
  return line ? line : "display: not chosen yet (no image view has started OpenGL)";
}

gboolean
sky_display_uses_interop (void)
{
  return line != NULL && strcmp (line, "display: CUDA/GL interop") == 0;
}

void
sky_display_note_update (gboolean interop, double ms)
{
  if (interop)
    last_interop_ms = ms;
  else
    last_host_ms = ms;
  notify ();
}

void
sky_display_last_ms (double *host_ms, double *interop_ms)
{
  if (host_ms)
    *host_ms = last_host_ms;
  if (interop_ms)
    *interop_ms = last_interop_ms;
}

char *
sky_display_describe (void)
{
  GString *s = g_string_new (sky_display_line ());

  /* Both figures where both were measured: a run the device does not hold
   * (the CPU backend's) goes up from the host even on the interop path. */
  if (last_interop_ms >= 0 || last_host_ms >= 0)
    g_string_append (s, ". Last mask and label update:");
  if (last_interop_ms >= 0)
    g_string_append_printf (s, " %.3f ms through interop (CUDA events)", last_interop_ms);
  if (last_interop_ms >= 0 && last_host_ms >= 0)
    g_string_append (s, ",");
  if (last_host_ms >= 0)
    g_string_append_printf (s, " %.3f ms from host memory (upload calls)", last_host_ms);
  return g_string_free (s, FALSE);
}

guint
sky_display_watch (void (*func) (gpointer data), gpointer data)
{
  GHook *hook;

  if (!watchers.is_setup)
    g_hook_list_init (&watchers, sizeof (GHook));
  hook = g_hook_alloc (&watchers);
  hook->func = (gpointer) func;
  hook->data = data;
  g_hook_append (&watchers, hook);
  return (guint) hook->hook_id;
}

void
sky_display_unwatch (guint id)
{
  if (watchers.is_setup && id != 0)
    g_hook_destroy (&watchers, id);
}

void
sky_display_reset (void)
{
  g_clear_pointer (&line, g_free);
  last_host_ms = last_interop_ms = -1;
  notify ();
}

/* ------------------------------------------------------- device source */

static GMutex *source_lock;
static gpointer source_gpu;
static gconstpointer source_mask, source_labels;
static guint64 source_convolved;

void
sky_display_publish (gpointer gpu, GMutex *lock, gconstpointer mask, gconstpointer labels)
{
  g_atomic_pointer_set (&source_lock, lock);
  source_gpu = gpu;
  source_mask = mask;
  source_labels = labels;
}

void
sky_display_publish_convolved (gpointer gpu, GMutex *lock, guint64 serial)
{
  g_atomic_pointer_set (&source_lock, lock);
  source_gpu = gpu;
  source_convolved = serial;
}

void
sky_display_source_convolved (gpointer *gpu, GMutex **lock, guint64 *serial)
{
  *lock = g_atomic_pointer_get (&source_lock);
  *gpu = source_gpu;
  *serial = source_convolved;
}

void
sky_display_source (gpointer *gpu, GMutex **lock, gconstpointer *mask, gconstpointer *labels)
{
  *lock = g_atomic_pointer_get (&source_lock);
  *gpu = source_gpu;
  *mask = source_mask;
  *labels = source_labels;
}
