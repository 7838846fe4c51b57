#!/usr/bin/python3
"""machine.py: how much of the machine other programs took while a test measured
something, and the line a test prints when it skips because of it.

A test that times a program (a step, a prediction against a rerun, a scenario whose
loader must be slower than its loop) needs the CPUs it was designed for. What it measures
about that itself, over the interval it timed: the busy time of all CPUs from /proc/stat
(steal included: time the hypervisor gave to other machines) less its own processes' CPU
time, as the number of CPUs that other programs used, and the load average. When a test's
own truth check fails (the scenario it set up did not happen) and other programs used at
least BUSY_SHARE of the CPUs meanwhile, the test prints skip_line() and exits with
SKIP_STATUS, which ctest reports as skipped (SKIP_RETURN_CODE); with less, it fails as
before. A check of the product itself never skips.

From a shell:
  machine.py run FILE -- COMMAND...  runs COMMAND; FILE gets what other programs used
                                     meanwhile (COMMAND's own processes, those it waited
                                     for, are its own). Exits with COMMAND's status.
  machine.py busy FILE... [--what TEXT] [--why TEXT]
                                     exits 0 and prints the skip line when any FILE shows a
                                     busy machine (WHAT ran, WHY the test cannot judge);
                                     exits 1 and prints what it measured otherwise.
"""

import json
import os
import resource
import subprocess
import sys
import time

SKIP_STATUS = 77
# Other programs using a quarter of the CPUs: on 2 cores, half a core taken from a test
# that was designed for both. Nothing a test starts itself counts; the session daemon and
# the consumer daemon beside a recording do, and use a few hundredths of a CPU.
BUSY_SHARE = 0.25
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_busy_s():
    """Seconds all CPUs were busy since boot (user, nice, system, irq, softirq, steal)."""
    with open("/proc/stat") as stat:
        fields = stat.readline().split()
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(f) for f in fields[1:9])
    return (user + nice + system + irq + softirq + steal) / CLOCK_TICKS


def load_average():
    with open("/proc/loadavg") as loadavg:
        return float(loadavg.read().split()[0])


def snapshot(own_cpu_s):
    """What the machine and the test's own processes had used until now."""
    return {"t_s": time.monotonic(), "busy_s": cpu_busy_s(), "own_cpu_s": own_cpu_s,
            "load": load_average()}


def others(begin, end):
    """What other programs used between two snapshots: CPUs on average, and the load."""
    span_s = max(end["t_s"] - begin["t_s"], 1e-9)
    used_s = (end["busy_s"] - begin["busy_s"]) - (end["own_cpu_s"] - begin["own_cpu_s"])
    return {"cpus": os.cpu_count(), "others_cpus": max(used_s, 0.0) / span_s,
            "load": max(begin["load"], end["load"]), "span_s": span_s}


def is_busy(measured):
    return measured["others_cpus"] >= BUSY_SHARE * measured["cpus"]


def describe(measured, what="it"):
    return f"load {measured['load']:.1f}: other programs used {measured['others_cpus']:.2f} " \
        f"of {measured['cpus']} CPUs while {what} ran"


def skip_line(measured, what="it", why=""):
    """The one line a skipped test prints."""
    return "skipped: the machine was too busy to measure this (" + describe(measured, what) + \
        (f"; {why}" if why else "") + ")"


def busiest(measures):
    """The measure with the most CPUs used by others."""
    return max(measures, key=lambda m: m["others_cpus"])


def children_cpu_s():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def command_run(path, command):
    begin = snapshot(children_cpu_s())
    try:
        status = subprocess.call(command)
    except OSError as error:
        print(f"machine.py: cannot run {command[0]}: {error}", file=sys.stderr)
        return 127
    measured = others(begin, snapshot(children_cpu_s()))
    with open(path, "w") as out:
        json.dump(measured, out)
    return status if status >= 0 else 128 - status


def command_busy(paths, what, why):
    measures = []
    for path in paths:
        with open(path) as measured:
            measures.append(json.load(measured))
    worst = busiest(measures)
    if is_busy(worst):
        print(skip_line(worst, what, why))
        return 0
    print(f"the machine was not busy: {describe(worst, what)} (a test skips from "
          f"{BUSY_SHARE * worst['cpus']:.2f})")
    return 1


def main(argv):
    if len(argv) >= 4 and argv[0] == "run" and argv[2] == "--":
        return command_run(argv[1], argv[3:])
    if len(argv) >= 2 and argv[0] == "busy":
        paths, texts = argv[1:], {"--what": "the test", "--why": ""}
        for option in ("--why", "--what"):
            if option in paths[:-1]:
                at = paths.index(option)
                texts[option] = paths[at + 1]
                paths = paths[:at] + paths[at + 2:]
        return command_busy(paths, texts["--what"], texts["--why"])
    print(__doc__.split("\n\n")[-1], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
