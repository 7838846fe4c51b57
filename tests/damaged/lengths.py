#!/usr/bin/python3
"""One flipped bit in a sequence's length field, in a committed real recording: a stack
sample's code_ids length (24 read as 134,217,752). babeltrace2 2.0.4 allocates a field per
element as soon as it reads a length: profopt-analyze grew to 7.2 GB in 21 s (52 s on a
busy machine) and ended with exit 4 and a raw GSlice line. It must refuse the record at
once, in one line naming the trace and the cause; --salvage must keep the other packets
and leave nothing in TMPDIR, also when the analysis dies while it repairs (a decoder crash,
a memory limit or a kill), and name the user's trace, not its scratch copy.

The length is found with python3-bt2 (a sample's tid, cpu_ns and length occur together
once in the streams) and bit 27 is set there.

usage: lengths.py PROFOPT_ANALYZE TRACES_DIR WORK_DIR
"""
import os
import resource
import shutil
import signal
import struct
import subprocess
import sys
import time

import bt2

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_damaged import stream_files  # noqa: E402

BIT = 27
# A memory limit well under the default (8192 MiB), so that the unfixed analyzer fails in
# seconds too; the fixed one never comes near it.
LIMITS = "mem=1024"


def damage(trace, copy):
    """Sets bit BIT of a stack sample's code_ids length; returns (old, new, file)."""
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(trace, copy)
    samples = []
    for msg in bt2.TraceCollectionMessageIterator(trace):
        if type(msg) is bt2._EventMessageConst and msg.event.name == "profopt:stack_sample":
            payload = msg.event.payload_field
            samples.append((int(payload["tid"]), int(payload["cpu_ns"]),
                            len(payload["code_ids"])))
    contents = {path: open(path, "rb").read() for path in stream_files(copy)}
    for tid, cpu_ns, length in samples[len(samples) // 2:] + samples[:len(samples) // 2]:
        pattern = struct.pack("<iqI", tid, cpu_ns, length)  # _tid, _cpu_ns, __code_ids_length
        hits = [(path, data.find(pattern)) for path, data in contents.items()
                if pattern in data]
        if len(hits) == 1 and contents[hits[0][0]].count(pattern) == 1:
            path, at = hits[0]
            with open(path, "r+b") as f:
                f.seek(at + 12)
                f.write(struct.pack("<I", length | 1 << BIT))
            return length, length | 1 << BIT, os.path.relpath(path, copy)
    sys.exit("FAIL no stack sample's length occurs once in the streams")


def environment(tmpdir):
    env = dict(os.environ, TMPDIR=tmpdir, PROFOPT_DECODE_LIMITS=LIMITS)
    env.pop("PROFOPT_PROGRESS_AFTER_MS", None)
    return env


def analyze(analyze_bin, trace, out, tmpdir, *options):
    shutil.rmtree(out, ignore_errors=True)
    started = time.monotonic()
    run = subprocess.run([analyze_bin, "--json-only", "-q", *options, "-o", out, trace],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=600,
                         env=environment(tmpdir))
    return run.returncode, run.stderr.decode(errors="replace"), time.monotonic() - started


def children(pid):
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            return [int(c) for c in f.read().split()]
    except OSError:
        return []


def scratch_ready(tmpdir, inside):
    """Whether a scratch directory exists, holding `inside` (None: anything)."""
    for name in os.listdir(tmpdir):
        if name.startswith("profopt-salvage-") and (
                inside is None or os.path.lexists(os.path.join(tmpdir, name, inside))):
            return True
    return False


def kill_in_scratch(analyze_bin, trace, out, tmpdir, inside, delay_s):
    """Starts --salvage, and SIGKILLs the analysis child (as the kernel's OOM killer or a
    crash would end it) delay_s after its scratch directory holds `inside`. Returns (status,
    stderr, caught)."""
    shutil.rmtree(out, ignore_errors=True)
    proc = subprocess.Popen([analyze_bin, "--json-only", "-q", "--salvage", "-o", out, trace],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env=environment(tmpdir))
    caught = False
    deadline = time.monotonic() + 120
    while proc.poll() is None and time.monotonic() < deadline and not caught:
        if scratch_ready(tmpdir, inside):
            time.sleep(delay_s)
            for child in children(proc.pid):
                os.kill(child, signal.SIGKILL)
                caught = True
        time.sleep(0.001)
    _, err = proc.communicate(timeout=120)
    return proc.returncode, err.decode(errors="replace"), caught


def main(analyze_bin, traces, work):
    failures = []
    shutil.rmtree(work, ignore_errors=True)
    tmpdir = os.path.join(work, "tmp")
    os.makedirs(tmpdir)
    copy = os.path.join(work, "lengths")
    old, new, where = damage(os.path.join(traces, "pytorch-hotspots"), copy)
    print("code_ids length %d set to %d in %s" % (old, new, where))

    # Without --salvage: refused at once, in one line that names the trace and the cause.
    status, err, seconds = analyze(analyze_bin, copy, os.path.join(work, "out"), tmpdir)
    peak_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024
    print("refused: exit %d in %.2f s, peak %d MiB: %s" % (status, seconds, peak_mib,
                                                           err.strip()))
    if status != 4:
        failures.append("exit %d, not 4" % status)
    if "a sequence of %d elements of 32 bits" % new not in err or copy not in err:
        failures.append("the message does not name the trace and the length")
    if err.count("\n") != 1 or "GSlice" in err or "MEMORY-ERROR" in err:
        failures.append("not one line: %r" % err)
    if peak_mib > 512:
        failures.append("the decoder grew to %d MiB" % peak_mib)

    # --salvage: the other packets are kept; the scratch copy goes.
    status, err, seconds = analyze(analyze_bin, copy, os.path.join(work, "out"), tmpdir,
                                   "--salvage")
    print("salvaged: exit %d in %.2f s" % (status, seconds))
    if status != 0:
        failures.append("--salvage: exit %d: %s" % (status, err.strip()))
    if os.listdir(tmpdir):
        failures.append("--salvage left %s in TMPDIR" % os.listdir(tmpdir))

    # --salvage, the analysis killed while the scratch copy exists (as soon as it is made;
    # once the repaired copy is complete, so while it is read): it goes all the same, and
    # the message names the trace, never the copy.
    for when, inside, delays in (
            ("while repairing", None, (0, 0, 0)),
            ("while reading the repaired copy", "trace/profopt-recording.txt",
             (0.03, 0.015, 0.005, 0, 0))):
        # The analysis can end before the kill comes, or (the repaired copy being small)
        # have read the trace when it comes: try again sooner. A kill after the trace was
        # read must still leave no scratch copy and name none of its files.
        for delay_s in delays:
            status, err, caught = kill_in_scratch(analyze_bin, copy,
                                                  os.path.join(work, "out"), tmpdir, inside,
                                                  delay_s)
            caught = caught and status != 0  # a kill of a child that was ending anyway
            late = caught and "after the trace was read" in err
            if caught and not late:
                break
            if os.listdir(tmpdir):
                break
        print("killed %s: exit %d, caught %s%s: %s" % (when, status, caught,
                                                       " (after the trace was read)" if late
                                                       else "", err.strip()))
        if "profopt-salvage" in err:
            failures.append("killed %s: the message names the scratch copy: %s" % (when, err))
        elif not caught:
            failures.append("killed %s: the analysis ended before that" % when)
        elif late:
            print("note: killed %s: every kill came after the trace was read on this "
                  "machine; the message's naming of the trace was checked while repairing"
                  % when)
        elif status != 4 or copy not in err:
            failures.append("killed %s: the message does not name the trace: exit %d: %s"
                            % (when, status, err))
        if os.listdir(tmpdir):
            failures.append("killed %s: %s left in TMPDIR" % (when, os.listdir(tmpdir)))
            for name in os.listdir(tmpdir):
                shutil.rmtree(os.path.join(tmpdir, name), ignore_errors=True)

    for failure in failures:
        print("FAIL " + failure)
    if not failures:
        shutil.rmtree(work, ignore_errors=True)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], sys.argv[3])
