#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Writes a large float32 FITS field of any shape, a band of rows at a time
(so that a 65536 x 40000 field needs a few hundred MB, not 10 GB): unit
Gaussian noise and, every 997 rows and 1009 columns, a source (a 5 x 5
Gaussian of peak 5 to 50) that sometimes straddles a band's edge. Made for
the big-image runs (skysift-cli find --backend both on 46341^2 and
65536 x 40000 fields, --memory-limit); NumPy only.

usage: bench/big-field.py NX NY OUT.fits [--seed 1]
"""
import argparse

import numpy as np

BAND = 512


def card(key, value):
    text = f"{key:<8}= {value:>20}" if value is not None else f"{key:<80}"
    return f"{text:<80}".encode("ascii")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("nx", type=int)
    ap.add_argument("ny", type=int)
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    nx, ny = args.nx, args.ny

    cards = [card("SIMPLE", "T"), card("BITPIX", "-32"), card("NAXIS", "2"),
             card("NAXIS1", str(nx)), card("NAXIS2", str(ny)), card("BUNIT", "'Jy/beam '"),
             card("END", None)]
    header = b"".join(cards)
    header += b" " * (-len(header) % 2880)
    yy, xx = np.mgrid[-2:3, -2:3]
    blob = np.exp(-(xx ** 2 + yy ** 2) / 2.0).astype(np.float32)
    with open(args.out, "wb") as f:
        f.write(header)
        for y0 in range(0, ny, BAND):
            y1 = min(ny, y0 + BAND)
            rng = np.random.default_rng([args.seed, y0])
            band = rng.standard_normal((y1 - y0, nx), dtype=np.float32)
            # Sources whose 5 x 5 box meets this band, drawn clipped to it.
            for sy in range((max(0, y0 - 2) // 997) * 997 + 498, min(ny, y1 + 2), 997):
                for sx in range(504, nx - 2, 1009):
                    peak = 5.0 + 45.0 * (((sx * 7919 + sy * 104729) % 1000) / 1000.0)
                    for dy in range(-2, 3):
                        y = sy + dy
                        if y0 <= y < y1:
                            band[y - y0, sx - 2:sx + 3] += peak * blob[dy + 2]
            f.write(band.astype(">f4").tobytes())
        written = nx * ny * 4
        f.write(b"\0" * (-written % 2880))


if __name__ == "__main__":
    main()
