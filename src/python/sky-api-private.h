/* SPDX-License-Identifier: GPL-3.0-or-later */
/* What sky-api.c shares with its device half (sky-api-gpu.c). */
#ifndef SKY_API_PRIVATE_H
#define SKY_API_PRIVATE_H

#include "sky-api.h"
#include "sky-core.h"

/* The core's parameters from the binding's, checked (SKY_ERR_ARGUMENT with
 * a message naming a bad one). */
int sky_api_core_params (const SkyApiParams *p, SkyParams *out);

/* A run for a device run to fill: its result, times and image shape. */
int sky_api_run_new_device (int64_t nx, int64_t ny, const SkyParams *params, SkyApiRun **out,
                            SkyResult **res, SkyGpuTimes **times);

/* The host image behind img, and a device run that measured it: the run
 * then hands it to the writers (WCS, unit, beam, provenance). */
const SkyImage *sky_api_image_core (const SkyApiImage *img);
void sky_api_run_set_image (SkyApiRun *run, const SkyImage *image);

/* The device's packed catalogue of the run (SkyApiResult.packed_catalogue). */
void sky_api_run_set_packed (SkyApiRun *run, const void *packed);

#endif /* SKY_API_PRIVATE_H */
