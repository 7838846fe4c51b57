#!/usr/bin/python3
"""agreement.py BIN_DIR: one number, one figure. For every golden trace (tests/data/traces,
and the H100 recordings in tests/data/gpu-traces), profopt-analyze writes the text summary,
index.html, report.pdf and summary.json; every place that names the same metric must show
the same value to its printed precision:

- GPU busy: the text summary's steady line, the HTML headline, every evidence row titled
  "GPU busy" in the HTML and the PDF, and summary.json's steady.gpu_busy_pct and the
  findings' gpu_busy_pct evidence.
- The steady mean step: the text summary's steady line, summary.json's steady.mean_ms and
  every finding that quotes "N ms on average over M steady steps".
- The input wait: the text summary's steady line, the HTML headline "waiting for input",
  summary.json's steady.input_wait_pct and the finding's "waits for data P% of each steady
  step".

The comparison (--baseline): its gpu.busy_pct, steps.mean_ms and workers.busy_pct are the
two runs' own steady.gpu_busy_pct, steps.mean_ms and steady.workers_busy_pct.

A device's share of the whole window is another metric: it is named "busy over the
window" wherever it appears, never "GPU busy"."""

import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
failures = 0


def check(ok, text):
    global failures
    print(("ok   " if ok else "FAIL ") + text)
    failures += not ok


def decimals_of(printed):
    return len(printed.split(".")[1]) if "." in printed else 0


def same(printed, value, value_decimals=3):
    """printed (a string as shown) agrees with value (itself written with value_decimals) to
    the printed precision: they differ by no more than the two roundings allow."""
    if value is None or not re.fullmatch(r"-?[0-9]+(\.[0-9]+)?", printed or ""):
        return False
    slack = 0.5 * 10 ** -decimals_of(printed) + 0.5 * 10 ** -value_decimals + 1e-9
    return abs(float(printed) - value) <= slack


def traces(work):
    found = sorted(glob.glob(os.path.join(HERE, "traces", "*", "")))
    for archive in sorted(glob.glob(os.path.join(HERE, "gpu-traces", "*.tar.xz"))):
        with tarfile.open(archive) as tar:
            tar.extractall(os.path.join(work, "unpacked"))
    found += sorted(glob.glob(os.path.join(work, "unpacked", "*", "")))
    return [path.rstrip("/") for path in found]


def pdf_gpu_busy(pdf):
    """The PDF's GPU busy figures (pdftotext -layout): evidence rows ("GPU busy  27.9%  ...")
    and the headline, whose value stands on the line above its label, in its column. A
    chart's axis title ("GPU busy" alone on its line) holds no figure."""
    lines = pdf.splitlines()
    shown = []
    for i, line in enumerate(lines):
        row = re.match(r"GPU busy\s+([0-9.]+)%", line)
        if row:
            shown.append(("pdf evidence", row.group(1)))
            continue
        label = re.search(r"GPU busy(?=\s{2,}|$)", line)
        if not label or line.strip() == "GPU busy" or i == 0:
            continue
        above = [(abs(m.start() - label.start()), m.group(1))
                 for m in re.finditer(r"([0-9.]+)%", lines[i - 1])]
        shown.append(("pdf headline", min(above)[1] if above else None))
    return shown


def gpu_busy(name, text, html, pdf, summary):
    steady = summary["steady"]
    value = steady.get("gpu_busy_pct")  # written with 2 decimals
    line = re.search(r"^Steady steps .*?; GPU busy ([0-9.]+)%", text, re.M)
    if value is None:
        figures = re.findall(r'kpi-value">([^<]*)</div><div class="kpi-label">GPU busy of ', html)
        figures += re.findall(r">GPU busy</td><td[^>]*>([^<]*)<", html)
        check(line is None and all(figure == "n/a" for figure in figures),
              f"{name}: no GPU, no GPU busy figure ({figures})")
        return
    shown = [("text", line.group(1) if line else None)]
    shown += [("html headline", m) for m in re.findall(
        r'kpi-value">([0-9.]+)%%</div><div class="kpi-label">GPU busy %s<' % steady_steps(summary),
        html)]
    shown += [("html evidence", m) for m in re.findall(
        r'>GPU busy</td><td class="num">([0-9.]+)%', html)]
    shown += pdf_gpu_busy(pdf)
    for finding in summary["findings"]:
        evidence = finding.get("evidence", {}).get("gpu_busy_pct")
        if evidence is not None:
            shown.append((f"evidence of {finding['id']}", f"{evidence:.3f}"))
    wrong = [(where, got) for where, got in shown if not same(got, value, 2)]
    check(len(shown) >= 3 and not wrong,
          f"{name}: GPU busy {value:.1f}% everywhere ({len(shown)} places; differing: {wrong})")
    window_named = "Busy over the window" in html or not summary.get("gpu")
    check(window_named, f"{name}: the device's window share is named busy over the window")


def flame_text(name, html, summary):
    """Where the run has function samples, each flame graph in the HTML names its bars in
    SVG text (searchable and selectable, not glyph outlines) with a tooltip per bar, and the
    outermost frame of the run's call paths is among the names."""
    groups = re.findall(r'<g class="flame-text"[^>]*>(.*?)</g>', html, re.S)
    if not summary.get("hotspots"):
        check(not groups, f"{name}: no function samples, no flame graph text ({len(groups)})")
        return
    names = [html_unescape(t) for group in groups
             for t in re.findall(r"<text[^>]*>([^<]*)</text>", group)]
    tips = sum(len(re.findall(r"<title>", group)) for group in groups)
    check(len(groups) >= 1 and names and tips >= len(names) and "<module>" in names,
          f"{name}: the flame graphs name their bars in SVG text ({len(groups)} graphs, "
          f"{len(names)} names, {tips} tooltips; first names {names[:3]})")


def html_unescape(text):
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"') \
        .replace("&amp;", "&")


def steady_steps(summary):
    """The population the headline's steady figures name: "of 58 steady steps"."""
    count = summary["steady"]["count"]
    return "of %d steady step%s" % (count, "" if count == 1 else "s")


def headline_steps(name, html, summary):
    """The headline's median and p95 name the steps they are over (all steps, or the clean
    ones where some were left out), and show summary.json's steps.p50_ms and p95_ms."""
    steps = summary["steps"]
    clean = steps["clean_count"]
    kind = "clean " if clean < steps["count"] else ""
    population = "of %d %sstep%s" % (clean, kind, "" if clean == 1 else "s")
    for label, key in (("median", "p50_ms"), ("p95", "p95_ms")):
        shown = re.findall(r'kpi-value">([^<]*)</div><div class="kpi-label">%s step time %s<'
                           % (label, population), html)
        check(len(shown) == 1, f"{name}: the headline's {label} step time names its "
              f"population ({population}): {shown}")


def steady_mean(name, text, summary):
    steady = summary["steady"]
    line = re.search(r"^Steady steps \(what the findings measure\): (\d+), mean ([0-9.]+) ms",
                     text, re.M)
    if steady.get("mean_ms") is None:
        check(line is None, f"{name}: no steady steps, no steady line")
        return
    check(line is not None and int(line.group(1)) == steady["count"] and
          same(line.group(2), steady["mean_ms"]),
          f"{name}: the text's steady line shows summary.json's {steady['count']} steps, "
          f"mean {steady['mean_ms']:.3f} ms ({line.group(0) if line else 'no line'})")
    for finding in summary["findings"]:
        for mean, count in re.findall(r"([0-9.]+) ms on average over (\d+) steady steps",
                                      finding.get("summary", "")):
            check(same(mean, steady["mean_ms"]) and int(count) == steady["count"],
                  f"{name}: {finding['id']} quotes the steady mean {mean} ms over {count} "
                  f"steps; steady {steady['mean_ms']:.3f} ms over {steady['count']}")


def input_wait(name, text, html, summary):
    value = summary["steady"].get("input_wait_pct")
    if value is None:
        return
    line = re.search(r"^Steady steps .*?; waiting for input ([0-9.]+)%", text, re.M)
    shown = [("text", line.group(1) if line else None)]
    shown += [("html headline", m) for m in re.findall(
        r'kpi-value">([0-9.]+)%%</div><div class="kpi-label">waiting for input %s<'
        % steady_steps(summary), html)]
    for finding in summary["findings"]:
        for share in re.findall(r"waits for data ([0-9.]+)% of each steady step",
                                finding.get("summary", "")):
            shown.append((f"{finding['id']} summary", share))
    wrong = [(where, got) for where, got in shown if not same(got, value, 2)]
    check(len(shown) >= 2 and not wrong,
          f"{name}: waiting for input {value:.1f}% everywhere ({len(shown)} places; "
          f"differing: {wrong})")


def comparison(bin_dir, work, summaries):
    """main-loading against too-few-workers: the comparison's figures are the runs' own."""
    new, old = summaries.get("main-loading"), summaries.get("too-few-workers")
    if not new or not old:
        check(False, "comparison: the two golden traces were not analysed")
        return
    out = os.path.join(work, "comparison")
    done = subprocess.run([os.path.join(bin_dir, "profopt-analyze"), "--json-only", "-q", "-o",
                           out, "--baseline", old[0], new[0]], capture_output=True, text=True,
                          timeout=240)
    if done.returncode != 0:
        check(False, f"comparison: profopt-analyze exited {done.returncode}: {done.stderr}")
        return
    with open(os.path.join(out, "summary.json")) as file:
        metrics = {m["name"]: m for m in json.load(file)["comparison"]["metrics"]}
    for name, path in (("gpu.busy_pct", ("steady", "gpu_busy_pct")),
                       ("steps.mean_ms", ("steps", "mean_ms")),
                       ("workers.busy_pct", ("steady", "workers_busy_pct"))):
        want = [run[1][path[0]].get(path[1]) for run in (old, new)]
        got = [metrics.get(name, {}).get(side) for side in ("old", "new")]
        agree = all((w is None and g is None) or
                    (w is not None and g is not None and same(f"{g:.3f}", w, 2))
                    for w, g in zip(want, got))
        check(agree, f"comparison: {name} old/new {got} are the runs' {'.'.join(path)} {want}")


def main():
    bin_dir = sys.argv[1]
    work = tempfile.mkdtemp(prefix="profopt-agreement.")
    summaries = {}
    try:
        for trace in traces(work):
            name = os.path.basename(trace)
            out = os.path.join(work, name)
            done = subprocess.run([os.path.join(bin_dir, "profopt-analyze"), "-o", out, trace],
                                  capture_output=True, text=True, timeout=240)
            if done.returncode != 0:
                check(False, f"{name}: profopt-analyze exited {done.returncode}: "
                      f"{done.stderr.strip()[-200:]}")
                continue
            with open(os.path.join(out, "summary.json")) as file:
                summary = json.load(file)
            summaries[name] = (trace, summary)
            with open(os.path.join(out, "index.html")) as file:
                html = file.read()
            pdf = subprocess.run(["pdftotext", "-layout", os.path.join(out, "report.pdf"), "-"],
                                 capture_output=True, text=True, timeout=120).stdout
            gpu_busy(name, done.stdout, html, pdf, summary)
            steady_mean(name, done.stdout, summary)
            input_wait(name, done.stdout, html, summary)
            headline_steps(name, html, summary)
            flame_text(name, html, summary)
        comparison(bin_dir, work, summaries)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{'FAIL' if failures else 'ok'}: {failures} disagreement(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
