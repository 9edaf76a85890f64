/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The pipeline runner (src/pipeline): the list of steps, reuse of an
 * earlier run, the buffer pool, cancelling, and the GPU's fallback and
 * comparison through stand-in GPU backends, so that all of it is tested
 * on a machine without a device. */
#include "sky-runner.h"
#include "sky-test-util.h"

#include <math.h>
#include <string.h>

/* A 256 x 256 field: noise-free background with a gentle gradient and
 * a few square sources of different sizes, so that clip, segment, label
 * and measure all have work. */
static void
make_field (SkyImage *img)
{
  const int64_t n = 256;
  float *v = g_new (float, n * n);

  for (int64_t y = 0; y < n; y++)
    for (int64_t x = 0; x < n; x++)
      v[y * n + x] = (float) (((x * 7 + y * 13) % 17) - 8) * 0.1f;
  for (int s = 0; s < 12; s++)
    for (int dy = 0; dy < 2 + s % 4; dy++)
      for (int dx = 0; dx < 2 + s % 3; dx++)
        v[(20 + 18 * s + dy) * n + 20 + 17 * s + dx] = 40.0f + s;
  sky_test_image (img, n, n, v);
  g_free (v);
}

static SkyRunRequest
request (const SkyImage *img, const SkyParams *params, SkyBackend backend, SkyStep until,
         const SkyStages *previous, const SkyGpuBackend *gpu)
{
  SkyRunRequest req = { 0 };

  req.image = img;
  req.params = params;
  req.method = SKY_METHOD_LESSON;
  req.backend = backend;
  req.until = until;
  req.previous = previous;
  req.gpu = gpu;
  return req;
}

static void
run_ok (const SkyRunRequest *req, SkyStages *out)
{
  int ret = sky_run (req, out);
  if (ret != SKY_OK)
    g_test_message ("%s", sky_last_error ());
  g_assert_cmpint (ret, ==, SKY_OK);
}

/* The runner's catalogue is sky_cpu_run's. */
static void
assert_same_as_cpu (const SkyImage *img, const SkyParams *params, const SkyResult *res)
{
  SkyResult ref = { 0 };

  sky_test_run_cpu (img, params, &ref);
  g_assert_cmpfloat (res->stats.median, ==, ref.stats.median);
  g_assert_cmpfloat (res->stats.sigma, ==, ref.stats.sigma);
  g_assert_cmpint (res->nsources, ==, ref.nsources);
  g_assert_true (memcmp (res->mask, ref.mask, (size_t) (img->nx * img->ny)) == 0);
  g_assert_true (memcmp (res->labels, ref.labels, (size_t) (img->nx * img->ny) * 4) == 0);
  g_assert_cmpint (res->catalogue.n, ==, ref.catalogue.n);
  for (int64_t i = 0; i < ref.catalogue.n; i++)
    {
      g_assert_cmpfloat (res->catalogue.x[i], ==, ref.catalogue.x[i]);
      g_assert_cmpfloat (res->catalogue.sum[i], ==, ref.catalogue.sum[i]);
      g_assert_cmpint (res->catalogue.npix[i], ==, ref.catalogue.npix[i]);
    }
  sky_result_clear (&ref);
}

/* ------------------------------------------------------------- the list */

static void
test_steps_names (void)
{
  const SkyStep *steps;
  int n = sky_method_steps (SKY_METHOD_LESSON, &steps);

  g_assert_cmpint (n, ==, 4);
  g_assert_cmpstr (sky_step_name (steps[0]), ==, "clip");
  g_assert_cmpstr (sky_step_name (steps[1]), ==, "segment");
  g_assert_cmpstr (sky_step_name (steps[2]), ==, "label");
  g_assert_cmpstr (sky_step_name (steps[3]), ==, "measure");
  g_assert_cmpstr (sky_method_name (SKY_METHOD_LESSON), ==, "lesson");
  for (int s = 0; s < SKY_STEP_COUNT; s++)
    g_assert_cmpint (sky_step_from_name (sky_step_name (s)), ==, s);
  g_assert_cmpint (sky_step_from_name ("none"), ==, SKY_STEP_NONE);
  g_assert_cmpint (sky_step_from_name ("all"), ==, SKY_STEP_MEASURE);
  g_assert_cmpint (sky_step_from_name ("clipped"), ==, SKY_STEP_INVALID);
  g_assert_cmpint (sky_step_from_name (NULL), ==, SKY_STEP_INVALID);
  g_assert_cmpstr (sky_step_name (SKY_STEP_NONE), ==, "none");
  g_assert_cmpstr (sky_step_name (SKY_STEP_COUNT), ==, "");
  g_assert_cmpint (sky_method_steps (SKY_METHOD_COUNT, &steps), ==, 0);
  g_assert_cmpint (sky_backend_from_name ("both"), ==, SKY_BACKEND_BOTH);
  g_assert_cmpint (sky_backend_from_name ("tpu"), ==, -1);
}

/* ---------------------------------------------------------------- reuse */

static void
test_reuse (void)
{
  SkyImage img;
  SkyParams params;
  SkyStages clip, all, moved, eight, other;
  SkyRunRequest req;

  make_field (&img);
  sky_params_init (&params);

  req = request (&img, &params, SKY_BACKEND_CPU, SKY_STEP_CLIP, NULL, NULL);
  run_ok (&req, &clip);
  g_assert_cmpint (clip.done, ==, SKY_STEP_CLIP);
  g_assert_cmpint (clip.kept, ==, SKY_STEP_NONE);
  g_assert_null (clip.result.mask);

  /* On from clip: clip is taken with its time, the rest computed. */
  req = request (&img, &params, SKY_BACKEND_CPU, SKY_STEP_MEASURE, &clip, NULL);
  g_assert_cmpint (sky_run_valid_step (&clip, &req), ==, SKY_STEP_CLIP);
  g_assert_false (sky_run_is_current (&clip, &req));
  run_ok (&req, &all);
  g_assert_cmpint (all.done, ==, SKY_STEP_MEASURE);
  g_assert_cmpint (all.kept, ==, SKY_STEP_CLIP);
  g_assert_cmpfloat (all.result.times.ms[SKY_STEP_CLIP], ==, clip.result.times.ms[SKY_STEP_CLIP]);
  g_assert_cmpfloat (all.result.times.total, >=, all.result.times.ms[SKY_STEP_LABEL]);
  g_assert_cmpint (all.result.nsources, ==, 12);
  assert_same_as_cpu (&img, &params, &all.result);

  /* Everything asked for is there, with the same parameters. */
  req = request (&img, &params, SKY_BACKEND_CPU, SKY_STEP_LABEL, &all, NULL);
  g_assert_true (sky_run_is_current (&all, &req));

  /* A moved threshold: segment again from the same background. */
  params.threshold = 7;
  req = request (&img, &params, SKY_BACKEND_CPU, SKY_STEP_MEASURE, &all, NULL);
  g_assert_false (sky_run_is_current (&all, &req));
  g_assert_cmpint (sky_run_valid_step (&all, &req), ==, SKY_STEP_CLIP);
  run_ok (&req, &moved);
  g_assert_cmpint (moved.kept, ==, SKY_STEP_CLIP);
  g_assert_true (moved.result.mask != all.result.mask);
  assert_same_as_cpu (&img, &params, &moved.result);

  /* Another connectivity: the mask is shared, the labels are new. */
  params.connectivity = 8;
  req = request (&img, &params, SKY_BACKEND_CPU, SKY_STEP_MEASURE, &moved, NULL);
  g_assert_cmpint (sky_run_valid_step (&moved, &req), ==, SKY_STEP_SEGMENT);
  run_ok (&req, &eight);
  g_assert_cmpint (eight.kept, ==, SKY_STEP_SEGMENT);
  g_assert_true (eight.mask_buffer == moved.mask_buffer);
  g_assert_true (eight.result.labels != moved.result.labels);
  assert_same_as_cpu (&img, &params, &eight.result);

  /* Another kappa, or another backend, reuses nothing. */
  params.clip_kappa = 2.5;
  req = request (&img, &params, SKY_BACKEND_CPU, SKY_STEP_MEASURE, &eight, NULL);
  g_assert_cmpint (sky_run_valid_step (&eight, &req), ==, SKY_STEP_NONE);
  params.clip_kappa = 3;
  req = request (&img, &params, SKY_BACKEND_BOTH, SKY_STEP_MEASURE, &eight, NULL);
  g_assert_cmpint (sky_run_valid_step (&eight, &req), ==, SKY_STEP_NONE);
  req = request (&img, &params, SKY_BACKEND_CPU, SKY_STEP_MEASURE, &eight, NULL);
  g_assert_cmpint (sky_run_valid_step (&eight, &req), ==, SKY_STEP_MEASURE);

  /* An earlier run keeps its own results after the later one is freed. */
  sky_stages_clear (&eight);
  g_assert_cmpint (moved.result.catalogue.n, >, 0);
  req = request (&img, &params, SKY_BACKEND_CPU, SKY_STEP_MEASURE, NULL, NULL);
  run_ok (&req, &other);
  assert_same_as_cpu (&img, &params, &other.result);

  sky_stages_clear (&other);
  sky_stages_clear (&moved);
  sky_stages_clear (&all);
  sky_stages_clear (&clip);
  sky_image_clear (&img);
}

/* A run's buffers go back to the pool and to the next run of the size. */
static void
test_pool (void)
{
  SkyImage img;
  SkyParams params;
  SkyStages a, b;
  SkyRunRequest req;
  void *mask, *labels;

  make_field (&img);
  sky_params_init (&params);
  req = request (&img, &params, SKY_BACKEND_CPU, SKY_STEP_MEASURE, NULL, NULL);
  run_ok (&req, &a);
  mask = a.result.mask;
  labels = a.result.labels;
  sky_stages_clear (&a);
  run_ok (&req, &b);
  g_assert_true (b.result.mask == mask || b.result.mask == labels);
  g_assert_true (b.result.labels == labels || b.result.labels == mask);
  g_assert_true ((void *) b.result.mask != (void *) b.result.labels);
  sky_stages_clear (&b);
  sky_image_clear (&img);
}

/* A run that replaces one still held takes that run's mask and labels
 * once they are given back, not fresh memory; the earlier run keeps its
 * statistics and catalogue, and no later run keeps what it gave back. */
static void
test_give_back (void)
{
  SkyImage img;
  SkyParams params;
  SkyStages shown, moved, eight, again;
  SkyRunRequest req;
  void *mask, *labels;
  size_t npix = 256 * 256;

  make_field (&img);
  sky_params_init (&params);
  req = request (&img, &params, SKY_BACKEND_CPU, SKY_STEP_MEASURE, NULL, NULL);
  run_ok (&req, &shown);
  mask = shown.result.mask;
  labels = shown.result.labels;

  /* Nothing to give back for a run that shown already answers. */
  g_assert_cmpuint (sky_stages_give_back (&shown, &req), ==, 0);
  g_assert_true (shown.result.mask == mask);

  /* A moved threshold computes both anew: both go back, and come again. */
  params.threshold = 7;
  req = request (&img, &params, SKY_BACKEND_CPU, SKY_STEP_MEASURE, &shown, NULL);
  g_assert_cmpuint (sky_stages_give_back (&shown, &req), ==, npix * 5);
  g_assert_null (shown.result.mask);
  g_assert_null (shown.result.labels);
  g_assert_cmpint (shown.result.catalogue.n, ==, 12);
  run_ok (&req, &moved);
  g_assert_cmpint (moved.kept, ==, SKY_STEP_CLIP);
  g_assert_true ((void *) moved.result.mask == mask);
  g_assert_true ((void *) moved.result.labels == labels);
  assert_same_as_cpu (&img, &params, &moved.result);

  /* Another connectivity keeps the mask: only the labels go back. */
  params.connectivity = 8;
  req = request (&img, &params, SKY_BACKEND_CPU, SKY_STEP_MEASURE, &moved, NULL);
  g_assert_cmpuint (sky_stages_give_back (&moved, &req), ==, npix * 4);
  g_assert_true ((void *) moved.result.mask == mask);
  g_assert_null (moved.result.labels);
  run_ok (&req, &eight);
  g_assert_cmpint (eight.kept, ==, SKY_STEP_SEGMENT);
  g_assert_true (eight.mask_buffer == moved.mask_buffer);
  g_assert_true ((void *) eight.result.labels == labels);
  assert_same_as_cpu (&img, &params, &eight.result);

  /* A run without its labels answers nothing past segment any more. */
  params.connectivity = 4;
  req = request (&img, &params, SKY_BACKEND_CPU, SKY_STEP_MEASURE, &moved, NULL);
  g_assert_cmpint (sky_run_valid_step (&moved, &req), ==, SKY_STEP_SEGMENT);
  g_assert_false (sky_run_is_current (&moved, &req));
  sky_stages_clear (&eight);
  run_ok (&req, &again);
  g_assert_cmpint (again.kept, ==, SKY_STEP_SEGMENT);
  assert_same_as_cpu (&img, &params, &again.result);

  sky_stages_clear (&again);
  sky_stages_clear (&moved);
  sky_stages_clear (&shown);
  sky_image_clear (&img);
}

static int
cancel_after (void *data)
{
  int *calls = data;
  return ++*calls > 2;
}

static void
test_cancel (void)
{
  SkyImage img;
  SkyParams params;
  SkyStages st;
  SkyRunRequest req;
  int calls = 0;

  make_field (&img);
  sky_params_init (&params);
  req = request (&img, &params, SKY_BACKEND_CPU, SKY_STEP_MEASURE, NULL, NULL);
  req.cancelled = cancel_after;
  req.cancel_data = &calls;
  g_assert_cmpint (sky_run (&req, &st), ==, SKY_ERR_CANCELLED);
  g_assert_cmpint (st.done, ==, SKY_STEP_SEGMENT);   /* stopped between steps */
  sky_stages_clear (&st);
  sky_image_clear (&img);
}

static void
test_bad_input (void)
{
  SkyImage img, small;
  SkyParams params;
  SkyStages st;
  SkyRunRequest req;

  make_field (&img);
  sky_test_image (&small, 8, 8, NULL);
  sky_params_init (&params);
  params.connectivity = 6;
  req = request (&img, &params, SKY_BACKEND_CPU, SKY_STEP_MEASURE, NULL, NULL);
  g_assert_cmpint (sky_run (&req, &st), ==, SKY_ERR_ARGUMENT);
  g_assert_nonnull (strstr (sky_last_error (), "connectivity"));
  sky_stages_clear (&st);

  params.connectivity = 4;
  req = request (&img, &params, SKY_BACKEND_CPU, SKY_STEP_MEASURE, NULL, NULL);
  req.detect = &small;
  g_assert_cmpint (sky_run (&req, &st), ==, SKY_ERR_ARGUMENT);
  g_assert_nonnull (strstr (sky_last_error (), "detection image"));
  sky_stages_clear (&st);

  req = request (&img, &params, SKY_BACKEND_CPU, SKY_STEP_NONE, NULL, NULL);
  g_assert_cmpint (sky_run (&req, &st), ==, SKY_ERR_ARGUMENT);
  sky_stages_clear (&st);
  sky_image_clear (&small);
  sky_image_clear (&img);
}

/* ---------------------------------------------------------------- GPU */

/* Stand-ins for a device: one that fails as a lost device does, and one
 * that answers with the CPU's own results (optionally one mask pixel
 * wrong), with made-up event times. */
typedef struct {
  int runs;
  int flip_mask_pixel;
  int last_keep;
  int last_repeat;
} FakeGpu;

static int
fake_available (void *data, char *why, size_t size)
{
  (void) data;
  g_strlcpy (why, "a stand-in device", size);
  return SKY_OK;
}

static int
failing_run (void *data, const SkyImage *img, const SkyParams *params, int keep, int repeat,
             SkyResult *res, SkyGpuTimes *times)
{
  (void) img, (void) params, (void) keep, (void) repeat, (void) res, (void) times;
  ((FakeGpu *) data)->runs++;
  return sky_fail (SKY_ERR_UNAVAILABLE, "cudaMemcpyAsync: an illegal instruction (fake)");
}

static int
cpu_as_gpu_run (void *data, const SkyImage *img, const SkyParams *params, int keep, int repeat,
                SkyResult *res, SkyGpuTimes *times)
{
  FakeGpu *fake = data;
  int ret = sky_cpu_run (img, params, res);

  fake->runs++;
  fake->last_keep = keep;
  fake->last_repeat = repeat;
  if (ret == SKY_OK && fake->flip_mask_pixel)
    res->mask[0] ^= 1;
  times->upload = 1;
  times->ms[SKY_STEP_CLIP] = 2;
  times->ms[SKY_STEP_SEGMENT] = 3;
  times->ms[SKY_STEP_LABEL] = 4;
  times->ms[SKY_STEP_MEASURE] = 5;
  times->download = 6;
  times->kernels = 14;
  times->total = 21;
  times->runs = repeat;
  times->outputs = 7;    /* the mask and labels for the view: in no figure */
  return ret;
}

static int
fake_compare (void *data, const SkyImage *img, const SkyResult *ref, const SkyResult *res,
              char *what, size_t size)
{
  int differ;

  (void) data, (void) img;
  differ = ref->nsources != res->nsources;
  g_strlcpy (what, differ ? "another source count" : "agree", size);
  return differ;
}

static void
test_gpu_fallback (void)
{
  FakeGpu fake = { 0 };
  SkyGpuBackend gpu = { fake_available, failing_run, fake_compare, &fake, NULL, NULL };
  SkyImage img;
  SkyParams params;
  SkyStages st;
  SkyRunRequest req;

  make_field (&img);
  sky_params_init (&params);
  for (int backend = SKY_BACKEND_GPU; backend <= SKY_BACKEND_BOTH; backend++)
    {
      req = request (&img, &params, backend, SKY_STEP_MEASURE, NULL, &gpu);
      run_ok (&req, &st);
      g_assert_cmpint (st.done, ==, SKY_STEP_MEASURE);
      g_assert_false (st.has_gpu);
      g_assert_nonnull (st.gpu_fault);
      g_assert_nonnull (strstr (st.gpu_fault, "GPU backend: cudaMemcpyAsync"));
      assert_same_as_cpu (&img, &params, &st.result);
      sky_stages_clear (&st);
    }
  g_assert_cmpint (fake.runs, ==, 2);

  /* The GPU alone runs every step whatever was asked, then falls back to
   * every step on the CPU. */
  req = request (&img, &params, SKY_BACKEND_GPU, SKY_STEP_CLIP, NULL, &gpu);
  run_ok (&req, &st);
  g_assert_cmpint (st.done, ==, SKY_STEP_MEASURE);
  sky_stages_clear (&st);
  sky_image_clear (&img);
}

static int
count_asks (void *data)
{
  ++*(int *) data;
  return 0;
}

/* Both backends with the CPU timed as the GPU is, the best of the same
 * number of runs: the CPU runs the steps it computes that many times (the
 * runner asks about cancelling before each step of each run, and once
 * before the GPU), each step's time no more than one run's, and
 * cpu_runs says how many; a step kept from an earlier run is not run
 * again. Without cpu_repeat the CPU runs once and says so. */
static void
test_cpu_best_of (void)
{
  FakeGpu fake = { 0 };
  SkyGpuBackend gpu = { fake_available, cpu_as_gpu_run, fake_compare, &fake, NULL, NULL };
  SkyImage img;
  SkyParams params;
  SkyStages once, best, moved;
  SkyRunRequest req;
  int asks = 0;

  make_field (&img);
  sky_params_init (&params);
  req = request (&img, &params, SKY_BACKEND_BOTH, SKY_STEP_MEASURE, NULL, &gpu);
  req.gpu_repeat = 3;
  req.cancelled = count_asks;
  req.cancel_data = &asks;
  run_ok (&req, &once);
  g_assert_cmpint (once.cpu_runs, ==, 1);
  g_assert_cmpint (once.gpu_times.runs, ==, 3);
  g_assert_cmpint (asks, ==, 4 + 1);

  asks = 0;
  req.cpu_repeat = 3;
  run_ok (&req, &best);
  g_assert_cmpint (best.cpu_runs, ==, 3);
  g_assert_cmpint (best.cpu_runs, ==, best.gpu_times.runs);
  g_assert_cmpint (asks, ==, 3 * 4 + 1);
  g_assert_cmpfloat (best.result.times.total, >, 0);
  assert_same_as_cpu (&img, &params, &best.result);

  /* A moved threshold: segment, label and measure three times each. */
  asks = 0;
  params.threshold = 7;
  req.previous = &best;
  run_ok (&req, &moved);
  g_assert_cmpint (moved.kept, ==, SKY_STEP_CLIP);
  g_assert_cmpint (moved.cpu_runs, ==, 3);
  g_assert_cmpint (asks, ==, 3 * 3 + 1);
  g_assert_cmpfloat (moved.result.times.ms[SKY_STEP_CLIP], ==,
                     best.result.times.ms[SKY_STEP_CLIP]);
  assert_same_as_cpu (&img, &params, &moved.result);

  sky_stages_clear (&moved);
  sky_stages_clear (&best);
  sky_stages_clear (&once);
  sky_image_clear (&img);
}

static void
test_gpu_fill_and_check (void)
{
  FakeGpu fake = { 0 };
  SkyGpuBackend gpu = { fake_available, cpu_as_gpu_run, fake_compare, &fake, NULL, NULL };
  SkyImage img;
  SkyParams params;
  SkyStages st;
  SkyRunRequest req;

  make_field (&img);
  sky_params_init (&params);

  /* The GPU alone: its results are the run's, its times by step with the
   * upload in the first step and the download in the last. */
  req = request (&img, &params, SKY_BACKEND_GPU, SKY_STEP_MEASURE, NULL, &gpu);
  run_ok (&req, &st);
  g_assert_true (fake.last_keep);
  /* Timed as skysift-cli find --repeat 10 is, unless the request says;
   * the download of the mask and labels for the view is kept apart. */
  g_assert_cmpint (fake.last_repeat, ==, SKY_RUN_GPU_REPEAT);
  g_assert_cmpint (SKY_RUN_GPU_REPEAT, ==, 10);
  g_assert_cmpint (st.gpu_times.runs, ==, 10);
  g_assert_cmpfloat (st.gpu_times.outputs, ==, 7);
  g_assert_null (st.gpu_fault);
  g_assert_true (st.has_gpu);
  g_assert_cmpint (st.done, ==, SKY_STEP_MEASURE);
  g_assert_cmpfloat (st.gpu_kernel.ms[SKY_STEP_CLIP], ==, 2);
  g_assert_cmpfloat (st.gpu_total.ms[SKY_STEP_CLIP], ==, 3);
  g_assert_cmpfloat (st.gpu_total.ms[SKY_STEP_SEGMENT], ==, 3);
  g_assert_cmpfloat (st.gpu_total.ms[SKY_STEP_MEASURE], ==, 11);
  g_assert_cmpfloat (st.gpu_kernel.total, ==, 14);
  g_assert_cmpfloat (st.gpu_total.total, ==, 21);
  g_assert_cmpfloat (st.result.times.total, ==, 0);  /* nothing ran on the CPU */
  assert_same_as_cpu (&img, &params, &st.result);
  sky_stages_clear (&st);

  /* Both, up to label: the steps done are compared, measure is not. */
  req = request (&img, &params, SKY_BACKEND_BOTH, SKY_STEP_LABEL, NULL, &gpu);
  req.gpu_repeat = 3;
  run_ok (&req, &st);
  g_assert_false (fake.last_keep);
  g_assert_cmpint (fake.last_repeat, ==, 3);
  g_assert_cmpfloat (st.gpu_total.ms[SKY_STEP_LABEL], ==, 4);
  g_assert_cmpint (st.done, ==, SKY_STEP_LABEL);
  g_assert_true (st.agree[SKY_STEP_CLIP] && st.agree[SKY_STEP_SEGMENT] && st.agree[SKY_STEP_LABEL]);
  g_assert_false (st.agree[SKY_STEP_MEASURE]);
  g_assert_null (st.gpu_note);
  sky_stages_clear (&st);

  /* One wrong mask pixel: segment disagrees and the note says so. */
  fake.flip_mask_pixel = 1;
  req = request (&img, &params, SKY_BACKEND_BOTH, SKY_STEP_MEASURE, NULL, &gpu);
  run_ok (&req, &st);
  g_assert_true (st.agree[SKY_STEP_CLIP]);
  g_assert_false (st.agree[SKY_STEP_SEGMENT]);
  g_assert_true (st.agree[SKY_STEP_MEASURE]);
  g_assert_nonnull (st.gpu_note);
  g_assert_nonnull (strstr (st.gpu_note, "segment: the masks differ"));
  sky_stages_clear (&st);
  sky_image_clear (&img);
}

/* A stand-in device's local maps: the CPU's own, or a failure. */
static int
cpu_maps_as_gpu (void *data, const SkyImage *img, const SkyParams *params, int repeat,
                 float *background, float *rms, SkyGpuTimes *times)
{
  FakeGpu *fake = data;

  fake->runs++;
  fake->last_repeat = repeat;
  if (fake->flip_mask_pixel)
    return sky_fail (SKY_ERR_UNAVAILABLE, "cudaMalloc: out of memory (fake)");
  memset (times, 0, sizeof *times);
  times->upload = 1;
  times->ms[SKY_STEP_BACKGROUND] = 2;
  times->download = 3;
  times->kernels = 2;
  times->total = 6;
  return sky_cpu_background (img, params, 0, background, rms);
}

/* The local method's background on a GPU: the maps come from the device
 * and the CPU's steps after them give the CPU's own result; both checks
 * the maps; a device that fails leaves the CPU's maps and says why. */
static void
test_gpu_local_maps (void)
{
  FakeGpu fake = { 0 };
  SkyGpuBackend gpu = { fake_available, failing_run, fake_compare, &fake, cpu_maps_as_gpu,
                        NULL };
  SkyImage img;
  SkyParams params;
  SkyStages cpu, st;
  SkyRunRequest req;

  make_field (&img);
  sky_params_init (&params);
  params.bkg_box = 32;
  req = request (&img, &params, SKY_BACKEND_CPU, SKY_STEP_MEASURE, NULL, &gpu);
  req.method = SKY_METHOD_LOCAL;
  run_ok (&req, &cpu);
  g_assert_cmpint (cpu.gpu_steps, ==, 0);

  req.backend = SKY_BACKEND_GPU;
  req.gpu_repeat = 3;
  run_ok (&req, &st);
  g_assert_null (st.gpu_fault);
  g_assert_true (st.has_gpu);
  g_assert_cmpuint (st.gpu_steps, ==, 1u << SKY_STEP_BACKGROUND);
  g_assert_cmpint (fake.runs, ==, 1);
  g_assert_cmpint (fake.last_repeat, ==, 3);
  g_assert_cmpfloat (st.gpu_kernel.ms[SKY_STEP_BACKGROUND], ==, 2);
  g_assert_cmpfloat (st.gpu_total.ms[SKY_STEP_BACKGROUND], ==, 6);
  g_assert_cmpfloat (st.result.times.ms[SKY_STEP_BACKGROUND], ==, 0);
  g_assert_nonnull (st.result.background);
  g_assert_cmpint (st.result.nsources, ==, cpu.result.nsources);
  g_assert_cmpint (st.result.nsources, >, 0);
  g_assert_cmpmem (st.result.labels, img.nx * img.ny * 4, cpu.result.labels,
                   img.nx * img.ny * 4);
  g_assert_cmpmem (st.result.catalogue.sum, st.result.nsources * 8, cpu.result.catalogue.sum,
                   cpu.result.nsources * 8);
  sky_stages_clear (&st);

  req.backend = SKY_BACKEND_BOTH;
  run_ok (&req, &st);
  g_assert_null (st.gpu_fault);
  g_assert_true (st.agree[SKY_STEP_BACKGROUND]);
  g_assert_null (st.gpu_note);
  g_assert_cmpfloat (st.result.times.ms[SKY_STEP_BACKGROUND], >, 0);
  sky_stages_clear (&st);

  fake.flip_mask_pixel = 1;  /* the device fails */
  req.backend = SKY_BACKEND_GPU;
  run_ok (&req, &st);
  g_assert_nonnull (st.gpu_fault);
  g_assert_nonnull (strstr (st.gpu_fault, "out of memory (fake)"));
  g_assert_false (st.has_gpu);
  g_assert_cmpuint (st.gpu_steps, ==, 0);
  g_assert_cmpint (st.result.nsources, ==, cpu.result.nsources);
  sky_stages_clear (&st);

  /* A backend without the local method says so, and the CPU does it. */
  gpu.local_maps = NULL;
  run_ok (&req, &st);
  g_assert_nonnull (strstr (st.gpu_fault, "no local method"));
  sky_stages_clear (&st);
  sky_stages_clear (&cpu);
  sky_image_clear (&img);
}

/* The build's own GPU: with a device it runs; without one (or without
 * CUDA) the runner finishes on the CPU and says why. */
static void
test_default_gpu (void)
{
  const SkyGpuBackend *gpu = sky_gpu_backend_default ();
  char why[512];
  SkyImage img;
  SkyParams params;
  SkyStages st;
  SkyRunRequest req;
  int have = gpu->available (gpu->data, why, sizeof why) == SKY_OK;

  g_test_message ("default GPU: %s", why);
  g_assert_cmpstr (why, !=, "");
  make_field (&img);
  sky_params_init (&params);
  req = request (&img, &params, SKY_BACKEND_BOTH, SKY_STEP_MEASURE, NULL, NULL);
  run_ok (&req, &st);
  if (have)
    {
      const SkyStep *steps;
      int n = sky_method_steps (SKY_METHOD_LESSON, &steps);

      /* Every step of the method that ran; the local method's steps are
       * not the lesson's and are not compared. */
      g_assert_null (st.gpu_fault);
      for (int k = 0; k < n; k++)
        g_assert_true (st.agree[steps[k]]);
    }
  else
    g_assert_nonnull (st.gpu_fault);
  assert_same_as_cpu (&img, &params, &st.result);
  sky_stages_clear (&st);

  /* The GPU alone: its results are the CPU's as the contract says. */
  req = request (&img, &params, SKY_BACKEND_GPU, SKY_STEP_MEASURE, NULL, NULL);
  run_ok (&req, &st);
  if (have)
    {
      SkyResult ref = { 0 };
      char what[1024];

      g_assert_null (st.gpu_fault);
      g_assert_true (st.has_gpu);
      g_assert_cmpfloat (st.gpu_total.total, >=, st.gpu_kernel.total);
      sky_test_run_cpu (&img, &params, &ref);
      if (gpu->compare (gpu->data, &img, &ref, &st.result, what, sizeof what) != 0)
        g_error ("the GPU's run differs from the CPU's: %s", what);
      sky_result_clear (&ref);
    }
  else
    {
      g_assert_nonnull (st.gpu_fault);
      assert_same_as_cpu (&img, &params, &st.result);
    }
  sky_stages_clear (&st);
  sky_image_clear (&img);
}

/* ------------------------------------------------------- the local method */

typedef struct {
  int runs;
  int given_maps;        /* the last run was handed maps */
  int flip_label;        /* one label pixel wrong: deblend and measure differ */
} FakeLocalGpu;

/* A device that runs the CPU's local method: from the maps it is given,
 * or its own. */
static int
cpu_as_gpu_local (void *data, const SkyImage *img, const SkyParams *params,
                  const float *background, const float *rms, const float *snr, int repeat,
                  SkyResult *res, SkyGpuTimes *times)
{
  FakeLocalGpu *fake = data;
  int64_t n = img->nx * img->ny;
  float *b = NULL, *r = NULL;
  int ret;

  (void) snr;
  fake->runs++;
  fake->given_maps = background != NULL;
  if (background != NULL)
    {
      b = g_memdup2 (background, (gsize) n * sizeof *b);
      r = g_memdup2 (rms, (gsize) n * sizeof *r);
    }
  ret = sky_cpu_run_local (img, params, NULL, b, r, res);
  if (ret == SKY_OK && fake->flip_label)
    for (int64_t i = 0; i < n; i++)
      if (res->labels[i] != 0)
        {
          res->labels[i] = res->labels[i] == 1 ? 2 : 1;
          break;
        }
  for (int k = 0; k < SKY_STEP_COUNT; k++)
    times->ms[k] = k + 1;
  times->runs = repeat;
  return ret;
}

static void
test_local_gpu (void)
{
  FakeLocalGpu fake = { 0 };
  FakeGpu lesson = { 0 };
  SkyGpuBackend gpu = { fake_available, cpu_as_gpu_run, fake_compare, &fake, NULL,
                        cpu_as_gpu_local };
  SkyGpuBackend none = { fake_available, cpu_as_gpu_run, fake_compare, &lesson, NULL, NULL };
  SkyImage img;
  SkyParams params;
  SkyStages st, cpu;
  SkyRunRequest req;

  make_field (&img);
  sky_params_init (&params);
  req = request (&img, &params, SKY_BACKEND_CPU, SKY_STEP_MEASURE, NULL, &gpu);
  req.method = SKY_METHOD_LOCAL;
  run_ok (&req, &cpu);
  g_assert_cmpint (cpu.result.nsources, >, 0);

  /* The GPU alone: every step on the device (no maps handed over), its
   * results the run's. */
  req.backend = SKY_BACKEND_GPU;
  run_ok (&req, &st);
  g_assert_cmpint (fake.runs, ==, 1);
  g_assert_false (fake.given_maps);
  g_assert_null (st.gpu_fault);
  g_assert_true (st.has_gpu);
  g_assert_cmpint (st.done, ==, SKY_STEP_MEASURE);
  g_assert_cmpint (st.result.nsources, ==, cpu.result.nsources);
  g_assert_cmpint (st.result.nislands, ==, cpu.result.nislands);
  g_assert_cmpmem (st.result.labels, img.nx * img.ny * 4, cpu.result.labels,
                   img.nx * img.ny * 4);
  g_assert_cmpfloat (st.gpu_kernel.ms[SKY_STEP_DEBLEND], ==, SKY_STEP_DEBLEND + 1);
  sky_stages_clear (&st);

  /* Given maps: the CPU's background step takes them, the device gets them. */
  {
    SkyResult direct = { 0 };
    g_assert_cmpint (sky_cpu_run_local (&img, &params, NULL, NULL, NULL, &direct), ==, SKY_OK);
    req.background = g_memdup2 (direct.background, (gsize) (img.nx * img.ny) * 4);
    req.rms = g_memdup2 (direct.rms, (gsize) (img.nx * img.ny) * 4);
    sky_result_clear (&direct);
  }
  run_ok (&req, &st);
  g_assert_true (fake.given_maps);
  g_assert_null (st.gpu_fault);
  g_assert_cmpint (st.result.nsources, ==, cpu.result.nsources);
  sky_stages_clear (&st);
  g_free ((void *) req.background);
  g_free ((void *) req.rms);
  req.background = req.rms = NULL;

  /* Both: every step checked and agreeing; then one wrong label pixel,
   * which deblend's check names. */
  req.backend = SKY_BACKEND_BOTH;
  run_ok (&req, &st);
  for (int s = SKY_STEP_BACKGROUND; s <= SKY_STEP_DEBLEND; s++)
    g_assert_true (st.agree[s]);
  g_assert_true (st.agree[SKY_STEP_MEASURE]);
  g_assert_null (st.gpu_note);
  sky_stages_clear (&st);
  fake.flip_label = 1;
  run_ok (&req, &st);
  g_assert_true (st.agree[SKY_STEP_FLOOD]);
  g_assert_false (st.agree[SKY_STEP_DEBLEND]);
  g_assert_nonnull (st.gpu_note);
  g_assert_nonnull (strstr (st.gpu_note, "deblend"));
  sky_stages_clear (&st);

  /* A backend without the local method: the CPU runs it and says why. */
  req = request (&img, &params, SKY_BACKEND_GPU, SKY_STEP_MEASURE, NULL, &none);
  req.method = SKY_METHOD_LOCAL;
  run_ok (&req, &st);
  g_assert_nonnull (st.gpu_fault);
  g_assert_nonnull (strstr (st.gpu_fault, "no local method"));
  g_assert_cmpint (st.result.nsources, ==, cpu.result.nsources);
  g_assert_cmpint (lesson.runs, ==, 0);
  sky_stages_clear (&st);
  sky_stages_clear (&cpu);
  sky_image_clear (&img);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/runner/steps/names", test_steps_names);
  g_test_add_func ("/runner/reuse", test_reuse);
  g_test_add_func ("/runner/pool", test_pool);
  g_test_add_func ("/runner/give-back", test_give_back);
  g_test_add_func ("/runner/cancel", test_cancel);
  g_test_add_func ("/runner/bad-input", test_bad_input);
  g_test_add_func ("/runner/gpu/fallback", test_gpu_fallback);
  g_test_add_func ("/runner/gpu/fill-and-check", test_gpu_fill_and_check);
  g_test_add_func ("/runner/gpu/cpu-best-of", test_cpu_best_of);
  g_test_add_func ("/runner/gpu/default", test_default_gpu);
  g_test_add_func ("/runner/gpu/local-maps", test_gpu_local_maps);
  g_test_add_func ("/runner/gpu/local", test_local_gpu);
  return g_test_run ();
}
