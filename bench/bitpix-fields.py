#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Writes one N x N field per BITPIX (-32, -64, 16, 32) for the loaders'
end-to-end benchmarks: unit Gaussian noise with a 5 x 5 source every 97
rows and 89 columns; the integer fields store round(value * 1000) with
BSCALE 0.001 (BITPIX 32 also BZERO 5) and BLANK on every 1009th pixel, so
that scaling and blanks are on the way. NumPy only.

usage: bench/bitpix-fields.py N OUTDIR
"""
import os
import sys

import numpy as np


def card(key, value):
    return f"{key:<8}= {value:>20}".ljust(80).encode("ascii")


def write(path, data, bitpix, extra):
    ny, nx = data.shape
    cards = [card("SIMPLE", "T"), card("BITPIX", str(bitpix)), card("NAXIS", "2"),
             card("NAXIS1", str(nx)), card("NAXIS2", str(ny))]
    cards += [card(k, v) for k, v in extra] + [b"END".ljust(80)]
    header = b"".join(cards)
    header += b" " * (-len(header) % 2880)
    with open(path, "wb") as f:
        f.write(header)
        body = data.astype(data.dtype.newbyteorder(">")).tobytes()
        f.write(body)
        f.write(b"\0" * (-len(body) % 2880))


def main():
    n, outdir = int(sys.argv[1]), sys.argv[2]
    os.makedirs(outdir, exist_ok=True)
    rng = np.random.default_rng(20261124)
    field = rng.standard_normal((n, n), dtype=np.float32)
    yy, xx = np.mgrid[-2:3, -2:3]
    blob = (30 * np.exp(-(xx ** 2 + yy ** 2) / 2.0)).astype(np.float32)
    for y in range(48, n - 3, 97):
        for x in range(44, n - 3, 89):
            field[y - 2:y + 3, x - 2:x + 3] += blob
    write(os.path.join(outdir, f"bitpix-{n}-f32.fits"), field, -32, [])
    write(os.path.join(outdir, f"bitpix-{n}-f64.fits"), field.astype(np.float64), -64, [])
    blank = np.zeros(n * n, dtype=bool)
    blank[::1009] = True
    blank = blank.reshape(n, n)
    i16 = np.clip(np.round(field * 1000), -32767, 32767).astype(np.int16)
    i16[blank] = -32768
    write(os.path.join(outdir, f"bitpix-{n}-i16.fits"), i16, 16,
          [("BSCALE", "0.001"), ("BZERO", "0.0"), ("BLANK", "-32768")])
    i32 = np.round((field - 5) * 1000).astype(np.int32)
    i32[blank] = -2147483648
    write(os.path.join(outdir, f"bitpix-{n}-i32.fits"), i32, 32,
          [("BSCALE", "0.001"), ("BZERO", "5.0"), ("BLANK", "-2147483648")])


if __name__ == "__main__":
    main()
