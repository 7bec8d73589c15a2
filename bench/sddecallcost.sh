#!/bin/sh
# Instructions per call of the sparse dynamic data exchange: bench/sddecallcost
# under callgrind, collecting only its measured loop, for each form and
# algorithm; prints one line per run: the entry point's instructions per call,
# those inside MPI's blocking calls (MPI_Wait, MPI_Waitall, MPI_Mprobe, which
# poll while they wait: load and scheduling, not cost), the rest (the fixed
# cost of a call: the library and its nonblocking MPI calls), and MPI calls per
# call.  The callgrind files stay in OUT for callgrind_annotate.
#   BUILD=build OUT=/tmp/sddecc NP=2 ITERS=500 sh bench/sddecallcost.sh
BUILD=${BUILD:-build}
OUT=${OUT:-/tmp/sddecallcost}
NP=${NP:-2}
ITERS=${ITERS:-500}
ALGS=${ALGS:-"personalized nbx"}
MPIEXEC=${MPIEXEC:-mpiexec.mpich}
mkdir -p "$OUT"
for form in c v; do
    for alg in $ALGS; do
        tag="$form-$alg-np$NP"
        $MPIEXEC -n "$NP" valgrind -q --tool=callgrind --toggle-collect=call_loop \
            --callgrind-out-file="$OUT/callgrind.out.$tag.%p" \
            "$BUILD/bench/sddecallcost" --form "$form" --algorithm "$alg" --count 64 \
            --iters "$ITERS" --warmup 20 >"$OUT/$tag.txt" 2>&1
        f=$(ls -t "$OUT"/callgrind.out."$tag".* | head -1)
        callgrind_annotate --auto=no --inclusive=yes --threshold=100 "$f" 2>/dev/null |
            awk -v iters="$ITERS" -v tag="$tag" '
                # one line per function: "IR (PERCENT) FILE:FUNCTION [OBJECT]"
                !/^ *[0-9,]+ +\(/ || seen[$0]++ { next }
                { gsub(",", "", $1) }
                /:Iso_alltoallv?_crs / { entry += $1 }
                /:PMPI_(Wait|Waitall|Mprobe) / { blocking += $1 }
                END { printf "%s: %d Ir per call, %d in blocking MPI calls, %d outside them, ",
                      tag, entry / iters, blocking / iters, (entry - blocking) / iters }'
        grep -o '[0-9.]* MPI calls per call\|checked\|WRONG' "$OUT/$tag.txt" | tr '\n' ' '
        echo
    done
done
