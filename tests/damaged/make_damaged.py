#!/usr/bin/python3
"""Makes damaged copies of a real profopt trace, one per way traces get damaged in the
field (full disks, killed sessions, copied directories), for tests/damaged/run.sh.

usage: make_damaged.py TRACE_DIR OUT_DIR
Writes OUT_DIR/<case>/ for each case and OUT_DIR/cases.txt ("<case> <expectation>", where
the expectation is "error" (a clear error, exit 3 or 4) or "salvage" (a readable part
remains: plain analysis fails, --salvage succeeds and marks the report partial).
"""
import os
import re
import shutil
import struct
import sys

CTF_MAGIC = 0xC1FC1FC1


def stream_files(trace):
    """Data stream files of every CTF trace below trace (not metadata, not index)."""
    found = []
    for root, dirs, files in os.walk(trace):
        dirs[:] = sorted(d for d in dirs if d != "index")
        if "metadata" not in files:
            continue
        for name in sorted(files):
            path = os.path.join(root, name)
            if name != "metadata" and not name.startswith(".") and os.path.getsize(path) > 0:
                found.append(path)
    return found


def metadata_files(trace):
    return sorted(os.path.join(root, "metadata") for root, _, files in os.walk(trace)
                  if "metadata" in files)


def largest_stream(trace):
    return max(stream_files(trace), key=os.path.getsize)


def index_files(trace):
    return sorted(os.path.join(root, name) for root, _, files in os.walk(trace)
                  for name in files if name.endswith(".idx"))


def rewrite(path, transform):
    with open(path, "rb") as f:
        data = bytearray(f.read())
    with open(path, "wb") as f:
        f.write(transform(data))


def packet_offsets(data):
    """Offsets of packets, following the packet_size field of each packet context
    (lttng-ust layout: header magic, uuid, stream_id, stream_instance_id; context
    timestamp_begin, timestamp_end, content_size, packet_size in bits)."""
    offset = 0
    while offset + 64 <= len(data):
        magic, = struct.unpack_from("<I", data, offset)
        if magic != CTF_MAGIC:
            break
        yield offset
        packet_bits, = struct.unpack_from("<Q", data, offset + 56)
        if packet_bits == 0:
            break
        offset += packet_bits // 8


def truncate_half(data):
    return data[: len(data) // 2 + 7]


def corrupt_magic(data):
    struct.pack_into("<I", data, 0, 0xDEADBEEF)
    return data


def content_over_packet(data):
    offsets = list(packet_offsets(data))
    target = offsets[len(offsets) // 2] if offsets else 0
    packet_bits, = struct.unpack_from("<Q", data, target + 56)
    struct.pack_into("<Q", data, target + 48, packet_bits * 4)
    return data


def garbage_events(data):
    offsets = list(packet_offsets(data))
    target = offsets[-1] if offsets else 0
    for i in range(target + 80, min(len(data), target + 4096)):
        data[i] = 0xFF
    return data


def remove_clock_frequency(data):
    return re.sub(rb"\n\s*freq = \d+;", b"", bytes(data))


def metadata_garbage(data):
    return bytes(data).replace(b"event {", b"evnt {{", 1)


def cases(trace, out):
    """(name, expectation, damage function taking the copied trace directory)."""
    def on_stream(transform):
        return lambda t: rewrite(largest_stream(t), transform)

    def on_metadata(transform):
        return lambda t: [rewrite(m, transform) for m in metadata_files(t)]

    def on_index(transform):
        return lambda t: [rewrite(i, transform) for i in index_files(t)]

    def foreign_file(t):
        with open(os.path.join(os.path.dirname(metadata_files(t)[0]), "notes.txt"), "w") as f:
            f.write("copied here by hand\n")

    def empty_stream(t):
        open(largest_stream(t), "wb").close()

    def empty_metadata(t):
        open(metadata_files(t)[0], "wb").close()

    def no_streams(t):
        for path in stream_files(t):
            os.remove(path)

    return [
        ("truncated-stream", "salvage", on_stream(truncate_half)),
        ("truncated-metadata", "error", on_metadata(truncate_half)),
        ("corrupted-packet-header", "salvage", on_stream(corrupt_magic)),
        ("content-larger-than-packet", "salvage", on_stream(content_over_packet)),
        ("garbage-events", "salvage", on_stream(garbage_events)),
        ("corrupted-index", "error-or-ok", on_index(lambda d: b"\x00garbage" * 8)),
        ("truncated-index", "error-or-ok", on_index(truncate_half)),
        ("clock-without-frequency", "error-or-ok", on_metadata(remove_clock_frequency)),
        ("metadata-syntax-error", "error", on_metadata(metadata_garbage)),
        ("foreign-file", "error", foreign_file),
        ("empty-stream-file", "error-or-ok", empty_stream),
        ("empty-metadata", "error", empty_metadata),
        ("metadata-only", "error", no_streams),
    ]


def main(trace, out):
    os.makedirs(out, exist_ok=True)
    lines = []
    for name, expectation, damage in cases(trace, out):
        target = os.path.join(out, name)
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(trace, target)
        damage(target)
        lines.append(f"{name} {expectation}\n")
    with open(os.path.join(out, "cases.txt"), "w") as f:
        f.writelines(lines)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
