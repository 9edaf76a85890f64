/* SPDX-License-Identifier: GPL-3.0-or-later */
/* skysift-cli: shared helpers of the subcommands. */
#ifndef SKY_CLI_H
#define SKY_CLI_H

#include <stddef.h>
#include <stdint.h>

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

/* Whether a GPU can run skysift here: 1, or 0 with why (a device or
 * driver missing, or a build without the GPU backend) in why. */
int cli_gpu_usable (char *why, size_t why_size);

/* Prints "skysift-cli: " and the message to stderr. */
void cli_error (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));

#endif
