#!/usr/bin/python3
"""Makes copies of a real profopt recording with the faults users meet when disks fill,
consumers are killed and directories are copied, each with what profopt-analyze must say
about it, for tests/damaged/faults.sh. Beside make_damaged.py (which breaks bytes), these
faults leave every file decodable: only the analysis's checks can tell them.

usage: make_faults.py TRACE_DIR OUT_DIR
Writes OUT_DIR/<case>/ for each case and OUT_DIR/cases.json, a list of
{"name", "status", "message" (a regular expression the one-line error must match, or
null), "partial" (true, false or null: not checked), "warnings" (codes that must be in
trace.warnings), "missing" (kinds that must be in trace.missing_windows), "steps"
("same" as the undamaged trace, "fewer", "most": over half of them, or null),
"as_nobody" (run as an unprivileged user), "args" (more profopt-analyze arguments),
"kept_all_but" (null, or how many packets the salvaged-streams warning's first stream
lost: it must keep the packets after a damaged one)}.
The recording may use per-user buffers (the default: one trace directory for every
process) or per-process buffers (--buffers pid); the expectations follow its layout.
"""
import json
import os
import shutil
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_damaged import index_files, metadata_files, stream_files  # noqa: E402

INDEX_HEADER = 16


def index_entries(path):
    """(offset, size_bytes, end_ns) of each packet an index lists."""
    with open(path, "rb") as f:
        data = f.read()
    entry_size, = struct.unpack_from(">I", data, 12)
    entries = []
    for at in range(INDEX_HEADER, len(data) - entry_size + 1, entry_size):
        offset, bits, _, begin, end = struct.unpack_from(">QQQQQ", data, at)
        entries.append((offset, bits // 8, end))
    return entries, entry_size


def index_of(stream):
    return os.path.join(os.path.dirname(stream), "index", os.path.basename(stream) + ".idx")


def busiest_stream(trace):
    """The stream with the most packets (the training loop's CPU, in practice)."""
    return max(stream_files(trace), key=lambda s: len(index_entries(index_of(s))[0]))


def cut_stream(stream, keep, cut_index):
    """Keeps the first `keep` packets of a stream (a cut at a packet boundary)."""
    entries, entry_size = index_entries(index_of(stream))
    keep = min(keep, len(entries))
    size = entries[keep - 1][0] + entries[keep - 1][1] if keep else 0
    os.truncate(stream, size)
    if cut_index:
        os.truncate(index_of(stream), INDEX_HEADER + keep * entry_size)
    return entries[keep - 1][2] if keep else None


def cut_recording(trace):
    """Every stream cut where the busiest one loses its second half: a full disk."""
    busiest = busiest_stream(trace)
    entries, _ = index_entries(index_of(busiest))
    cut_ns = entries[len(entries) // 2][2]
    for stream in stream_files(trace):
        keep = sum(1 for _, _, end in index_entries(index_of(stream))[0] if end <= cut_ns)
        cut_stream(stream, keep, True)


def process_dirs(trace):
    return sorted(os.path.dirname(m) for m in metadata_files(trace))


def per_user(trace):
    return os.path.isdir(os.path.join(trace, "ust", "uid"))


def least_busy_dir(trace):
    """The trace directory with the least stream data: a loader worker's with --buffers
    pid, the only one with per-user buffers."""
    return min(process_dirs(trace), key=lambda d: sum(
        os.path.getsize(s) for s in stream_files(d)))


def full_packets(stream):
    """(offset, content bytes) of the stream's packets that hold at least 600 bytes of
    events, from its index."""
    with open(index_of(stream), "rb") as f:
        data = f.read()
    entry_size, = struct.unpack_from(">I", data, 12)
    entries = [struct.unpack_from(">QQQ", data, at)
               for at in range(INDEX_HEADER, len(data) - entry_size + 1, entry_size)]
    return [(offset, content_bits // 8) for offset, _, content_bits in entries
            if content_bits // 8 >= 600]


def garble_packet(stream, offset, content):
    """Overwrites a packet's events from 100 bytes in to the end of its content: the
    decoder fails there whatever field the first overwritten byte falls in (a string then
    has no end inside the packet, and an event header names no event class). 300 bytes
    were not enough: one CI run decoded such a packet without an error."""
    with open(stream, "r+b") as f:
        f.seek(offset + 100)
        f.write(b"\xff" * (content - 100))


def metadata_without_declarations(path):
    """Rewrites packetized metadata as what a process that registered with the tracer too
    late leaves: one 4096-byte packet whose text ends before the first event declaration
    (no event class, and with per-process buffers no stream class), beside stream files
    that hold packets."""
    with open(path, "rb") as f:
        data = f.read()
    # The declarations may span packets: profopt-record's own first registration declares
    # the trace and its stream class before any process declares an event class.
    text, at = b"", 0
    while at + 37 <= len(data) and b"\nevent {" not in text:
        content_bits, packet_bits = struct.unpack_from("<II", data, at + 24)
        text += data[at + 37:at + content_bits // 8]
        at += packet_bits // 8
    text = text[:text.index(b"\nevent {") + 1]
    header = bytearray(data[:37])
    struct.pack_into("<II", header, 24, (37 + len(text)) * 8, 4096 * 8)
    with open(path, "wb") as f:
        f.write(bytes(header + text).ljust(4096, b"\0"))


def cases(user):
    def cut_index_intact(t):
        stream = busiest_stream(t)
        cut_stream(stream, len(index_entries(index_of(stream))[0]) // 2, False)

    def cut_with_index(t):
        stream = busiest_stream(t)
        cut_stream(stream, len(index_entries(index_of(stream))[0]) // 2, True)

    def emptied(t):
        open(busiest_stream(t), "wb").close()

    def duplicated(t):
        first = process_dirs(t)[0]
        shutil.copytree(first, first + "-copy")

    def renamed(t):
        first = process_dirs(t)[0]
        os.rename(first, os.path.join(os.path.dirname(first), "renamed-process"))

    def fifo_for(pick):
        def damage(t):
            path = pick(t)
            os.remove(path)
            os.mkfifo(path)
        return damage

    def unreadable_metadata(t):
        os.chmod(metadata_files(t)[0], 0)

    def garbled_last_packet(t):
        """The events of the busiest stream's last packet that holds any garbled; the
        earlier packets are readable."""
        stream = busiest_stream(t)
        garble_packet(stream, *full_packets(stream)[-1])

    def garbled_middle_packet(t):
        """The same in a packet in the middle of the busiest stream: whole packets follow."""
        stream = busiest_stream(t)
        packets = full_packets(stream)
        garble_packet(stream, *packets[len(packets) // 2])

    def cut_mid_packet(t):
        """The busiest stream cut in the middle of a packet three quarters in, its index
        intact (a copy, or a disk that stopped in the middle of a write)."""
        stream = busiest_stream(t)
        entries, _ = index_entries(index_of(stream))
        offset, size, _ = entries[len(entries) * 3 // 4]
        os.truncate(stream, offset + size // 2)

    def no_declarations(t):
        metadata_without_declarations(os.path.join(least_busy_dir(t), "metadata"))

    def damaged_recording_file(t):
        with open(os.path.join(t, "profopt-recording.txt"), "a") as f:
            f.write("who knows\n")

    return [
        ("cut-at-packet-boundary", cut_index_intact,
         dict(status=0, partial=True, warnings=["truncated-streams"],
              missing=["stream-shorter-than-index"])),
        ("cut-with-its-index", cut_with_index,
         dict(status=0, partial=True, warnings=["truncated-streams"],
              missing=["stream-ends-early"])),
        ("emptied-stream", emptied,
         dict(status=0, partial=True, warnings=["truncated-streams"],
              missing=["stream-shorter-than-index"])),
        ("recording-cut-short", cut_recording,
         dict(status=0, partial=True, warnings=["recording-ends-early"],
              missing=["recording-ends-early"], steps="fewer")),
        ("duplicated-process-directory", duplicated,
         dict(status=0, partial=False, warnings=["duplicate-traces"], steps="same")),
        ("renamed-process-directory", renamed, dict(status=0, partial=False, steps="same")),
        ("fifo-stream", fifo_for(busiest_stream),
         dict(status=3, message=r"a FIFO \(named pipe\) where a trace file should be")),
        ("fifo-index", fifo_for(lambda t: index_files(t)[0]),
         dict(status=3, message=r"index/.*\.idx: a FIFO \(named pipe\)")),
        ("fifo-metadata", fifo_for(lambda t: metadata_files(t)[0]),
         dict(status=3, message=r"metadata: a FIFO \(named pipe\)")),
        ("unreadable-metadata", unreadable_metadata,
         dict(status=3, message=r"metadata: cannot be read: Permission denied",
              as_nobody=True)),
        ("garbled-last-packet", garbled_last_packet,
         dict(status=4, message=r"Failed to decode trace|the trace decoder crashed \(SIGABRT")),
        ("garbled-last-packet-salvaged", garbled_last_packet,
         dict(status=0, args=["--salvage"], partial=True, warnings=["salvaged-streams"],
              missing=["stream-damaged"], steps="most")),
        ("garbled-middle-packet-salvaged", garbled_middle_packet,
         dict(status=0, args=["--salvage"], partial=True, warnings=["salvaged-streams"],
              missing=["stream-damaged"], steps="most", kept_all_but=1)),
        ("cut-mid-packet", cut_mid_packet,
         dict(status=4, message=r"Failed to decode trace: path=\S+: Failed to index")),
        ("cut-mid-packet-salvaged", cut_mid_packet,
         dict(status=0, args=["--salvage"], partial=True,
              warnings=["salvaged-streams", "truncated-streams"],
              missing=["stream-damaged"], steps="most", kept_all_but=1)),
        # per-process buffers: the stream class comes after the first events; per-user
        # buffers: before them
        ("metadata-without-declarations", no_declarations,
         dict(status=3, message=r"/metadata: declares no event class \(4096 bytes\), and "
              r"the stream files beside it hold events" if user else
              r"/metadata: declares no stream class \(4096 bytes\), so the \d+ stream "
              r"file\(s\) beside it cannot be read")),
        ("metadata-without-declarations-salvaged", no_declarations,
         dict(status=3, args=["--salvage"],
              message=r"no trace can be decoded: skipped trace path=ust/uid/0/64-bit: "
              r"metadata: declares no event class") if user else
         dict(status=0, args=["--salvage"], partial=True, warnings=["skipped-traces"],
              steps="most")),
        ("damaged-recording-file", damaged_recording_file,
         dict(status=0, warnings=["recording-file"], steps="same")),
    ]


def main(trace, out):
    os.makedirs(out, exist_ok=True)
    described = []
    for name, damage, expect in cases(per_user(trace)):
        target = os.path.join(out, name)
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(trace, target)
        damage(target)
        described.append(dict(dict(name=name, status=0, message=None, partial=None,
                                   warnings=[], missing=[], steps=None, as_nobody=False,
                                   args=[], kept_all_but=None),
                              **expect))
    with open(os.path.join(out, "cases.json"), "w") as f:
        json.dump(described, f, indent=1)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
