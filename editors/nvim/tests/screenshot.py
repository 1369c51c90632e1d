"""Render a terminal capture (``tmux capture-pane -p -e``: text with SGR colour codes) to a PNG.

Standard library only: glyphs come from a TrueType monospace font (DejaVu Sans Mono by default), read
and rasterised here (quadratic outlines, non-zero winding, 4x4 supersampling), and the PNG is written
with zlib. Good enough for a README screenshot; not a general text renderer.

    python screenshot.py CAPTURE.txt OUT.png [--cols N] [--rows N] [--font-size PX] [--font TTF]
"""

from __future__ import annotations

import argparse
import math
import re
import struct
import sys
import unicodedata
import zlib
from pathlib import Path

FONT_DIR = Path("/usr/share/fonts/truetype/dejavu")
FONTS = {
    (False, False): "DejaVuSansMono.ttf",
    (True, False): "DejaVuSansMono-Bold.ttf",
    (False, True): "DejaVuSansMono-Oblique.ttf",
    (True, True): "DejaVuSansMono-BoldOblique.ttf",
}
# Neovim 0.11's default dark colours (Normal), used where the capture sets none.
DEFAULT_FG = (0xE0, 0xE2, 0xEA)
DEFAULT_BG = (0x14, 0x16, 0x1B)
ANSI16 = [
    (0x07, 0x08, 0x0A), (0xFF, 0xC0, 0xB9), (0xB3, 0xF6, 0xC0), (0xFC, 0xE0, 0x94),
    (0xA6, 0xDB, 0xFF), (0xFF, 0xCA, 0xFF), (0x8C, 0xF8, 0xF7), (0xEE, 0xF1, 0xF8),
    (0x4F, 0x52, 0x58), (0xFF, 0xC0, 0xB9), (0xB3, 0xF6, 0xC0), (0xFC, 0xE0, 0x94),
    (0xA6, 0xDB, 0xFF), (0xFF, 0xCA, 0xFF), (0x8C, 0xF8, 0xF7), (0xEE, 0xF1, 0xF8),
]
SUPERSAMPLE = 4


class Font:
    """The parts of a TrueType font needed to draw glyph outlines: cmap, loca, glyf, metrics."""

    def __init__(self, path: Path) -> None:
        self.data = path.read_bytes()
        count = struct.unpack_from(">H", self.data, 4)[0]
        self.tables = {}
        for i in range(count):
            tag, _, offset, length = struct.unpack_from(">4sIII", self.data, 12 + 16 * i)
            self.tables[tag.decode("latin-1")] = (offset, length)
        head = self.tables["head"][0]
        self.units_per_em = struct.unpack_from(">H", self.data, head + 18)[0]
        self.long_loca = struct.unpack_from(">h", self.data, head + 50)[0] == 1
        hhea = self.tables["hhea"][0]
        self.ascender, self.descender, self.line_gap = struct.unpack_from(">hhh", self.data, hhea + 4)
        self.glyph_count = struct.unpack_from(">H", self.data, self.tables["maxp"][0] + 4)[0]
        self.advance = struct.unpack_from(">H", self.data, self.tables["hmtx"][0])[0]
        self.cmap = self._read_cmap()

    def _read_cmap(self) -> dict[int, int]:
        base = self.tables["cmap"][0]
        count = struct.unpack_from(">H", self.data, base + 2)[0]
        subtables = {}
        for i in range(count):
            platform, encoding, offset = struct.unpack_from(">HHI", self.data, base + 4 + 8 * i)
            subtables[(platform, encoding)] = base + offset
        for key in ((3, 10), (0, 4), (3, 1), (0, 3)):
            if key in subtables:
                offset = subtables[key]
                fmt = struct.unpack_from(">H", self.data, offset)[0]
                if fmt == 12:
                    return self._cmap12(offset)
                if fmt == 4:
                    return self._cmap4(offset)
        raise ValueError("no usable Unicode cmap in the font")

    def _cmap4(self, offset: int) -> dict[int, int]:
        segments = struct.unpack_from(">H", self.data, offset + 6)[0] // 2
        ends = struct.unpack_from(f">{segments}H", self.data, offset + 14)
        starts = struct.unpack_from(f">{segments}H", self.data, offset + 16 + 2 * segments)
        deltas = struct.unpack_from(f">{segments}h", self.data, offset + 16 + 4 * segments)
        range_base = offset + 16 + 6 * segments
        ranges = struct.unpack_from(f">{segments}H", self.data, range_base)
        mapping = {}
        for i in range(segments):
            for code in range(starts[i], ends[i] + 1):
                if code == 0xFFFF:
                    continue
                if ranges[i] == 0:
                    glyph = (code + deltas[i]) & 0xFFFF
                else:
                    where = range_base + 2 * i + ranges[i] + 2 * (code - starts[i])
                    glyph = struct.unpack_from(">H", self.data, where)[0]
                    glyph = (glyph + deltas[i]) & 0xFFFF if glyph else 0
                if glyph:
                    mapping[code] = glyph
        return mapping

    def _cmap12(self, offset: int) -> dict[int, int]:
        groups = struct.unpack_from(">I", self.data, offset + 12)[0]
        mapping = {}
        for i in range(groups):
            start, end, glyph = struct.unpack_from(">III", self.data, offset + 16 + 12 * i)
            for code in range(start, end + 1):
                mapping[code] = glyph + code - start
        return mapping

    def _glyph_range(self, glyph: int) -> tuple[int, int]:
        loca = self.tables["loca"][0]
        if self.long_loca:
            start, end = struct.unpack_from(">II", self.data, loca + 4 * glyph)
        else:
            start, end = (2 * v for v in struct.unpack_from(">HH", self.data, loca + 2 * glyph))
        base = self.tables["glyf"][0]
        return base + start, end - start

    def contours(self, glyph: int, depth: int = 0) -> list[list[tuple[float, float, bool]]]:
        """The glyph's closed contours as (x, y, on_curve) points in font units."""
        offset, length = self._glyph_range(glyph)
        if length == 0 or depth > 8:
            return []
        count = struct.unpack_from(">h", self.data, offset)[0]
        if count >= 0:
            return self._simple(offset, count)
        return self._composite(offset, depth)

    def _simple(self, offset: int, count: int) -> list[list[tuple[float, float, bool]]]:
        data = self.data
        ends = struct.unpack_from(f">{count}H", data, offset + 10)
        points = ends[-1] + 1 if ends else 0
        at = offset + 10 + 2 * count
        at += 2 + struct.unpack_from(">H", data, at)[0]
        flags = []
        while len(flags) < points:
            flag = data[at]
            at += 1
            flags.append(flag)
            if flag & 8:
                flags.extend([flag] * data[at])
                at += 1
        coordinates = []
        for short_bit, same_bit in ((2, 16), (4, 32)):
            value, values = 0, []
            for flag in flags[:points]:
                if flag & short_bit:
                    delta = data[at]
                    at += 1
                    value += delta if flag & same_bit else -delta
                elif not flag & same_bit:
                    value += struct.unpack_from(">h", data, at)[0]
                    at += 2
                values.append(value)
            coordinates.append(values)
        xs, ys = coordinates
        result, start = [], 0
        for end in ends:
            result.append([(xs[i], ys[i], bool(flags[i] & 1)) for i in range(start, end + 1)])
            start = end + 1
        return result

    def _composite(self, offset: int, depth: int) -> list[list[tuple[float, float, bool]]]:
        data = self.data
        at = offset + 10
        result = []
        while True:
            flags, glyph = struct.unpack_from(">HH", data, at)
            at += 4
            if flags & 1:
                dx, dy = struct.unpack_from(">hh", data, at)
                at += 4
            else:
                dx, dy = struct.unpack_from(">bb", data, at)
                at += 2
            if not flags & 2:
                dx = dy = 0  # point matching is not supported: place the component unmoved
            a, b, c, d = 1.0, 0.0, 0.0, 1.0
            if flags & 8:
                a = d = struct.unpack_from(">h", data, at)[0] / 16384
                at += 2
            elif flags & 0x40:
                a, d = (v / 16384 for v in struct.unpack_from(">hh", data, at))
                at += 4
            elif flags & 0x80:
                a, b, c, d = (v / 16384 for v in struct.unpack_from(">hhhh", data, at))
                at += 8
            for contour in self.contours(glyph, depth + 1):
                result.append([(a * x + c * y + dx, b * x + d * y + dy, on) for x, y, on in contour])
            if not flags & 0x20:
                return result


def outline_edges(contours, scale: float, baseline: float, steps: int = 6):
    """Line segments (x0, y0, x1, y1) in supersampled pixels (y down) approximating the contours."""
    edges = []
    for contour in contours:
        if len(contour) < 2:
            continue
        points = [(x * scale, baseline - y * scale, on) for x, y, on in contour]
        # Start at an on-curve point (or the midpoint of two off-curve points).
        first = next((i for i, p in enumerate(points) if p[2]), None)
        if first is None:
            a, b = points[0], points[-1]
            points.insert(0, ((a[0] + b[0]) / 2, (a[1] + b[1]) / 2, True))
            first = 0
        points = points[first:] + points[:first]
        points.append(points[0])
        current = points[0][:2]
        control = None
        for x, y, on in points[1:]:
            if on:
                if control is None:
                    edges.append((*current, x, y))
                else:
                    edges.extend(_quadratic(current, control, (x, y), steps))
                    control = None
                current = (x, y)
            elif control is None:
                control = (x, y)
            else:
                middle = ((control[0] + x) / 2, (control[1] + y) / 2)
                edges.extend(_quadratic(current, control, middle, steps))
                current, control = middle, (x, y)
        if control is not None:
            edges.extend(_quadratic(current, control, points[0][:2], steps))
    return edges


def _quadratic(p0, p1, p2, steps):
    out, previous = [], p0
    for i in range(1, steps + 1):
        t = i / steps
        u = 1 - t
        point = (u * u * p0[0] + 2 * u * t * p1[0] + t * t * p2[0], u * u * p0[1] + 2 * u * t * p1[1] + t * t * p2[1])
        out.append((*previous, *point))
        previous = point
    return out


def rasterize(edges, width: int, height: int) -> list[list[int]]:
    """Coverage 0..255 per pixel of a width x height cell (non-zero winding, 4x4 samples per pixel)."""
    s = SUPERSAMPLE
    counts = [[0] * width for _ in range(height)]
    for row in range(height * s):
        y = row + 0.5
        crossings = []
        for x0, y0, x1, y1 in edges:
            if (y0 <= y < y1) or (y1 <= y < y0):
                x = x0 + (y - y0) * (x1 - x0) / (y1 - y0)
                crossings.append((x, 1 if y1 > y0 else -1))
        if not crossings:
            continue
        crossings.sort()
        winding = 0
        for (x, direction), (next_x, _) in zip(crossings, crossings[1:] + [(None, 0)]):
            winding += direction
            if winding and next_x is not None:
                start = max(0, int(x + 0.5))
                end = min(width * s, int(next_x + 0.5))
                line = counts[row // s]
                for sub in range(start, end):
                    line[sub // s] += 1
    full = s * s
    return [[min(255, c * 255 // full) for c in line] for line in counts]


class Renderer:
    def __init__(self, font_size: int, font_dir: Path = FONT_DIR) -> None:
        self.fonts = {style: Font(font_dir / name) for style, name in FONTS.items() if (font_dir / name).exists()}
        regular = self.fonts[(False, False)]
        self.scale = font_size / regular.units_per_em
        self.cell_w = round(regular.advance * self.scale)
        # One pixel of leading above and below, so that underscores (at the descender) are not cut off.
        self.cell_h = math.ceil((regular.ascender - regular.descender + regular.line_gap) * self.scale) + 2
        self.baseline = regular.ascender * self.scale + 1
        self.cache: dict[tuple, list[list[int]]] = {}

    def glyph(self, char: str, bold: bool, italic: bool, cells: int) -> list[list[int]] | None:
        key = (char, bold, italic, cells)
        if key not in self.cache:
            font = self.fonts.get((bold, italic)) or self.fonts[(False, False)]
            index = font.cmap.get(ord(char)) or self.fonts[(False, False)].cmap.get(ord(char))
            if not index:
                self.cache[key] = None
            else:
                s = SUPERSAMPLE
                edges = outline_edges(font.contours(index), self.scale * s, self.baseline * s)
                self.cache[key] = rasterize(edges, self.cell_w * cells, self.cell_h)
        return self.cache[key]


def color_256(n: int) -> tuple[int, int, int]:
    if n < 16:
        return ANSI16[n]
    if n < 232:
        n -= 16
        levels = [0, 95, 135, 175, 215, 255]
        return levels[n // 36], levels[(n // 6) % 6], levels[n % 6]
    grey = 8 + 10 * (n - 232)
    return grey, grey, grey


SGR = re.compile(r"\x1b\[([0-9;:]*)m")


def parse_capture(text: str, cols: int, rows: int):
    """Cells (char, fg, bg, bold, italic, underline, width) of the captured screen, row by row."""
    screen = []
    for line in text.split("\n")[:rows]:
        fg = bg = None
        bold = italic = underline = reverse = False
        cells = []
        position = 0
        for match in re.finditer(r"\x1b\[[0-9;:]*m|[^\x1b]|\x1b", line):
            token = match.group(0)
            sgr = SGR.fullmatch(token)
            if sgr:
                params = [int(p) if p else 0 for p in re.split("[;:]", sgr.group(1))] if sgr.group(1) else [0]
                i = 0
                while i < len(params):
                    p = params[i]
                    if p == 0:
                        fg = bg = None
                        bold = italic = underline = reverse = False
                    elif p == 1:
                        bold = True
                    elif p == 3:
                        italic = True
                    elif p in (4, 21):
                        underline = True
                    elif p == 7:
                        reverse = True
                    elif p == 22:
                        bold = False
                    elif p == 23:
                        italic = False
                    elif p == 24:
                        underline = False
                    elif p == 27:
                        reverse = False
                    elif 30 <= p <= 37:
                        fg = ANSI16[p - 30]
                    elif 90 <= p <= 97:
                        fg = ANSI16[p - 90 + 8]
                    elif 40 <= p <= 47:
                        bg = ANSI16[p - 40]
                    elif 100 <= p <= 107:
                        bg = ANSI16[p - 100 + 8]
                    elif p == 39:
                        fg = None
                    elif p == 49:
                        bg = None
                    elif p in (38, 48) and i + 1 < len(params):
                        if params[i + 1] == 5 and i + 2 < len(params):
                            value = color_256(params[i + 2])
                            i += 2
                        elif params[i + 1] == 2 and i + 4 < len(params):
                            value = tuple(params[i + 2:i + 5])
                            i += 4
                        else:
                            value = None
                        if p == 38:
                            fg = value
                        else:
                            bg = value
                    i += 1
                continue
            if token == "\x1b" or position >= cols:
                continue
            width = 2 if unicodedata.east_asian_width(token) in ("W", "F") else 1
            cell_fg, cell_bg = fg or DEFAULT_FG, bg or DEFAULT_BG
            if reverse:
                cell_fg, cell_bg = cell_bg, cell_fg
            cells.append((token, cell_fg, cell_bg, bold, italic, underline, width))
            position += width
        while position < cols:
            cells.append((" ", DEFAULT_FG, DEFAULT_BG, False, False, False, 1))
            position += 1
        screen.append(cells)
    while len(screen) < rows:
        screen.append([(" ", DEFAULT_FG, DEFAULT_BG, False, False, False, 1)] * cols)
    return screen


def render(text: str, cols: int, rows: int, font_size: int = 14, padding: int = 12) -> tuple[int, int, bytes]:
    renderer = Renderer(font_size)
    cw, ch = renderer.cell_w, renderer.cell_h
    width, height = cols * cw + 2 * padding, rows * ch + 2 * padding
    pixels = bytearray(bytes(DEFAULT_BG) * (width * height))
    for r, cells in enumerate(parse_capture(text, cols, rows)):
        x = padding
        top = padding + r * ch
        for char, fg, bg, bold, italic, underline, cells_wide in cells:
            w = cw * cells_wide
            for yy in range(top, top + ch):
                start = (yy * width + x) * 3
                pixels[start:start + 3 * w] = bytes(bg) * w
            if char != " ":
                coverage = renderer.glyph(char, bold, italic, cells_wide)
                if coverage is None:  # not in the font: a hollow box
                    coverage = [[255 if yy in (3, ch - 4) or xx in (1, w - 2) else 0 for xx in range(w)]
                                for yy in range(ch)]
                for yy, line in enumerate(coverage):
                    base = ((top + yy) * width + x) * 3
                    for xx, alpha in enumerate(line):
                        if alpha:
                            at = base + 3 * xx
                            for k in range(3):
                                pixels[at + k] = (fg[k] * alpha + bg[k] * (255 - alpha)) // 255
            if underline:
                yy = top + int(renderer.baseline) + 2
                start = (yy * width + x) * 3
                pixels[start:start + 3 * w] = bytes(fg) * w
            x += w
    return width, height, bytes(pixels)


def write_png(path: Path, width: int, height: int, rgb: bytes) -> None:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    stride = width * 3
    raw = b"".join(b"\x00" + rgb[y * stride:(y + 1) * stride] for y in range(height))
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
                     + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("capture", type=Path)
    parser.add_argument("output", type=Path)
    parser.add_argument("--cols", type=int, default=110)
    parser.add_argument("--rows", type=int, default=32)
    parser.add_argument("--font-size", type=int, default=14)
    args = parser.parse_args(argv)
    text = args.capture.read_text(encoding="utf-8", errors="replace")
    width, height, rgb = render(text, args.cols, args.rows, args.font_size)
    write_png(args.output, width, height, rgb)
    print(f"{args.output}: {width}x{height}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
