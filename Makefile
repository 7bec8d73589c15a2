# isocoll — plain GNU Make, non-recursive, objects under $(BUILD).
#   make                 library (build/libisocoll.a, build/libisocoll.so), MPICH
#   make MPI=openmpi     the same with Open MPI, under build/openmpi
#   make MPI=smpi        the same with SimGrid's SMPI (simulated ranks), build/smpi
#   make check           test suite through prove (TAP)
#   make asan            tests built with AddressSanitizer + UBSan, run
#   make bench           default benchmark series (bench/run: CSVs, tables, plots)
#   make bench-scale     the scale series, SIMULATED (SimGrid SMPI, bench/platforms)
#   make install PREFIX=/usr/local
#   make deps            install the Debian packages (root) or print the command
# Only `make deps` and the two quick-start targets, `make check` and
# `make bench`, install packages; every other target says what is missing.

MPI      ?= mpich
PREFIX   ?= /usr/local
ifeq ($(MPI),mpich)
  MPICC   ?= mpicc.mpich
  MPIEXEC ?= mpiexec.mpich
  BUILD   ?= build
  MPIPKG  := mpich libmpich-dev
  MPIPC   := mpich
else ifeq ($(MPI),openmpi)
  MPICC   ?= mpicc.openmpi
  MPIEXEC ?= mpirun.openmpi --oversubscribe
  BUILD   ?= build/openmpi
  MPIPKG  := openmpi-bin libopenmpi-dev
  MPIPC   := ompi-c
  export OMPI_ALLOW_RUN_AS_ROOT=1
  export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  export OMPI_MCA_rmaps_base_oversubscribe=1
else ifeq ($(MPI),smpi)
  # SimGrid's SMPI (libsimgrid-dev): every rank is simulated in one process
  # on a modelled platform.  src/compat/smpi.h, forced into every compile,
  # stands in for the MPI calls SMPI 3.32 does not implement (it says which).
  # Launches go through tests/smpi-exec: smpirun on a generated test
  # platform (SMPI_PLATFORM, SMPI_HOSTFILE and SMPI_FLAGS override it).
  MPICC   ?= smpicc
  MPIEXEC ?= sh tests/smpi-exec
  BUILD   ?= build/smpi
  MPIPKG  := libsimgrid-dev
  MPIPC   := simgrid
  SMPI_CFLAGS := -include src/compat/smpi.h
else
  $(error MPI must be mpich, openmpi or smpi)
endif
# One library per MPI: libisocoll-mpich and libisocoll-openmpi, each with
# its SONAME and pkg-config file (isocoll-mpich.pc, isocoll-openmpi.pc,
# which require the MPI's own); isocoll.pc and -lisocoll name the flavor
# installed last.
VERSION   := 0.1
SOVERSION := 0
LIBNAME   := isocoll-$(MPI)
SONAME    := lib$(LIBNAME).so.$(SOVERSION)
DEPS_PKGS := mpich libmpich-dev openmpi-bin libopenmpi-dev libhwloc-dev hwloc pkg-config \
             gnuplot-nox python3 libmetis-dev
ifeq ($(MPI),smpi)
  # tcmalloc: bench/mailbox_scale.py preloads it into smpirun (the simulator's
  # CPU, 2-7.5x less; simulated results the same)
  DEPS_PKGS += libsimgrid-dev libtcmalloc-minimal4
endif

WARN     := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes
OPT      ?= -O2 -g
CFLAGS   ?= $(OPT) $(WARN)
ALLCFLAGS = -std=c11 -D_POSIX_C_SOURCE=200809L -Iinclude -Isrc -fPIC $(CFLAGS) $(SANFLAGS) $(SMPI_CFLAGS)
LIBCFLAGS = $(ALLCFLAGS) -DISOCOLL_BUILDING -fvisibility=hidden

# hwloc (libhwloc-dev) finds the package and NUMA domain of each process
# (src/topo/locality.c): every program linked with the library links it.
LIBS     := -lhwloc
LIB_SRC  := $(wildcard src/*/*.c) $(wildcard datatypes/*.c)
LIB_HDR  := include/isocoll.h $(wildcard src/*/*.h)
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
TEST_SRC := $(wildcard tests/t_*.c)
TEST_BIN := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
TEST_HDR := $(wildcard tests/*.h)
STENCIL_LIB := $(filter-out stencil/isostencil.c,$(wildcard stencil/*.c))
STENCIL_HDR := $(wildcard stencil/*.h)
# bench/vptmodel.c is no program: the counts-only VPT model that
# bench/spmv, bench/vptsim and the tests that check it compile in.
VPTMODEL := bench/vptmodel.c
VPTMODEL_USERS := $(BUILD)/bench/spmv $(BUILD)/bench/vptsim $(BUILD)/tests/t_vpt_model \
                  $(BUILD)/tests/t_vpt_sim
BENCH_SRC := $(filter-out $(VPTMODEL),$(wildcard bench/*.c))
BENCH_BIN := $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)
EXAMPLE  := $(BUILD)/examples/example
# src/compat holds the stand-ins for MPI calls that SMPI lacks: compiled
# into the SMPI build only, so that the MPICH and Open MPI builds are the
# same objects with or without it.
ifneq ($(MPI),smpi)
  LIB_OBJ := $(filter-out $(BUILD)/obj/src/compat/%,$(LIB_OBJ))
endif

.PHONY: all lib tests check asan bench bench-scale install installcheck verify-big deps have-mpi clean examples
all: lib
lib: $(BUILD)/libisocoll.a $(BUILD)/libisocoll.so

$(BUILD)/obj/%.o: %.c $(LIB_HDR) | have-mpi
	@mkdir -p $(@D)
	$(MPICC) $(LIBCFLAGS) -c $< -o $@

$(BUILD)/libisocoll.a: $(LIB_OBJ)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/libisocoll.so: $(LIB_OBJ)
	$(MPICC) -shared -Wl,-soname,$(SONAME) $(SANFLAGS) -o $@ $^ $(LIBS)
	ln -sf libisocoll.so $(BUILD)/$(SONAME)

# Test programs link the static library (and the stencil library part).
$(BUILD)/tests/%: tests/%.c $(TEST_HDR) $(STENCIL_LIB) $(STENCIL_HDR) $(BUILD)/libisocoll.a
	@mkdir -p $(@D)
	$(MPICC) $(ALLCFLAGS) -Istencil $(EXTRA_CFLAGS) $< $(EXTRA_SRC) $(STENCIL_LIB) -o $@ $(BUILD)/libisocoll.a $(LIBS) -lm

$(BUILD)/bench/%: bench/%.c $(wildcard bench/*.h) $(STENCIL_LIB) $(STENCIL_HDR) $(BUILD)/libisocoll.a
	@mkdir -p $(@D)
	$(MPICC) $(ALLCFLAGS) $(BENCH_CFLAGS) -Istencil $< $(EXTRA_SRC) $(STENCIL_LIB) -o $@ $(BUILD)/libisocoll.a $(BENCH_LIBS) $(LIBS) -lm

$(VPTMODEL_USERS): EXTRA_SRC = $(VPTMODEL)
$(VPTMODEL_USERS): EXTRA_CFLAGS = -Ibench
$(VPTMODEL_USERS): $(VPTMODEL) bench/vptmodel.h
# tests/t_mailbox_cc runs bench/mailbox_cc.h's algorithm on bench/rmat.h's edges
$(BUILD)/tests/t_mailbox_cc: bench/mailbox_cc.h bench/rmat.h bench/matrix.h

# bench/*.h are shared by several programs (bench/matrix.h: the Matrix Market
# reader).  METIS (libmetis-dev, in DEPS_PKGS) gives bench/spmv and
# bench/vptsim their graph partitioning when its header is there; without it
# they build all the same and say so when asked to partition with METIS.
METIS_FOUND := $(wildcard /usr/include/metis.h)
$(BUILD)/bench/spmv $(BUILD)/bench/vptsim: BENCH_CFLAGS = $(if $(METIS_FOUND),-DISO_HAVE_METIS)
$(BUILD)/bench/spmv $(BUILD)/bench/vptsim: BENCH_LIBS = $(if $(METIS_FOUND),-lmetis)

# isobench's peer competitors (bench/peer.h, bench/README.md "The peer"):
# PEER=DIR with DIR/include/tuwcartesians.h and DIR/lib/libtuwcartesians.a,
# built outside the repository with this MPI.  $(BUILD)/bench/peer-dir
# records the PEER of the last build, so that giving or changing it rebuilds.
PEER ?=
$(BUILD)/bench/isobench: BENCH_CFLAGS = $(if $(PEER),-DISO_BENCH_PEER -DISO_BENCH_PEER_DIR='"$(PEER)"' -I$(PEER)/include)
$(BUILD)/bench/isobench: BENCH_LIBS = $(if $(PEER),$(PEER)/lib/libtuwcartesians.a)
$(BUILD)/bench/isobench: $(BUILD)/bench/peer-dir
# sdde's MPI Advance competitors (bench/advance.h, bench/README.md "sdde"):
# ADVANCE=DIR with DIR/include/locality_aware.h and DIR/lib/liblocality_aware.a,
# built outside the repository with this MPI (a C++ library: -lstdc++, and
# Open MPI's mpi.h brings its C++ bindings into C++ code: -lmpi_cxx).
ADVANCE ?=
ADVANCE_LIBS = -lstdc++ $(if $(filter openmpi,$(MPI)),-lmpi_cxx)
$(BUILD)/bench/sdde: BENCH_CFLAGS = $(if $(ADVANCE),-DISO_BENCH_ADVANCE -I$(ADVANCE)/include)
$(BUILD)/bench/sdde: BENCH_LIBS = $(if $(ADVANCE),$(ADVANCE)/lib/liblocality_aware.a $(ADVANCE_LIBS))
$(BUILD)/bench/sdde: $(BUILD)/bench/advance-dir
$(BUILD)/bench/advance-dir: FORCE
	@mkdir -p $(@D)
	@echo '$(ADVANCE)' | cmp -s - $@ || echo '$(ADVANCE)' > $@
$(BUILD)/bench/peer-dir: FORCE
	@mkdir -p $(@D)
	@echo '$(PEER)' | cmp -s - $@ || echo '$(PEER)' > $@
FORCE:

$(BUILD)/stencil/isostencil: stencil/isostencil.c bench/bench.h $(STENCIL_LIB) $(STENCIL_HDR) $(BUILD)/libisocoll.a
	@mkdir -p $(@D)
	$(MPICC) $(ALLCFLAGS) -Istencil $(filter %.c %.a,$^) -o $@ $(LIBS) -lm

$(EXAMPLE): examples/example.c $(BUILD)/libisocoll.a
	@mkdir -p $(@D)
	$(MPICC) $(ALLCFLAGS) $^ -o $@ $(LIBS)

tests: $(TEST_BIN) $(if $(wildcard stencil/isostencil.c),$(BUILD)/stencil/isostencil)
examples: $(EXAMPLE)

# Every test program runs at the rank counts named in its "NPROCS:" line,
# once per algorithm in ISO_TEST_ALGORITHMS (ALG:MODE also sets the
# combining mode, pack or datatype), with verification switched on.  The
# two MPI libraries run the combining algorithms in opposite modes, so CI
# (which runs both) covers every algorithm in every mode.
ifeq ($(MPI),openmpi)
ISO_TEST_ALGORITHMS ?= direct dimwise:datatype bruck:pack auto
else
ISO_TEST_ALGORITHMS ?= direct dimwise:pack bruck:datatype auto
endif
ifneq ($(MPI),smpi)
check:
	@$(MAKE) --no-print-directory deps
	@$(MAKE) --no-print-directory tests
	python3 bench/run --self-test
	BUILD=$(BUILD) MPIEXEC="$(MPIEXEC)" ISO_TEST_ALGORITHMS="$(ISO_TEST_ALGORITHMS)" \
	  prove -f -e 'sh tests/tap-mpi' $(TEST_SRC)
else
# make check MPI=smpi: correctness at scale (DESIGN.md, "SimGrid's SMPI").
# The oracle-checked programs SMPI_CHECK_TESTS at SMPI_CHECK_NPROCS
# simulated ranks with every algorithm entry, SMPI_CHECK_LARGE at
# SMPI_CHECK_LARGE_NPROCS with SMPI_CHECK_ALGS, SMPI_CHECK_GRAPH (the
# graph and sparse programs: their algorithms are looped over inside) at
# SMPI_CHECK_LARGE_NPROCS too, and SMPI_CHECK_BIG at SMPI_CHECK_BIG_NPROCS
# (its cases SMPI_CHECK_BIG_CASES); SMPI_CHECK_OWN at their own NPROCS
# lines: the programs that lean on src/compat's nonblocking barrier and
# allreduce (t_mailbox at 100 ranks costs over 10 min of CPU).  The dense
# graph pattern is capped at ISO_TEST_DENSE_DEGREE destinations (tests/graph.h).  SMPI_CHECK_GRAPH
# runs with SMPI_CHECK_GRAPH_FLAGS: every send a rendezvous (SimGrid walks
# one global list of detached sends at each completion, quadratic in the
# sends in flight: t_vpt at 256 over 70 s of CPU with it, unfinished,
# 36 s without).  A rendezvous for every send is also the stricter test: a
# program relying on eager buffering would hang.  SMPI_CHECK_NPROCS=
# (empty) runs SMPI_CHECK_TESTS at their own NPROCS lines instead.  The
# timeout is wall time: t_sparse at 256 needs 4-6 min of CPU, and on a
# loaded 2-core machine (load 10) it was stopped at 900 s with 9 of its 10
# results in.
SMPI_CHECK_TESTS  ?= t_alltoall t_stencil t_graph t_vpt t_sparse
SMPI_CHECK_NPROCS ?= 64
SMPI_CHECK_LARGE  ?= t_alltoall t_stencil t_nbcoll
SMPI_CHECK_LARGE_NPROCS ?= 256
SMPI_CHECK_ALGS   ?= auto
SMPI_CHECK_GRAPH  ?= t_graph t_vpt t_sparse
SMPI_CHECK_GRAPH_FLAGS ?= --cfg=smpi/send-is-detached-thresh:0
SMPI_CHECK_BIG    ?= t_alltoall
SMPI_CHECK_BIG_NPROCS ?= 1024
SMPI_CHECK_BIG_CASES  ?= 1-12
SMPI_CHECK_OWN    ?= t_nbcoll t_mailbox t_verify
SMPI_CHECK_ENV = BUILD=$(BUILD) MPIEXEC="$(MPIEXEC)" ISO_TEST_DENSE_DEGREE=16 ISO_TEST_TIMEOUT=1800
check:
	@$(MAKE) --no-print-directory deps
	@$(MAKE) --no-print-directory \
	  $(patsubst %,$(BUILD)/tests/%,$(sort $(SMPI_CHECK_TESTS) $(SMPI_CHECK_LARGE) $(SMPI_CHECK_GRAPH) $(SMPI_CHECK_BIG) $(SMPI_CHECK_OWN)))
	$(SMPI_CHECK_ENV) ISO_TEST_ALGORITHMS="$(ISO_TEST_ALGORITHMS)" ISO_TEST_NPROCS="$(SMPI_CHECK_NPROCS)" \
	  prove -f -e 'sh tests/tap-mpi' $(SMPI_CHECK_TESTS:%=tests/%.c)
	$(if $(SMPI_CHECK_LARGE),$(SMPI_CHECK_ENV) ISO_TEST_ALGORITHMS="$(SMPI_CHECK_ALGS)" \
	  ISO_TEST_NPROCS="$(SMPI_CHECK_LARGE_NPROCS)" \
	  prove -f -e 'sh tests/tap-mpi' $(SMPI_CHECK_LARGE:%=tests/%.c))
	$(if $(SMPI_CHECK_GRAPH),$(SMPI_CHECK_ENV) SMPI_FLAGS="$(SMPI_CHECK_GRAPH_FLAGS)" \
	  ISO_TEST_NPROCS="$(SMPI_CHECK_LARGE_NPROCS)" \
	  prove -f -e 'sh tests/tap-mpi' $(SMPI_CHECK_GRAPH:%=tests/%.c))
	$(if $(SMPI_CHECK_BIG),$(SMPI_CHECK_ENV) ISO_TEST_ALGORITHMS="$(SMPI_CHECK_ALGS)" \
	  ISO_TEST_NPROCS="$(SMPI_CHECK_BIG_NPROCS)" ISO_TEST_CASES="$(SMPI_CHECK_BIG_CASES)" \
	  prove -f -e 'sh tests/tap-mpi' tests/$(SMPI_CHECK_BIG).c)
	$(if $(SMPI_CHECK_OWN),$(SMPI_CHECK_ENV) ISO_TEST_ALGORITHMS="$(ISO_TEST_ALGORITHMS)" \
	  prove -f -e 'sh tests/tap-mpi' $(SMPI_CHECK_OWN:%=tests/%.c))
endif

ASAN_ENV := ASAN_OPTIONS=detect_leaks=1:fast_unwind_on_malloc=0 \
  LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp UBSAN_OPTIONS=print_stacktrace=1
# The sanitizer run covers every executor path (direct ops; combining ops,
# which dimwise and bruck share, packed and in datatype mode) to keep CI
# short; ASAN_ALGORITHMS overrides.
ASAN_ALGORITHMS ?= direct bruck:pack dimwise:datatype
asan:
	$(ASAN_ENV) $(MAKE) check BUILD=build/asan OPT="-O1 -g" ISO_TEST_ALGORITHMS="$(ASAN_ALGORITHMS)" \
	  SANFLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"

# The default series of bench/run (about five minutes; bench/README.md):
# NP= ranks per launch (default 2 with MPICH, 4 with Open MPI), MPI= the
# library, BENCH_ARGS= further bench/run options (--series full, ...),
# PEER= the peer built for this MPI (isobench's peer competitors; --series versus-mpi-peer).
bench:
	@$(MAKE) --no-print-directory deps
	@$(MAKE) --no-print-directory $(BENCH_BIN) $(BUILD)/stencil/isostencil $(EXAMPLE)
	BUILD=$(BUILD) python3 bench/run --mpi $(MPI) $(if $(NP),--np $(NP)) $(BENCH_ARGS)

# The scale series: simulated on bench/platforms with the SMPI build, whatever
# MPI says (BENCH_ARGS: e.g. --platforms bgq --ks 64,256 --parts iso).
bench-scale:
	@$(MAKE) --no-print-directory MPI=smpi deps
	@$(MAKE) --no-print-directory MPI=smpi build/smpi/bench/isobench build/smpi/bench/spmv build/smpi/bench/sdde
	python3 bench/run --series scale --build build/smpi $(BENCH_ARGS)

install: lib
	install -d $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 644 include/isocoll.h $(DESTDIR)$(PREFIX)/include/
	install -m 644 $(BUILD)/libisocoll.a $(DESTDIR)$(PREFIX)/lib/lib$(LIBNAME).a
	install -m 755 $(BUILD)/libisocoll.so $(DESTDIR)$(PREFIX)/lib/lib$(LIBNAME).so.$(VERSION)
	cd $(DESTDIR)$(PREFIX)/lib && ln -sf lib$(LIBNAME).so.$(VERSION) $(SONAME) && \
	  ln -sf $(SONAME) lib$(LIBNAME).so && ln -sf lib$(LIBNAME).so libisocoll.so && \
	  ln -sf lib$(LIBNAME).a libisocoll.a
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' -e 's|@LIBNAME@|$(LIBNAME)|' \
	  -e 's|@MPI@|$(MPI)|' -e 's|@MPIPC@|$(MPIPC)|' isocoll.pc.in \
	  > $(DESTDIR)$(PREFIX)/lib/pkgconfig/$(LIBNAME).pc
	cp $(DESTDIR)$(PREFIX)/lib/pkgconfig/$(LIBNAME).pc $(DESTDIR)$(PREFIX)/lib/pkgconfig/isocoll.pc

# An outside program built against the installed copy through pkg-config:
# its library is found by the SONAME of this MPI's flavor.
installcheck:
	rm -rf $(BUILD)/inst && $(MAKE) --no-print-directory install PREFIX=$(CURDIR)/$(BUILD)/inst
	$(MPICC) examples/example.c $$(PKG_CONFIG_PATH=$(CURDIR)/$(BUILD)/inst/lib/pkgconfig \
	  pkg-config --cflags --libs $(LIBNAME)) -Wl,-rpath,$(CURDIR)/$(BUILD)/inst/lib -o $(BUILD)/inst/example
	readelf -d $(BUILD)/inst/example | grep -q 'NEEDED.*\[$(SONAME)\]' || \
	  { echo "installcheck: example does not need $(SONAME)"; exit 1; }
	PKG_CONFIG_PATH=$(CURDIR)/$(BUILD)/inst/lib/pkgconfig pkg-config --print-requires isocoll | grep -q '$(MPIPC)'
	$(MPIEXEC) -n 4 $(BUILD)/inst/example

# The offline schedule verifier on large tori (p = 16384).
verify-big: tests
	BUILD=$(BUILD) MPIEXEC="$(MPIEXEC)" sh tests/verify_big.sh

# Dependencies: `make deps` installs them when missing (as root) or says
# exactly what to run; building only checks that the compiler is there.
have-mpi:
	@command -v $(firstword $(MPICC)) >/dev/null 2>&1 || { \
	  echo "isocoll: $(firstword $(MPICC)) not found; run 'make deps' (as root) or:"; \
	  echo "  sudo apt-get update && sudo apt-get install -y $(DEPS_PKGS)"; exit 1; }

deps:
	@missing=$$(for p in $(DEPS_PKGS) perl make gcc; do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -z "$$missing" ]; then echo "dependencies present"; \
	elif [ "$$(id -u)" = 0 ]; then \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(DEPS_PKGS) perl make gcc; \
	else \
	  echo "isocoll needs: $$missing"; \
	  echo "run: sudo apt-get update && sudo apt-get install -y $(DEPS_PKGS)"; exit 1; \
	fi

clean:
	rm -rf build

# ---- SimGrid's SMPI (MPI=smpi) ------------------------------------------------
ifeq ($(MPI),smpi)
# isomem declares malloc through <malloc.h>: without SMPI's malloc macros
# (it measures one process's memory, which in the simulator is all ranks')
$(BUILD)/bench/isomem: SMPI_CFLAGS += -DSMPI_NO_OVERRIDE_MALLOC
endif
