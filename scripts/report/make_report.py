#!/usr/bin/env python3
"""Turns the codelab demo's results.json into PNG plots and one self-contained index.html.

    make_report.py REPORT_DIR       (reads REPORT_DIR/results.json, writes next to it)

The page shows, in the codelab's order, every table the demo printed (same cells) and the plots
(latency vs T, vs batch, TFLOP/s vs T, memory vs T, default-shape and MHA/GQA/MQA bars, decode
tokens/s vs cache length, paged vs contiguous, and with --full the FlashAttention sweep), images embedded as base64 so the one file is the whole report.
docs/demo.md describes the steps; docs/benchmarks.md the results schema.
"""
import argparse
import base64
import html
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

STEPS = [
    ("inputs", "1. Inputs"),
    ("accuracy", "2. Naive vs fused"),
    ("forcing", "3. Forcing each backend"),
    ("causal", "4. Causal masking"),
    ("default", "5. Timings at the default shape"),
    ("seq", "6a. Sequence sweep"),
    ("batch", "6b. Batch sweep"),
    ("heads", "7. MHA / GQA / MQA"),
    ("fp8", "8. FP8"),
    ("memory", "9. Memory"),
    ("decode", "10. Decode: paged vs contiguous KV cache"),
    ("flash", "FlashAttention sweep (--full)"),
]


def label(r):
    return f"{r['impl']} ({r['dtype']})"


def series(rows, exp, x, y, **match):
    """{label: [(x, y)]} over rows of `exp` with a value for y, sorted by x."""
    out = {}
    for r in rows:
        if r["exp"] != exp or r.get(y) is None:
            continue
        if any(r.get(k) != v for k, v in match.items()):
            continue
        out.setdefault(label(r), []).append((r[x], r[y]))
    return {k: sorted(v) for k, v in out.items()}


def line_plot(path, title, xlabel, ylabel, data, logx=True, logy=True, scale=1.0):
    if not data:
        return None
    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=100)
    for name, pts in sorted(data.items()):
        ax.plot([p[0] for p in pts], [p[1] * scale for p in pts], marker="o", label=name)
    if logx:
        ax.set_xscale("log", base=2)
    if logy:
        ax.set_yscale("log")
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def bar_plot(path, title, ylabel, groups, logy=True):
    """groups: [(group name, {bar label: value})]: grouped bars."""
    groups = [(g, bars) for g, bars in groups if bars]
    if not groups:
        return None
    names = sorted({b for _, bars in groups for b in bars})
    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=100)
    width = 0.8 / max(1, len(names))
    for i, name in enumerate(names):
        xs = [j + i * width for j in range(len(groups))]
        ys = [bars.get(name, 0) for _, bars in groups]
        ax.bar(xs, ys, width, label=name)
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(groups))])
    ax.set_xticklabels([g for g, _ in groups])
    if logy:
        ax.set_yscale("log")
    ax.set_title(title)
    ax.set_ylabel(ylabel)
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def make_plots(res, out):
    rows = res["rows"]
    plots = {}  # step id -> [png path]

    def add(step, path):
        if path:
            plots.setdefault(step, []).append(path)

    default = {}
    for r in rows:
        if r["exp"] == "default" and r["ms"] is not None:
            default.setdefault(r["dtype"], {})[r["impl"]] = r["ms"]
    add("default", bar_plot(os.path.join(out, "default_latency.png"),
                            "Forward latency, B=4 T=128 N=8 H=64", "ms (log)",
                            sorted(default.items())))
    add("seq", line_plot(os.path.join(out, "latency_vs_T.png"),
                         "Forward latency vs sequence length (B=4, N=8, H=64)", "T = S",
                         "ms", series(rows, "seq", "T", "ms")))
    add("seq", line_plot(os.path.join(out, "tflops_vs_T.png"),
                         "Forward TFLOP/s vs sequence length (4·B·N·T·S·H)", "T = S",
                         "TFLOP/s", series(rows, "seq", "T", "tflops"), logy=False))
    add("batch", line_plot(os.path.join(out, "latency_vs_batch.png"),
                           "Forward latency vs batch size", "B", "ms",
                           series(rows, "batch", "B", "ms")))
    heads = {}
    for r in rows:
        if r["exp"] == "heads" and r["ms"] is not None:
            name = {r["N"]: "MHA", 1: "MQA"}.get(r["K"], "GQA") + f" K={r['K']}"
            heads.setdefault(name, {})[label(r)] = r["ms"]
    add("heads", bar_plot(os.path.join(out, "heads_latency.png"),
                          "MHA / GQA / MQA forward latency (N=8)", "ms (log)",
                          sorted(heads.items(), key=lambda kv: -int(kv[0].split("=")[1]))))
    mem = series(rows, "memory", "T", "peak_bytes")
    add("memory", line_plot(os.path.join(out, "memory_vs_T.png"),
                            "Peak memory of one forward pass vs T (fresh process each)",
                            "T = S", "MiB", mem, scale=1 / 2**20))
    # Decode rows carry the cache layout (paged / contiguous) and tokens/s past the schema.
    decode = {}
    for r in rows:
        if r["exp"] == "decode" and r.get("tokens_per_s") is not None:
            name = f"{r.get('layout', '?')} ({r['impl']}, {r['dtype']})"
            decode.setdefault(name, []).append((r["S"], r["tokens_per_s"]))
    shape = next((r for r in rows if r["exp"] == "decode"), None)
    if shape:
        add("decode", line_plot(
            os.path.join(out, "decode_tokens_vs_S.png"),
            f"Decode tokens/s vs cache length (B={shape['B']}, N={shape['N']}, "
            f"K={shape['K']}, H={shape['H']})", "S (keys held)", "tokens/s",
            {k: sorted(v) for k, v in decode.items()}))
    flash = [r for r in rows if r["exp"] == "flash" and r["tflops"] is not None]
    if flash:
        combos = sorted({(r["H"], r["causal"], r["pass"]) for r in flash})
        cols = 2
        nrows = (len(combos) + cols - 1) // cols
        fig, axes = plt.subplots(nrows, cols, figsize=(11, 3.2 * nrows), dpi=100, squeeze=False)
        for ax, (h, causal, p) in zip(axes.flat, combos):
            for name, pts in sorted(series(flash, "flash", "T", "tflops", H=h, causal=causal,
                                           **{"pass": p}).items()):
                ax.plot([x for x, _ in pts], [y for _, y in pts], marker="o", label=name)
            ax.set_xscale("log", base=2)
            ax.set_title(f"H={h} {'causal' if causal else 'full'} {p}", fontsize=9)
            ax.set_ylabel("TFLOP/s")
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize=7)
        for ax in list(axes.flat)[len(combos):]:
            ax.axis("off")
        fig.tight_layout()
        path = os.path.join(out, "flash_tflops.png")
        fig.savefig(path)
        plt.close(fig)
        add("flash", path)
    return plots


CSS = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #222; }
h1 { font-size: 1.6em; } h2 { margin-top: 2em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 0.85em; }
th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f3f3f3; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
h3 { font-size: 0.95em; margin: 1.2em 0 0.2em; }
p.note { font-size: 0.8em; color: #555; margin: 2px 0; } p.msg { font-weight: 600; }
img { max-width: 100%; border: 1px solid #eee; margin: 0.5em 0; display: block; }
"""

# Marks each image with its decoded width once the page has loaded (0 = did not decode): the
# browser test reads these from the rendered DOM.
CHECK_SCRIPT = """
window.addEventListener('load', function () {
  document.querySelectorAll('img').forEach(function (img) {
    img.setAttribute('data-natural-width', String(img.naturalWidth));
  });
  document.body.setAttribute('data-loaded', '1');
});
"""


def is_num(s):
    try:
        float(s.replace("x", ""))
        return True
    except ValueError:
        return False


def table_html(t, n):
    e = html.escape
    out = [f'<h3>{e(t["title"])}</h3>',
           f'<table id="table-{e(t["id"])}-{n}" class="step-table" data-step="{e(t["id"])}">',
           "<tr>" + "".join(f"<th>{e(c)}</th>" for c in t["columns"]) + "</tr>"]
    for row in t["rows"]:
        out.append("<tr>" + "".join(
            f'<td class="num">{e(c)}</td>' if is_num(c) else f"<td>{e(c)}</td>" for c in row) +
            "</tr>")
    out.append("</table>")
    out += [f'<p class="note">{e(note)}</p>' for note in t.get("notes", [])]
    return "\n".join(out)


def image_html(path):
    with open(path, "rb") as f:
        data = base64.b64encode(f.read()).decode("ascii")
    name = os.path.basename(path)
    return f'<img src="data:image/png;base64,{data}" alt="{html.escape(name)}" data-file="{name}">'


def page(res, plots):
    e = html.escape
    env = res.get("env", {})
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             f"<title>kokkos-attention codelab demo: {e(res['run_id'])}</title>",
             f"<style>{CSS}</style><script>{CHECK_SCRIPT}</script></head><body>",
             "<h1>kokkos-attention: the codelab demo</h1>",
             f"<p>Run <code>{e(res['run_id'])}</code>: the seed codelab's steps on every backend "
             "of this machine. Tables as printed by <code>codelab_demo</code>; numbers in "
             "<code>results.json</code> / <code>results.csv</code> next to this page.</p>",
             "<h3>Environment</h3>", '<table id="table-env" class="env-table">',
             "<tr><th>key</th><th>value</th></tr>"]
    parts += [f"<tr><td>{e(k)}</td><td>{e(str(v))}</td></tr>" for k, v in env.items()]
    parts.append("</table>")
    tables = res.get("tables", [])
    known = {s for s, _ in STEPS}
    n = 0
    for step, title in STEPS + [(t["id"], t["id"]) for t in tables if t["id"] not in known]:
        mine = [t for t in tables if t["id"] == step]
        msgs = [m["text"] for m in res.get("messages", []) if m["id"] == step]
        if not mine and not plots.get(step) and not msgs:
            continue
        parts.append(f'<h2 id="step-{e(step)}">{e(title)}</h2>')
        for t in mine:
            parts.append(table_html(t, n))
            n += 1
        parts += [f'<p class="msg">{e(m)}</p>' for m in msgs]
        parts += [image_html(p) for p in plots.get(step, [])]
    parts.append("</body></html>")
    return "\n".join(parts)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("report_dir", help="directory holding results.json (output goes there)")
    args = ap.parse_args()
    src = os.path.join(args.report_dir, "results.json")
    with open(src) as f:
        res = json.load(f)
    plots = make_plots(res, args.report_dir)
    out = os.path.join(args.report_dir, "index.html")
    with open(out, "w") as f:
        f.write(page(res, plots))
    pngs = [p for ps in plots.values() for p in ps]
    print(f"wrote {out} ({len(res.get('tables', []))} tables, {len(pngs)} plots: "
          + ", ".join(os.path.basename(p) for p in pngs) + ")")
    return 0


if __name__ == "__main__":
    sys.exit(main())
