"""Fingerprints: a short, stable digest of everything a simulation result depends on.

A bake stores the fingerprint of its inputs (model key, settings, frame duration, start frame);
comparing it with the fingerprint of the current inputs tells whether the bake is outdated. The
digest must not change between sessions, machines, Python or NumPy versions, so values are encoded
explicitly (floats by their exact hexadecimal form, arrays by dtype, shape and bytes) rather than
through ``repr`` or ``hash`` (which is salted per process for strings).
"""

from __future__ import annotations

import dataclasses
import hashlib
from typing import Any

import numpy as np

# Bump when the encoding changes: every stored fingerprint then reads as outdated.
ENCODING_VERSION = b"tetrig-fingerprint-1"
# A dataclass field added after bakes were stored carries ``metadata={OMIT_AT: value}``, the value
# that simulates as before it existed: at that value it is left out of the digest, so a bake stored
# before it existed does not read as outdated. The value is the field's own, not its default: a
# default that changes later must not make an old bake read as made with the new default.
OMIT_AT = "fingerprint_omit_at"


def _encode(value: Any, out: list[bytes]) -> None:
    if value is None:
        out.append(b"N;")
    elif isinstance(value, (bool, np.bool_)):
        out.append(b"B1;" if value else b"B0;")
    elif isinstance(value, np.ndarray):
        array = np.ascontiguousarray(value)
        out.append(b"A" + array.dtype.str.encode() + repr(array.shape).encode() + b":")
        out.append(array.tobytes())
        out.append(b";")
    elif isinstance(value, np.generic):
        _encode(value.item(), out)
    elif isinstance(value, int):
        out.append(b"I" + str(value).encode() + b";")
    elif isinstance(value, float):
        out.append(b"F" + float(value).hex().encode() + b";")
    elif isinstance(value, str):
        data = value.encode("utf-8")
        out.append(b"S" + str(len(data)).encode() + b":" + data + b";")
    elif isinstance(value, (bytes, bytearray)):
        out.append(b"Y" + str(len(value)).encode() + b":" + bytes(value) + b";")
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        out.append(b"D" + type(value).__name__.encode() + b"(")
        for f in dataclasses.fields(value):
            item = getattr(value, f.name)
            if OMIT_AT in f.metadata and item == f.metadata[OMIT_AT]:
                continue
            _encode(f.name, out)
            _encode(item, out)
        out.append(b");")
    elif isinstance(value, (tuple, list)):
        out.append(b"T" + str(len(value)).encode() + b"(")
        for item in value:
            _encode(item, out)
        out.append(b");")
    elif isinstance(value, dict):
        out.append(b"M" + str(len(value)).encode() + b"(")
        for k in sorted(value, key=repr):
            _encode(k, out)
            _encode(value[k], out)
        out.append(b");")
    else:
        raise TypeError(f"cannot fingerprint a {type(value).__name__}")


def fingerprint(value: Any) -> str:
    """A hex SHA-256 digest of ``value``: nested tuples, lists, dicts and dataclasses of
    ``None``, bool, int, float, str, bytes, NumPy scalars and arrays.

    Equal values give equal digests in any process; ``1`` and ``1.0`` differ, so do ``-0.0`` and
    ``0.0`` (they are different inputs to a simulation only in the last case, which is harmless).

    Raises:
        TypeError: ``value`` holds something else.
    """
    parts: list[bytes] = [ENCODING_VERSION]
    _encode(value, parts)
    return hashlib.sha256(b"".join(parts)).hexdigest()
