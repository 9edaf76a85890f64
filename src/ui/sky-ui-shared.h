/* SPDX-License-Identifier: GPL-3.0-or-later */
/* sky-ui-shared.h: the app's data shared between threads. An image, a run
 * of the steps: made once on a worker, then read by the main thread and
 * other workers alike, and freed with its last reference. Such a type is
 * a reference-counted box (g_atomic_rc_box) registered as a boxed GType,
 * declared and defined here once, as G_DECLARE_FINAL_TYPE and
 * G_DEFINE_BOXED_TYPE do for theirs.
 */
#pragma once

#include <glib-object.h>

/* In the header: type_name_get_type, type_name_ref, type_name_unref and
 * the g_autoptr cleanup of TypeName. */
#define SKY_DECLARE_SHARED_TYPE(TypeName, type_name)                          \
  GType type_name##_get_type (void) G_GNUC_CONST;                             \
  TypeName *type_name##_ref (TypeName *self);                                 \
  void type_name##_unref (TypeName *self);                                    \
  G_DEFINE_AUTOPTR_CLEANUP_FUNC (TypeName, type_name##_unref)

/* In the source: those functions, clear_func (TypeName *) freeing what a
 * TypeName holds (not the box) when the last reference goes. Make one
 * with g_atomic_rc_box_new0 (TypeName). */
#define SKY_DEFINE_SHARED_TYPE(TypeName, type_name, clear_func)              \
  G_DEFINE_BOXED_TYPE (TypeName, type_name, type_name##_ref, type_name##_unref) \
                                                                              \
  TypeName *                                                                  \
  type_name##_ref (TypeName *self)                                            \
  {                                                                           \
    return g_atomic_rc_box_acquire (self);                                    \
  }                                                                           \
                                                                              \
  void                                                                        \
  type_name##_unref (TypeName *self)                                          \
  {                                                                           \
    g_atomic_rc_box_release_full (self, (GDestroyNotify) clear_func);         \
  }
