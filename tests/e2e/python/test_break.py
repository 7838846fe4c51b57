#!/usr/bin/python3
"""Unit tests of how the profopt module counts steps when a loop is left early: the batch
fetched before a `break` at the top of the body is handed over but never trained on, so its
step ends with batch size 0 (no step for profopt-analyze) and its number is used again; a
`break` after the body, or an exception in it, keeps the step."""

import sys
import time

import torch
from torch.utils.data import DataLoader

from calls import check, finish, profopt, recording

# A loop body that trains. A body is taken for a `break` when it took under 1 ms and a tenth
# of the shortest body before it (_api.EMPTY_BODY_*): with 20 ms bodies a break has the whole
# millisecond, where 2 ms bodies left it 0.2 ms, which a busy machine's preemption between
# the hand-off and the break once exceeded (2 workers: the sixth step ended with batch size
# 2). A scenario whose breaks depend on that is tried up to ATTEMPTS times.
BODY_S = 0.02
ATTEMPTS = 3


def loader(batch_size=2, samples=40, workers=0):
    return profopt.instrument(DataLoader(torch.arange(samples), batch_size=batch_size,
                                         num_workers=workers))


def step_ends(calls):
    return [(arguments[0], arguments[2]) for _, arguments in calls.of("step_end")]


def with_attempts(scenario):
    """Runs scenario() (a list of (ok, message)) until all its checks pass, ATTEMPTS times at
    most: a break is told from a body by its time, which a busy machine can stretch. The
    last attempt's results are the checks'."""
    for attempt in range(1, ATTEMPTS + 1):
        results = scenario()
        if all(ok for ok, _ in results) or attempt == ATTEMPTS:
            break
        failed = [message for ok, message in results if not ok]
        print(f"note attempt {attempt} failed ({failed[0]}): once more, the break's time "
              f"may have been stretched by the machine's load")
    for ok, message in results:
        check(ok, message)


def break_at_top(workers):
    calls, batches = recording(), loader(workers=workers)
    for step, _ in enumerate(batches):
        if step == 5:
            break
        time.sleep(BODY_S)
    ends = step_ends(calls)
    results = [(ends == [(0, 2), (1, 2), (2, 2), (3, 2), (4, 2), (5, 0)],
                f"{workers} workers, break at the top: 5 steps, the sixth ends with batch "
                f"size 0 ({ends})")]
    calls = recording()
    for step, _ in enumerate(batches):
        time.sleep(BODY_S)
        if step == 2:
            break
    ends = step_ends(calls)
    results.append((ends == [(5, 2), (6, 2), (7, 2)],
                    f"{workers} workers, break after the body: 3 steps numbered on from 5 "
                    f"({ends})"))
    return results


def test_loader_break_at_top(workers):
    with_attempts(lambda: break_at_top(workers))


def test_loader_exception():
    calls, batches = recording(), loader()
    try:
        for step, _ in enumerate(batches):
            time.sleep(BODY_S)
            if step == 3:
                raise ValueError("stop")
    except ValueError:
        pass
    ends = step_ends(calls)
    check(ends == [(0, 2), (1, 2), (2, 2), (3, 2)],
          f"an exception in the body keeps its step ({ends})")


def test_loader_first_body():
    """Without a body before it there is nothing to compare with: the step is kept."""
    calls = recording()
    for _ in loader():
        break
    check(step_ends(calls) == [(0, 2)], f"a break in the first body ({step_ends(calls)})")


class Stream(torch.utils.data.IterableDataset):
    def __iter__(self):
        return iter(range(6))


def test_iterable_end():
    """An iterable dataset without len(): the step opened for the end of the data gets no
    batch."""
    calls, batches = recording(), profopt.instrument(DataLoader(Stream(), batch_size=2))
    for _ in range(2):
        for _ in batches:
            time.sleep(BODY_S)
    ends = step_ends(calls)
    check(ends == [(0, 2), (1, 2), (2, 2), (3, 0), (3, 2), (4, 2), (5, 2), (6, 0)],
          f"iterable without len(): 3 steps per epoch, numbered on ({ends})")


def step_api_break():
    calls, batches = recording(), DataLoader(torch.arange(40), batch_size=2)
    first = profopt._api.STATE.next_step
    for epoch in range(2):
        for step, _ in enumerate(batches):
            with profopt.step(epoch=epoch, batch_size=2):
                if step == 4:
                    break
                time.sleep(BODY_S)
    ends = step_ends(calls)
    numbers = [number for number, size in ends if size]
    return [([size for _, size in ends] == [2] * 4 + [0] + [2] * 4 + [0],
             f"step API, break at the top inside the step: 4 steps per epoch ({ends})"),
            (numbers == list(range(first, first + 8)),
             f"the numbers of the steps that trained follow on ({numbers})")]


def test_step_api_break():
    with_attempts(step_api_break)
    calls = recording()
    try:
        with profopt.step():
            raise KeyError("x")
    except KeyError:
        pass
    with profopt.step():
        pass  # an empty body after trained ones, without an exception: not a step
    check([size for _, size in step_ends(calls)] == [-1, 0],
          f"a step whose body raised is kept, an empty one is not ({step_ends(calls)})")


def main():
    test_loader_break_at_top(0)
    test_loader_break_at_top(2)
    test_loader_exception()
    test_loader_first_body()
    test_iterable_end()
    test_step_api_break()
    return finish()


if __name__ == "__main__":
    sys.exit(main())
