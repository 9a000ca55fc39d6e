"""Pixels of a rasterised SVG picture, for tests that check colours where pieces stand.

resvg-py renders the SVG to PNG bytes; this decodes the 8-bit RGBA, non-interlaced PNG it
writes with the standard library (no imaging dependency for a handful of pixels)."""

from __future__ import annotations

import struct
import zlib

import resvg_py


def rasterise(svg: str) -> list[bytes]:
    """RGBA rows of the picture."""
    return decode_png(bytes(resvg_py.svg_to_bytes(svg_string=svg)))


def decode_png(png: bytes) -> list[bytes]:
    """RGBA rows of an 8-bit RGBA, non-interlaced PNG (what resvg writes)."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width, height = 8, b"", 0, 0
    while pos < len(png):
        length, kind = struct.unpack(">I4s", png[pos : pos + 8])
        data = png[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", data)
            assert (depth, colour, interlace) == (8, 6, 0)
        elif kind == b"IDAT":
            idat += data
        pos += 12 + length
    raw, stride = zlib.decompress(idat), width * 4
    rows: list[bytes] = []
    prev = bytearray(stride)
    for y in range(height):
        kind, line = (
            raw[y * (stride + 1)],
            bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)]),
        )
        for i in range(stride):
            a, b = (line[i - 4] if i >= 4 else 0), prev[i]
            c = prev[i - 4] if i >= 4 else 0
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return rows


def colour_at(rows: list[bytes], x: float, y: float) -> str:
    r, g, b = rows[int(y)][int(x) * 4 : int(x) * 4 + 3]
    return f"#{r:02x}{g:02x}{b:02x}"
