"""pyframes_probe.py PROBE [--refused]: libprofopt's reader of Python stacks, loaded as
PROBE (pyframes_probe.c) into the interpreter that runs this script, against that
interpreter's own view: the line of every instruction of every code object of a few
standard-library modules against PyCode_Addr2Line, and the stacks it reads from inside
Python (a function with a non-ASCII name, a generator, a list comprehension, recursion, a
thread) against sys._getframe's, names, files and lines. Names are co_qualname from 3.11,
co_name before (docs/sampling.md, "Interpreters"). With --refused: this interpreter is one
the reader does not know, and it says so in one line; with --refused-debug, the same for
an interpreter that looks like a debug build (pyframes_debug_build.c preloaded)."""

import ctypes
import importlib
import sys
import threading

PROBE = ctypes.PyDLL(sys.argv[1])  # the GIL stays held: the stack does not move meanwhile
PROBE.probe_reason.restype = ctypes.c_char_p
PROBE.probe_line.argtypes = [ctypes.py_object, ctypes.c_int]
PROBE.probe_walk.restype = ctypes.c_uint32
PROBE.probe_walk.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_uint32),
                             ctypes.POINTER(ctypes.c_uint32), ctypes.c_uint32]
PROBE.probe_walk_ns.restype = ctypes.c_int64
PROBE.probe_walk_ns.argtypes = [ctypes.c_uint32]
PROBE.probe_described.argtypes = [ctypes.c_uint32, ctypes.c_char_p, ctypes.c_char_p,
                                  ctypes.POINTER(ctypes.c_int32)]
ADDR2LINE = ctypes.pythonapi.PyCode_Addr2Line
ADDR2LINE.argtypes = [ctypes.py_object, ctypes.c_int]
VERSION = f"{sys.version_info[0]}.{sys.version_info[1]}"
RESULTS = {"passed": 0, "failed": 0}
EPROTO = 71


def check(condition, text):
    print(("ok   " if condition else "FAIL ") + text, flush=True)
    RESULTS["passed" if condition else "failed"] += 1


def name_of(code):
    return getattr(code, "co_qualname", code.co_name)


def described(code_id):
    function, file = ctypes.create_string_buffer(256), ctypes.create_string_buffer(256)
    first_line = ctypes.c_int32()
    if not PROBE.probe_described(code_id, function, file, ctypes.byref(first_line)):
        return None
    return function.value.decode(), file.value.decode(), first_line.value


# ---- lines ----

def compare_lines(code, counts):
    """Every instruction's line of code and of the code objects among its constants; the
    first difference, or None."""
    counts[0] += 1
    for index in range(len(code.co_code) // 2):
        expected = max(ADDR2LINE(code, index * 2), 0)
        got = PROBE.probe_line(code, index)
        counts[1] += 1
        if got != expected:
            return f"{name_of(code)} instruction {index}: {got}, PyCode_Addr2Line {expected}"
    for constant in code.co_consts:
        if hasattr(constant, "co_code"):
            difference = compare_lines(constant, counts)
            if difference:
                return difference
    return None


def test_lines():
    counts = [0, 0]  # code objects, instructions
    differences = []
    for name in ("json.decoder", "argparse", "email.message", "asyncio", "dataclasses",
                 "typing", "unittest.case", "http.client"):
        module = importlib.import_module(name)
        code = module.__loader__.get_code(name)  # compiled again, with its functions
        difference = compare_lines(code, counts)
        if difference:
            differences.append(difference)
    check(not differences and counts[1] > 10000,
          f"lines of {counts[1]} instructions in {counts[0]} code objects as "
          f"PyCode_Addr2Line gives them on {VERSION}" +
          (f": {differences[:3]}" if differences else ""))


# ---- the walk ----

def walk(how=0):
    """The reader's view of the calling thread's stack, [(function, file, line), ...]."""
    ids, lines = (ctypes.c_uint32 * 256)(), (ctypes.c_uint32 * 256)()
    depth = PROBE.probe_walk(how, ids, lines, 256)
    if how != 0:
        return [ids[i] for i in range(depth)]
    view = []
    for i in range(1, depth):  # from walk's caller on, as python_view
        function, file, _ = described(ids[i]) or ("?", "?", 0)
        view.append((function, file, lines[i]))
    return view


def python_view():
    frame, view = sys._getframe(1), []
    while frame is not None:
        view.append((name_of(frame.f_code), frame.f_code.co_filename, frame.f_lineno))
        frame = frame.f_back
    return view


def both():
    return walk(), python_view()


def fünf():
    return both()


def gen():
    yield both()


class Deep:
    def down(self, n):
        return both() if n == 0 else self.down(n - 1)


def timed(depth):
    """The reader's time for one walk of a stack depth frames deep (reported, not judged)."""
    if depth > 0:
        return timed(depth - 1)
    repeat = 20000
    return PROBE.probe_walk_ns(repeat) / repeat


def test_walk():
    check(PROBE.probe_walk(0, (ctypes.c_uint32 * 4)(), (ctypes.c_uint32 * 4)(), 4) > 0,
          "frames are read where Python code calls the reader")
    results = [("a function named in UTF-8", fünf()),
               ("a generator", next(gen())),
               ("a list comprehension", [both() for _ in range(1)][0]),
               ("recursion 100 deep", Deep().down(100))]
    box = []
    thread = threading.Thread(target=lambda: box.append(fünf()))
    thread.start()
    thread.join()
    results.append(("a thread", box[0]))
    for what, (reader, python) in results:
        same = reader == python and reader[0][0] == "both"
        check(same, f"{what}: {len(reader)} frames as Python {VERSION} sees them" +
              ("" if same else f" {reader[:4]!r} vs {python[:4]!r}"))
    for how, name in ((1, "refused"), (2, "not asked for")):
        ids = walk(how)
        walk()
        found = sum(described(code_id) is not None for code_id in ids)
        check(ids and found == len(ids), f"a code first seen with its description {name} is "
              f"described at its next sight: {found} of {len(ids)}")


def main():
    status = PROBE.probe_init()
    reason = (PROBE.probe_reason() or b"").decode()
    if sys.argv[2:3] == ["--refused"]:
        check(status == -EPROTO and reason.count("\n") == 0 and
              f"this is {VERSION}" in reason,
              f"CPython {VERSION} is refused with one line ({status}: {reason!r})")
    elif sys.argv[2:3] == ["--refused-debug"]:
        check(status == -EPROTO and reason.count("\n") == 0 and
              f"this {VERSION} is a debug build" in reason,
              f"a debug build of CPython {VERSION} is refused with one line ({status}: "
              f"{reason!r})")
    else:
        check(status == 0, f"the reader reads CPython {VERSION} ({status}: {reason!r})")
        if status == 0:
            test_lines()
            test_walk()
            print(f"note a walk of {len(python_view()) + 20} frames takes "
                  f"{timed(20) / 1000:.2f} us on {VERSION} (signal delivery not included)")
    print(f"{RESULTS['passed']} passed, {RESULTS['failed']} failed")
    return 1 if RESULTS["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
