"""The dtype order of src/dtype_order.cuh in numpy, for the tests' host stand-ins of the extension.

rank() maps the unsigned bits of keys of one dtype kind ('u', 'i' or 'f'; a
float's magnitude above inf_bits is NaN) to unsigned integers whose order is
the sort's: numbers ascending, NaN last, -0.0 equal to +0.0; descending
complements it (NaN first). test_order.py checks the extension's own rank.
"""

import numpy as np


def rank(bits, kind, inf_bits, descending):
    width = bits.dtype.itemsize * 8
    b = bits.astype(np.uint64)
    top, ones = np.uint64(1 << (width - 1)), np.uint64((1 << width) - 1)
    if kind == "f":
        magnitude = b & ~top & ones
        r = np.where(magnitude > np.uint64(inf_bits), ones,
                     np.where(magnitude == 0, top, np.where(b & top, ~b & ones, b | top)))
    else:
        r = b ^ (top if kind == "i" else np.uint64(0))
    return (~r & ones) if descending else r
