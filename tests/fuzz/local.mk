# libFuzzer targets, one per parser of untrusted bytes (FUZZ_TARGETS, each
# tests/fuzz/NAME.c): `make fuzz`, then for example
#   tests/fuzz/fuzz-pprof -close_fd_mask=2 -max_total_time=60 WORKDIR $(srcdir)/tests/fuzz/corpus/pprof
# Not part of `make check` (each layer replays its committed corpus there).
# Every libcommon source is built again with clang and the sanitizers,
# under tests/fuzz/obj/.
FUZZ_TARGETS = tests/fuzz/fuzz-pprof tests/fuzz/fuzz-folded
FUZZ_TARGETS += tests/fuzz/fuzz-decode tests/fuzz/fuzz-stream
FUZZ_TARGETS += tests/fuzz/fuzz-unwind tests/fuzz/fuzz-cfirows
FUZZ_TARGETS += tests/fuzz/fuzz-capture tests/fuzz/fuzz-prove
FUZZ_TARGETS += tests/fuzz/fuzz-perfmap tests/fuzz/fuzz-rows
FUZZ_TARGETS += tests/fuzz/fuzz-bpfrecord
FUZZ_CC = clang
# UBSan's findings abort as ASan's do: printed only, -close_fd_mask=2 hid them.
FUZZ_CFLAGS = -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined \
	-fno-sanitize-recover=undefined
FUZZ_OBJDIR = tests/fuzz/obj
FUZZ_OBJS = $(patsubst %.c,$(FUZZ_OBJDIR)/%.o,$(filter %.c,$(libcommon_a_SOURCES))) \
	$(FUZZ_OBJDIR)/formats/pprof/profile.pb-c.o $(FUZZ_OBJDIR)/tests/fuzz/fuzz-common.o \
	$(FUZZ_OBJDIR)/tests/fuzz/fuzz-io.o
FUZZ_SYSLIBS = $(filter-out libcommon.a,$(MS_LIBS)) $(LIBBPF_LIBS) $(ZLIB_LIBS) $(LIBS)
FUZZ_COMPILE = $(FUZZ_CC) $(FUZZ_CFLAGS) $(DEFS) $(DEFAULT_INCLUDES) $(AM_CPPFLAGS) $(CPPFLAGS) \
	$(AM_CFLAGS) -Wno-unknown-warning-option

$(FUZZ_OBJDIR)/%.o: %.c $(PPROF_GEN)
	@$(MKDIR_P) $(@D)
	$(AM_V_CC)$(FUZZ_COMPILE) -fsanitize=fuzzer-no-link -c -o $@ $<

$(FUZZ_TARGETS): tests/fuzz/%: $(FUZZ_OBJDIR)/tests/fuzz/%.o $(FUZZ_OBJS)
	$(AM_V_CCLD)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $^ $(FUZZ_SYSLIBS)

fuzz: $(FUZZ_TARGETS)
.PHONY: fuzz
CLEANFILES += $(FUZZ_TARGETS)

clean-local: clean-fuzz
clean-fuzz:
	-rm -rf $(FUZZ_OBJDIR)
.PHONY: clean-fuzz
