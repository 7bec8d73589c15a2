#!/bin/sh
# Builds SimGrid 3.32 from Debian's source package with activity-list.patch
# and installs it under PREFIX (default: build/simgrid in this repository).
#
# Why: SimGrid keeps every detached (small, eager) message in flight in one
# std::list and removes each finished one by walking that list, so a
# simulation's CPU grows with the square of the messages in flight.  The
# patch keeps the same list, in the same order, and finds the element to
# remove through a hash index: simulated results are unchanged (checked
# bit for bit, bench/README.md "simgrid"), the simulator's CPU is not.
#
# Use it by putting PREFIX/bin first in PATH: its smpirun runs the programs
# against PREFIX/lib's libsimgrid.  Programs built with Debian's smpicc need
# no rebuild (same library name and interface).
#
#     sh bench/simgrid/build.sh [PREFIX]
#     PATH=PREFIX/bin:$PATH python3 bench/scale.py ...
#
# Needs deb-src entries in APT's sources (apt-get source), dpkg-dev, cmake,
# g++ and libboost-dev; about 10 minutes on 2 cores.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
prefix=${1:-$repo/build/simgrid}
work=$repo/build/simgrid-src

for tool in apt-get dpkg-source cmake g++ make patch; do
    command -v "$tool" > /dev/null || {
        echo "build.sh: $tool is missing: apt-get install dpkg-dev cmake g++ make patch libboost-dev" >&2
        exit 1
    }
done

mkdir -p "$work"
cd "$work"
if [ ! -d simgrid-3.32 ]; then
    apt-get source simgrid > source.log 2>&1 || {
        cat source.log >&2
        echo "build.sh: apt-get source simgrid failed; APT needs deb-src entries" \
             "(Types: deb deb-src in /etc/apt/sources.list.d/debian.sources, then apt-get update)" >&2
        exit 1
    }
    [ -d simgrid-3.32 ] || {
        echo "build.sh: the source package is not SimGrid 3.32 (ls $work); the patch is for 3.32" >&2
        exit 1
    }
    (cd simgrid-3.32 && patch -p1 < "$here/activity-list.patch")
fi

# Debian's package options, less what SMPI does not use (Java, ns-3, Fortran,
# documentation); no LTO, which only lengthens the build.
mkdir -p simgrid-3.32/build
cd simgrid-3.32/build
cmake .. -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_BUILD_TYPE= \
      -Denable_msg=ON -Denable_smpi=ON -Denable_java=OFF -Denable_ns3=OFF \
      -Denable_fortran=OFF -Denable_python=OFF -Denable_documentation=OFF \
      -Denable_lto=OFF > cmake.log 2>&1 || { echo "build.sh: cmake failed: $PWD/cmake.log" >&2; exit 1; }
make -j"$(nproc)" > make.log 2>&1 || { echo "build.sh: make failed: $PWD/make.log" >&2; exit 1; }
make install > install.log 2>&1 || { echo "build.sh: make install failed: $PWD/install.log" >&2; exit 1; }
echo "SimGrid 3.32 with activity-list.patch is in $prefix: PATH=$prefix/bin:\$PATH"
