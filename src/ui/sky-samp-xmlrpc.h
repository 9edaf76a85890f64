/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-samp-xmlrpc.h: XML-RPC as SAMP's standard profile speaks it, between
 * XML text and GVariant (GLib and libxml2, no toolkit, no network).
 *
 * SAMP's values are strings, lists and maps; hubs and clients written in
 * Python, Java and Tcl also send ints, booleans, doubles and nil, and
 * faults carry an int code. They are read as:
 *   <string> or a bare <value> text  "s"
 *   <int>, <i4>, <i8>                 "x"
 *   <boolean>                         "b"
 *   <double>                          "d"
 *   <nil/>                            "s" (empty: SAMP has no null)
 *   <array>                           "av"
 *   <struct>                          "a{sv}"
 * and written from those types (plus "i", "as", "a{ss}" and variants,
 * which are unwrapped), so that a parsed value written again is the same
 * XML-RPC value.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* A <methodCall> of method with params, a tuple or an array of values
 * (each one XML-RPC parameter). */
char *sky_xmlrpc_write_call (const char *method, GVariant *params);

/* A <methodResponse> with one value, or with a fault. */
char *sky_xmlrpc_write_response (GVariant *value);
char *sky_xmlrpc_write_fault (int code, const char *message);

/* Reads a <methodCall>: its method name and its parameters as "av".
 * FALSE with error (SKY_UI_ERROR_SAMP_PROTOCOL) for anything else. */
gboolean sky_xmlrpc_read_call (const char *xml, gsize length, char **method,
                               GVariant **params, GError **error);

/* Reads a <methodResponse>: its value (any of the types above, not wrapped
 * in "v"). A fault is an error (SKY_UI_ERROR_SAMP_HUB) whose message is the
 * fault's string; anything else SKY_UI_ERROR_SAMP_PROTOCOL. */
GVariant *sky_xmlrpc_read_response (const char *xml, gsize length, GError **error);

/* Helpers for SAMP's maps ("a{sv}"): the string at key, or NULL where it
 * is missing or not a string (not a copy). */
const char *sky_samp_map_string (GVariant *map, const char *key);

G_END_DECLS
