/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Catalogue and run-summary writers. Regular files are written beside their
 * final name and renamed into place, so a reader never sees half a file and
 * a failure leaves whatever was there before. Special files (a terminal,
 * /dev/stdout, a pipe) are written in place. */
#include "sky-core.h"
#include "sky-output-private.h"

#include <errno.h>
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void
json_number (FILE *fp, double v)
{
  if (isfinite (v))
    fprintf (fp, "%.17g", v);
  else
    fputs ("null", fp);
}

typedef struct {
  const char *key;
  double value;
} JsonField;

/* "name": {"key": value, ...} with numbers only (the times_ms blocks). */
static void
json_numbers (FILE *fp, const char *name, const JsonField *fields, size_t n)
{
  fprintf (fp, "\"%s\": {", name);
  for (size_t i = 0; i < n; i++)
    {
      fprintf (fp, "%s\"%s\": ", i ? ", " : "", fields[i].key);
      json_number (fp, fields[i].value);
    }
  fputs ("}", fp);
}

int
sky_write_run_json (const char *path, const SkyRunInfo *info, const SkyResult *res)
{
  const SkyImage *img = info->image;
  const SkyParams *p = info->params;
  const SkyClipStats *s = &res->stats;
  const SkyStepTimes *t = &res->times;
  const SkyStep *steps;
  int nsteps = sky_method_steps (res->method, &steps);
  int64_t top[10];
  int ntop = sky_catalogue_top_sums (&res->catalogue, top, 10);
  SkyOutput out;
  int ret = sky_output_open (&out, path);

  if (ret != SKY_OK)
    return ret;
  fputs ("{\n  \"image\": ", out.fp);
  sky_put_quoted (out.fp, img->path);
  fprintf (out.fp, ",\n  \"hdu\": %d,\n  \"plane\": %lld,\n", img->hdu, (long long) img->plane);
  fprintf (out.fp, "  \"shape\": [%lld, %lld],\n", (long long) img->ny, (long long) img->nx);
  fprintf (out.fp, "  \"nblank\": %lld,\n  \"bunit\": ", (long long) img->nblank);
  sky_put_quoted (out.fp, img->bunit);
  fprintf (out.fp, ",\n  \"backend\": ");
  sky_put_quoted (out.fp, info->backend);
  if (info->gpu_steps != 0)
    {
      /* The GPU ran only these; the CPU ran the others. */
      fputs (",\n  \"gpu_steps\": [", out.fp);
      for (int k = 0, first = 1; k < nsteps; k++)
        if (info->gpu_steps & (1u << steps[k]))
          {
            fputs (first ? "" : ", ", out.fp);
            sky_put_quoted (out.fp, sky_step_name (steps[k]));
            first = 0;
          }
      fputs ("]", out.fp);
    }
  fprintf (out.fp, ",\n  \"params\": {\"clip_kappa\": ");
  json_number (out.fp, p->clip_kappa);
  fprintf (out.fp, ", \"max_iter\": %d, \"threshold_sigma\": ", p->max_iter);
  json_number (out.fp, p->threshold);
  fprintf (out.fp, ", \"relative\": %s, \"connectivity\": %d, \"smooth\": ",
           p->relative ? "true" : "false", p->connectivity);
  if (info->smooth != NULL)
    sky_put_quoted (out.fp, info->smooth);
  else
    fputs ("null", out.fp);
  fputs ("},\n", out.fp);
  if (res->method == SKY_METHOD_LOCAL)
    {
      /* The local method's own parameters and counts; the clipped block
       * below stays for the format's sake and is empty. */
      fprintf (out.fp, "  \"method\": \"local\",\n  \"local\": {\"bkg_box\": %d, \"bkg_filter\": %d, "
               "\"seed_sigma\": ", p->bkg_box, p->bkg_filter);
      json_number (out.fp, p->seed_sigma);
      fputs (", \"flood_sigma\": ", out.fp);
      json_number (out.fp, p->flood_sigma);
      fprintf (out.fp, ", \"min_area\": %lld, \"deblend_nthresh\": %d, \"deblend_mincont\": ",
               (long long) p->min_area, p->deblend_nthresh);
      json_number (out.fp, p->deblend_mincont);
      fputs (", \"deblend_sigma\": ", out.fp);
      json_number (out.fp, p->deblend_sigma);
      fputs (", \"noise_scale\": ", out.fp);
      json_number (out.fp, res->noise_scale);
      fprintf (out.fp, ", \"nislands\": %lld, \"ndeblended\": %lld},\n",
               (long long) res->nislands, (long long) res->ndeblended);
    }
  fputs ("  \"clipped\": {\"median\": ", out.fp);
  json_number (out.fp, s->median);
  fputs (", \"std\": ", out.fp);
  json_number (out.fp, s->sigma);
  fputs (", \"mean\": ", out.fp);
  json_number (out.fp, s->mean);
  fprintf (out.fp, ", \"n\": %lld, \"ninput\": %lld, \"iterations\": %d, \"converged\": %s, "
                   "\"flat\": %s},\n",
           (long long) s->n, (long long) s->ninput, s->iterations,
           s->converged ? "true" : "false", s->flat ? "true" : "false");
  fputs ("  \"threshold\": ", out.fp);
  json_number (out.fp, res->threshold_value);
  fprintf (out.fp, ",\n  \"nsources\": %lld,\n  \"top_sum_flux\": [", (long long) res->nsources);
  for (int i = 0; i < ntop; i++)
    {
      fputs (i ? ", " : "", out.fp);
      json_number (out.fp, res->catalogue.sum[top[i]]);
    }
  fprintf (out.fp, "],\n  \"repeat\": %d,\n", info->repeat);
  fputs ("  \"times_ms\": {", out.fp);
  if (info->gpu == NULL || info->backend == NULL || strcmp (info->backend, "gpu") != 0
      || info->gpu_steps != 0)
    {
      JsonField cpu[SKY_STEP_COUNT + 2];
      size_t n = 0;

      cpu[n++] = (JsonField) { "load", info->load_ms };
      for (int k = 0; k < nsteps; k++)
        cpu[n++] = (JsonField) { sky_step_name (steps[k]), t->ms[steps[k]] };
      cpu[n++] = (JsonField) { "total", t->total };
      json_numbers (out.fp, "cpu", cpu, n);
      if (info->gpu != NULL)
        fputs (", ", out.fp);
    }
  if (info->gpu != NULL)
    {
      const SkyGpuTimes *g = info->gpu;
      JsonField gpu[SKY_STEP_COUNT + 5];
      size_t n = 0;

      gpu[n++] = (JsonField) { "load", info->load_ms };
      gpu[n++] = (JsonField) { "upload", g->upload };
      for (int k = 0; k < nsteps; k++)
        if (info->gpu_steps == 0 || (info->gpu_steps & (1u << steps[k])))
          gpu[n++] = (JsonField) { sky_step_name (steps[k]), g->ms[steps[k]] };
      gpu[n++] = (JsonField) { "download", g->download };
      gpu[n++] = (JsonField) { "kernels", g->kernels };
      gpu[n++] = (JsonField) { "total", g->total };
      json_numbers (out.fp, "gpu", gpu, n);
    }
  fputs ("}\n}\n", out.fp);
  return sky_output_close (&out);
}
