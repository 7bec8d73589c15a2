"""The scale series of bench/run (bench/run --series scale; make bench-scale).

Every algorithm at K = 64 .. 4096 processes on modelled machines, SIMULATED
with SimGrid's SMPI (make MPI=smpi): each launch is one smpirun of a bench
program on a platform of bench/platforms/ with its hostfile (ranks per node
as on the real machine), so every time here is simulated time on that
model, labelled "simulated" wherever it appears; the simulator's own cost
(wall and CPU seconds of the smpirun) is recorded per launch.

Parts (--parts, default iso,spmv):
  iso    bench/isobench, 2D Moore r3 and 3D Moore r1 on a periodic torus
         from MPI_Dims_create, blocks 8 B, 1 KiB and 64 KiB (64 KiB at K =
         64 only unless --fold-64kib), hand-written Isend/Irecv, direct,
         dimwise and bruck in both combining modes, auto.  Every rank's
         buffers live in the one simulator process (at 64 KiB ~1.7-3 MB
         each, several per rank: K = 1024 needed more than 19 GB).  With
         --fold-64kib, from K = 256 the 64 KiB rows come from one launch
         per variant, in which isobench folds its own 64 KiB block buffers
         onto the same memory (SMPI's shared malloc; --folded-above 1024)
         after the variant passed the check at 8 B: simulated times are
         unchanged (data do not enter them; checked row for row at K =
         64), but the data are meaningless, so those rows are unchecked.
         One launch per variant because what stays unfolded is the
         library's message buffers and SMPI's datatype copies, and a
         launch keeps every variant's (each variant has its own
         communicator, whose cached schedule and blocking-call cache keep
         its buffers for the next call): at K = 64, 2D Moore r3, all seven
         variants in one launch peaked at 3.35 GB of the simulator's
         anonymous memory, each alone at 25 MB (hand) to 1.21 GB (auto),
         and the rows agree within 0.04%
  spmv   bench/spmv, x-vector exchange of y = Ax, persistent
         (Iso_neighbor_alltoallv_init): direct, vpt for every n, sharing, auto
         (tuned at its _init call, the default) and automodel (the model's pick), on
         --matrices (rows and METIS partitions); geometric means as in
         SC'19 table 2 beside the paper's ratios
  sdde   bench/sdde, the sparse dynamic data exchange (Iso_alltoallv_crs:
         the column indices; Iso_alltoall_crs: one int) of the rows
         partitioned contiguously: personalized, nbx, rma (constant size
         only), locality-personalized, locality-nbx, auto, on the
         --matrices; nodes from MPI_COMM_TYPE_SHARED (SMPI: the simulated
         hosts, checked: bench/sdde prints their count); the speedup of the
         best locality-aware algorithm over the best standard one per
         matrix, beside Geyko et al.'s (quartz, 32 ranks per node)
Every program checks its data against its oracle before timing (isobench:
plain Isend/Irecv; spmv: the serial product).  Simulated time has no noise:
1 launch and 2 repetitions of 1 call each (isobench --iters 1, spmv
--iters 1) are enough; the second repetition is there to show that.  One
exception: with 64 KiB blocks on bgq's torus the combining variants' time
depends on what ran before in the launch (K = 256, 3D Moore r1,
dimwise:pack alone: 27.79, 27.79, 23.67 ms in three repetitions; after
direct in each repetition: 34.16 ms three times; direct itself 19229.6 +-
0.1 us), so the per-variant 64 KiB launches take FOLD_REPS repetitions.

Simulation settings (SMPI_FLAGS below): no simulated computation (only
messages cost; the library's own CPU work -- packing, the schedule -- is
not in the simulated times: the platforms' per-message overheads
smpi/os, ois, or stand for the per-message software cost), and network
cross-traffic off (SMPI otherwise adds a reverse flow per message, twice
the flows for the solver; the reverse flows model TCP acknowledgements,
which these networks do not have), and MPICH's collective algorithms
(smpi/coll-selector:mpich).  The last one matters: every timing starts
after an MPI_Barrier and is the maximum over the ranks, so the barrier's
skew (how far apart the ranks leave it) is in every figure; SMPI's default
selection left the ranks up to about 50 us apart at K = 64 on bgq (2D
Moore r3, 8 B: auto 68.8 us, with MPICH's dissemination barrier 15.8 us;
hand-written 96.5 and 86.4 us).  And a poll costs what it costs in MPI:
SMPI injects 100 us of simulated time into every MPI_Test and MPI_Iprobe
by default, growing while they fail (smpi/grow-injected-times), to speed
up busy loops; the SDDE's probed receives and NBX's test loop then took
1.5-17 ms per call where 0.1 us per poll (smpi/test, smpi/iprobe) gives
22-52 us (16 ranks, bench/platforms/twopackage.xml,
bench/results/2026-11-25-locality-levels-smpi.txt).
"""
import math
import os
import resource
import shutil
import signal
import subprocess
import tempfile
import time

PLATFORMS = ["bgq", "xc40", "quartz"]  # bench/platforms/NAME.xml; also "thismachine"
KS = [64, 256, 1024, 4096]
# Small enough that a launch of all of them stays in minutes of simulator
# CPU at K = 256 (every rank's set-up runs in the one simulator process):
# power-law and circuit matrices (latency-bound) and two meshes.
MATRICES = ["ca-GrQc", "PGPgiantcompo", "rajat01", "USpowerGrid", "add32", "bcspwr10", "3elt",
            "delaunay_n16"]
# From K = 512 on, one spmv launch per matrix: a launch costs minutes of
# simulator CPU there (bgq: direct and each vpt n 13-65 s, sharing and auto
# stopped after 4.6 and 10 min of CPU in their set-up;
# bench/results/2026-11-26-scale-spmv-k512-all-SIMULATED.md), so that a
# launch ends within --timeout and one that does not loses one matrix only.
SPMV_SPLIT_K = 512
ISO_SHAPES = [("3D Moore r1", "--shape moore --dim 3 --radius 1 --periodic"),  # the cheaper first
              ("2D Moore r3", "--shape moore --dim 2 --radius 3 --periodic")]
ISO_VARIANTS = ["hand", "direct", "dimwise:pack", "dimwise:datatype", "bruck:pack",
                "bruck:datatype", "auto"]
SMPI_FLAGS = ["--cfg=smpi/simulate-computation:no", "--cfg=network/crosstraffic:0",
              "--cfg=smpi/coll-selector:mpich", "--cfg=smpi/test:1e-7", "--cfg=smpi/iprobe:1e-7",
              "--cfg=smpi/grow-injected-times:no", "--log=root.thresh:warning"]
# From K = 2048 the isomorphic and SpMV launches also take SMPI's flat bcast,
# allreduce and reduce: under the mpich selector they are SMP-aware, and the
# first of them on a new communicator sends K(K-1) messages (init_smp's
# allgather ring) -- at K = 1024 24-33 s of simulator CPU per
# MPI_Comm_dup/split, 0.24 s with these (bench/README.md, "Why large K costs
# K²").  Not the SDDE's: auto's calls agree on their size class with an
# MPI_Allreduce (first call, then every 64), which these change, so its rows
# stay comparable across K.
SMPI_FLAGS_LARGE_K = ["--cfg=smpi/bcast:binomial_tree", "--cfg=smpi/allreduce:rdb",
                      "--cfg=smpi/reduce:binomial"]
LARGE_K = 2048
# With --fold-64kib, from K = FOLD_K isobench folds its block buffers above
# FOLDED_ABOVE bytes, and each variant's 64 KiB rows come from a launch of
# their own (the docstring's "iso").
FOLD_K = 256
FOLDED_ABOVE = 1024
FOLD_REPS = 5
# SC'19's communication-time gains of the best STFW over BL (BL / best):
# table 2 (BG/Q, up to 50/55/61/72% at K = 64/128/256/512), figure 9 (XC40,
# 85% at 512; BG/Q 69% there with STFW4), table 3 (XC40 at 4096: 1419 us ->
# 199 us with STFW7).
# Geyko et al. (figures 9-10, Quartz, 64 nodes x 32): best locality-aware
# over best standard SDDE, average and maximum over their matrices.
PAPER_SDDE = {"constant": (18, 128), "variable": (14, 54)}
SDDE_STANDARD = ["personalized", "nbx", "rma"]
SDDE_LOCALITY = ["locality-personalized", "locality-nbx"]
# Store-and-forward: neither side of Geyko et al.'s comparison, but
# algorithms of Iso_alltoall(v)_crs (auto's tuning tries vpt), so timed too.
SDDE_ROUTED = ["vpt", "sharing"]
# spmv's choices of the library (bench/spmv): auto, tuned at its _init call
# as by default; automodel, the cost model's pick (iso_tune=off); tuned,
# iso_tune=on.  None is a fixed algorithm.
AUTOS = ("auto", "automodel", "tuned")
PAPER_RATIO = {("bgq", 64): 1 / 0.50, ("bgq", 128): 1 / 0.45, ("bgq", 256): 1 / 0.39,
               ("bgq", 512): 1 / 0.28, ("xc40", 512): 1 / 0.15, ("xc40", 4096): 1419 / 199}


def shown_path(path, root):
    """path as results may print it: relative to the checkout when inside it."""
    return os.path.relpath(path, root) if path and path.startswith(root + os.sep) else path


def ppn(platform):
    """Ranks per node of a platform (bench/platforms/hostfile says the same)."""
    return {"thismachine": 2, "bgq": 16, "xc40": 32, "quartz": 32}[platform]


def items(args):
    """(exp, label, program, options, platform, K) per launch."""
    out = []
    parts = args.parts.split(",")
    for platform in args.platforms.split(","):
        for k in [int(x) for x in args.ks.split(",")]:
            if "iso" in parts:
                big = k <= 64 or args.fold_64kib
                apart = big and k >= FOLD_K  # 64 KiB folded, one launch per variant
                for label, opts in ISO_SHAPES:
                    out.append(("exchange", label, "bench/isobench",
                                "%s --sizes %s --variants %s --iters 1 --reps %d"
                                % (opts, "8,1024,65536" if big and not apart else "8,1024",
                                   ",".join(ISO_VARIANTS), args.reps), platform, k))
                    for v in ISO_VARIANTS if apart else []:
                        out.append(("exchange", "%s 64 KiB %s" % (label, v), "bench/isobench",
                                    "%s --sizes 8,65536 --folded-above %d --variants %s "
                                    "--iters 1 --reps %d" % (opts, FOLDED_ABOVE, v,
                                                             max(args.reps, FOLD_REPS)),
                                    platform, k))
            if "spmv" in parts:  # one launch per partition: every matrix (K >= 512: each)
                names = args.matrices.split(",")
                groups = [names] if k < SPMV_SPLIT_K else [[name] for name in names]
                for group in groups:
                    paths = ",".join(os.path.join(args.matrix_dir, name + ".mtx.gz")
                                     for name in group)
                    what = "%d matrices" % len(group) if len(group) > 1 else group[0]
                    for part in ("rows", "metis"):
                        out.append(("spmv", "%s %s" % (what, part), "bench/spmv",
                                    "--matrix %s --partition %s --variants direct,vpt,sharing,"
                                    "auto,automodel --iters 1 --reps %d" % (paths, part, args.reps),
                                    platform, k))
            if "sdde" in parts:  # one launch: every matrix, both forms
                paths = ",".join(os.path.join(args.matrix_dir, name + ".mtx.gz")
                                 for name in args.matrices.split(","))
                variants = args.sdde_variants or ",".join(SDDE_STANDARD + SDDE_LOCALITY +
                                                          SDDE_ROUTED + ["auto"])
                out.append(("sdde", "%d matrices" % len(args.matrices.split(",")), "bench/sdde",
                            "--matrix %s --forms %s --variants %s --iters 1 --reps %d"
                            % (paths, args.sdde_forms, variants, args.reps), platform, k))
    return out


def sdde_rows(text):
    """bench/sdde's tables as @row-like dicts: one per matrix, form and
    variant (time_us = the median; msgs, inter = the busiest process's
    messages of one call, all and inter-node; nodes = its node count)."""
    rows, matrix, form, nodes = [], None, None, "?"
    for line in text.splitlines():
        if line.startswith("# sdde:") and " node" in line:  # "..., N nodes (shared memory)"
            nodes = line.split(",")[1].split()[0]
        elif line.startswith("### "):  # "### NAME.mtx.gz, Iso_alltoallv_crs (...), K ranks"
            matrix = line[4:].split(",")[0].split(".mtx")[0]
            form = "variable" if "Iso_alltoallv_crs" in line else "constant"
        elif line.startswith("| ") and matrix and not line.startswith(("| variant", "|---")):
            c = [x.strip() for x in line.strip("|").split("|")]
            rows.append({"exp": "sdde", "matrix": matrix, "form": form, "competitor": c[0],
                         "time_us": c[1], "rep": "0", "msgs": c[5], "inter": c[6],
                         "nodes": nodes})
        elif line.startswith("auto picked ") and matrix:
            picked = line.split()[2]
            for r in rows:
                if r["matrix"] == matrix and r["form"] == form and r["competitor"] == "auto":
                    r["picked"] = picked
    return rows


def spmv_rows(text):
    """spmv's 'matrix=.. variant=.. n=.. dims=.. mmax=.. comm_us=.. PASS' lines
    as @row-like dicts: competitor direct, vpt<n>, sharing, auto or automodel;
    time_us = comm_us."""
    rows = []
    for line in text.splitlines():
        if not line.startswith("matrix=") or "SKIP" in line:
            continue
        words = line.split()
        r = dict(w.split("=", 1) for w in words if "=" in w)
        v = r.pop("variant")
        r["competitor"] = "vpt%s" % r["n"] if v == "vpt" else v
        if v in AUTOS:  # dims=auto:n3 or auto:sharing
            r["picked"] = r.get("dims", "").split(":", 1)[-1] or "n%s" % r["n"]
        r.pop("n", None)
        r.pop("dims", None)
        r["time_us"] = r.pop("comm_us")
        r["exp"] = "spmv"
        r["rep"] = "0"
        if words[-1] != "PASS":
            r["wrong"] = "1"
        rows.append(r)
    return rows


def from_csv(files, out, R):
    """Tables and plots again from raw CSVs of earlier runs (and their
    -cost.csv files, when there), written under out with a new name: never
    over a results file beside the CSVs."""
    rows, costs = [], []
    for f in files:
        rows += R.read_csv(f)
        cost = f[:-4] + "-cost.csv"
        if os.path.exists(cost):
            with open(cost) as c:
                for line in c.read().splitlines()[1:]:
                    e, i, p, k, w, cpu, st = line.split(",")
                    costs.append((e, i, p, int(k), float(w), float(cpu), st))
    os.makedirs(out, exist_ok=True)
    base = os.path.join(out, "scale-smpi-merged-%s" % time.strftime("%Y-%m-%d-%H%M%S"))
    report(rows, costs, base, R)
    return 0


def run(args, R):
    """Runs the series (R: the bench/run module: parse_output, write_csv,
    summarize, gnuplot); returns the exit status."""
    its = items(args)
    if args.list:
        for it in its:
            print("%-8s %-22s %-7s K=%-5d %s %s" % (it[0], it[1], it[4], it[5], it[2], it[3]))
        return 0
    build = args.build or "build/smpi"
    os.makedirs(args.out, exist_ok=True)
    stamp = time.strftime("%Y-%m-%d-%H%M")
    base = os.path.join(args.out, "scale-smpi-%s-%s-%s-k%s" % (  # runs started in the same
        stamp, args.parts.replace(",", "+"), args.platforms.replace(",", "+"),  # minute apart
        args.ks.replace(",", "+")))
    hostdir = tempfile.mkdtemp(prefix="isocoll-scale-")
    rows, costs, failures, start = [], [], 0, time.time()
    print("== bench/run: series scale (SIMULATED, SimGrid SMPI): platforms %s, K %s, parts %s, "
          "%d launches; %s %s" % (args.platforms, args.ks, args.parts, len(its),
                                  shown_path(shutil.which("smpirun"), R.ROOT),
                                  " ".join(SMPI_FLAGS)), flush=True)
    for n, (exp, label, prog, opts, platform, k) in enumerate(its, 1):
        hosts = os.path.join(hostdir, "%s-%d" % (platform, k))
        if not os.path.exists(hosts):
            with open(hosts, "w") as f:
                subprocess.run(["sh", os.path.join(R.ROOT, "bench/platforms/hostfile"),
                                platform, str(k)], stdout=f, check=True)
        cmd = (["smpirun", "-platform",
                os.path.join(R.ROOT, "bench/platforms/%s.xml" % platform),
                "-hostfile", hosts, "-np", str(k)] + SMPI_FLAGS +
               (SMPI_FLAGS_LARGE_K if k >= LARGE_K and exp != "sdde" else []) +
               [os.path.join(R.ROOT, build, prog)] + opts.split() +
               (["--rows"] if exp == "exchange" else []))
        print("[%3d/%d] %-8s %-22s %-7s K=%-5d (%.0f s elapsed)"
              % (n, len(its), exp, label, platform, k, time.time() - start), flush=True)
        if args.dry_run:
            print("        " + " ".join(cmd))
            continue
        t0, c0 = time.time(), resource.getrusage(resource.RUSAGE_CHILDREN)
        # its own process group: on a timeout the simulator (smpimain, a
        # child of the smpirun script) goes too, not only smpirun
        # auto decides with the platform's constants (bench/platforms/calibrate)
        cost = os.path.join(R.ROOT, "bench/platforms/%s.cost" % platform)
        env = dict(os.environ, **({"ISO_COST_FILE": cost} if os.path.exists(cost) else {}))
        p = subprocess.Popen(cmd, cwd=R.ROOT, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, start_new_session=True)
        try:
            out, err = p.communicate(timeout=args.timeout)
            rc = p.returncode
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            out, err = p.communicate()
            rc = "timeout after %d s" % args.timeout
        c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        wall, cpu = time.time() - t0, (c1.ru_utime - c0.ru_utime) + (c1.ru_stime - c0.ru_stime)
        got = (R.parse_output(out)[0] if exp == "exchange" else
               spmv_rows(out) if exp == "spmv" else sdde_rows(out))
        if "--folded-above" in opts:  # a variant's own 64 KiB launch: its 8 B rows are
            got = [r for r in got if int(r["block"]) > FOLDED_ABOVE]  # the main launch's
        costs.append((exp, label, platform, k, wall, cpu, rc))
        print("        simulator: %.1f s wall, %.1f s CPU" % (wall, cpu), flush=True)
        if rc != 0 or not got:
            failures += 1
            print("        FAILED (exit status %s): %s\n%s" % (rc, " ".join(cmd), "\n".join(
                "        " + line for line in (err or out).splitlines()[-8:])), flush=True)
        for r in got:
            r.update(series="scale", launch=1, item=label, mpi="smpi",
                     mpi_version="SimGrid SMPI (simulated)", nprocs=k, loadavg=R.loadavg(),
                     platform=platform, sim_wall_s="%.2f" % wall, sim_cpu_s="%.2f" % cpu)
        rows.extend(got)
        if got:
            R.write_csv(base + ".csv", rows, ["exp", "platform", "nprocs", "competitor"])
    if args.dry_run:
        return 0
    with open(base + "-cost.csv", "w") as f:
        f.write("exp,item,platform,K,wall_s,cpu_s,status\n")
        for c in costs:
            f.write("%s,%s,%s,%d,%.2f,%.2f,%s\n" % c)
    report(rows, costs, base, R, plots=not args.no_plots)
    if failures:
        print("\nbench/run: %d launch(es) failed" % failures)
    return 1 if failures else 0


# ---- tables ---------------------------------------------------------------------


def geomean(xs):
    xs = [x for x in xs if x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def medians(rows):
    """{(exp, platform, K, params..., competitor): (median us, row)} over repetitions."""
    groups = {}
    for r in rows:
        key = tuple(sorted((k, v) for k, v in r.items() if k not in R_SKIP))
        groups.setdefault(key, []).append(r)
    out = {}
    for key, g in groups.items():
        ts = sorted(float(r["time_us"]) for r in g)
        m = len(ts) // 2
        out[key] = (ts[m] if len(ts) % 2 else (ts[m - 1] + ts[m]) / 2, g[0])
    return out


R_SKIP = {"rep", "time_us", "iters", "picked", "wrong", "launch", "loadavg", "sim_wall_s",
          "sim_cpu_s", "exch_us", "spmv_us", "buffer_kb", "setup_us", "msgs", "inter", "nodes"}


def iso_table(rows, lines):
    """Per platform, neighborhood and block: one line per K."""
    cells = {}
    for (key, (med, r)) in medians([r for r in rows if r["exp"] == "exchange"]).items():
        where = (r["platform"], "%sD %s r%s" % (r["d"], r["shape"].capitalize(), r["r"]),
                 int(r["block"]), int(r["nprocs"]))
        cells.setdefault(where, {})[r["competitor"]] = (med, r)
    lines.append("\n### isomorphic alltoall, SIMULATED time per call (us), max over ranks\n")
    lines.append("| platform | neighborhood | block B | K | " + " | ".join(ISO_VARIANTS) +
                 " | auto picked | auto / best | hand / auto |")
    lines.append("|---|---|--:|--:|" + "--:|" * len(ISO_VARIANTS) + "---|--:|--:|")
    targets = []
    for where in sorted(cells):
        c = cells[where]
        fixed = [(c[v][0], v) for v in ISO_VARIANTS if v in c and v not in ("hand", "auto")
                 and not c[v][1].get("wrong")]
        best = min(fixed) if fixed else None
        a, h = c.get("auto"), c.get("hand")
        wrong = [v for v in c if c[v][1].get("wrong")]
        folded = any(c[v][1].get("unchecked") == "folded" for v in c)
        lines.append("| %s | %s | %d | %d | %s | %s | %s | %s |%s%s" % (
            where[0], where[1], where[2], where[3],
            " | ".join("%.1f" % c[v][0] if v in c else "-" for v in ISO_VARIANTS),
            a[1].get("picked", "-") if a else "-",
            "%.2f" % (a[0] / best[0]) if a and best else "-",
            "%.2f" % (h[0] / a[0]) if a and h else "-",
            " WRONG: " + ",".join(wrong) if wrong else "",
            " (data unchecked: buffers folded)" if folded else ""))
        if a and best:
            targets.append(("auto within 10% of the best fixed", where, a[0] / best[0],
                            a[0] / best[0] <= 1.10))
        if a and h and where[2] == 8 and where[3] >= 256:
            targets.append(("8 B, K >= 256: auto >= 2x faster than hand-written", where,
                            h[0] / a[0], h[0] / a[0] >= 2.0))
    return cells, targets


def partition_of(r):
    """rows or metis: spmv's lines do not say; the launch's item does."""
    return r.get("partition") or r.get("item", "?").split()[-1]


def latency_bound(m, k):
    """A matrix whose direct exchange has a process sending to at least a
    quarter of the others (SC'19 chose matrices with mmax near K)."""
    return "direct" in m and int(m["direct"][1]["mmax"]) >= k // 4


def spmv_table(rows, lines):
    """Per platform, K, partition and matrix set (all; latency-bound):
    geometric means over the matrices of direct, each vpt n, the best vpt
    per matrix, auto; beside them the paper's ratio."""
    per = {}
    for (key, (med, r)) in medians([r for r in rows if r["exp"] == "spmv"]).items():
        where = (r["platform"], int(r["nprocs"]), partition_of(r))
        per.setdefault(where, {}).setdefault(r["matrix"], {})[r["competitor"]] = (med, r)
    targets = []
    lines.append("\n### SpMV x-vector exchange (persistent), SIMULATED comm time per iteration "
                 "(us), geometric means over the matrices (SC'19 table 2's columns); "
                 "latency-bound: direct's mmax >= K/4\n")
    lines.append("| platform | K | partition | matrices | variant | mmax | mavg | vavg (words) "
                 "| comm us | direct / it |")
    lines.append("|---|--:|---|---|---|--:|--:|--:|--:|--:|")
    summary = []
    for where in sorted(per):
        for subset in ("all", "latency-bound"):
            full = [m for m in per[where].values() if "direct" in m and
                    (subset == "all" or latency_bound(m, where[1]))]
            if not full:
                continue
            comps = sorted({c for m in full for c in m},
                           key=lambda c: (c != "direct", c in AUTOS, len(c), c))
            direct = geomean([m["direct"][0] for m in full])
            for comp in comps + ["best vpt"]:
                vals = []
                for m in full:
                    if comp == "best vpt":
                        vs = [m[c] for c in m if c.startswith("vpt")]
                        if vs:
                            vals.append(min(vs, key=lambda x: x[0]))
                    elif comp in m:
                        vals.append(m[comp])
                if not vals:
                    continue
                g = lambda f: geomean([float(v[1][f]) for v in vals])
                comm = geomean([v[0] for v in vals])
                picks = ""
                if comp in AUTOS:
                    picks = " (picked %s)" % ",".join(sorted({v[1].get("picked", "?")
                                                             for v in vals}))
                if comp == "best vpt":
                    picks = " (n %s)" % ",".join(sorted({v[1]["competitor"][3:] for v in vals}))
                lines.append("| %s | %d | %s | %s %d | %s%s | %.1f | %.2f | %.0f | %.1f | %.2f |"
                             % (where[0], where[1], where[2], subset, len(vals), comp, picks,
                                g("mmax"), g("mavg"), g("vavg"), comm, direct / comm))
                if comp == "best vpt":
                    summary.append((where, subset, len(vals), direct, comm))
                if comp == "auto":
                    best = geomean([min(m[c][0] for c in m if c not in AUTOS) for m in full])
                    targets.append(("spmv: auto within 10%% of the best (geomean, %s)" % subset,
                                    where, comm / best, comm / best <= 1.10))
    lines.append("\n| platform | K | partition | matrices | direct / best vpt (simulated) | "
                 "SC'19 BL / best STFW (measured, its 15 latency-bound matrices) |")
    lines.append("|---|--:|---|---|--:|--:|")
    for where, subset, n, direct, best in summary:
        paper = PAPER_RATIO.get((where[0], where[1]))
        lines.append("| %s | %d | %s | %s %d | %.2f | %s |" % (
            where[0], where[1], where[2], subset, n, direct / best,
            "%.2f" % paper if paper else "-"))
        if paper and subset == "latency-bound":
            targets.append(("spmv: best vpt vs direct at least the paper's (latency-bound)",
                            where, direct / best, direct / best >= paper))
    return per, targets


def sdde_table(rows, lines):
    """Per platform, K and form: every algorithm per matrix, the speedup of
    the best locality-aware over the best standard one, its average
    (arithmetic, as Geyko et al.'s) and maximum beside theirs."""
    per = {}
    for (key, (med, r)) in medians([r for r in rows if r["exp"] == "sdde"]).items():
        where = (r["platform"], int(r["nprocs"]), r["form"])
        per.setdefault(where, {}).setdefault(r["matrix"], {})[r["competitor"]] = (med, r)
    if not per:
        return per, []
    algs = SDDE_STANDARD + SDDE_LOCALITY + SDDE_ROUTED + ["auto"]
    lines.append("\n### SDDE (Iso_alltoall_crs constant, Iso_alltoallv_crs variable), SIMULATED "
                 "time per call (us), max over ranks; speedup = best standard / best "
                 "locality-aware\n")
    lines.append("| platform | K | nodes | form | matrix | " + " | ".join(algs) +
                 " | auto picked | auto / best | speedup |")
    lines.append("|---|--:|--:|---|---|" + "--:|" * len(algs) + "---|--:|--:|")
    targets, summary = [], []
    for where in sorted(per):
        ups = []
        for matrix in sorted(per[where]):
            c = per[where][matrix]
            std = [c[a][0] for a in SDDE_STANDARD if a in c]
            loc = [c[a][0] for a in SDDE_LOCALITY if a in c]
            best = min(c[a][0] for a in c if a != "auto")
            up = min(std) / min(loc) if std and loc else float("nan")
            if std and loc:
                ups.append(up)
            a = c.get("auto")
            lines.append("| %s | %d | %s | %s | %s | %s | %s | %s | %.2f |" % (
                where[0], where[1], next(iter(c.values()))[1].get("nodes", "?"), where[2],
                matrix, " | ".join("%.1f" % c[x][0] if x in c else "-" for x in algs),
                a[1].get("picked", "?") if a else "-", "%.2f" % (a[0] / best) if a else "-",
                up))
            if a:
                targets.append(("sdde: auto within 10% of the best", where + (matrix,),
                                a[0] / best, a[0] / best <= 1.10))
        if ups:
            summary.append((where, len(ups), sum(ups) / len(ups), max(ups)))
    lines.append("\n| platform | K | form | matrices | best locality / best standard: average | "
                 "maximum | Geyko et al. (64 nodes x 32, measured): average | maximum |")
    lines.append("|---|--:|---|--:|--:|--:|--:|--:|")
    for where, n, avg, mx in summary:
        paper = PAPER_SDDE[where[2]]
        lines.append("| %s | %d | %s | %d | %.2f | %.2f | %d | %d |" % (
            where[0], where[1], where[2], n, avg, mx, paper[0], paper[1]))
        if where[1] >= 2048:
            targets.append(("sdde: best locality over best standard >= paper's average",
                            where, avg, avg >= paper[0]))
    return per, targets


def report(rows, costs, base, R, plots=True):
    lines = ["# scale series: SIMULATED (SimGrid SMPI on bench/platforms), %s" %
             time.strftime("%Y-%m-%d %H:%M")]
    lines.append("\n### the simulator's cost per launch (wall and CPU seconds of smpirun)\n")
    lines.append("| exp | item | platform | K | wall s | CPU s | status |")
    lines.append("|---|---|---|--:|--:|--:|---|")
    for c in costs:
        lines.append("| %s | %s | %s | %d | %.1f | %.1f | %s |" % c)
    iso, t1 = iso_table(rows, lines)
    spmv, t2 = spmv_table(rows, lines)
    sdde, t3 = sdde_table(rows, lines)
    lines.append("\n### targets (simulated)\n")
    for name, where, value, met in t1 + t2 + t3:
        lines.append("- %s: %s: %.2f %s" % (name, " ".join(str(w) for w in where), value,
                                            "met" if met else "MISSED"))
    text = "\n".join(lines) + "\n"
    print(text)
    with open(base + ".md", "w") as f:
        f.write(text)
    print("tables: %s" % os.path.relpath(base + ".md", R.ROOT))
    if plots:
        plot_iso(iso, base, R)
        plot_spmv(spmv, base, R)
        plot_sdde(sdde, base, R)


# ---- plots: time against K, log-log, one line per algorithm ------------------


def plot_iso(cells, base, R):
    panels = {}
    for (platform, nbh, block, k), c in cells.items():
        panels.setdefault((platform, nbh), {}).setdefault(block, {})[k] = c
    for (platform, nbh), blocks in sorted(panels.items()):
        name = "%s-iso-%s-%s" % (base, platform, R.safe(nbh))
        script = ["set terminal pngcairo size %d,420 font ',9'" % (420 * len(blocks)),
                  "set output '%s.png'" % name, "set logscale xy", "set key bottom right",
                  "set multiplot layout 1,%d title '%s, %s: SIMULATED time per call "
                  "(SimGrid SMPI)'" % (len(blocks), platform, nbh)]
        for block in sorted(blocks):
            ks = sorted(blocks[block])
            dat = "%s-%d.dat" % (name, block)
            with open(dat, "w") as f:
                f.write("# K " + " ".join(ISO_VARIANTS) + "\n")
                for k in ks:
                    f.write("%d %s\n" % (k, " ".join(
                        "%.4f" % blocks[block][k][v][0] if v in blocks[block][k] else "NaN"
                        for v in ISO_VARIANTS)))
            script += ["set title '%d B blocks'" % block, "set xlabel 'processes K'",
                       "set ylabel 'us'", "set xtics (%s)" % ",".join(str(k) for k in ks),
                       "plot " + ", ".join("'%s' using 1:%d with linespoints title '%s'"
                                           % (dat, i + 2, v) for i, v in enumerate(ISO_VARIANTS))]
        script.append("unset multiplot")
        R.gnuplot("\n".join(script) + "\n", name + ".png")


def plot_spmv(per, base, R):
    by = {}
    for (platform, k, part), mats in per.items():
        full = [m for m in mats.values() if latency_bound(m, k)]
        if not full:
            continue
        line = {"direct": geomean([m["direct"][0] for m in full]),
                "best vpt": geomean([min([m[c][0] for c in m if c.startswith("vpt")] or
                                         [float("nan")]) for m in full])}
        for comp in ("sharing", "auto", "automodel"):
            if all(comp in m for m in full):
                line[comp] = geomean([m[comp][0] for m in full])
        by.setdefault((platform, part), {})[k] = line
    for (platform, part), ks in sorted(by.items()):
        name = "%s-spmv-%s-%s" % (base, platform, part)
        comps = ["direct", "best vpt", "sharing", "auto", "automodel"]
        with open(name + ".dat", "w") as f:
            for k in sorted(ks):
                f.write("%d %s\n" % (k, " ".join("%.4f" % ks[k].get(c, float("nan"))
                                                 for c in comps)))
        script = ["set terminal pngcairo size 760,420 font ',9'", "set output '%s.png'" % name,
                  "set logscale xy", "set key top left", "set xlabel 'processes K'",
                  "set ylabel 'us (geometric mean over the matrices)'",
                  "set xtics (%s)" % ",".join(str(k) for k in sorted(ks)),
                  "set title 'SpMV exchange, %s, %s partition, latency-bound matrices: "
                  "SIMULATED comm time'"
                  % (platform, part),
                  "plot " + ", ".join("'%s.dat' using 1:%d with linespoints title '%s'"
                                      % (name, i + 2, c) for i, c in enumerate(comps))]
        R.gnuplot("\n".join(script) + "\n", name + ".png")


def plot_sdde(per, base, R):
    """Per platform and form: time against K, geometric mean over the
    matrices, one line per algorithm."""
    by = {}
    algs = SDDE_STANDARD + SDDE_LOCALITY + SDDE_ROUTED + ["auto"]
    for (platform, k, form), mats in per.items():
        by.setdefault((platform, form), {})[k] = {
            a: geomean([m[a][0] for m in mats.values() if a in m]) for a in algs}
    for (platform, form), ks in sorted(by.items()):
        name = "%s-sdde-%s-%s" % (base, platform, form)
        with open(name + ".dat", "w") as f:
            for k in sorted(ks):
                f.write("%d %s\n" % (k, " ".join("%.4f" % ks[k][a] for a in algs)))
        script = ["set terminal pngcairo size 760,420 font ',9'", "set output '%s.png'" % name,
                  "set logscale xy", "set key top left", "set xlabel 'processes K'",
                  "set ylabel 'us per call (geometric mean over the matrices)'",
                  "set xtics (%s)" % ",".join(str(k) for k in sorted(ks)),
                  "set title 'SDDE, %s size, %s: SIMULATED time per call'" % (form, platform),
                  "plot " + ", ".join("'%s.dat' using 1:%d with linespoints title '%s'"
                                      % (name, i + 2, a) for i, a in enumerate(algs))]
        R.gnuplot("\n".join(script) + "\n", name + ".png")
