#!/usr/bin/env python3
"""The demo report as a user sees it: runs `codelab_demo --quick` into WORKDIR/report, renders
the plots and index.html (scripts/report/make_report.py), opens the page in headless Chromium
and checks that every table of results.json is on the page, that every image decodes (the
page marks each <img> with its naturalWidth after load) and that every plot file is shown.
Keeps WORKDIR/screenshot.png. Fails when the demo or the report script fails; exits 77 (CTest:
skipped) when, after both ran, Chromium is not installed.

    check_report_browser.py --demo BUILD/examples/codelab_demo \
        --make-report scripts/report/make_report.py --workdir DIR
"""
import argparse
import glob
import html.parser
import json
import os
import shutil
import subprocess
import sys
import tempfile


class Dom(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.tables, self.images, self.body = [], [], {}

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table":
            self.tables.append(a)
        elif tag == "img":
            self.images.append(a)
        elif tag == "body":
            self.body = a


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    return None


def run(cmd, **kw):
    print("+ " + " ".join(cmd), flush=True)
    return subprocess.run(cmd, check=True, **kw)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--demo", required=True)
    ap.add_argument("--make-report", required=True)
    ap.add_argument("--workdir", required=True)
    args = ap.parse_args()

    # The demo and the report first: they are checked (a failure fails the test) with or
    # without a browser.
    report = os.path.join(args.workdir, "report")
    shutil.rmtree(report, ignore_errors=True)
    os.makedirs(report)
    run([args.demo, "--quick", "--out", report], stdout=subprocess.DEVNULL)
    run([sys.executable, args.make_report, report])
    browser = chromium()
    if browser is None:
        print("SKIPPED: the demo and the report ran, but there is no chromium in PATH to open "
              "it (Debian: apt-get install chromium)")
        return 77
    page = "file://" + os.path.abspath(os.path.join(report, "index.html"))

    with tempfile.TemporaryDirectory() as profile:
        flags = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                 f"--user-data-dir={profile}", "--virtual-time-budget=10000"]
        shot = os.path.join(args.workdir, "screenshot.png")
        if os.path.exists(shot):
            os.remove(shot)
        run(flags + [f"--screenshot={shot}", "--window-size=1280,6000", page],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
        dom_text = subprocess.run(flags + ["--dump-dom", page], check=True, capture_output=True,
                                  text=True, timeout=120).stdout

    failures = []
    dom = Dom()
    dom.feed(dom_text)
    with open(os.path.join(report, "results.json")) as f:
        res = json.load(f)
    if dom.body.get("data-loaded") != "1":
        failures.append("the page's load event did not run (no data-loaded on <body>)")
    want = [f"table-{t['id']}-{n}" for n, t in enumerate(res["tables"])]
    have = {t.get("id") for t in dom.tables}
    failures += [f"table {t} missing from the rendered page" for t in want if t not in have]
    steps = {t["id"] for t in res["tables"]}
    for step in ("inputs", "accuracy", "forcing", "causal", "default", "seq", "batch", "heads",
                 "fp8", "memory", "decode"):
        if step not in steps:
            failures.append(f"results.json has no table for step '{step}'")
    pngs = sorted(os.path.basename(p) for p in glob.glob(os.path.join(report, "*.png")))
    shown = sorted(i.get("data-file", "") for i in dom.images)
    if len(pngs) < 4:
        failures.append(f"expected >= 4 plots, got {len(pngs)}: {pngs}")
    if shown != pngs:
        failures.append(f"images on the page {shown} != plot files {pngs}")
    for img in dom.images:
        width = img.get("data-natural-width")
        if width is None or int(width) <= 0:
            failures.append(f"image {img.get('data-file')} did not decode "
                            f"(naturalWidth {width})")
    if not os.path.exists(shot) or os.path.getsize(shot) < 1000:
        failures.append("no screenshot written")
    else:
        with open(shot, "rb") as f:
            if f.read(8) != b"\x89PNG\r\n\x1a\n":
                failures.append("the screenshot is not a PNG")

    print(f"{len(have)} tables, {len(dom.images)} images on the page; screenshot: {shot}")
    for f in failures:
        print("FAILED: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
