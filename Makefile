# memfit - does a transformer training run fit in GPU memory?
#
#   make            build ./memfit (objects in build/)
#   make test       unit tests (cmocka) and command-line tests
#   make report     install what is missing, build, render configs/examples.csv into out/report.pdf
#   make asan       the whole suite under AddressSanitizer + UBSan
#   make valgrind   the whole suite under valgrind
#   make deps       install the Debian packages the project needs (only the missing ones)
#   make install    PREFIX=/usr/local DESTDIR= (the program, its data, the manual page and the
#                   bash completion)
#   make bench      benchmarks (ratios against a reference measured in the same run)
#   make validate   re-measure the activation and whole-step fixtures with PyTorch (slow)
#   make format     clang-format every C file (make format-check: fail on a diff, as CI does)
#   make fuzz       libFuzzer on the CSV, the templates, config.json files and the whole
#                   pipeline (clang; FUZZ_SECONDS=60 each)
#   WERROR=1        warnings are errors

.SUFFIXES:

PREFIX  ?= /usr/local
BINDIR  ?= $(PREFIX)/bin
DATADIR ?= $(PREFIX)/share/memfit
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
BUILD   ?= build

CC      ?= cc
CSTD     = -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE
WARN     = -Wall -Wextra -Wshadow -Wconversion -Wstrict-prototypes -Wmissing-prototypes -Wvla
# -O3: eval about 3% faster than -O2 (bench/eval_throughput.py, the ladder mix).
OPT     ?= -O3 -g
# Copies of a size known only at run time through the C library's memcpy/memset, not inline
# `rep movs`/`rep stos`, whose start-up cost dominated short copies such as a name (GCC on
# x86; eval 6% faster); nothing where the compiler lacks the option.
STRINGOP := $(shell $(CC) -mstringop-strategy=libcall -E -x c /dev/null >/dev/null 2>&1 && \
              echo -mstringop-strategy=libcall)
# Profile-guided optimisation (GCC 11 on, PGO=1 where the compiler has -fprofile-partial-training
# and the -dumpbase of GCC 11's auxiliary names):
# every object is first built instrumented in $(BUILD)/pgo, tools/pgo-train.sh runs that memfit
# on a generated sweep (eval, search), and the objects of $(BUILD) are compiled with its counts:
# eval 13-15% faster on one core (bench/eval_throughput.py, both mixes). PGO=0: one pass
# (make asan; the quicker loop while developing, as any change to a source rebuilds both).
PGO_CAN := $(shell $(CC) -fprofile-partial-training -dumpbase-ext .c -E -x c /dev/null \
              >/dev/null 2>&1 && echo 1)
PGO     ?= $(if $(PGO_CAN),1,0)
PKGS     = cairo freetype2
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
TEST_CFLAGS := $(shell pkg-config --cflags cmocka 2>/dev/null)
TEST_LIBS   := $(shell pkg-config --libs cmocka 2>/dev/null || echo -lcmocka)
SAN     ?=
ifeq ($(WERROR),1)
WARN    += -Werror
endif
ALL_CFLAGS = $(CSTD) $(WARN) $(OPT) $(STRINGOP) $(SAN) $(PKG_CFLAGS) -Isrc -DMEMFIT_DATADIR='"$(DATADIR)"' $(CFLAGS)
LIBS       = -lhpdf -lcsv -ljansson $(PKG_LIBS) -lm -pthread

# Sources are found by folder (doc/architecture.md): src/PART/*.c, each test tests/PART/test_*.c.
PARTS    := base model plan input draw report cli
SRC      := $(sort $(foreach p,$(PARTS),$(wildcard src/$(p)/*.c)))
LIB_SRC  := $(filter-out src/cli/main.c,$(SRC))
LIB_OBJ  := $(LIB_SRC:src/%.c=$(BUILD)/%.o)
TEST_SRC := $(sort $(wildcard tests/*/test_*.c))
TEST_BIN := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
HDR      := $(wildcard src/*/*.h tests/*/*.h)
TEST_INC := -Itests/support -Itests/validation -Itests/fuzz -Itests/tools

FORMAT_SRC = $(sort $(wildcard src/*/*.[ch] tests/*/*.[ch]))

MEMFIT   = $(BUILD)/memfit
PNGCMP   = $(BUILD)/tests/pngcmp

all: $(MEMFIT) memfit

memfit: $(MEMFIT)
	@if [ "$(BUILD)" = build ]; then cp $(MEMFIT) memfit; fi

ifeq ($(PGO),1)
PGO_DIR   = $(BUILD)/pgo
PGO_STAMP = $(PGO_DIR)/profile.stamp
PGO_USE   = -fprofile-use -fprofile-partial-training

# The instrumented build and its training run. Its objects take the auxiliary names of the
# real ones (-dumpbase $(BUILD)/PART/NAME, folder included: GCC then ignores -dumpdir): the
# counts land beside the objects they steer, and GCC's profile ids of static functions, which
# include that name, match.
$(PGO_DIR)/%.o: src/%.c $(HDR)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -fprofile-generate -fprofile-update=atomic -dumpbase $(BUILD)/$* \
	  -c -o $@ $<

$(PGO_DIR)/memfit: $(SRC:src/%.c=$(PGO_DIR)/%.o)
	$(CC) $(ALL_CFLAGS) -fprofile-generate -o $@ $^ $(LIBS)

$(PGO_STAMP): $(PGO_DIR)/memfit tools/pgo-train.sh tools/sweep.sh configs/models.csv configs/gpus.csv
	find $(BUILD) -name '*.gcda' -delete
	sh tools/pgo-train.sh $(PGO_DIR)/memfit
	touch $@
endif

$(BUILD)/%.o: src/%.c $(HDR) $(PGO_STAMP)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(PGO_USE) -c -o $@ $<

$(MEMFIT): $(LIB_OBJ) $(BUILD)/cli/main.o
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(LIBS)

# FUZZ_DATA_DIR: the fuzz targets find the shipped presets and phrases wherever they run.
$(BUILD)/tests/%: tests/%.c $(LIB_OBJ) $(HDR)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(TEST_CFLAGS) $(TEST_INC) -DFUZZ_DATA_DIR='"$(CURDIR)"' \
	  -o $@ $< $(LIB_OBJ) $(LIBS) $(TEST_LIBS)

$(BUILD)/tests/validation_summary: tests/validation/summary.c $(LIB_OBJ) $(HDR)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -Itests/validation -o $@ $< $(LIB_OBJ) $(LIBS)

# tests/cli/golden.sh compares renders with the golden PNGs through it.
$(PNGCMP): tests/tools/pngcmp.c tests/tools/pngcmp.h
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(PKG_LIBS)

# The suite first installs what is missing (a no-op when everything is there), like `make report`.
test: deps
	@$(MAKE) --no-print-directory run-tests

run-tests: $(MEMFIT) $(TEST_BIN) $(PNGCMP)
	@MEMFIT=$(MEMFIT) PNGCMP=$(PNGCMP) BUILD=$(BUILD) sh tests/run.sh $(TEST_BIN)

asan:
	$(MAKE) BUILD=build/asan OPT="-O1 -g" PGO=0 \
	  SAN="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" test

valgrind: $(MEMFIT) $(TEST_BIN) $(PNGCMP)
	@VALGRIND="valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite" \
	  MEMFIT=$(MEMFIT) PNGCMP=$(PNGCMP) BUILD=$(BUILD) sh tests/run.sh $(TEST_BIN)

report: deps
	$(MAKE) memfit
	./memfit report configs/examples.csv -o out


deps:
	@sh tools/deps.sh

bench: $(MEMFIT) $(BUILD)/bench/search_bench
	@MEMFIT=$(MEMFIT) BUILD=$(BUILD) sh bench/run.sh

# bench/search.sh times memfit search against the brute force of the tests through it.
$(BUILD)/bench/search_bench: bench/search_bench.c $(LIB_OBJ) $(HDR)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(TEST_INC) -o $@ $< $(LIB_OBJ) $(LIBS)

# Re-measures the fixtures (activations.csv, and modern.csv for the modern layers), then writes
# what the report quotes of activations.csv (src/report/validation_summary.h); then the LoRA layers
# (lora.csv) and the whole training step (step.csv), both checked against the closed forms of
# tests/validation/README.md; and per-module selective recomputation (recompute.csv).
validate: $(BUILD)/tests/validation_summary
	@sh tools/deps.sh validate
	/usr/bin/python3 tests/validation/measure.py tests/validation/activations.csv tests/validation/modern.csv
	$(BUILD)/tests/validation_summary tests/validation/activations.csv src/report/validation_summary.h
	/usr/bin/python3 tests/validation/lora.py tests/validation/lora.csv
	/usr/bin/python3 tests/validation/impl.py tests/validation/impl.csv
	/usr/bin/python3 tests/validation/step.py tests/validation/step.csv
	/usr/bin/python3 tests/validation/recompute.py tests/validation/recompute.csv

FUZZ_SECONDS ?= 60
FUZZ_FLAGS = -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -g -O1 \
             -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all $(PKG_CFLAGS) -Isrc \
             -DFUZZ_DATA_DIR='"$(CURDIR)"' -DMEMFIT_DATADIR='"$(DATADIR)"'
# Each target starts from the shipped files of its kind (read only) and keeps what it finds in
# build/fuzz/corpus-NAME.
fuzz:
	@sh tools/deps.sh fuzz
	@mkdir -p build/fuzz
	for t in tests/fuzz/fuzz_*.c; do \
	  n=$$(basename $$t .c); \
	  case $$n in fuzz_csv|fuzz_pipeline) seeds=configs;; fuzz_template) seeds=templates;; \
	    *) seeds=;; esac; \
	  mkdir -p build/fuzz/corpus-$$n; \
	  clang $(FUZZ_FLAGS) -o build/fuzz/$$n $$t $(LIB_SRC) $(LIBS) || exit 1; \
	  build/fuzz/$$n -max_total_time=$(FUZZ_SECONDS) -max_len=4096 build/fuzz/corpus-$$n \
	    $$seeds || exit 1; \
	done

golden-update: $(MEMFIT) $(TEST_BIN) $(PNGCMP)
	@MEMFIT=$(MEMFIT) PNGCMP=$(PNGCMP) GOLDEN_UPDATE=1 sh tests/run.sh $(TEST_BIN)

install: $(MEMFIT)
	mkdir -p $(DESTDIR)$(BINDIR) $(DESTDIR)$(DATADIR)/configs $(DESTDIR)$(DATADIR)/templates \
	  $(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(BASHCOMPDIR)
	cp $(MEMFIT) $(DESTDIR)$(BINDIR)/memfit
	cp doc/memfit.1 $(DESTDIR)$(PREFIX)/share/man/man1/memfit.1
	cp doc/memfit.bash $(DESTDIR)$(BASHCOMPDIR)/memfit
	cp configs/*.csv $(DESTDIR)$(DATADIR)/configs/
	if ls templates/*.tmpl >/dev/null 2>&1; then cp templates/*.tmpl $(DESTDIR)$(DATADIR)/templates/; fi

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/memfit $(DESTDIR)$(PREFIX)/share/man/man1/memfit.1 \
	  $(DESTDIR)$(BASHCOMPDIR)/memfit
	rm -rf $(DESTDIR)$(DATADIR)

format:
	clang-format -i $(FORMAT_SRC)

# CI: fails when `make format` would change a file.
format-check:
	clang-format --dry-run -Werror $(FORMAT_SRC)

clean:
	rm -rf build memfit

.PHONY: all test run-tests asan valgrind report deps bench validate golden-update install uninstall fuzz \
        format format-check clean memfit
