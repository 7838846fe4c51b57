#!/usr/bin/python3
"""check_outputs.py DIR: parses back the summary.json, timeline.json and summary.txt that
test_render_json wrote from the synthetic fixture and checks what JSON consumers rely on."""
import json
import sys
from decimal import Decimal

failures = []
passes = [0]

# How the fixture's hostile label (FIXTURE_NASTY in fixture.h) must decode: JSON escapes
# undone, each invalid byte replaced by U+FFFD, valid UTF-8 kept.
NASTY = 'q"b\\s/</script>\x01\x1f\x7f\ufffd\ufffd(\u2028\u00e9\U0001F600'


def check(condition, message):
    if condition:
        passes[0] += 1
    else:
        failures.append(message)


def sorted_pairs(pairs):
    keys = [key for key, _ in pairs]
    check(keys == sorted(keys, key=lambda k: k.encode()), "keys not in byte order: %s" % keys)
    check(len(set(keys)) == len(keys), "repeated keys: %s" % keys)
    return dict(pairs)


def reject_constant(name):
    failures.append("non-standard constant %s" % name)
    return None


def load(path):
    with open(path, "rb") as handle:
        raw = handle.read()
    text = raw.decode("utf-8")  # strict: raises on invalid UTF-8
    check("</" not in text, "%s: raw '</' would end an HTML script element" % path)
    check(text.endswith("}\n"), "%s: does not end with a newline" % path)
    return json.loads(text, object_pairs_hook=sorted_pairs, parse_float=Decimal,
                      parse_constant=reject_constant)


def walk(value, path=""):
    """Yields (path, key, value) for every member of every object."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield path, key, item
            yield from walk(item, path + "." + key)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from walk(item, "%s[%d]" % (path, index))


def check_summary(summary):
    check(summary["schema"] == "profopt.summary/1", "schema")
    for key in ("breakdown_ms", "findings", "gpu", "memory", "run", "step_series", "steps",
                "trace", "verdict", "workers"):
        check(key in summary, "summary lacks " + key)
    steps = summary["steps"]
    check(sum(summary["breakdown_ms"].values()) == steps["mean_ms"],
          "breakdown_ms sums to %s, mean_ms is %s" % (sum(summary["breakdown_ms"].values()),
                                                     steps["mean_ms"]))
    check(steps["mean_ms"] == Decimal("100.000"), "mean_ms %s" % steps["mean_ms"])
    for step in summary["step_series"]:
        check(sum(step["categories_ms"].values()) == step["wall_ms"],
              "step %s: categories do not sum to wall_ms" % step["index"])
    check([s["index"] for s in summary["step_series"]] == [0, 1, 2, 3], "step_series order")
    check(summary["step_series"][2]["flags"] == ["lossy", "unmatched"], "step flags")
    for path, key, value in walk(summary):
        if key.endswith("_ms") and isinstance(value, Decimal):
            check(abs(value) < 10**6, "%s.%s = %s looks absolute" % (path, key, value))
    check(summary["run"]["config"]["dataset"] == NASTY, "config value did not round-trip")
    check(summary["memory"]["sites"][0]["label"] == NASTY, "site label did not round-trip")
    check(summary["memory"]["sites"][0]["ip"] == "0x7f00deadbeef", "site ip")
    check(summary["memory"]["sites"][1]["label"] is None, "absent label is null")
    check(summary["trace"]["processes"][2]["name"] == "worker\ufffd\"1", "process name")
    check(summary["trace"]["discarded_events"] == 10, "discarded_events")
    check(summary["trace"]["discarded_unknown_windows"] == 1, "discarded_unknown_windows")
    check(summary["trace"]["discard_windows"][1]["count"] is None, "unknown count is null")
    check(summary["trace"]["discard_windows"][0]["begin_ms"] == Decimal("120.000"),
          "times are relative to the first event")
    finding = summary["findings"][0]
    check(finding["id"] == "input-bound" and finding["severity"] == "critical", "finding id")
    check(finding["evidence"]["label"] == NASTY, "first of repeated evidence keys")
    check(finding["evidence"]["wait_share_pct"] == Decimal("60.457"), "evidence number")
    check(finding["recommendations"][1]["predicted_speedup"] is None, "NaN is null")
    check(summary["gpu"][0]["gaps"][0]["step"] == 0, "gap step number")
    check(summary["verdict"] == "input-bound", "verdict")
    comparison = summary["comparison"]
    check(comparison["baseline"] == "baseline/" + NASTY, "comparison baseline")
    check(comparison["metrics"][0]["p_value"] == Decimal("0.000123"), "comparison p_value")
    check(comparison["metrics"][1]["p_value"] is None, "untested p_value is null")
    check(comparison["findings"][0]["change"] == "resolved", "comparison finding change")


def check_timeline(timeline):
    check(timeline["displayTimeUnit"] == "ms", "displayTimeUnit")
    events = timeline["traceEvents"]
    check(len(events) > 0, "no trace events")
    names = {}
    for event in events:
        check(event["ph"] in ("X", "M", "C"), "phase %s" % event["ph"])
        check(isinstance(event["pid"], int), "pid is not an integer")
        if event["ph"] == "M":
            check(event["name"] in ("process_name", "thread_name", "process_sort_index"),
                  "metadata %s" % event["name"])
            if event["name"] != "process_sort_index":
                names[(event["name"], event["pid"], event["tid"])] = event["args"]["name"]
            continue
        check(isinstance(event["ts"], Decimal) and 0 <= event["ts"] < 10**9,
              "ts %s is not relative microseconds" % event["ts"])
        if event["ph"] == "X":
            check(isinstance(event["tid"], int) and event["dur"] >= 0, "X event fields")
    check(names.get(("process_name", 100, 0)) == "main (pid 100)", "main lane name")
    check(names.get(("process_name", 101, 0)) == "worker 0 (pid 101)", "worker lane name")
    check(names.get(("process_name", 1000000000, 0)) == "GPU 0", "GPU lane name")
    check(names.get(("thread_name", 1000000000, 7)) == "stream 7", "stream lane name")
    steps = [e for e in events if e.get("cat") == "step"]
    check([e["name"] for e in steps] == ["step 1", "step 2"], "step markers")
    check(steps[0]["args"]["reasons"] == ["median", "slowest"], "step reasons")
    loads = [e for e in events if e.get("name") == "load"]
    check(len(loads) == 1, "a span kept by two steps is written %d times" % len(loads))
    waits = [e for e in events if e.get("name") == "data_wait"]
    check(len(waits) == 2 and waits[0]["args"]["label"] == NASTY, "stage label round-trip")
    check(waits[0]["ts"] == Decimal("110500.000") and waits[0]["dur"] == Decimal("60000.007"),
          "stage ts/dur in microseconds: %s %s" % (waits[0]["ts"], waits[0]["dur"]))
    kernels = [e for e in events if e.get("cat") == "gpu"]
    check(kernels and kernels[0]["pid"] == 1000000000 and kernels[0]["tid"] == 7, "GPU lane")
    counters = [e for e in events if e["ph"] == "C"]
    check([c["name"] for c in counters] == ["host_rss", "gpu_mem_used (GPU 0)", "host_rss"],
          "counters, a repeated value left out: %s" % [c["name"] for c in counters])
    check(counters[2]["args"]["bytes"] == 314580992, "second RSS sample")


def check_empty(summary, timeline):
    """An analysis with nothing in it still gives complete, valid documents."""
    check(summary["steps"]["count"] == 0 and summary["steps"]["mean_ms"] is None, "empty steps")
    check(all(value is None for value in summary["breakdown_ms"].values()), "empty breakdown")
    check(len(summary["breakdown_ms"]) == 15, "every category in breakdown_ms")
    check(summary["step_series"] == [] and summary["gpu"] == [], "empty arrays")
    check(summary["run"]["framework"] is None and summary["run"]["cpu_count"] is None, "run")
    check(summary["trace"]["duration_ms"] is None, "unknown duration")
    check(summary["verdict"] == "unknown", "empty verdict")
    check(timeline["traceEvents"] == [], "empty timeline")


def check_text(path):
    with open(path, "rb") as handle:
        text = handle.read().decode("utf-8")  # strict: invalid bytes must have been replaced
    check(text.index("Trace quality:") < text.index("Verdict:"), "quality comes first")
    check(all(c == "\n" or (ord(c) >= 0x20 and c not in "\x7f\u2028\u2029") for c in text),
          "control characters in text")
    check("q\"b\\s/</script>???\ufffd\ufffd(?\u00e9" in text, "label made safe for a terminal")


def main():
    out = sys.argv[1]
    try:
        check_summary(load(out + "/summary.json"))
        check_timeline(load(out + "/timeline.json"))
        check_text(out + "/summary.txt")
        check_empty(load(out + "/empty-summary.json"), load(out + "/empty-timeline.json"))
    except (ValueError, KeyError, IndexError, TypeError) as error:
        failures.append("%s: %s" % (type(error).__name__, error))
    checks_failed = len(failures)
    for failure in failures:
        print("FAIL: " + failure, file=sys.stderr)
    print("%d passed, %d failed" % (passes[0], checks_failed))
    return 1 if checks_failed else 0


if __name__ == "__main__":
    sys.exit(main())
