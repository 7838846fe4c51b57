#!/usr/bin/python3
"""check_report.py: checks the report renderer's files from the outside.

  check_report.py --renderer TEST_REPORT outputs normal|hostile|empty|comparison|comparison-hostile
  check_report.py --renderer TEST_REPORT absent normal   (no trace of a comparison without --baseline)
  check_report.py --renderer TEST_REPORT chromium hostile|comparison-hostile
  check_report.py --renderer TEST_REPORT golden normal|comparison --golden-dir DIR  (UPDATE_GOLDEN=1 rewrites)
  check_report.py --output-dir DIR outputs|chromium recorded   (a report profopt-analyze wrote)
  check_report.py --output-dir DIR golden recorded --golden-dir DIR --golden-name NAME

Each mode renders a synthetic analysis into a fresh directory with `TEST_REPORT render`,
checks it, prints "N passed, N failed" and exits non-zero on any failure. The chromium mode
fails when no Chromium is installed: tests/run.sh installs it.
"""
import argparse
import html.parser
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
import zlib

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
VERDICT = {"normal": "Input-bound", "hostile": "Input-bound", "empty": "Undetermined",
           "comparison": "Input-bound", "comparison-hostile": "Input-bound"}
KINDS = ("normal", "hostile", "empty", "comparison", "comparison-hostile", "recorded")
# The report's sections in page order; "comparison-section" only with --baseline.
SECTIONS = ["verdict", "findings-section", "comparison-section", "quality-section", "breakdown-section",
            "timelines-section", "latency-section", "gpu-section", "memory-section",
            "workers-section", "pipeline-section", "config-section"]
COMPARISON_CHARTS = ("comparison-breakdown.svg", "comparison-latency.svg")
VERDICT_TITLES = {"input-bound": "Input-bound", "host-bound": "Host-bound", "gpu-bound": "GPU-bound",
                  "balanced": "Balanced", "unknown": "Undetermined"}
HTML_CONTAINERS = ("div", "span", "p", "td", "th", "tr", "table", "thead", "tbody", "section",
                   "ul", "ol", "li", "h1", "h2", "h3", "a", "code", "figure", "article", "main",
                   "header", "nav", "footer", "title", "style", "strong", "em", "b", "i")
ACTIVE_TAGS = {"script", "foreignobject", "iframe", "object", "embed", "link", "base", "form"}


class Checks:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def check(self, condition, what):
        if condition:
            self.passed += 1
        else:
            self.failed += 1
            print("CHECK failed: " + what, file=sys.stderr)
        return condition

    def finish(self):
        print("%d passed, %d failed" % (self.passed, self.failed))
        return 1 if self.failed else 0


def find_verdict(node):
    if isinstance(node, dict):
        if isinstance(node.get("verdict"), str):
            return node["verdict"]
        node = list(node.values())
    if isinstance(node, list):
        for item in node:
            found = find_verdict(item)
            if found:
                return found
    return None


class OutputDir:
    """The directory to check: rendered here from a fixture, or given (a recorded run)."""

    def __init__(self, args):
        self.given = args.output_dir
        self.temp = None if self.given else tempfile.TemporaryDirectory()
        self.path = self.given or self.temp.name
        if not self.given:
            result = subprocess.run([args.renderer, "render", args.kind, self.path],
                                    capture_output=True, text=True)
            if result.returncode != 0:
                sys.exit("renderer failed: " + result.stderr)
            VERDICT["recorded"] = VERDICT.get(args.kind)
        else:
            with open(os.path.join(self.path, "summary.json"), encoding="utf-8") as file:
                VERDICT["recorded"] = VERDICT_TITLES[find_verdict(json.load(file)) or "unknown"]

    def __enter__(self):
        return self.path

    def __exit__(self, *exc):
        if self.temp:
            self.temp.cleanup()


def local(name):
    return name.rsplit("}", 1)[-1].lower()


class BrowserView(html.parser.HTMLParser):
    """What an HTML parser (as a browser would) sees: tags, attributes and text."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags = []
        self.attrs = []
        self.text = []
        self.skip = 0

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag.lower())
        self.attrs.extend((tag.lower(), k.lower(), v or "") for k, v in attrs)
        if tag.lower() in ("style", "title"):
            self.skip += 1

    def handle_endtag(self, tag):
        if tag.lower() in ("style", "title") and self.skip:
            self.skip -= 1

    def handle_data(self, data):
        if not self.skip and data.strip():
            self.text.append(data.strip())


def xml_text_blocks(root):
    """Text of the document outside style and title, one block per text node."""
    blocks = []

    def walk(node):
        if local(node.tag) in ("style", "title"):
            if node.tail and node.tail.strip():
                blocks.append(node.tail.strip())
            return
        if node.text and node.text.strip():
            blocks.append(node.text.strip())
        for child in node:
            walk(child)
        if node.tail and node.tail.strip():
            blocks.append(node.tail.strip())

    walk(root)
    return [re.sub(r"\s+", " ", b) for b in blocks]


def active_content(root):
    """Script elements, event handlers and references leaving the document, as messages."""
    found = []
    for node in root.iter():
        name = local(node.tag)
        if name in ACTIVE_TAGS:
            found.append("<%s> element" % name)
        for key, value in node.attrib.items():
            attr = local(key)
            if attr.startswith("on"):
                found.append("%s attribute" % attr)
            if "javascript:" in value.lower():
                found.append("javascript: URL")
            if attr in ("href", "src") and not (value.startswith("#") or value.startswith("data:")):
                found.append("%s=%r leaves the document" % (attr, value[:60]))
    return found


def check_no_active_content(checks, label, root):
    found = active_content(root)
    checks.check(not found, "%s holds no active content: %r" % (label, found[:5]))


def check_svgs(checks, out_dir):
    svgs = [os.path.join(out_dir, "pipeline.svg")]
    charts = os.path.join(out_dir, "charts")
    svgs += sorted(os.path.join(charts, n) for n in os.listdir(charts) if n.endswith(".svg"))
    for path in svgs:
        result = subprocess.run(["xmllint", "--noout", path], capture_output=True, text=True)
        checks.check(result.returncode == 0, "xmllint accepts %s: %s" % (path, result.stderr[:300]))
        check_no_active_content(checks, os.path.basename(path), ET.parse(path).getroot())
    return len(svgs)


def check_html_bytes(checks, data):
    try:
        text = data.decode("utf-8", errors="strict")
    except UnicodeDecodeError as error:
        checks.check(False, "index.html is valid UTF-8: %s" % error)
        return ""
    controls = [c for c in text if (ord(c) < 0x20 and c not in "\t\n\r") or 0x7f <= ord(c) <= 0x9f]
    checks.check(not controls, "index.html holds no control characters: %r" % controls[:5])
    checks.check("<script" not in text.lower(), "no <script in the raw HTML")
    # A browser reads the file as HTML, where "<div/>" opens an element that never closes.
    self_closed = re.findall(r"<(%s)\b[^>]*/>" % "|".join(HTML_CONTAINERS), text)
    checks.check(not self_closed, "no self-closed HTML container: %r" % self_closed[:5])
    return text


def check_head(checks, root):
    head = next((n for n in root if local(n.tag) == "head"), None)
    if not checks.check(head is not None and len(head) > 0, "the document has a <head>"):
        return
    first = head[0]
    checks.check(local(first.tag) == "meta" and
                 first.get("http-equiv", "").lower() == "content-security-policy" and
                 first.get("content") == CSP, "a Content-Security-Policy meta comes first in <head>")


def check_html(checks, out_dir, svg_count):
    path = os.path.join(out_dir, "index.html")
    result = subprocess.run(["xmllint", "--noout", path], capture_output=True, text=True)
    checks.check(result.returncode == 0, "xmllint accepts index.html as XHTML: " + result.stderr[:300])
    with open(path, "rb") as file:
        text = check_html_bytes(checks, file.read())
    root = ET.fromstring(text)
    check_head(checks, root)
    check_no_active_content(checks, "index.html", root)
    view = BrowserView()
    view.feed(text)
    checks.check(not (set(view.tags) & ACTIVE_TAGS), "the HTML parser sees no active element")
    checks.check(not [a for a in view.attrs if a[1].startswith("on")], "the HTML parser sees no on* attribute")
    ids = [n.get("id") for n in root.iter() if n.get("id")]
    checks.check(len(ids) == len(set(ids)), "ids are unique across the page and its SVGs")
    inline = [n for n in root.iter() if local(n.tag) == "svg"]
    checks.check(len(inline) == svg_count, "every chart and the pipeline are inline SVG (%d of %d)"
                 % (len(inline), svg_count))
    return root, view


def pdf_text(path):
    return subprocess.run(["pdftotext", path, "-"], capture_output=True, text=True,
                          check=True).stdout


def check_pdf(checks, out_dir):
    path = os.path.join(out_dir, "report.pdf")
    info = subprocess.run(["pdfinfo", path], capture_output=True, text=True)
    pages = re.search(r"^Pages:\s+(\d+)", info.stdout, re.M)
    checks.check(info.returncode == 0 and pages and int(pages.group(1)) > 1, "report.pdf has pages > 1")
    text = pdf_text(path)
    checks.check(VERDICT["recorded"] in text, "the PDF states the verdict as text")
    checks.check("Page 2" in text, "the PDF numbers its pages")
    return text


def check_hostile(checks, root, view, pdf):
    text = " ".join(xml_text_blocks(root))
    checks.check("</script><script>alert(1)</script>" in text, "markup in labels is shown as text")
    checks.check("\"'><svg onload=alert(2)>" in text, "attribute breakers are shown as text")
    checks.check("\ufffd" in text, "invalid UTF-8 is shown as U+FFFD")
    checks.check("other labels (188)" in text, "a flood of labels is folded into one row")
    checks.check(max(len(b) for b in xml_text_blocks(root)) <= 700, "long labels are cut")
    checks.check("\u2026" in text, "cut labels end with an ellipsis")
    checks.check("alert(1)" in pdf or "Input-bound" in pdf, "the PDF renders with hostile labels")


def run_outputs(args, checks):
    with OutputDir(args) as out_dir:
        for name in ("index.html", "report.pdf", "pipeline.svg"):
            checks.check(os.path.getsize(os.path.join(out_dir, name)) > 0, name + " is written")
        svg_count = check_svgs(checks, out_dir)
        root, view = check_html(checks, out_dir, svg_count)
        checks.check(VERDICT["recorded"] in " ".join(xml_text_blocks(root)), "the page states the verdict")
        pdf = check_pdf(checks, out_dir)
        if args.kind == "hostile":
            check_hostile(checks, root, view, pdf)
        if args.kind.startswith("comparison") or (args.kind == "recorded" and
                                                  find_by_id(root, "comparison-section") is not None):
            check_comparison(checks, out_dir, root, pdf)
        else:
            check_no_comparison(checks, out_dir, root, pdf)
        if args.kind == "comparison-hostile":
            check_comparison_hostile(checks, root, pdf)


def args_kind():
    return sys.argv[-1] if sys.argv[-1] in KINDS else "recorded"


def find_by_id(root, wanted):
    return next((n for n in root.iter() if n.get("id") == wanted), None)


def section_numbers(root):
    return [n.text for n in root.iter() if local(n.tag) == "span" and n.get("class") == "num"]


def check_no_comparison(checks, out_dir, root, pdf):
    with open(os.path.join(out_dir, "index.html"), encoding="utf-8") as file:
        text = file.read()
    checks.check("comparison" not in text and "cmp-" not in text,
                 "without a baseline the page holds no comparison section, link or style")
    numbers = section_numbers(root)
    checks.check(numbers == [str(i) for i in range(1, len(numbers) + 1)] and len(numbers) == 10,
                 "without a baseline the sections are numbered 1 to 10: %r" % numbers)
    charts = os.listdir(os.path.join(out_dir, "charts"))
    checks.check(not set(COMPARISON_CHARTS) & set(charts), "no comparison chart is written")
    checks.check("Comparison with the baseline" not in pdf, "the PDF has no comparison page")


def comparison_texts(root):
    section = find_by_id(root, "comparison-section")
    return section, (" ".join(xml_text_blocks(section)) if section is not None else "")


def check_comparison_order(checks, root):
    ids = [n.get("id") for n in root.iter() if local(n.tag) == "section" and n.get("id")]
    checks.check(ids == SECTIONS, "sections are in order, the comparison after the findings: %r" % ids)
    links = [n.get("href") for n in root.iter() if local(n.tag) == "a"]
    checks.check(links[:2] == ["#findings-section", "#comparison-section"],
                 "the navigation links the comparison after the findings: %r" % links[:3])
    numbers = section_numbers(root)
    checks.check(numbers == [str(i) for i in range(1, 12)], "sections are numbered 1 to 11: %r" % numbers)


def check_comparison_table(checks, section, text):
    rows = [n for n in section.iter() if local(n.tag) == "tr" and "cmp-" in (n.get("class") or "")]
    badges = [n.text for n in section.iter() if "cmp-badge" in (n.get("class") or "")]
    checks.check(len(rows) >= 5, "the metric table has rows (%d)" % len(rows))
    for word in ("Baseline", "This run", "Change", "95% interval", "Judgement", "Median step time"):
        checks.check(word in text, "the comparison shows %r" % word)
    checks.check({"worse", "better", "noise", "untested"} <= set(badges),
                 "judgement badges better/worse/noise/untested: %r" % sorted(set(badges)))
    checks.check({"new", "resolved", "persisting"} <= set(badges),
                 "finding changes new/resolved/persisting: %r" % sorted(set(badges)))
    worse = [n for n in rows if n.get("class") == "cmp-worse"]
    checks.check(worse and all(any(b.text == "worse" for b in r.iter()) for r in worse),
                 "rows judged worse are marked for the warning color")


def check_comparison_charts(checks, out_dir, section):
    inline = [n for n in section.iter() if local(n.tag) == "svg"]
    checks.check(len(inline) == 2, "the comparison section holds its two charts inline (%d)" % len(inline))
    for name in COMPARISON_CHARTS:
        path = os.path.join(out_dir, "charts", name)
        if not checks.check(os.path.exists(path), name + " is written"):
            continue
        checks.check(os.path.getsize(path) > 1000, name + " is drawn")
    latency = os.path.join(out_dir, "charts", COMPARISON_CHARTS[1])
    if os.path.exists(latency):
        with open(latency, encoding="utf-8") as file:
            svg = file.read()
        checks.check(svg.count("<path") >= 4, "the latency chart draws both runs' bars and p50 marks")


def check_comparison(checks, out_dir, root, pdf):
    section, text = comparison_texts(root)
    if not checks.check(section is not None, "the page has a comparison section"):
        return
    check_comparison_order(checks, root)
    checks.check("Comparison with the baseline" in text, "the comparison section has its heading")
    checks.check("Compared with the baseline:" in text, "the comparison names its baseline")
    checks.check(re.search(r"(faster|slower) than the baseline|No change beyond run-to-run noise|"
                           r"not tested against noise", text) is not None, "a headline says faster or slower")
    checks.check(re.search(r"median step is .* the baseline's", text) is not None,
                 "a sentence sums the change up")
    checks.check("Verdict:" in text and "\u2192" in text, "the summary gives the verdicts old -> new")
    check_comparison_table(checks, section, text)
    check_comparison_charts(checks, out_dir, section)
    page = pdf.find("Comparison with the baseline")
    checks.check(page > pdf.find("Findings and recommendations") >= 0 and
                 (pdf.find("Trace quality") < 0 or page < pdf.find("Trace quality")),
                 "the PDF has the comparison after the findings, before trace quality")
    for word in ("COMPARED WITH THE BASELINE", "Median step time", "JUDGEMENT", "worse", "resolved",
                 "Step latency: baseline and this run"):
        checks.check(word in pdf, "the PDF comparison shows %r" % word)
    if args_kind() == "comparison":
        checks.check("Compared with the baseline: runs/resnet50-4-workers" in text,
                     "the fixture's baseline label is shown")


def check_comparison_hostile(checks, root, pdf):
    section, text = comparison_texts(root)
    checks.check("</script><script>alert(3)</script>\"'><img src=x onerror=alert(4)>" in text,
                 "a hostile baseline label is shown as text")
    checks.check("\ufffd" in text, "invalid UTF-8 in the baseline label is shown as U+FFFD")
    checks.check("\x1b" not in text and "\x01" not in text, "control bytes in the label are dropped")
    checks.check("findings.new><script>alert(6)</script>" in text, "a hostile gate is shown as text")
    checks.check("<b onmouseover=alert(5)>bold</b>" in text, "a hostile finding id is shown as text")
    checks.check("alert(3)" in pdf, "the PDF shows the hostile baseline label as text")


def run_absent(args, checks):
    with OutputDir(args) as out_dir:
        root = ET.parse(os.path.join(out_dir, "index.html")).getroot()
        check_no_comparison(checks, out_dir, root, pdf_text(os.path.join(out_dir, "report.pdf")))


def png_pixels(path):
    """Width, height and rows of RGB(A) bytes of an 8-bit, non-interlaced PNG."""
    with open(path, "rb") as file:
        data = file.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, color, _, _, interlace = header
    assert depth == 8 and interlace == 0 and color in (2, 6)
    channels = 3 if color == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            left = line[x - channels] if x >= channels else 0
            up = previous[x]
            corner = previous[x - channels] if x >= channels else 0
            if kind == 1:
                line[x] = (line[x] + left) & 0xff
            elif kind == 2:
                line[x] = (line[x] + up) & 0xff
            elif kind == 3:
                line[x] = (line[x] + (left + up) // 2) & 0xff
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                line[x] = (line[x] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 0xff
        rows.append(bytes(line))
        previous = line
    return width, height, channels, rows


def screenshot_stats(path):
    width, height, channels, rows = png_pixels(path)
    values, colors = [], set()
    for y in range(0, height, 7):
        row = rows[y]
        for x in range(0, width, 5):
            pixel = row[x * channels:x * channels + 3]
            colors.add(pixel)
            values.append(sum(pixel) / 3)
    mean = sum(values) / len(values)
    variance = sum((v - mean) ** 2 for v in values) / len(values)
    return width, height, len(colors), variance


def chromium_command(user_dir, url, extra):
    return ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
            "--no-first-run", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--user-data-dir=" + user_dir, "--window-size=1280,2000"] + extra + [url]


def run_chromium_once(out_dir, extra):
    user_dir = tempfile.mkdtemp(prefix="po-chromium-")
    try:
        url = "file://" + os.path.join(out_dir, "index.html")
        return subprocess.run(chromium_command(user_dir, url, extra), capture_output=True,
                              text=True, timeout=240, cwd=out_dir)
    finally:
        shutil.rmtree(user_dir, ignore_errors=True)


def network_requests(net_log):
    """URLs the page asked for, other than the file itself and data: URLs.

    Requests the page makes carry its origin as initiator ("null" for a file: page);
    Chromium's own service requests carry "not an origin" and are not the page's doing.
    """
    with open(net_log, encoding="utf-8", errors="replace") as file:
        events = json.load(file).get("events", [])
    urls = set()
    for event in events:
        params = event.get("params") or {}
        url, initiator = params.get("url", ""), params.get("initiator")
        if not url or initiator is None or initiator == "not an origin":
            continue
        if not url.startswith("file:") and not url.startswith("data:"):
            urls.add(url)
    return sorted(urls)


def run_chromium(args, checks):
    if not shutil.which("chromium"):
        print("FAIL chromium is not installed (Debian package chromium; tests/run.sh installs it)",
              file=sys.stderr)
        return 1
    with OutputDir(args) as out_dir, tempfile.TemporaryDirectory() as scratch:
        shot = os.path.join(scratch, "shot.png")
        net_log = os.path.join(scratch, "net.json")
        result = run_chromium_once(out_dir, ["--screenshot=" + shot, "--enable-logging=stderr",
                                             "--v=0", "--log-net-log=" + net_log])
        console = [l for l in result.stderr.splitlines() if "CONSOLE" in l or "Refused to" in l
                   or "Uncaught" in l or "Content Security Policy" in l]
        checks.check(result.returncode == 0, "chromium exits 0: " + result.stderr[-400:])
        checks.check(not console, "no console message: %r" % console[:3])
        checks.check(os.path.exists(net_log) and not network_requests(net_log),
                     "no network request: %r" % (network_requests(net_log)[:3] if os.path.exists(net_log) else "no log"))
        if checks.check(os.path.exists(shot), "chromium wrote a screenshot"):
            width, height, colors, variance = screenshot_stats(shot)
            checks.check((width, height) == (1280, 2000), "screenshot is 1280x2000")
            checks.check(colors >= 20 and variance > 50, "screenshot is not blank (%d colors, variance %.0f)"
                         % (colors, variance))
        dom = run_chromium_once(out_dir, ["--dump-dom"]).stdout
        checks.check(VERDICT["recorded"] in dom, "the rendered DOM holds the verdict")
        checks.check("<script" not in dom.lower(), "the rendered DOM holds no script")
    return None


def normalized(text):
    lines = [re.sub(r"[ \t]+", " ", l).strip() for l in text.replace("\f", "\n").splitlines()]
    return "\n".join(l for l in lines if l) + "\n"


def compare_golden(checks, golden_dir, name, actual):
    path = os.path.join(golden_dir, name)
    if os.environ.get("UPDATE_GOLDEN") == "1":
        os.makedirs(golden_dir, exist_ok=True)
        with open(path, "w", encoding="utf-8") as file:
            file.write(actual)
        print("updated " + path, file=sys.stderr)
        checks.check(False, name + " rewritten (UPDATE_GOLDEN=1): review the diff, commit it "
                     "and run again")
        return
    with open(path, encoding="utf-8") as file:
        expected = file.read()
    if expected != actual:
        import difflib
        sys.stderr.writelines(difflib.unified_diff(expected.splitlines(True), actual.splitlines(True),
                                                   path, "rendered", n=1))
    checks.check(expected == actual, name + " matches the golden text (UPDATE_GOLDEN=1 rewrites it)")


def run_golden(args, checks):
    prefix = args.golden_name + "-" if args.golden_name else \
        "" if args.kind == "normal" else args.kind + "-"
    with OutputDir(args) as out_dir:
        pdf = normalized(pdf_text(os.path.join(out_dir, "report.pdf")))
        root = ET.parse(os.path.join(out_dir, "index.html")).getroot()
        page = normalized("\n".join(xml_text_blocks(root)))
        compare_golden(checks, args.golden_dir, prefix + "report.pdf.txt", pdf)
        compare_golden(checks, args.golden_dir, prefix + "index.html.txt", page)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--renderer")
    parser.add_argument("--output-dir")
    parser.add_argument("--golden-dir")
    parser.add_argument("--golden-name", help="golden files' prefix (a recorded trace's name)")
    parser.add_argument("mode", choices=("outputs", "absent", "chromium", "golden"))
    parser.add_argument("kind", choices=KINDS)
    args = parser.parse_args()
    if not args.renderer and not args.output_dir:
        parser.error("--renderer or --output-dir is required")
    if args.output_dir:
        args.kind = "recorded"
    checks = Checks()
    modes = {"outputs": run_outputs, "absent": run_absent, "chromium": run_chromium,
             "golden": run_golden}
    code = modes[args.mode](args, checks)
    if code is not None:
        return code
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
