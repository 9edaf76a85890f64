/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The app's workers: a GTask with its input, on a thread of GLib's pool. */
#include "sky-ui-task.h"

void
sky_ui_task_run (gpointer source_tag, gpointer input, GDestroyNotify free_input,
                 GTaskThreadFunc func, GCancellable *cancellable,
                 GAsyncReadyCallback callback, gpointer user_data)
{
  g_autoptr (GTask) task = g_task_new (NULL, cancellable, callback, user_data);

  g_task_set_source_tag (task, source_tag);
  g_task_set_task_data (task, input, free_input);
  g_task_run_in_thread (task, func);
}

gpointer
sky_ui_task_finish_pointer (GAsyncResult *result, gpointer source_tag, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), NULL);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == source_tag, NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}
