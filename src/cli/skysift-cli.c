/* SPDX-License-Identifier: GPL-3.0-or-later */
/* skysift-cli: the skysift pipeline without a window, for scripts, tests
 * and benchmarks. */
#include "cli.h"
#include "sky-core.h"
#ifdef SKYSIFT_HAVE_CUDA
#include "sky-gpu.h"
#endif

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
  "Usage: skysift-cli COMMAND [OPTIONS]\n"
  "\n"
  "Commands:\n"
  "  find IMAGE.fits   find sources: kappa-sigma clip, segment, label, measure\n"
  "  synth OUT.fits    write a synthetic GC-like radio field and its true sources\n"
  "  convolve --demo   the lesson's convolution demo (or convolve an image)\n"
  "  background IMAGE  background and rms maps on a mesh (SExtractor's, as SEP)\n"
  "\n"
  "Run 'skysift-cli COMMAND --help' for a command's options.\n";

int
cli_gpu_usable (char *why, size_t why_size)
{
#ifdef SKYSIFT_HAVE_CUDA
  return sky_gpu_available (why, why_size) == SKY_OK;
#else
  snprintf (why, why_size, "this build has no GPU backend (built without CUDA)");
  return 0;
#endif
}

void
cli_error (const char *fmt, ...)
{
  va_list ap;

  fputs ("skysift-cli: ", stderr);
  va_start (ap, fmt);
  vfprintf (stderr, fmt, ap);
  va_end (ap);
  fputc ('\n', stderr);
}

int
cli_parse_double (const char *option, const char *text, double *out)
{
  char *end = NULL;

  errno = 0;
  *out = strtod (text, &end);
  if (end == text || *end != '\0' || errno == ERANGE || !isfinite (*out))
    {
      cli_error ("%s: '%s' is not a number", option, text);
      return CLI_EXIT_USAGE;
    }
  return 0;
}

int
cli_parse_int (const char *option, const char *text, int64_t min, int64_t max, int64_t *out)
{
  char *end = NULL;
  long long v;

  errno = 0;
  v = strtoll (text, &end, 10);
  if (end == text || *end != '\0' || errno == ERANGE)
    {
      cli_error ("%s: '%s' is not a whole number", option, text);
      return CLI_EXIT_USAGE;
    }
  if (v < min || v > max)
    {
      cli_error ("%s: %lld is out of range (%lld to %lld)", option, v, (long long) min,
                 (long long) max);
      return CLI_EXIT_USAGE;
    }
  *out = v;
  return 0;
}

int
main (int argc, char **argv)
{
  if (argc < 2)
    {
      fputs (usage_text, stderr);
      return CLI_EXIT_USAGE;
    }
  if (strcmp (argv[1], "--help") == 0 || strcmp (argv[1], "-h") == 0
      || strcmp (argv[1], "help") == 0)
    {
      fputs (usage_text, stdout);
      return 0;
    }
  if (strcmp (argv[1], "--version") == 0)
    {
      printf ("skysift-cli %s\n", SKYSIFT_VERSION);
      return 0;
    }
  if (strcmp (argv[1], "find") == 0)
    return cli_find (argc - 1, argv + 1);
  if (strcmp (argv[1], "synth") == 0)
    return cli_synth (argc - 1, argv + 1);
  if (strcmp (argv[1], "convolve") == 0)
    return cli_convolve (argc - 1, argv + 1);
  if (strcmp (argv[1], "background") == 0)
    return cli_background (argc - 1, argv + 1);

  cli_error ("unknown command '%s'", argv[1]);
  fputs (usage_text, stderr);
  return CLI_EXIT_USAGE;
}
