/* SPDX-License-Identifier: GPL-3.0-or-later */
/* skysift-cli: shared helpers of the subcommands. */
#ifndef SKY_CLI_H
#define SKY_CLI_H

#include <getopt.h>
#include <stddef.h>
#include <stdint.h>

#include "sky-core.h"

/* Exit statuses: 1 for a failure on a file or a run, 2 for a wrong command. */
enum { CLI_EXIT_FAILURE = 1, CLI_EXIT_USAGE = 2 };

int cli_find (int argc, char **argv);
int cli_synth (int argc, char **argv);
int cli_convolve (int argc, char **argv);
int cli_background (int argc, char **argv);

/* Strict number parsing for options: the whole text must be a number in
 * range, else a message naming the option and the exit status 2. */
int cli_parse_double (const char *option, const char *text, double *out);
int cli_parse_int (const char *option, const char *text, int64_t min, int64_t max,
                   int64_t *out);

/* The options that every command reading an image shares, by the same
 * names and ranges: where the image is (--hdu N from 1, --plane N from 0)
 * and how a run is timed (--repeat N, --threads N, 0 for every core).
 * CLI_IMAGE_OPTIONS go in a command's getopt_long table; CLI_RUN_OPTIONS
 * alone where the command reads no FITS file's HDU. */
enum { CLI_O_HDU = 1000, CLI_O_PLANE, CLI_O_REPEAT, CLI_O_THREADS, CLI_O_HELP };
#define CLI_RUN_OPTIONS \
  { "repeat", required_argument, NULL, CLI_O_REPEAT }, \
  { "threads", required_argument, NULL, CLI_O_THREADS }, \
  { "help", no_argument, NULL, CLI_O_HELP }
#define CLI_IMAGE_OPTIONS \
  { "hdu", required_argument, NULL, CLI_O_HDU }, \
  { "plane", required_argument, NULL, CLI_O_PLANE }, \
  CLI_RUN_OPTIONS

/* Takes getopt_long's c if it is one of the shared options or --help
 * (-h): 1, with *ret the status of its value (0, or CLI_EXIT_USAGE with a
 * message; for help, -1 once usage is printed); 0 where c is not one of
 * them. load may be NULL for a command without --hdu and --plane. */
int cli_shared_option (int c, const char *text, const char *usage, SkyLoadOptions *load,
                       int *repeat, int *nthreads, int *ret);

/* cli_parse_int into an int. */
int cli_parse_int_to (const char *option, const char *text, int min, int max, int *out);

/* After the options, with ret the loop's status: the one image the command
 * takes (argv[optind]) and its parameters as the core checks them; else
 * ret, or CLI_EXIT_USAGE saying what is wrong. */
int cli_end_options (int ret, const char *command, int argc, char **argv, const char **image,
                     const SkyParams *params);

/* An unknown option or a missing value: says which, and where the options
 * are listed; returns CLI_EXIT_USAGE. */
int cli_unknown_option (const char *command, char **argv);

/* Whether a GPU can run skysift here: 1, or 0 with why (a device or
 * driver missing, or a build without the GPU backend) in why. */
int cli_gpu_usable (char *why, size_t why_size);

/* Prints "skysift-cli: " and the message to stderr. */
void cli_error (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));

#endif
