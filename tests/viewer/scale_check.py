#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# scale_check.py LAYOUT EXPECTED WIDTH HEIGHT - the Scalability view's picture (its --layout
# record) against the analysis' figures (EXPECTED: make_test_traces' graph.scale) and the
# known task graph of graph_trace.hpp; the plot's texts apart and inside the window.
import sys
layout = [l.rstrip("\n") for l in open(sys.argv[1])]
expected = [l.rstrip("\n") for l in open(sys.argv[2])]
width, height = float(sys.argv[3]), float(sys.argv[4])
# Every figure the analysis returned, shown exactly (the last frame's lines).
for e in expected:
    assert e in layout, f"the view does not show the analysis' '{e}'"
fig = {l.split()[2]: float(l.split()[3]) for l in layout if l.startswith("scale_figure A ")}
print("shown:", {k: round(v, 4) for k, v in fig.items()})
assert abs(fig["work_ns"] - 7.153e6) <= 0.01 * 7.153e6, "work is not the graph's 7.153 ms"
assert abs(fig["span_ns"] - 4.153e6) <= 0.01 * 4.153e6, "span is not the graph's 4.153 ms"
assert abs(fig["parallelism"] - 7.153 / 4.153) < 0.02, "parallelism is not work / span"
stretches = {int(l.split()[1]) for l in layout if l.startswith("critical_stretch ")}
edges = [l for l in layout if l.startswith("critical_edge ")]
path = int(next(l for l in layout if l.startswith("scale_counts ")).split()[5])
print(f"critical path: {path} stretches, {len(stretches)} outlined, {len(edges)} arrows between workers")
assert len(stretches) == path and path >= 9, "not every stretch of the critical path is outlined"
assert len(edges) >= 2, "the path's worker-to-worker edges (root to chain, chain to root) are not drawn"
measured = [l.split() for l in layout if l.startswith("scale_measured ")]
assert any(m[1] == "A" and m[2] == "2" for m in measured), "no measured point at 2 workers"
legend = " | ".join(l.split(None, 4)[4] for l in layout if l.startswith("scale_legend "))
print("legend:", legend)
for want in ("greedy bounds", "simulated T_P", "measured"):
    assert want in legend, f"the legend has no '{want}'"
texts = []
for l in layout:
    if l.startswith("scale_text "):
        p = l.split(None, 5)
        texts.append((float(p[1]), float(p[2]), float(p[3]), float(p[4]), p[5]))
assert any("workers P" in t[4] for t in texts) and any("speedup" in t[4] for t in texts), "an axis has no title"
for t in texts:
    assert 0 <= t[0] and t[2] <= width and 0 <= t[1] and t[3] <= height, f"'{t[4]}' leaves the window"
plot = next([float(x) for x in l.split()[3:7]] for l in layout if l.startswith("scale_plot "))
for t in texts:  # the legend, titles and tick labels around the plot, never over its lines
    if t[0] < plot[2] and plot[0] < t[2] and t[1] < plot[3] and plot[1] < t[3]:
        raise SystemExit(f"FAIL: '{t[4]}' is drawn over the plot")
gap = 3  # pixels between any two texts
for i, a in enumerate(texts):
    for b in texts[i + 1:]:
        if a[0] - gap < b[2] and b[0] - gap < a[2] and a[1] < b[3] and b[1] < a[3]:
            raise SystemExit(f"FAIL: '{a[4]}' and '{b[4]}' overlap or touch")
print(f"{len(texts)} plot texts, at least {gap} px apart")
