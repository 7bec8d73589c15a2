#!/usr/bin/env python3
"""One CSV of every SIMULATED isomorphic measurement of the scale series, gathered
from the committed result files beside this script, one source per cell (platform,
neighbourhood, block, K, variant): the series' raw CSVs (K = 64, K = 256) and @row
lines where they exist, else isobench's printed tables in a section of a raw .txt (one
row per cell, the printed median; source = file:line of the section). Each K = 1024 and
4096 source is the run its own result file quotes; K = 64 auto is the auto-alone run of
the tuner of 370a590. The script stops if a cell has two sources.

usage: python3 bench/results/2026-11-28-scale-all-k-gather.py OUT.csv
then:  python3 bench/run --series scale --from-csv OUT.csv --out DIR   (tables, plots)"""
import csv, os, re, sys

RES = os.path.dirname(os.path.abspath(__file__))
FIELDS = ["exp", "platform", "nprocs", "competitor", "coll", "shape", "d", "r", "dims", "s",
          "np", "block", "rep", "iters", "time_us", "picked", "unchecked", "item", "series",
          "source"]


def item(d, r):
    return "%sD Moore r%s" % (d, r)


def from_csv(name, keep):
    out = []
    for r in csv.DictReader(open(os.path.join(RES, name))):
        if keep(r):
            r = {k: r.get(k, "") for k in FIELDS}
            r["source"] = name
            out.append(r)
    return out


def from_rows_txt(name, platform, keep=lambda r: True):
    """@row lines; a line '== PLATFORM ...' sets the platform of those after it."""
    out = []
    for line in open(os.path.join(RES, name)):
        if line.startswith("== "):
            platform = line.split()[1]
        if line.startswith("@row "):
            r = dict(kv.split("=", 1) for kv in line[5:].split())
            if not keep(r):
                continue
            r.update(exp="exchange", platform=platform, nprocs=r["np"], series="scale",
                     item=item(r["d"], r["r"]), source=name)
            out.append({k: r.get(k, "") for k in FIELDS})
    return out


HEAD = re.compile(r"# isobench: alltoall, Moore radius (\d+), (\d)-D torus (\S+), s = (\d+) neighbors, (\d+) ranks")


def from_table(name, start, platform, skip=(), unchecked=""):
    """isobench's printed table in the section that starts at line `start`
    (1-based) and ends before the next '== ' or '########' line."""
    lines = open(os.path.join(RES, name)).read().splitlines()
    out, head, picked = [], None, {}
    for i in range(start - 1, len(lines)):
        line = lines[i]
        if i > start - 1 and (line.startswith("== ") or line.startswith("########")):
            if head:
                break
            continue
        m = HEAD.match(line)
        if m:
            head = m.groups()
        m = re.match(r"iso auto at (\d+) B picked ([^\s;]+)", line)
        if m:
            picked[m.group(1)] = m.group(2)
        if line.startswith("| ") and head and not line.startswith(("| variant", "|---")):
            c = [x.strip() for x in line.strip("|").split("|")]
            v = "hand" if c[0] == "Isend/Irecv by hand" else c[0].replace("iso ", "")
            if v in skip:
                continue
            r, d, dims, s, k = head
            out.append(dict(exp="exchange", platform=platform, nprocs=k, competitor=v,
                            coll="alltoall", shape="moore", d=d, r=r, dims=dims, s=s, np=k,
                            block=c[1], rep="0", iters="1", time_us=c[2], picked="",
                            unchecked=unchecked, item=item(d, r), series="scale",
                            source="%s:%d" % (name, start)))
    for r in out:
        if r["competitor"] == "auto":
            r["picked"] = picked.get(r["block"], "")
    if not out:
        sys.exit("no table in %s:%d" % (name, start))
    return out


rows = []
rows += from_csv("2026-11-27-scale-iso-k64-k256-all-tried-SIMULATED-k64.csv",
                 lambda r: r["competitor"] != "auto")   # auto at K = 64: the tuner of 370a590, below
rows += from_csv("2026-11-28-scale-iso-64kib-apart-k256-SIMULATED.csv", lambda r: True)
K1 = "2026-11-27-scale-iso-k1024-SIMULATED.txt"
rows += from_table(K1, 1, "xc40") + from_table(K1, 28, "bgq") + from_table(K1, 55, "quartz")
KM = "2026-11-27-scale-iso-k1024-more-SIMULATED.txt"
rows += from_table(KM, 3, "bgq") + from_table(KM, 36, "quartz") + from_table(KM, 69, "xc40")
rows += from_table(KM, 234, "xc40") + from_table(KM, 1092, "xc40")
for start, p in ((387, "bgq"), (438, "bgq"), (489, "quartz"), (540, "quartz"), (591, "xc40"), (642, "xc40")):
    rows += from_table(KM, start, p)                    # K = 64: auto alone, tuner of 370a590
rows += from_table(KM, 361, "bgq")                       # bgq 2D r3 1 KiB: auto, tuner of 370a590
KQ = "2026-11-27-scale-iso-k1024-1kib-SIMULATED.txt"
rows += from_table(KQ, 1, "quartz") + from_table(KQ, 24, "quartz")
KB = "2026-11-27-scale-iso-bgq-1kib-64kib-SIMULATED.txt"
rows += from_table(KB, 1, "bgq") + from_table(KB, 23, "bgq") + from_table(KB, 52, "bgq")
rows += from_table(KB, 74, "bgq") + from_table(KB, 113, "bgq", skip=("auto",))
rows += from_table(KB, 198, "bgq") + from_table(KB, 237, "bgq")     # K = 4096, 1 KiB, 3D
KF = "2026-11-28-scale-iso-64kib-folded-SIMULATED.txt"
rows += from_table(KF, 327, "bgq", unchecked="folded")  # K = 1024, 64 KiB (its 8 B: K1's)
rows = [r for r in rows if not (r["source"].startswith(KF) and r["block"] == "8")]
K4 = "2026-11-27-scale-iso-k4096-SIMULATED.txt"
for start, p in ((1, "xc40"), (32, "bgq"), (63, "quartz"), (94, "xc40"), (125, "bgq"), (156, "quartz")):
    rows += from_table(K4, start, p)
big = lambda r: int(r["block"]) == 65536
rows += from_rows_txt("2026-11-28-scale-iso-64kib-apart-k1024-xc40-direct-SIMULATED.txt", "xc40", big)
rows += from_rows_txt("2026-11-28-scale-iso-64kib-apart-k1024-SIMULATED.txt", None, big)

seen = {}
for r in rows:
    cell = (r["platform"], r["d"], r["block"], r["nprocs"], r["competitor"])
    seen.setdefault(cell, set()).add(r["source"])
dup = {c: s for c, s in seen.items() if len(s) > 1}
if dup:
    sys.exit("cells from more than one source: %s" % dup)
with open(sys.argv[1], "w", newline="") as f:
    w = csv.DictWriter(f, FIELDS)
    w.writeheader()
    w.writerows(rows)
print("%d rows, %d cells" % (len(rows), len(seen)))
