#!/usr/bin/env python3
"""textcheck.py NAME [text|json|pprof] < OUTPUT

Says "NAME: ok" if OUTPUT, a view of the hostile trace (mktrace --hostile),
is safe to show on a terminal and to hand to a strict parser, else
"NAME: ..." with the first problems:

  text   strict UTF-8; no control character but the line feed: no C0
         (ESC, BEL, CR, ...), DEL, C1 (U+0080..U+009F, e.g. U+009B CSI),
         line or paragraph separator, or bidi control (UAX #9)
  svg    the same (tabs allowed), and well-formed XML
  json   the same, and one JSON document a strict parser takes: no NaN or
         Infinity, no lone surrogate escaped as \\ud800
  pprof  a gzipped profile.proto whose string table holds only strings
         that pass as text (protobuf strings must be valid UTF-8)
"""
import gzip
import json
import sys

BIDI = {0x061C, 0x200E, 0x200F} | set(range(0x202A, 0x202F)) | set(range(0x2066, 0x206A))


def bad_char(c):
    o = ord(c)
    return (o < 0x20 and c != "\n") or 0x7F <= o <= 0x9F or o in (0x2028, 0x2029) or o in BIDI


def text_problems(data, allow_newline=True, allow_tab=False):
    try:
        s = data.decode("utf-8", errors="strict")
    except UnicodeDecodeError as e:
        return ["invalid UTF-8 at byte %d: %r" % (e.start, data[max(0, e.start - 8):e.end + 8])]
    out = []
    for i, c in enumerate(s):
        if (bad_char(c) and not (c == "\t" and allow_tab)) or (c == "\n" and not allow_newline):
            out.append("U+%04X at character %d: %r" % (ord(c), i, s[max(0, i - 12):i + 12]))
            if len(out) == 3:
                break
    return out


def walk(v, out):
    if isinstance(v, str):
        for c in v:
            if 0xD800 <= ord(c) <= 0xDFFF:
                out.append("a lone surrogate in %r" % v[:40])
                return
    elif isinstance(v, dict):
        for k, x in v.items():
            walk(k, out)
            walk(x, out)
    elif isinstance(v, list):
        for x in v:
            walk(x, out)


def json_problems(data):
    out = text_problems(data)
    if out:
        return out

    def no_constant(name):
        raise ValueError("%s is not JSON" % name)

    try:
        v = json.loads(data.decode("utf-8"), parse_constant=no_constant)
    except ValueError as e:
        return ["not JSON: %s" % e]
    walk(v, out)
    return out


def svg_problems(data):
    import xml.etree.ElementTree as ET

    out = text_problems(data, allow_tab=True)
    if out:
        return out
    try:
        ET.fromstring(data)
    except ET.ParseError as e:
        return ["not XML: %s" % e]
    return []


def varint(b, i):
    v = s = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << s
        s += 7
        if c < 0x80:
            return v, i


def pprof_problems(data):
    try:
        b = gzip.decompress(data)
    except OSError as e:
        return ["not gzip: %s" % e]
    out, i, n = [], 0, 0
    while i < len(b):
        key, i = varint(b, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            _, i = varint(b, i)
        elif wire == 1:
            i += 8
        elif wire == 5:
            i += 4
        elif wire == 2:
            ln, i = varint(b, i)
            if field == 6:  # Profile.string_table
                n += 1
                out += ["string %d: %s" % (n, p) for p in text_problems(b[i:i + ln], False)]
            i += ln
        else:
            return ["bad wire type %d" % wire]
    return out[:3] if n else ["no string table"]


def main():
    name = sys.argv[1]
    kind = sys.argv[2] if len(sys.argv) > 2 else "text"
    data = sys.stdin.buffer.read()
    probs = {"text": text_problems, "svg": svg_problems, "json": json_problems, "pprof": pprof_problems}[kind](data)
    if not data:
        probs = ["no output"]
    print("%s: %s" % (name, "ok" if not probs else "; ".join(probs)))


main()
