#!/bin/sh
# Extended offline schedule verification (make verify-big): tests/t_verify
# (one process) on large tori and meshes, one case per run so that progress
# shows: p = 16384 as 32x32x16 (periodic, non-periodic, mixed) with Moore
# radius 1, von Neumann radius 2 and a random list, 64x64x4, and 5x5x5 /
# 7x7x7 with Moore radius 2 / 3 (the 3-d figures of those radii).  Every
# algorithm, every collective family, every process's schedule.
#
#   BUILD=build MPIEXEC=mpiexec.mpich sh tests/verify_big.sh [CASE...]
#
# CASE is DIMS:PERIODS:NBH as t_verify takes it (e.g. 32x32x16:111:moore1).
# Prints one TAP stream; exits 1 if a check fails or a run does not finish.
BUILD=${BUILD:-build}
MPIEXEC=${MPIEXEC:-mpiexec.mpich}
bin=$BUILD/tests/t_verify
if [ ! -x "$bin" ]; then
  echo "$bin is missing: run make tests first" >&2
  exit 2
fi
if [ $# -gt 0 ]; then
  cases=$*
else
  cases="32x32x16:111:moore1 32x32x16:000:moore1 32x32x16:111:vn2 32x32x16:000:vn2
         32x32x16:101:moore1 32x32x16:010:rand20,5,77 64x64x4:111:moore1 64x64x4:000:moore1
         5x5x5:111:moore2 7x7x7:111:moore3"
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
n=0 bad=0 t0=$(date +%s)
for c in $cases; do
  t1=$(date +%s)
  $MPIEXEC -n 1 "$bin" "$c" >"$out" 2>&1 </dev/null
  rc=$?
  got=0
  while IFS= read -r line; do
    case "$line" in
      "ok "*)     n=$((n+1)); got=$((got+1)); echo "ok $n ${line#ok - }";;
      "not ok "*) n=$((n+1)); got=$((got+1)); bad=1; echo "not ok $n ${line#not ok - }";;
      *)          echo "# ${line#\# }";;
    esac
  done <"$out"
  if [ $got -eq 0 ] || { [ $rc -ne 0 ] && [ $bad -eq 0 ]; }; then
    n=$((n+1)); bad=1
    echo "not ok $n t_verify $c exited with status $rc after $got results"
  fi
  echo "# $c: $(( $(date +%s) - t1 )) s wall"
done
echo "# all cases: $(( $(date +%s) - t0 )) s wall"
echo "1..$n"
exit $bad
