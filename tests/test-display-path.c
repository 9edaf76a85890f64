/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The display path's choice (sky-display-path.h), with no GPU and no
 * display: every refusal in its order, the line, the times, the watchers. */
#include <glib.h>
#include <string.h>

#include "sky-display-path.h"

/* Facts under which interop goes ahead: an NVIDIA context CUDA takes. */
static SkyDisplayFacts
good_facts (void)
{
  return (SkyDisplayFacts) {
    .build_has_interop = TRUE,
    .vendor = "NVIDIA Corporation", .renderer = "NVIDIA H200/PCIe/SSE2",
    .gpu_ok = TRUE, .gl_on_gpu = TRUE,
  };
}

static void
expect (const SkyDisplayFacts *f, const char *want)
{
  g_autofree char *got = sky_display_refusal (f);

  if (want == NULL)
    g_assert_null (got);
  else
    {
      g_assert_nonnull (got);
      if (strstr (got, want) == NULL)
        g_error ("refusal \"%s\" does not say \"%s\"", got, want);
    }
}

static void
test_refusals (void)
{
  SkyDisplayFacts f = good_facts ();

  expect (&f, NULL);
  f = good_facts (); f.forced = "host";
  expect (&f, "SKYSIFT_DISPLAY=host asks for it");
  f = good_facts (); f.forced = "interop";        /* only host forces */
  expect (&f, NULL);
  f = good_facts (); f.build_has_interop = FALSE;
  expect (&f, "this build has no CUDA/OpenGL interop");
  f = good_facts (); f.cpu_view = "drawn on the CPU (SKYSIFT_VIEW=cpu)";
  expect (&f, "the view is drawn on the CPU (SKYSIFT_VIEW=cpu)");
  f = good_facts (); f.es = TRUE;
  expect (&f, "OpenGL ES");
  f = good_facts (); f.vendor = "Mesa"; f.renderer = "llvmpipe (LLVM 15.0.6, 256 bits)";
  expect (&f, "OpenGL is Mesa's llvmpipe (LLVM 15.0.6, 256 bits), not the NVIDIA driver");
  f = good_facts (); f.vendor = NULL;
  expect (&f, "not the NVIDIA driver");
  f = good_facts (); f.gpu_ok = FALSE; f.gpu_why = "No GPU to run on: no NVIDIA driver";
  expect (&f, "no GPU backend here: No GPU to run on: no NVIDIA driver");
  f = good_facts (); f.gl_on_gpu = FALSE; f.gl_why = "CUDA refuses the OpenGL context";
  expect (&f, "CUDA does not take this OpenGL context: CUDA refuses");
  /* The first refusal wins: forcing beats a missing build. */
  f = good_facts (); f.forced = "HOST"; f.build_has_interop = FALSE; f.vendor = "Mesa";
  expect (&f, "SKYSIFT_DISPLAY=host");
  g_assert_true (sky_display_vendor_is_nvidia ("NVIDIA Corporation"));
  g_assert_false (sky_display_vendor_is_nvidia ("Mesa"));
  g_assert_false (sky_display_vendor_is_nvidia ("AMD"));
}

static void
count (gpointer data)
{
  (*(int *) data)++;
}

static void
test_line_and_times (void)
{
  int calls = 0;
  guint id = sky_display_watch (count, &calls);
  double host, interop;
  g_autofree char *d1 = NULL, *d2 = NULL, *d3 = NULL;

  sky_display_reset ();
  g_assert_true (g_str_has_prefix (sky_display_line (), "display: not chosen yet"));
  sky_display_set_path ("SKYSIFT_DISPLAY=host asks for it");
  g_assert_cmpstr (sky_display_line (), ==,
                   "display: host upload, because SKYSIFT_DISPLAY=host asks for it");
  g_assert_false (sky_display_uses_interop ());
  sky_display_last_ms (&host, &interop);
  g_assert_cmpfloat (host, <, 0);
  g_assert_cmpfloat (interop, <, 0);
  d1 = sky_display_describe ();
  g_assert_null (strstr (d1, "ms"));
  sky_display_note_update (FALSE, 7.5);
  d2 = sky_display_describe ();
  g_assert_nonnull (strstr (d2, "7.500 ms from host memory"));
  g_assert_null (strstr (d2, "through interop"));
  sky_display_set_path (NULL);
  g_assert_cmpstr (sky_display_line (), ==, "display: CUDA/GL interop");
  g_assert_true (sky_display_uses_interop ());
  sky_display_note_update (TRUE, 0.23);
  d3 = sky_display_describe ();
  /* Both ways, side by side, once both were measured. */
  g_assert_nonnull (strstr (d3, "display: CUDA/GL interop. Last mask and label update: 0.230 ms "
                                "through interop (CUDA events), 7.500 ms from host memory"));
  sky_display_last_ms (&host, &interop);
  g_assert_cmpfloat (host, ==, 7.5);
  g_assert_cmpfloat (interop, ==, 0.23);
  g_assert_cmpint (calls, ==, 5);   /* reset, two paths, two times */
  sky_display_unwatch (id);
  sky_display_reset ();
  g_assert_cmpint (calls, ==, 5);
}

/* What the GPU bridge publishes comes back as it was, lock included. */
static void
test_source (void)
{
  static GMutex lock;
  static const guint8 mask[4];
  static const gint32 labels[4];
  gpointer gpu = NULL;
  GMutex *got_lock = NULL;
  gconstpointer got_mask = NULL, got_labels = NULL;
  int fake_gpu;

  sky_display_source (&gpu, &got_lock, &got_mask, &got_labels);
  g_assert_null (got_lock);
  sky_display_publish (&fake_gpu, &lock, mask, labels);
  sky_display_source (&gpu, &got_lock, &got_mask, &got_labels);
  g_assert_true (gpu == &fake_gpu && got_lock == &lock);
  g_assert_true (got_mask == mask && got_labels == labels);
  /* A failed run names nothing: the view then uploads from the host. */
  sky_display_publish (&fake_gpu, &lock, NULL, NULL);
  sky_display_source (&gpu, &got_lock, &got_mask, &got_labels);
  g_assert_null (got_mask);
  g_assert_null (got_labels);

  /* The Convolution lab's output, by number, beside the run's: publishing
   * one leaves the other as it was. */
  guint64 serial = 99;
  sky_display_publish (&fake_gpu, &lock, mask, labels);
  sky_display_source_convolved (&gpu, &got_lock, &serial);
  g_assert_cmpuint (serial, ==, 0);
  sky_display_publish_convolved (&fake_gpu, &lock, 7);
  sky_display_source_convolved (&gpu, &got_lock, &serial);
  g_assert_true (gpu == &fake_gpu && got_lock == &lock);
  g_assert_cmpuint (serial, ==, 7);
  sky_display_source (&gpu, &got_lock, &got_mask, &got_labels);
  g_assert_true (got_mask == mask && got_labels == labels);
  sky_display_publish (&fake_gpu, &lock, NULL, NULL);
  sky_display_source_convolved (&gpu, &got_lock, &serial);
  g_assert_cmpuint (serial, ==, 7);
  /* A failed convolution names nothing. */
  sky_display_publish_convolved (&fake_gpu, &lock, 0);
  sky_display_source_convolved (&gpu, &got_lock, &serial);
  g_assert_cmpuint (serial, ==, 0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/display/refusals", test_refusals);
  g_test_add_func ("/display/line-and-times", test_line_and_times);
  g_test_add_func ("/display/source", test_source);
  return g_test_run ();
}
