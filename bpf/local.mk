# bpf: the BPF programs ms-collect loads, each a .bpf.c compiled by clang
# for the bpf target into an object that bpftool turns into a skeleton
# header (the object embedded in C), and a .h of the types both sides share.
# Only ms-collect links libbpf: the loader (libcommon/perf/bpfload.c) is in
# libcommon.a, and a program that calls nothing of it does not link it.
BPF_CFLAGS = -target bpf -O2 -g -D__TARGET_ARCH_x86 -I$(srcdir)/bpf $(BPF_MULTIARCH_INCLUDE)
BPF_SKELETONS = bpf/sampler.skel.h
BUILT_SOURCES += $(BPF_SKELETONS)
CLEANFILES += bpf/sampler.bpf.o $(BPF_SKELETONS)
EXTRA_DIST += bpf/sampler.bpf.c bpf/sampler.h bpf/python.bpf.h bpf/pywindow.h

bpf/sampler.bpf.o: $(srcdir)/bpf/sampler.bpf.c $(srcdir)/bpf/sampler.h \
		$(srcdir)/bpf/python.bpf.h $(srcdir)/bpf/pywindow.h
	$(AM_V_GEN)$(MKDIR_P) bpf && $(CLANG) $(BPF_CFLAGS) -c $(srcdir)/bpf/sampler.bpf.c -o $@

bpf/sampler.skel.h: bpf/sampler.bpf.o
	$(AM_V_GEN)$(BPFTOOL) gen skeleton bpf/sampler.bpf.o name ms_sampler > $@.tmp && mv $@.tmp $@

AM_CPPFLAGS += -I$(top_builddir)

# The loader and the pure pieces ms-decode and the tests use.
libcommon_a_SOURCES += \
	libcommon/perf/bpfload.c libcommon/perf/bpfload.h \
	libcommon/perf/bpfrecord.c libcommon/perf/bpfrecord.h \
	libcommon/perf/pidns.c libcommon/perf/pidns.h
ms_collect_LDADD += $(LIBBPF_LIBS)
AM_CFLAGS += $(LIBBPF_CFLAGS)

UNIT_TESTS += tests/unit/bpfrecord-test
tests_unit_bpfrecord_test_SOURCES = tests/unit/bpfrecord-test.c
tests_unit_bpfrecord_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_bpfrecord_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)
libcommon/perf/bpfload.$(OBJEXT): bpf/sampler.skel.h
