"""designed_shares.py: the checks e2e.stacks.c_truth (stacks_c.c) and e2e.python.shares.py3X
(shares.py) share: a loop of designed CPU costs that measured them itself (TRUTH, JSON with
NAME_ns per function and the loop's CPU and wall time), recorded with --stacks and analyzed
into REPORT, whose hotspots must give the loading functions their measured shares of the
load stage within 5 points, each named with its source file and first line, and forward
and the second thread's preprocess spans each in their own function. When the loop shared
its core and the samples came from POSIX CPU timers (where the kernel refused perf
counters), they drift (docs/sampling.md, Limits): the shares are then reported, not
judged."""

import json
import os
import re

LOADING = ("decode_record", "augment_record", "normalize_record")
POINTS = 5  # how far a share may be from the measured one


class Designed:
    """One recording's truth and analysis; failures collects what did not match."""

    def __init__(self, work, source, definition):
        self.summary = json.load(open(os.path.join(work, "report", "summary.json")))
        self.truth = json.load(open(os.path.join(work, "truth.json")))
        self.source = source
        # each function's first line: where definition (a regular expression whose group
        # is the name) matches in the source
        self.lines = {name: number for number, text in enumerate(open(source), 1)
                      for name in re.findall(definition, text)}
        self.groups = {(g["role"], g["stage"]): g for g in self.summary.get("hotspots", [])}
        self.config = self.summary["run"]["config"]
        self.failures = []
        self.alone = True  # the shares were judged (check())

    def functions(self, stage):
        group = self.groups.get(("main", stage))
        if not group:
            self.failures.append(f"no hotspots for main {stage}: {sorted(self.groups)}")
            return {}
        return {f["function"]: f for f in group["functions"]}

    def judged(self):
        """Whether the shares are judged: the loop had its core, or perf counters sampled."""
        truth, timer = self.truth, self.config.get("stacks_timer")
        shared = truth["loop_wall_ns"] > truth["loop_cpu_ns"] * 1.25
        alone = not shared or timer == "counter"
        if shared:
            print(f"note the loop shared its core ({truth['loop_cpu_ns'] / 1e6:.0f} ms of CPU "
                  f"in {truth['loop_wall_ns'] / 1e6:.0f} ms), sampled by {timer}: the shares "
                  "are " + ("judged" if alone else "reported, not judged"))
        return alone

    def check(self, kind):
        """The shares (kind "self" or "total") of the load, forward and preprocess stages;
        returns the load stage's functions."""
        load = self.functions("load")
        total_ns = sum(self.truth[f"{name}_ns"] for name in LOADING)
        alone = self.alone = self.judged()
        file_name = os.path.basename(self.source)
        for name in LOADING:
            designed = 100.0 * self.truth[f"{name}_ns"] / total_ns
            got = load.get(name)
            if not got:
                self.failures.append(f"load: no {name}")
                continue
            share = got[f"{kind}_pct"]
            if abs(share - designed) > POINTS and alone:
                self.failures.append(f"load: {name} {share}% against {designed:.1f}%")
            elif not got["file"].endswith(file_name) or got["line"] != self.lines[name]:
                self.failures.append(f"{name} at {got['file']}:{got['line']}, not "
                                     f"{file_name}:{self.lines[name]}")
            else:
                judged = "ok" if abs(share - designed) <= POINTS else "note (not judged)"
                print(f"{judged} load: {name} {share}% against {designed:.1f}% measured "
                      f"({got['file'].split('/')[-1]}:{got['line']})")
        for stage, name in (("forward", "forward_pass"), ("preprocess", "resize_record")):
            got = self.functions(stage).get(name)
            if not got or got[f"{kind}_pct"] < 90:
                self.failures.append(f"{stage}: {name} {got and got[f'{kind}_pct']}%, not 90% "
                                     "or more")
            else:
                print(f"ok {stage}: {name} {got[f'{kind}_pct']}%")
        if "resize_record" in load and load["resize_record"][f"{kind}_pct"] > 2:
            self.failures.append(f"the other thread's resize_record in load: "
                                 f"{load['resize_record']}")
        return load
