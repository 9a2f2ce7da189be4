#!/usr/bin/env python3
"""Write tests/data/minifloat_golden.json: golden values for the <= 8-bit floats.

Generated with (pip freeze of the throwaway venv):
    ml_dtypes==0.6.0
    numpy==2.5.5
on CPython 3.12.1. Only numpy and ml_dtypes are needed:

    python3.12 -m venv /tmp/mlvenv && /tmp/mlvenv/bin/pip install ml_dtypes==0.6.0 numpy==2.5.5
    /tmp/mlvenv/bin/python scripts/python/make_minifloat_golden.py

The output is read by the unit tests of src/kernels/minifloat.rs. For each format:

- "decode": 256 entries, entry b is the value ml_dtypes gives the bit pattern
  (b & mask), where mask keeps the format's own bits (low 4 / 6 / 8 bits).
  Zarr says the upper, unused bits of a 4- or 6-bit float are ignored.
  ml_dtypes does NOT ignore them: for float4_e2m1fn / float6_* it reads the
  magnitude from the low (bits - 1) bits and makes the value negative if ANY
  bit from the sign bit upwards is set (e.g. float4_e2m1fn 0x10 is -0.0, 0x12
  is -1.0). So the table is built from the masked byte, not the raw byte.
  NaN is written "NaN", infinities "Infinity" / "-Infinity", other values as
  JSON numbers (repr, so the shortest string that reads back to the same f64;
  -0.0 is written -0.0).

- "encode": [input, byte] pairs: byte is what ml_dtypes' nearest-even
  conversion from float64 produces. The scalar constructor
  (ml_dtypes.<type>(python_float)) is used because it rounds the double
  directly; numpy's array cast float64 -> <type> goes through float32 first
  (double rounding: 1 + 2^-4 + 2^-40 becomes 1.0 in float8_e4m3 instead of
  1.125), so it is not used. Inputs are a deterministic mix of edge cases
  (exact values, ties between neighbours and the doubles either side of
  them, the region around the largest finite value, the smallest subnormal
  and half of it, signed zeros, NaN, infinities, huge and tiny doubles) and
  log-uniform random values of both signs.

  ml_dtypes' behaviour where the crate's contract differs (the Rust tests
  check these cases explicitly rather than byte-for-byte):
  - overflow: IEEE formats (float8_e3m4/e4m3/e5m2) give +-inf, "fn" formats
    (float4_e2m1fn, float6_*) saturate to +-max, "fnuz" formats and
    float8_e8m0fnu give NaN; the crate returns Overflow and leaves the choice
    to the codec's out_of_range rule.
  - NaN / infinity into "fn" formats: ml_dtypes gives a finite value (NaN ->
    +-0, inf -> +-max); the crate says NotRepresentable. ml_dtypes keeps the
    sign of a NaN (-NaN -> 0xfc in float8_e4m3); the crate writes the
    canonical NaN.
  - float8_e8m0fnu: 0.0, -0.0 and negative values become NaN (0xff) in
    ml_dtypes; the crate says NotRepresentable. Positive values below 2^-127
    become 0x00 (2^-127) in both. Ties 1.5 * 2^k go up in both.
  - float8_e8m0fnu, a quirk of ml_dtypes 0.6.0: every value strictly between
    2^-127 and 2^-126 becomes 0x01 (2^-126), even 1.1 * 2^-127, which is
    nearer 2^-127 (0x00); it seems to treat exponent field 0 as a subnormal
    binade when encoding. The crate rounds to the nearest value (0x00 below
    1.5 * 2^-127), so the test accepts that difference for those inputs only.
"""

import itertools
import json
import math
import random
import sys
from pathlib import Path

import ml_dtypes
import numpy as np

FORMATS = [
    "float4_e2m1fn",
    "float6_e2m3fn",
    "float6_e3m2fn",
    "float8_e3m4",
    "float8_e4m3",
    "float8_e4m3b11fnuz",
    "float8_e4m3fnuz",
    "float8_e5m2",
    "float8_e5m2fnuz",
    "float8_e8m0fnu",
]

OUT = Path(__file__).resolve().parents[2] / "tests" / "data" / "minifloat_golden.json"


def ml_type(name):
    return getattr(ml_dtypes, name)


def decode_byte(t, byte):
    """ml_dtypes' value of one stored byte, as a Python float."""
    return float(np.array([byte], dtype=np.uint8).view(t)[0])


def encode_value(t, x):
    """The byte ml_dtypes stores for float x (direct double rounding)."""
    return int(np.array([t(x)]).view(np.uint8)[0])


def json_float(x):
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    return x


def inputs_for(name, decoded, signed):
    """About 200 float64 inputs for one format, edge cases first."""
    rng = random.Random(f"minifloat-golden-{name}")

    def random_sign():
        # float8_e8m0fnu has no sign: its negative inputs come from the fixed
        # edge cases only, so that the random part tests rounding.
        return -1.0 if signed and rng.random() < 0.5 else 1.0

    finite = sorted({abs(v) for v in decoded if math.isfinite(v)})
    positive = [v for v in finite if v > 0]
    smallest, largest = positive[0], positive[-1]
    # The next value of the format above the largest finite one if the
    # exponent range were unbounded: every max has an all-ones mantissa, so it
    # is the next power of two.
    above_max = 2.0 ** (math.floor(math.log2(largest)) + 1)

    xs = [0.0, -0.0, math.nan, -math.nan, math.inf, -math.inf]
    xs += [1e300, -1e300, 1e-300, -1e-300, 5e-324, -5e-324, 1.0, -1.0, 0.1, -0.1, 3.0, 1e10]

    # Around the largest finite value.
    tie_max = (largest + above_max) / 2
    for v in [
        largest,
        tie_max,
        math.nextafter(tie_max, 0),
        math.nextafter(tie_max, math.inf),
        math.nextafter(largest, math.inf),
        above_max,
        2 * above_max,
    ]:
        xs += [v, -v]

    # Around the smallest positive value (and zero, where the format has one).
    for v in [
        smallest,
        smallest / 2,
        math.nextafter(smallest / 2, 0),
        math.nextafter(smallest / 2, 1),
        smallest / 4,
        smallest * 1.5,
        smallest * 2.5,
    ]:
        xs += [v, -v]

    # Exact values of the format.
    for v in rng.sample(finite, min(16, len(finite))):
        xs.append(random_sign() * v)

    # Ties between neighbours, and the doubles either side of each tie.
    pairs = list(itertools.pairwise(finite))
    chosen = rng.sample(pairs, min(24, len(pairs)))
    near_one = [p for p in pairs if p[0] <= 1.0 < p[1] or p[0] < 1.0 <= p[1]]
    for lo, hi in chosen + near_one + pairs[:3] + pairs[-2:]:
        mid = (lo + hi) / 2
        sign = random_sign()
        xs += [sign * mid, sign * math.nextafter(mid, 0), sign * math.nextafter(mid, math.inf)]
        # Something between lo and hi that is not near the tie.
        xs.append(sign * (lo + (hi - lo) * rng.choice([0.1, 0.3, 0.7, 0.9])))

    # Log-uniform random values from a quarter of the smallest to twice the largest.
    lo_e, hi_e = math.log2(smallest / 4), math.log2(largest * 2)
    while len(xs) < 200:
        xs.append(random_sign() * 2.0 ** rng.uniform(lo_e, hi_e))

    # Deduplicate by bit pattern, keeping order.
    seen, out = set(), []
    for x in xs:
        key = np.float64(x).view(np.uint64).item()
        if key not in seen:
            seen.add(key)
            out.append(float(x))
    return out


def main():
    doc = {
        "generator": "scripts/python/make_minifloat_golden.py",
        "ml_dtypes": ml_dtypes.__version__,
        "numpy": np.__version__,
        "notes": [
            (
                "decode[b] is ml_dtypes' value of (b & mask): Zarr ignores upper unused bits; "
                "ml_dtypes treats any set bit at or above the sign bit as the sign."
            ),
            (
                "encode pairs are [float64 input, byte from ml_dtypes' scalar constructor] "
                "(nearest-even, direct from double)."
            ),
        ],
        "formats": {},
    }
    for name in FORMATS:
        t = ml_type(name)
        nbits = ml_dtypes.finfo(t).bits
        mask = (1 << nbits) - 1
        decoded = [decode_byte(t, b & mask) for b in range(256)]
        raw = [decode_byte(t, b) for b in range(256)]
        differs = sum(
            1
            for a, b in zip(decoded, raw)
            if not (a == b and math.copysign(1, a) == math.copysign(1, b))
            and not (math.isnan(a) and math.isnan(b))
        )
        if differs:
            print(
                f"{name}: ml_dtypes' raw decoding differs from the masked one for "
                f"{differs} of 256 bytes",
                file=sys.stderr,
            )
        xs = inputs_for(name, decoded, signed=ml_dtypes.finfo(t).min < 0)
        doc["formats"][name] = {
            "bits": nbits,
            "decode": [json_float(v) for v in decoded],
            "encode": [[json_float(x), encode_value(t, x)] for x in xs],
        }

    # One decode row of 8 and one encode pair per line keeps the file diffable.
    lines = ["{"]
    for key in ["generator", "ml_dtypes", "numpy", "notes"]:
        lines.append(f"  {json.dumps(key)}: {json.dumps(doc[key])},")
    lines.append('  "formats": {')
    names = list(doc["formats"])
    for i, name in enumerate(names):
        f = doc["formats"][name]
        lines.append(f"    {json.dumps(name)}: {{")
        lines.append(f'      "bits": {f["bits"]},')
        lines.append('      "decode": [')
        rows = [f["decode"][j : j + 8] for j in range(0, 256, 8)]
        for j, row in enumerate(rows):
            sep = "," if j + 1 < len(rows) else ""
            lines.append("        " + ", ".join(json.dumps(v) for v in row) + sep)
        lines.append("      ],")
        lines.append('      "encode": [')
        for j, pair in enumerate(f["encode"]):
            sep = "," if j + 1 < len(f["encode"]) else ""
            lines.append(f"        {json.dumps(pair)}{sep}")
        lines.append("      ]")
        lines.append("    }" + ("," if i + 1 < len(names) else ""))
    lines.append("  }")
    lines.append("}")
    text = "\n".join(lines) + "\n"
    json.loads(text)  # well-formed
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text)
    print(f"wrote {OUT} ({len(text)} bytes)", file=sys.stderr)


if __name__ == "__main__":
    main()
