#!/bin/sh
# Instructions per call of the isomorphic collectives: bench/isocallcost
# under callgrind, collecting only its measured loop, for each case and
# form; prints one line per run (Ir per call and MPI calls per call) and
# leaves callgrind.out.<tag> files in OUT for callgrind_annotate.
#   BUILD=build OUT=/tmp/cc NP=1 ITERS=500 sh bench/isocallcost.sh
BUILD=${BUILD:-build}
OUT=${OUT:-/tmp/isocallcost}
NP=${NP:-1}
ITERS=${ITERS:-500}
MPIEXEC=${MPIEXEC:-mpiexec.mpich}
mkdir -p "$OUT"
for c in "3 1 direct" "3 1 dimwise" "2 3 direct" "2 3 bruck"; do
    set -- $c
    for form in persistent blocking nonblocking; do
        tag="${1}d-r${2}-$3-$form-np$NP"
        $MPIEXEC -n "$NP" valgrind -q --tool=callgrind --toggle-collect=call_loop \
            --callgrind-out-file="$OUT/callgrind.out.$tag.%p" \
            "$BUILD/bench/isocallcost" --dim "$1" --radius "$2" --algorithm "$3" --form "$form" \
            --iters "$ITERS" --warmup 20 >"$OUT/$tag.txt" 2>&1
        f=$(ls -t "$OUT"/callgrind.out."$tag".* | head -1)
        ir=$(grep '^totals:\|^summary:' "$f" | head -1 | awk '{print $2}')
        mpi=$(grep -o '[0-9.]* MPI calls per call' "$OUT/$tag.txt")
        echo "$tag: $((ir / ITERS)) Ir per call, $mpi $(grep -o 'checked\|WRONG' "$OUT/$tag.txt")"
    done
done
