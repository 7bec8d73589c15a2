#!/usr/bin/env python3
"""Degree counting weak scaling of the mailbox, SIMULATED
(Priest et al., figure 6): bench/mailbox_degree under SimGrid's SMPI on the
Quartz-like fat tree (bench/platforms/quartz.xml), 32 processes per node,
one smpirun per (nodes, routing), largest last.

  python3 bench/mailbox_scale.py [--nodes 2,4,8,16] [--routings none,nr,nlnr]
      [--edges 4096] [--capacity 262144] [--graph er] [--timeout 3600]
      [--out bench/results/NAME]      (needs make MPI=smpi build/smpi/bench/mailbox_degree)

Weak scaling: EDGES edges per process (2 messages of 8 bytes each), 2^(log2
P + 8) vertices (16 edges per vertex, the paper's ratio: 2^32 edges and
2^28 vertices per node), the paper's mailbox capacity 2^18 bytes.  Every
run checks the counts against the serial count (mailbox_degree).  Output:
OUT.txt (every @row line, with the simulator's wall and CPU seconds), OUT.md
(table), OUT.png (log-log: simulated seconds and messages/s against nodes).

smpirun flags: those of bench/scale.py except smpi/test, which is 0 here:
SMPI charges smpi/test per request tested by MPI_Testany, and a gate
process of nr/nlnr has a thousand sends in flight, so at 1e-7 s nlnr on 2
nodes took 190 ms of simulated time instead of 1.0 ms (1e-8: 8.5 ms,
1e-9: 1.2 ms, 0: 1.0 ms; none 0.55 and 0.49 ms).

Simulator cost: SimGrid 3.32 keeps every detached communication (SMPI
detaches sends below smpi/send-is-detached-thresh, 64 KiB: all of none's)
in one std::list of the maestro and removes each, when it completes, by a
scan of the whole list: O(sends in flight) per message.  none has P(P - 1)
in flight at its flush, so its cost grows as P^4, and 85-95% of the
simulator's CPU was that scan (perf, 4 and 8 nodes).  The scan is pointer
chasing through list nodes that glibc's malloc scatters among everything
else; a size-class allocator packs them, which cut the CPU 2x at 4 nodes
and 7.5x at 8 (none: 200 s to 27 s) with bit-identical simulated results.
--preload (default: tcmalloc_minimal when installed, Debian package
libtcmalloc-minimal4) is put in LD_PRELOAD of smpirun; "" for none.
bench/simgrid/build.sh builds a SimGrid without the scan (the same simulated
results; bench/README.md "simgrid"): with its bin first in PATH, 32 nodes of
nlnr took 182 s of CPU instead of 810.
"""
import argparse
import math
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from scale import shown_path  # bench/scale.py, beside this script

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PPN = 32
TCMALLOC = "/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4"
FLAGS = ["--cfg=smpi/simulate-computation:no", "--cfg=network/crosstraffic:0",
         "--cfg=smpi/coll-selector:mpich", "--cfg=smpi/test:0", "--cfg=smpi/iprobe:1e-7",
         "--cfg=smpi/grow-injected-times:no", "--log=root.thresh:warning"]


def launch(args, nodes, routing, hostdir):
    p = nodes * PPN
    hosts = os.path.join(hostdir, "quartz-%d" % p)
    with open(hosts, "w") as f:
        subprocess.run(["sh", os.path.join(ROOT, "bench/platforms/hostfile"), "quartz", str(p)],
                       stdout=f, check=True)
    scale = int(math.log2(p)) + 8
    cmd = (["smpirun", "-platform", os.path.join(ROOT, "bench/platforms/quartz.xml"),
            "-hostfile", hosts, "-np", str(p)] + FLAGS +
           [os.path.join(ROOT, "build/smpi/bench/mailbox_degree"), args.graph, str(scale),
            str(args.edges), "1", str(args.capacity)])
    t0, c0 = time.time(), resource.getrusage(resource.RUSAGE_CHILDREN)
    env = dict(os.environ, ISO_ROUTE=routing)
    if args.preload:
        env["LD_PRELOAD"] = args.preload
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=args.timeout)
        status = str(proc.returncode)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        status = "timeout after %d s" % args.timeout
    c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.time() - t0
    cpu = (c1.ru_utime - c0.ru_utime) + (c1.ru_stime - c0.ru_stime)
    rows = [l for l in out.splitlines() if l.startswith("@row ")]
    if status != "0" or not rows:
        tail = "\n".join((err or out).splitlines()[-6:])
        return None, "@row exp=mailbox_degree np=%d nodes=%d competitor=%s status=%s " \
            "sim_wall_s=%.1f sim_cpu_s=%.1f\n# %s\n# %s" % (
                p, nodes, routing, status.replace(" ", "_"), wall, cpu,
                " ".join(cmd).replace(hosts, "H").replace(ROOT + os.sep, ""),
                tail.replace("\n", "\n# "))
    line = "%s platform=quartz simulated=1 sim_wall_s=%.1f sim_cpu_s=%.1f" % (rows[0], wall, cpu)
    return dict(kv.split("=", 1) for kv in line[5:].split()), line


def report(rows, args, out):
    routings = args.routings.split(",")
    lines = ["# mailbox degree counting, weak scaling: SIMULATED (SimGrid SMPI, quartz.xml)", "",
             "%s edges per process, 2^(log2 P + 8) vertices, capacity %d B, 32 processes per "
             "node; commit %s; %s" % (args.edges, args.capacity, commit(), time.strftime(
                 "%Y-%m-%d %H:%M UTC", time.gmtime())), "",
             "| nodes | P | routing | simulated s | msgs/s (M) | MPI msgs / proc | "
             "remote msgs / proc | remote KiB / proc | forwarded / proc | check | "
             "sim wall s | sim CPU s |",
             "|--:|--:|---|--:|--:|--:|--:|--:|--:|---|--:|--:|"]
    for r in sorted(rows, key=lambda r: (int(r["nodes"]), routings.index(r["competitor"]))):
        lines.append("| %s | %s | %s | %.6f | %.1f | %s | %s | %s | %s | %s | %s | %s |" % (
            r["nodes"], r["np"], r["competitor"], float(r["time_us"]) / 1e6,
            float(r["msgs_per_s"]) / 1e6, r["mpi_msgs_per_proc"], r["remote_msgs_per_proc"],
            r["remote_kb_per_proc"], r["forwarded_per_proc"], r["check"], r["sim_wall_s"],
            r["sim_cpu_s"]))
    with open(out + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")
    dat = out + ".dat"
    nodes = sorted({int(r["nodes"]) for r in rows})
    with open(dat, "w") as f:
        f.write("# nodes " + " ".join(routings) + " (simulated s), then msgs/s\n")
        for n in nodes:
            by = {r["competitor"]: r for r in rows if int(r["nodes"]) == n}
            f.write("%d %s %s\n" % (n, " ".join(
                "%.6g" % (float(by[c]["time_us"]) / 1e6) if c in by else "NaN" for c in routings),
                " ".join("%.6g" % float(by[c]["msgs_per_s"]) if c in by else "NaN"
                         for c in routings)))
    k = len(routings)
    script = "\n".join([
        "set terminal pngcairo size 1000,420 font ',9'", "set output '%s.png'" % out,
        "set logscale xy", "set xrange [%g:%g]" % (nodes[0] / 1.4, nodes[-1] * 1.4),
        "set multiplot layout 1,2 title 'Degree counting, weak scaling, "
        "%s edges/process, 32 processes/node: SIMULATED (SimGrid SMPI, quartz.xml)'"
        % args.edges, "set xlabel 'nodes'", "set xtics (%s)" % ",".join(map(str, nodes)),
        "set key top left", "set ylabel 'simulated seconds'", "set title 'time (lower is better)'",
        "plot " + ", ".join("'%s' using 1:%d with linespoints title '%s'" % (dat, i + 2, c)
                            for i, c in enumerate(routings)),
        "set ylabel 'messages per second'", "set title 'throughput (higher is better)'",
        "plot " + ", ".join("'%s' using 1:%d with linespoints title '%s'" % (dat, k + i + 2, c)
                            for i, c in enumerate(routings)),
        "unset multiplot"]) + "\n"
    subprocess.run(["gnuplot"], input=script, text=True, check=False)
    print("\n".join(lines))


def commit():
    p = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                       text=True)
    return p.stdout.strip() or "?"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--nodes", default="2,4,8,16")
    ap.add_argument("--routings", default="none,nr,nlnr")
    ap.add_argument("--edges", type=int, default=4096)
    ap.add_argument("--capacity", type=int, default=1 << 18)
    ap.add_argument("--graph", default="er", choices=["er", "rmat"])
    ap.add_argument("--timeout", type=int, default=3600)
    ap.add_argument("--preload", default=TCMALLOC if os.path.exists(TCMALLOC) else "",
                    help="LD_PRELOAD of smpirun: an allocator (simulator CPU only)")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench/results", time.strftime(
        "%Y-%m-%d-mailbox-scale-SIMULATED")))
    ap.add_argument("--from-rows", help="tables and plot again from an OUT.txt")
    args = ap.parse_args()
    rows = []
    if args.from_rows:
        with open(args.from_rows) as f:
            for l in f:
                if l.startswith("@row ") and "check=" in l:
                    rows.append(dict(kv.split("=", 1) for kv in l[5:].split()))
        report(rows, args, args.out)
        return 0
    hostdir = tempfile.mkdtemp(prefix="isocoll-mailbox-scale-")
    failed = 0
    with open(args.out + ".txt", "a") as log:
        log.write("# %s: SIMULATED; commit %s; %s %s; mailbox_degree %s EDGES=%d "
                  "CAPACITY=%d; LD_PRELOAD=%s\n" % (
                      time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), commit(),
                      shown_path(shutil.which("smpirun"), ROOT), " ".join(FLAGS), args.graph,
                      args.edges, args.capacity, args.preload or "(none)"))
        for n in [int(x) for x in args.nodes.split(",")]:
            for routing in args.routings.split(","):
                row, line = launch(args, n, routing, hostdir)
                print(line, flush=True)
                log.write(line + "\n")
                log.flush()
                if row is None or row.get("check") != "ok":
                    failed += 1
                else:
                    rows.append(row)
    if rows:
        report(rows, args, args.out)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
