/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-ui-task.h: how the app's _async functions start their worker. */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/* Runs func on a worker thread in a GTask tagged source_tag (the _async
 * function), owning input (freed with free_input when the task goes; the
 * thread finds it as its task data), with cancellable and callback as
 * the caller gave them. Its result goes back through the task
 * (g_task_return_*), and sky_ui_task_finish_pointer takes a pointer one. */
void sky_ui_task_run (gpointer source_tag, gpointer input, GDestroyNotify free_input,
                      GTaskThreadFunc func, GCancellable *cancellable,
                      GAsyncReadyCallback callback, gpointer user_data);

/* The pointer a task of source_tag returned, or NULL with error set. */
gpointer sky_ui_task_finish_pointer (GAsyncResult *result, gpointer source_tag,
                                     GError **error);

G_END_DECLS
