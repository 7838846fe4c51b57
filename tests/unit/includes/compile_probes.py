#!/usr/bin/python3
"""compile_probes.py COMPILE_COMMANDS: the crossings docs/architecture.md forbids do not
compile. Each probe is compiled with the exact command the build uses for a real file of
the module it stands for (from compile_commands.json), so it sees that module's include
path and nothing more: a renderer including the model's API (model.h, to call
po_model_consume()) or its internals, the recorder including the model's internals, the
model including the detectors. Each must fail to compile, on its include. A control built
with the same command, including a header that module may include and calling into it,
must compile: a probe that fails for another reason proves nothing.

The probes name headers as the tree names them (module/header.h, or a bare name); a path
relative to the includer (../model/model.h) reaches any file and is refused by the include
check instead (unit.includes.probes, target po_include_check). Exit 0 when every probe
fails and every control compiles, 1 otherwise."""

import json
import os
import shlex
import subprocess
import sys
import tempfile

# (module's real file, forbidden includes, a use of them, allowed include, a use of it)
PROBES = [
    ("render/report/html.c", ["model/model.h", "model.h", "model/model_internal.h",
                              "model_internal.h"],
     "int probe(struct po_model *m, const struct po_event *e)"
     " { return (int)po_model_consume(m, e); }",
     "model/result.h", "const char *probe(void) { return po_role_name(PO_ROLE_MAIN); }"),
    ("render/json/summary_json.c", ["model/model_internal.h", "model_internal.h",
                                    "model/model.h"],
     "int probe(struct po_model *m, const struct po_event *e)"
     " { return (int)po_model_consume(m, e); }",
     "model/result.h", "const char *probe(void) { return po_role_name(PO_ROLE_MAIN); }"),
    ("tracepoints/record/main.c", ["model/model_internal.h", "model_internal.h",
                                  "model/model.h", "model/result.h"],
     "int probe(void) { return 0; }",
     "common/status.h", "const char *probe(void) { return po_status_name(PO_STATUS_OK); }"),
    ("analyzer/model/model.c", ["detect/detect.h", "detect.h", "detect/detect_internal.h",
                                "detect_internal.h"],
     "int probe(struct po_analysis *a) { return (int)po_detect_run(a, 0, 0); }",
     "stats/stats.h", "double probe(void) { return po_stats_mean(0, 0); }"),
]


def command_for(entries, source):
    """The build's compile command for source, as an argument list."""
    for entry in entries:
        if os.path.realpath(entry["file"]) == os.path.realpath(source):
            args = entry.get("arguments") or shlex.split(entry["command"])
            return args, entry["directory"]
    sys.exit(f"compile_probes: no compile command for {source} in compile_commands.json")


def compile_probe(args, directory, text, work):
    """Compiles text with the command of args (its source and output replaced)."""
    probe = os.path.join(work, "probe.c")
    with open(probe, "w", encoding="utf-8") as f:
        f.write(text)
    out, command, skip = os.path.join(work, "probe.o"), [], False
    for arg in args:
        if skip:
            skip = False
        elif arg == "-o":
            command += ["-o", out]
            skip = True
        elif arg.endswith(".c") and os.path.isfile(os.path.join(directory, arg)):
            command.append(probe)
        else:
            command.append(arg)
    done = subprocess.run(command, cwd=directory, capture_output=True, text=True)
    return done.returncode, done.stderr


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.splitlines()[0])
    with open(sys.argv[1], encoding="utf-8") as f:
        entries = json.load(f)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.realpath(__file__)))))
    failed = 0
    with tempfile.TemporaryDirectory() as work:
        for real, forbidden, use, allowed, allowed_use in PROBES:
            args, directory = command_for(entries, os.path.join(root, real))
            rc, err = compile_probe(args, directory, f'#include "{allowed}"\n{allowed_use}\n',
                                    work)
            if rc != 0:
                print(f"FAIL {real}: the control (#include \"{allowed}\") does not compile:"
                      f" {err.strip().splitlines()[:3]}")
                failed += 1
                continue
            print(f"ok   {real}: #include \"{allowed}\" compiles")
            for header in forbidden:
                rc, err = compile_probe(args, directory, f'#include "{header}"\n{use}\n', work)
                if rc == 0:
                    print(f"FAIL {real}: #include \"{header}\" compiles")
                    failed += 1
                elif f"{header}: No such file or directory" not in err:
                    print(f"FAIL {real}: #include \"{header}\" fails for another reason: "
                          f"{err.strip().splitlines()[:3]}")
                    failed += 1
                else:
                    print(f"ok   {real}: #include \"{header}\" is not on its include path")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
