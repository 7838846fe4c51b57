"""shares.py STEPS TRUTH: stacks_c.c's training loop of designed CPU costs in pure Python
(no torch), the ground truth of libprofopt's reader of Python stacks on the interpreter that
runs it (e2e.python.shares.py3X, docs/sampling.md "Interpreters"). Each step loads a batch on
the main thread in three functions that spend 60%, 30% and 10% of the loading's CPU time
(each spins in its own frame to a deadline of its thread's CPU clock), then runs forward in
a fourth; a second thread preprocesses in a function of its own, in its own preprocess
spans (only libprofopt's reader samples it: the module's handler samples the main thread
alone). What each function spent on its thread's CPU clock, and the loop's CPU and wall
time, go to TRUTH as JSON."""

import json
import sys
import threading
import time

import profopt

# Per-step CPU costs: 6.6 + 3.3 + 1.1 ms of loading, 2 ms of forward; 3 ms per preprocess.
DECODE_NS = 6_600_000
AUGMENT_NS = 3_300_000
NORMALIZE_NS = 1_100_000
FORWARD_NS = 2_000_000
RESIZE_NS = 3_000_000
ROUNDS = 1000  # between two reads of the CPU clock, a system call: tens of microseconds


# Each costed function spins in its own frame (a shared helper would take the samples) and
# returns the CPU time it spent.
def decode_record(seed):
    start = time.thread_time_ns()
    value, deadline = seed, start + DECODE_NS
    while time.thread_time_ns() < deadline:
        for i in range(ROUNDS):
            value = (value * 31 + i) & 0xFFFFFFFF
    return time.thread_time_ns() - start


def augment_record(seed):
    start = time.thread_time_ns()
    value, deadline = seed, start + AUGMENT_NS
    while time.thread_time_ns() < deadline:
        for i in range(ROUNDS):
            value = (value * 17 + i) & 0xFFFFFFFF
    return time.thread_time_ns() - start


def normalize_record(seed):
    start = time.thread_time_ns()
    value, deadline = seed, start + NORMALIZE_NS
    while time.thread_time_ns() < deadline:
        for i in range(ROUNDS):
            value = (value * 13 + i) & 0xFFFFFFFF
    return time.thread_time_ns() - start


def forward_pass(seed):
    start = time.thread_time_ns()
    value, deadline = seed, start + FORWARD_NS
    while time.thread_time_ns() < deadline:
        for i in range(ROUNDS):
            value = (value * 7 + i) & 0xFFFFFFFF
    return time.thread_time_ns() - start


def resize_record(seed):
    start = time.thread_time_ns()
    value, deadline = seed, start + RESIZE_NS
    while time.thread_time_ns() < deadline:
        for i in range(ROUNDS):
            value = (value * 5 + i) & 0xFFFFFFFF
    return time.thread_time_ns() - start


def preprocess(stopping, spent):
    batch = 0
    while not stopping.is_set():
        with profopt.span("preprocess", label="resize", batch=batch):
            spent["resize_record"] += resize_record(batch)
        batch += 1


def train(steps, spent):
    for step in range(steps):
        profopt.step_begin(step, 0, 1)
        with profopt.span("load", label="record", batch=step, sample=step):
            spent["decode_record"] += decode_record(step)
            spent["augment_record"] += augment_record(step)
            spent["normalize_record"] += normalize_record(step)
        with profopt.span("forward", batch=step):
            spent["forward_pass"] += forward_pass(step)
        profopt.step_end(step, 0, 1)


def main(steps, truth_path):
    spent = dict.fromkeys(("decode_record", "augment_record", "normalize_record",
                           "forward_pass", "resize_record"), 0)
    stopping = threading.Event()
    with profopt.run({"num_workers": "0"}, framework="python"):
        thread = threading.Thread(target=preprocess, args=(stopping, spent))
        thread.start()
        loop_cpu_ns, loop_wall_ns = time.thread_time_ns(), time.monotonic_ns()
        train(steps, spent)
        loop_cpu_ns = time.thread_time_ns() - loop_cpu_ns
        loop_wall_ns = time.monotonic_ns() - loop_wall_ns
        stopping.set()
        thread.join()
    truth = {f"{name}_ns": ns for name, ns in spent.items()}
    truth.update(loop_cpu_ns=loop_cpu_ns, loop_wall_ns=loop_wall_ns,
                 python="%d.%d" % sys.version_info[:2])
    with open(truth_path, "w") as out:
        json.dump(truth, out)
    return 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]), sys.argv[2]))
