# d9prof - one non-recursive GNU Makefile. `make V=1` prints commands.
#
#   make            build the shim, the CLI and the examples into build/
#   make demo       install missing packages, build, record the demo runtime
#   make demo-tokio the same for the Tokio demo service (examples/tokio)
#   make check      unit tests, sanitizer tests of the shim, end-to-end tests
#   make bench      benchmarks (not part of check)
#   make install    PREFIX=/usr/local DESTDIR=

PREFIX	?= /usr/local
BINDIR	?= $(PREFIX)/bin
LIBDIR	?= $(PREFIX)/lib
INCDIR	?= $(PREFIX)/include
MANDIR	?= $(PREFIX)/share/man
PCDIR	?= $(LIBDIR)/pkgconfig

B	:= build
CC	?= cc
SANCC	?= clang
# the one version: MAJOR.MINOR from the public header, then the patch
VERSION	:= $(shell awk '/define D9PROF_VERSION_MAJOR/ {a = $$3} \
	/define D9PROF_VERSION_MINOR/ {b = $$3} END {print a "." b}' include/d9prof.h).0

ifeq ($(V),1)
Q :=
else
Q := @
endif

OPT	?= -O2
CFLAGS	?= $(OPT) -g
BASE_CFLAGS := -std=gnu11 -fno-omit-frame-pointer -Wall -Wextra -Wshadow \
	-Wno-unused-parameter -Wno-missing-field-initializers -D_GNU_SOURCE \
	-I. -Iinclude -MMD -MP -DD9_VERSION=\"$(VERSION)\"
# WERROR=1 (CI sets it): every warning of every build of ours fails it
BASE_CFLAGS += $(if $(filter 1,$(WERROR)),-Werror)
ALL_CFLAGS = $(BASE_CFLAGS) $(CFLAGS)
# libcurl is not among them: store/s3.c loads it at its first use
CORE_LIBS := -lpfm -lbpf -ldw -lelf -lzstd -lz -liberty -lpthread -lm
CRITERION_LIBS := -lcriterion
# the CLI alone: `d9prof top`'s screen
CLI_LIBS := -lncursesw

.DELETE_ON_ERROR:
.SECONDARY:
.SUFFIXES:
.PHONY: all demo demo-tokio tokio-demo-bin zerocode-bin check check-unit check-sanitize check-rust \
	check-e2e check-golden check-hostile hostile-bin check-fuzz fuzz bench install \
	check-house \
	uninstall clean deps format check-format

# ---- sources -------------------------------------------------------------
SHIM_SRCS := $(wildcard libprof/*.c)
CORE_SRCS := $(wildcard lib/*.c kallsyms/*.c trace/*.c symbol/*.c record/*.c analysis/*.c \
	analysis/views/*.c \
	store/*.c)
CLI_SRCS  := $(wildcard cli/*.c)
EX_SRCS   := $(wildcard examples/*.c)
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
SAN_SRCS  := $(wildcard tests/sanitize/*.c)
BENCH_SRCS := $(wildcard bench/*.c)

SHIM_PIC  := $(SHIM_SRCS:%.c=$(B)/pic/%.o)
CORE_OBJS := $(CORE_SRCS:%.c=$(B)/%.o)
CLI_OBJS  := $(CLI_SRCS:%.c=$(B)/%.o)
EX_BINS   := $(EX_SRCS:examples/%.c=$(B)/examples/%)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(B)/tests/%)
SAN_BINS  := $(foreach s,asan tsan,$(SAN_SRCS:tests/sanitize/%.c=$(B)/$(s)/%))
BENCH_BINS := $(BENCH_SRCS:bench/%.c=$(B)/bench/%)

SHIM_SO   := $(B)/libd9prof.so.0
SHIM_A    := $(B)/libd9prof.a
CORE_A    := $(B)/libd9core.a
CLI       := $(B)/d9prof

all: $(B)/.deps-ok $(CLI) $(SHIM_SO) $(B)/libd9prof.so $(SHIM_A) $(EX_BINS) \
	$(B)/d9prof.pc

# ---- dependencies (Debian packages) --------------------------------------
# A build never installs anything: it says what is missing. make deps
# installs all that the build, the demos, check and bench use; make demo
# and make demo-tokio only what they need (scripts/install-deps.sh), as root.
$(B)/.deps-ok: scripts/install-deps.sh
	$(Q)mkdir -p $(B)
	$(Q)scripts/install-deps.sh --check build >&2 || { echo "d9prof: run 'make deps' to install" \
		"them (apt-get, as root), or 'make demo'" >&2; exit 1; }
	$(Q)touch $@
deps:
	scripts/install-deps.sh

# ---- a CFLAGS change rebuilds everything ---------------------------------
FLAGS_NOW := $(CC) $(ALL_CFLAGS)
$(B)/.flags: FORCE
	$(Q)mkdir -p $(B)
	$(Q)echo '$(FLAGS_NOW)' | cmp -s - $@ || echo '$(FLAGS_NOW)' > $@
FORCE:

# ---- compile -------------------------------------------------------------
$(B)/pic/%.o: %.c $(B)/.flags | $(B)/.deps-ok
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC [pic] $<")
	$(Q)$(CC) $(ALL_CFLAGS) -fPIC -fvisibility=hidden -c $< -o $@

$(B)/%.o: %.c $(B)/.flags | $(B)/.deps-ok
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) $(BANNED) -c $< -o $@

# outside lib/ and kallsyms/ (and the shim, built apart), what lib/banned.h
# bans does not compile
$(filter-out $(B)/lib/% $(B)/kallsyms/%,$(CORE_OBJS) $(CLI_OBJS)): BANNED = -include lib/banned.h \
	-Werror=implicit-function-declaration

# ---- the shim: shared (explicit export list) and static ------------------
$(SHIM_SO): $(SHIM_PIC) libprof/libd9prof.map
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) -shared -Wl,-soname,libd9prof.so.0 \
		-Wl,--version-script=libprof/libd9prof.map -o $@ $(SHIM_PIC) -lpthread
$(B)/libd9prof.so: $(SHIM_SO)
	$(Q)ln -sf libd9prof.so.0 $@
$(SHIM_A): $(SHIM_PIC)
	$(if $(Q),@echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

# ---- core libraries and the CLI ------------------------------------------
# the SVG's style and script: files of their own, C strings at build time
$(B)/gen/%.h: analysis/% scripts/cstring.sh
	@mkdir -p $(dir $@)
	$(Q)scripts/cstring.sh $< > $@
$(B)/analysis/flame_svg.o: $(B)/gen/flame_svg.css.h $(B)/gen/flame_svg.js.h
$(B)/analysis/flame_svg.o: ALL_CFLAGS += -I$(B)/gen

# the BPF scheduler programs (record/bpf/): clang's BPF target, CO-RE (no
# vmlinux.h: the fields they read are declared in the source), and the
# skeleton that embeds them in the recorder
BPFTOOL ?= $(firstword $(wildcard /usr/sbin/bpftool /usr/bin/bpftool) bpftool)
BPF_ARCH := $(patsubst x86_64,x86,$(patsubst aarch64,arm64,$(shell uname -m)))
$(B)/bpf/%.bpf.o: record/bpf/%.bpf.c record/bpf/%.h | $(B)/.deps-ok
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  BPF     $<")
	$(Q)clang -g -O2 -Wall $(if $(filter 1,$(WERROR)),-Werror) -target bpf \
		-D__TARGET_ARCH_$(BPF_ARCH) \
		-I/usr/include/$(shell $(CC) -print-multiarch) -c $< -o $@
$(B)/bpf/sched.bpf.o: record/bpf/tokio_tag.h
$(B)/gen/%.skel.h: $(B)/bpf/%.bpf.o
	@mkdir -p $(dir $@)
	$(Q)$(BPFTOOL) gen skeleton $< name d9_$* > $@
$(B)/record/sched_bpf.o: $(B)/gen/sched.skel.h
$(B)/record/sched_bpf.o: ALL_CFLAGS += -I$(B)/gen
$(B)/record/tokio_rec.o: $(B)/gen/tokio_tag.skel.h
$(B)/record/tokio_rec.o: ALL_CFLAGS += -I$(B)/gen

$(CORE_A): $(CORE_OBJS)
	$(if $(Q),@echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^
$(CLI): $(CLI_OBJS) $(CORE_A)
	$(if $(Q),@echo "  LD      $@")
		$(Q)$(CC) $(LDFLAGS) -o $@ $(CLI_OBJS) $(CORE_A) $(CORE_LIBS) $(CLI_LIBS)

# ---- examples: frame pointers, shim linked statically --------------------
$(B)/examples/%: $(B)/examples/%.o $(SHIM_A)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) -o $@ $< $(SHIM_A) -lpthread -lm
$(B)/examples/%.o: examples/%.c $(B)/.flags | $(B)/.deps-ok
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) -O1 -fno-inline-functions-called-once -c $< -o $@

# ---- pkg-config: generated for the PREFIX at hand (install regenerates) ---
PC_SED = sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
	-e 's|@INCDIR@|$(INCDIR)|' -e 's|@VERSION@|$(VERSION)|'
$(B)/d9prof.pc: libprof/d9prof.pc.in Makefile
	@mkdir -p $(B)
	$(Q)$(PC_SED) $< > $@

# ---- tests ---------------------------------------------------------------
$(B)/tests/%: $(B)/tests/%.o $(CORE_A) $(SHIM_A)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) -o $@ $< $(CORE_A) $(SHIM_A) $(CORE_LIBS) $(CRITERION_LIBS)
$(B)/tests/%.o: tests/unit/%.c $(B)/.flags | $(B)/.deps-ok
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

# The shim under sanitizers: tests/sanitize/*.c built with the shim sources
# by clang, once with ASan+UBSan, once with TSan.
SAN_FLAGS_asan := -fsanitize=address,undefined -fno-sanitize-recover=all
SAN_FLAGS_tsan := -fsanitize=thread
# one rule for both: $(B)/SAN/PROGRAM, SAN asan or tsan
define SAN_RULE
$(B)/$(1)/%: tests/sanitize/%.c $(SHIM_SRCS) $(wildcard libprof/*.h) include/d9prof.h \
		tests/shim_recorder.h
	@mkdir -p $$(dir $$@)
	$$(if $$(Q),@echo "  CC [$(1)] $$@")
	$$(Q)$$(SANCC) $$(filter-out -MMD -MP,$$(BASE_CFLAGS)) -O1 -g $$(SAN_FLAGS_$(1)) \
		-o $$@ $$< $$(SHIM_SRCS) -lpthread
endef
$(foreach s,asan tsan,$(eval $(call SAN_RULE,$(s))))

# make check: every suite, one after the other, each whatever the others
# did (scripts/check.sh: logs in $(B)/check/, one summary line per suite,
# exit 1 if one failed). make check-SUITE runs one; check-e2e all of
# $(E2E_SCRIPTS), check-e2e-NAME one of them.
# The e2e suites come first: they sleep a lot, and meanwhile CHECK_PREBUILD
# (the unit and sanitizer tests, the ASan recorder, the fuzz targets) is
# built at nice 19, so that the suites after them find it made; load.sh,
# last of them, waits for it (scripts/check.sh: it needs the machine).
# Then the suites of CHECK_BACKGROUND run there too, at nice 19 (no
# timing in them), and their results are read in their turn. (The unit
# and sanitizer tests there too made the compile-heavy suites beside
# them twice as slow, e2e-layouts 20 s to 41 s: a loss, measured when
# nice 19 did not hold there, scripts/check.sh says why; where it holds,
# they would have only the CPU the suites leave, for tests with
# wall-clock timeouts.) Before all that, the e2e suites' own programs
# (E2E_DEPS: a Tokio build among them) are made beside format and
# golden, which time nothing; `all` first, so that no two makes build
# the same files.
CHECK_SUITES = format golden $(E2E_CHECKS:check-%=%) unit sanitize rust hostile fuzz house
CHECK_PREBUILD = $(UNIT_BINS) $(SAN_BINS) hostile-bin $(FUZZ_BINS)
CHECK_BACKGROUND = fuzz rust house
check: all
	$(Q)B=$(B) MAKE="$(MAKE)" CHECK_EARLY="$(E2E_DEPS)" CHECK_PREBUILD="$(CHECK_PREBUILD)" \
		CHECK_BACKGROUND="$(CHECK_BACKGROUND)" scripts/check.sh $(CHECK_SUITES)

# each test binary runs, whatever the others did, two at a time (they
# hold on a busy machine; half the wall time), each one's output whole and
# in order; the suite fails after
check-unit: $(UNIT_BINS)
	$(Q)d=$$(mktemp -d) && printf '%s\n' $(UNIT_BINS) | xargs -P2 -I{} sh -c \
		'{ echo "== $$1"; "$$1" --jobs=1 2>&1; echo "rc $$?"; } >"$$2/$${1##*/}.log"' \
		sh {} "$$d"; r=0; for t in $(UNIT_BINS); do l=$$d/$${t##*/}.log; \
		grep -v '^rc ' "$$l"; grep -qx 'rc 0' "$$l" || r=1; done; rm -rf "$$d"; exit $$r

check-sanitize: $(SAN_BINS)
	$(Q)r=0; for t in $(SAN_BINS); do echo "== $$t"; \
		TSAN_OPTIONS=halt_on_error=1 ASAN_OPTIONS=detect_leaks=1 $$t || r=1; done; exit $$r

# The Rust binding (bindings/rust), offline (Debian's crates,
# .cargo/config.toml), with the shim its build.rs compiles from libprof/ as
# a user's build does: its tests (features tokio and tracing), then
# rustfmt's default style and clippy with warnings as errors on it and on
# the Tokio demo. Each runs whatever the others did; each is skipped, with
# one line, only where its tool is missing.
CARGO ?= cargo
check-rust:
	$(Q)if ! $(CARGO) --version >/dev/null 2>&1; then \
		echo "check-rust: skip: no cargo on PATH"; exit 0; fi; \
	export CARGO_TARGET_DIR=$(abspath $(B))/cargo; \
	r=0; \
	(cd bindings/rust && $(CARGO) test --offline --features tokio,tracing) || r=1; \
	if ! $(CARGO) fmt --version >/dev/null 2>&1; then \
		echo "check-rust: skip: no rustfmt on PATH"; \
	else for d in bindings/rust examples/tokio; do \
		(cd $$d && $(CARGO) fmt --check) || \
		{ echo "check-rust: error: $$d is not in rustfmt's style (cargo fmt)"; r=1; }; \
	done; fi; \
	if ! $(CARGO) clippy --version >/dev/null 2>&1; then \
		echo "check-rust: skip: no clippy on PATH"; \
	else \
		(cd bindings/rust && $(CARGO) clippy --offline --all-targets \
			--features tokio,tracing -- -D warnings) || r=1; \
		(cd examples/tokio && $(CARGO) clippy --offline --all-targets \
			-- -D warnings) || r=1; \
	fi; \
	exit $$r

# runtimes of our own for the latency scenarios (tests/e2e/latency.sh)
LAT_SRCS := $(wildcard tests/e2e/latency/*.c)
LAT_BINS := $(LAT_SRCS:tests/e2e/latency/%.c=$(B)/e2e/latency/%)
$(B)/e2e/latency/%: tests/e2e/latency/%.c tests/e2e/rt.h $(SHIM_A) include/d9prof.h
	@mkdir -p $(dir $@)
	$(Q)$(CC) -O2 -g -fno-omit-frame-pointer -Wall -Wextra -Iinclude -o $@ $< $(SHIM_A) -lpthread

# the programs of tests/e2e/answers.sh (a short waker, a blocking read)
ANS_SRCS := $(wildcard tests/e2e/answers/*.c)
ANS_BINS := $(ANS_SRCS:tests/e2e/answers/%.c=$(B)/e2e/answers/%)
$(B)/e2e/answers/%: tests/e2e/answers/%.c tests/e2e/rt.h $(SHIM_A) include/d9prof.h
	@mkdir -p $(dir $@)
	$(Q)$(CC) -O2 -g -fno-omit-frame-pointer -Wall -Wextra -Iinclude -o $@ $< $(SHIM_A) -lpthread

# targets without frame pointers (tests/e2e/fpless.sh): C at -O2 with
# -fomit-frame-pointer said outright; Rust as a release build (no
# force-frame-pointers), where rustc is (the script skips without it)
FPLESS_BINS := $(B)/e2e/fpless/recurse $(B)/e2e/fpless/recurse-rs
RUSTC ?= rustc
$(B)/e2e/fpless/recurse: tests/e2e/fpless/recurse.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) -O2 -g -fomit-frame-pointer -Wall -Wextra -o $@ $<
$(B)/e2e/fpless/recurse-rs: tests/e2e/fpless/recurse.rs
	@mkdir -p $(dir $@)
	$(Q)if $(RUSTC) --version >/dev/null 2>&1; then \
		$(RUSTC) -C opt-level=3 -g -o $@ $<; \
	else echo "fpless: skip the Rust target: no rustc on PATH"; fi

# the fixed synthetic trace of the golden tests (tests/golden/run.sh)
$(B)/tests/golden/mktrace: tests/golden/mktrace.c $(CORE_A) $(B)/.flags
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) -I. -o $@ $< $(CORE_A) $(CORE_LIBS)

check-golden: all $(B)/tests/golden/mktrace
	$(Q)B=$(B) tests/golden/run.sh

# the SVG flamegraph in headless Chromium (tests/e2e/svg.sh)
SVG_GEN := $(B)/e2e/svg/gen
$(SVG_GEN): tests/e2e/svg/gen.c $(CORE_A) $(B)/.flags
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $< $(CORE_A) $(CORE_LIBS)

# the recorder, built with ASan and UBSan, against a hostile target: by
# clang with the fuzz targets' flags, in their directory, so that the core
# library is compiled with ASan once for both (a second build by gcc took
# a tenth of make check's CPU); the coverage counters fuzzer-no-link puts
# in cost the recorder a little speed, nothing the tests time
hostile-bin:
	$(Q)$(MAKE) --no-print-directory B=$(FUZZ_B) CC=clang CFLAGS="$(FUZZ_CFLAGS)" \
		LDFLAGS="$(FUZZ_SAN)" $(FUZZ_B)/d9prof
check-hostile: all hostile-bin
	$(Q)B=$(B) D9=$(abspath $(FUZZ_B))/d9prof tests/e2e/hostile.sh

# ---- fuzzing: libFuzzer targets, with clang, ASan and UBSan -----------
FUZZ_B := $(B)-fuzz
FUZZ_SAN := -fsanitize=fuzzer-no-link,address,undefined
FUZZ_CFLAGS := -O1 -g $(FUZZ_SAN) -fno-sanitize-recover=undefined
FUZZ_BINS := $(addprefix $(FUZZ_B)/fuzz_,trace kallsyms maps segment inputs export diff store \
	live parquet) \
	$(FUZZ_B)/mkseed
FUZZ_SECS ?= 60

$(FUZZ_B)/libd9core.a: $(CORE_SRCS) $(wildcard */*.h) analysis/flame_svg.css analysis/flame_svg.js
	$(Q)$(MAKE) --no-print-directory B=$(FUZZ_B) CC=clang CFLAGS="$(FUZZ_CFLAGS)" \
		$(FUZZ_B)/libd9core.a
$(FUZZ_B)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz_io.h $(FUZZ_B)/libd9core.a
	$(Q)clang -std=gnu11 $(FUZZ_CFLAGS) -fsanitize=fuzzer -I. -o $@ $< \
		$(FUZZ_B)/libd9core.a $(CORE_LIBS)
$(FUZZ_B)/mkseed: tests/fuzz/mkseed.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) -std=gnu11 -I. -o $@ $<

# make fuzz FUZZ_SECS=600: a long run; check-fuzz, a smoke run of every
# target from the seeds (the long runs are make fuzz's): 5 s per reader
# target, 2 s for inputs, export, diff, store, live and parquet: 32 s in all
fuzz: $(FUZZ_BINS) $(B)/tests/golden/mktrace
	$(Q)B=$(B) FUZZ_B=$(FUZZ_B) FUZZ_SECS=$(FUZZ_SECS) tests/fuzz/run.sh
check-fuzz: $(FUZZ_BINS) $(B)/tests/golden/mktrace
	$(Q)B=$(B) FUZZ_B=$(FUZZ_B) FUZZ_SECS=5 FUZZ_SECS_inputs=2 FUZZ_SECS_export=2 FUZZ_SECS_store=2 \
		FUZZ_SECS_diff=2 FUZZ_SECS_live=2 FUZZ_SECS_parquet=2 tests/fuzz/run.sh

# The end-to-end scripts, in the order they run; add yours here (make check
# runs each as a suite of its own, make check-e2e-NAME alone).
E2E_SCRIPTS := tests/e2e/run.sh tests/e2e/answers.sh tests/e2e/layouts.sh \
	tests/e2e/tokio.sh tests/e2e/latency.sh tests/e2e/flight.sh tests/e2e/svg.sh \
		tests/e2e/export.sh tests/e2e/diff.sh tests/e2e/fpless.sh \
	tests/e2e/outputs.sh tests/e2e/top.sh tests/e2e/fleet.sh tests/e2e/creds.sh \
	tests/e2e/scale.sh tests/e2e/tables.sh tests/e2e/zerocode.sh \
	tests/e2e/lean.sh tests/e2e/load.sh
E2E_DEPS := all tokio-demo-bin zerocode-bin $(LAT_BINS) $(ANS_BINS) $(SVG_GEN) $(FPLESS_BINS)
E2E_CHECKS = $(E2E_SCRIPTS:tests/e2e/%.sh=check-e2e-%)

# one after the other (never in parallel: they time things), all of them
check-e2e: $(E2E_DEPS)
	$(Q)r=0; for s in $(E2E_SCRIPTS); do B=$(B) $$s || r=1; done; exit $$r
check-e2e-%: $(E2E_DEPS)
	$(Q)B=$(B) tests/e2e/$*.sh

# ---- demo and benchmarks -------------------------------------------------
demo:
	$(Q)scripts/install-deps.sh demo
	$(Q)$(MAKE) --no-print-directory all
	$(Q)B=$(B) scripts/demo.sh

# The Tokio demo (examples/tokio), built by cargo offline with frame
# pointers (.cargo/config.toml); the d9prof crate's build.rs compiles the
# shim from libprof/ and links it statically, as in a user's program.
TOKIO_DEMO := $(B)/cargo/release/d9demo-tokio
tokio-demo-bin:
	$(Q)if ! $(CARGO) --version >/dev/null 2>&1; then \
		echo "tokio demo: skip: no cargo on PATH"; \
	else cd examples/tokio && CARGO_TARGET_DIR=$(abspath $(B))/cargo \
		$(CARGO) build --release --offline $(if $(Q),--quiet); fi
# Unmodified Tokio programs (tests/e2e/zerocode: no d9prof code) for the
# zero-code tests (tests/e2e/zerocode.sh), built by cargo offline as users
# build services: with frame pointers (.cargo/config.toml) in
# $(B)/zerocode/fp, and without in $(B)/zerocode/nofp (RUSTFLAGS set, even
# empty, replaces the config's rustflags): only zcapp there, which the
# tests read without frame pointers (no hyper: half the CPU of the two).
zerocode-bin:
	$(Q)if ! $(CARGO) --version >/dev/null 2>&1; then \
		echo "zerocode: skip: no cargo on PATH"; \
	else cd tests/e2e/zerocode && \
		env -u RUSTFLAGS -u CARGO_ENCODED_RUSTFLAGS CARGO_TARGET_DIR=$(abspath $(B))/zerocode/fp \
			$(CARGO) build --release --offline --features hyper $(if $(Q),--quiet) && \
		env -u CARGO_ENCODED_RUSTFLAGS RUSTFLAGS= CARGO_TARGET_DIR=$(abspath $(B))/zerocode/nofp \
			$(CARGO) build --release --offline --bin zcapp $(if $(Q),--quiet); fi
demo-tokio:
	$(Q)scripts/install-deps.sh tokio
	$(Q)$(MAKE) --no-print-directory all tokio-demo-bin
	$(Q)B=$(B) scripts/demo-tokio.sh

$(B)/bench/%: bench/%.c $(SHIM_A) $(CORE_A) $(B)/.flags
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $< $(SHIM_A) $(CORE_A) $(CORE_LIBS) -lm
bench: all $(BENCH_BINS) tokio-demo-bin zerocode-bin $(B)/e2e/fpless/recurse
	$(Q)B=$(B) scripts/bench.sh

# ---- install -------------------------------------------------------------
install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCDIR) \
		$(DESTDIR)$(PCDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man3
	install -m 755 $(CLI) $(DESTDIR)$(BINDIR)/d9prof
	install -m 755 $(SHIM_SO) $(DESTDIR)$(LIBDIR)/libd9prof.so.0
	ln -sf libd9prof.so.0 $(DESTDIR)$(LIBDIR)/libd9prof.so
	install -m 644 $(SHIM_A) $(DESTDIR)$(LIBDIR)/libd9prof.a
	install -m 644 include/d9prof.h $(DESTDIR)$(INCDIR)/d9prof.h
	$(PC_SED) libprof/d9prof.pc.in > $(DESTDIR)$(PCDIR)/d9prof.pc
	chmod 644 $(DESTDIR)$(PCDIR)/d9prof.pc
	install -m 644 man/d9prof.1 $(DESTDIR)$(MANDIR)/man1/d9prof.1
	install -m 644 man/d9prof.3 $(DESTDIR)$(MANDIR)/man3/d9prof.3

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/d9prof $(DESTDIR)$(LIBDIR)/libd9prof.so* \
		$(DESTDIR)$(LIBDIR)/libd9prof.a $(DESTDIR)$(INCDIR)/d9prof.h \
		$(DESTDIR)$(PCDIR)/d9prof.pc $(DESTDIR)$(MANDIR)/man1/d9prof.1 \
		$(DESTDIR)$(MANDIR)/man3/d9prof.3

# The project's C style is .clang-format's: make format rewrites every C
# source and header in it, check-format (a suite of make check) fails
# naming those that differ. clang-format 14 is Debian 12's.
CLANG_FORMAT ?= clang-format
FORMAT_SRCS = $(shell find include lib libprof kallsyms trace symbol record analysis store cli \
	examples tests bench -name '*.[ch]' -not -path '*/corpus/*' | sort)
format:
	$(Q)$(CLANG_FORMAT) -i $(FORMAT_SRCS)
# the house rules (docs/DESIGN.md) as numbers, from the objects and the
# sources: scripts/house.sh says each and its ceiling
check-house: all
	$(Q)B=$(B) scripts/house.sh

check-format:
	$(Q)if ! $(CLANG_FORMAT) --version >/dev/null 2>&1; then \
		echo "check-format: skip: no clang-format on PATH"; \
	else bad=$$($(CLANG_FORMAT) --dry-run -Werror $(FORMAT_SRCS) 2>&1 | \
		sed -n 's/^\([^: ]*\):[0-9]*:[0-9]*: error: code should be clang-formatted.*/\1/p' | sort -u); \
		if [ -n "$$bad" ]; then echo "check-format: not in .clang-format's style (make format):" $$bad; exit 1; fi; \
		echo "check-format: $(words $(FORMAT_SRCS)) files in .clang-format's style"; fi

clean:
	rm -rf $(B)

-include $(shell find $(B) -name '*.d' 2>/dev/null)
