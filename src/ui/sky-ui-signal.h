/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-ui-signal.h: the one kind of signal the app's objects declare. */
#pragma once

#include <glib-object.h>

G_BEGIN_DECLS

/* A signal of klass's type named name that runs last and returns nothing,
 * with no class handler, no accumulator and GLib's generic marshaller;
 * the n_params GTypes of its parameters follow. Its id, for
 * g_signal_emit. */
guint sky_ui_signal_new (gpointer klass, const char *name, guint n_params, ...);

G_END_DECLS
