# libcommon/unwind: address spaces, modules and stacks (ms-unwind).
libcommon_a_SOURCES += \
	libcommon/unwind/addrspace.c libcommon/unwind/addrspace.h \
	libcommon/unwind/unwind.c libcommon/unwind/unwind.h \
	libcommon/unwind/fp.c libcommon/unwind/stage.c \
	libcommon/unwind/interp.c libcommon/unwind/interp.h \
	libcommon/unwind/dwarf.c libcommon/unwind/dwarf.h \
	libcommon/unwind/sample.c \
	libcommon/unwind/stacktab.c libcommon/unwind/stacktab.h \
	libcommon/unwind/jit.c libcommon/unwind/jit.h \
	libcommon/unwind/jitobj.c libcommon/unwind/jitobjasm.c libcommon/unwind/jitobj.h \
	libcommon/unwind/jitobjtab.c libcommon/unwind/jitobjtab.h

bin_PROGRAMS += ms-unwind
ms_unwind_SOURCES = cmd/ms-unwind.c
ms_unwind_LDADD = $(STAGE_LIBS)
ms_unwind_LDFLAGS = $(STAGE_LINK)
man_MANS += man/ms-unwind.1

UNIT_TESTS += tests/unit/stacktab-test
tests_unit_stacktab_test_SOURCES = tests/unit/stacktab-test.c
tests_unit_stacktab_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_stacktab_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)

UNIT_TESTS += tests/unit/unwind-test
tests_unit_unwind_test_SOURCES = tests/unit/unwind-test.c tests/unit/elf-helpers.h
tests_unit_unwind_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_unwind_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)
EXTRA_tests_unit_unwind_test_DEPENDENCIES = tests/unit/data/elf-tiny$(EXEEXT)

# A tiny ELF with a known build id for the unwind and symbols unit tests,
# and a stripped copy that names its functions in .dynsym only.
TINY_CFLAGS = -O1 -fno-inline -fno-omit-frame-pointer
check_PROGRAMS += tests/unit/data/elf-tiny tests/unit/data/elf-tiny-stripped
tests_unit_data_elf_tiny_SOURCES = tests/unit/data/tiny.c
tests_unit_data_elf_tiny_CFLAGS = $(TINY_CFLAGS)
tests_unit_data_elf_tiny_LDFLAGS = -Wl,--build-id=0x0123456789abcdef0123456789abcdef01234567
tests_unit_data_elf_tiny_stripped_SOURCES = tests/unit/data/tiny.c
tests_unit_data_elf_tiny_stripped_CFLAGS = $(TINY_CFLAGS)
tests_unit_data_elf_tiny_stripped_LDFLAGS = -s -rdynamic \
	-Wl,--build-id=0x0123456789abcdef0123456789abcdef01234589

# DWARF unwinding (issue 3): unit tests over saved samples of an ELF whose
# call-frame information is written by hand, built with .eh_frame, with
# .debug_frame only, and stripped with its CFI in a separate debug file
# found by build id (and, without a build id, debug files named by
# .gnu_debuglink, with the right CRC and a wrong one, which prove nothing).
UNIT_TESTS += tests/unit/dwarf-test
tests_unit_dwarf_test_SOURCES = tests/unit/dwarf-test.c tests/unit/cfi-helpers.h tests/unit/elf-helpers.h
tests_unit_dwarf_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_dwarf_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)
EXTRA_tests_unit_dwarf_test_DEPENDENCIES = tests/unit/data/dwarf-frames$(EXEEXT) \
	tests/unit/data/dwarf-frames-stripped \
	tests/unit/data/dwarf-frames-link tests/unit/data/dwarf-frames-badlink

DWARF_FRAMES_LINK = -shared -nostdlib
DWARF_FRAMES_DBG_ID = 00112233445566778899aabbccddeeff00112234
check_PROGRAMS += tests/unit/data/dwarf-frames tests/unit/data/dwarf-frames-dbg \
	tests/unit/data/dwarf-frames-nobid
tests_unit_data_dwarf_frames_SOURCES = tests/unit/data/dwarf-frames.c
tests_unit_data_dwarf_frames_CFLAGS = -fPIC
tests_unit_data_dwarf_frames_LDFLAGS = $(DWARF_FRAMES_LINK) \
	-Wl,--build-id=0x00112233445566778899aabbccddeeff00112233
tests_unit_data_dwarf_frames_dbg_SOURCES = tests/unit/data/dwarf-frames.c
tests_unit_data_dwarf_frames_dbg_CFLAGS = -fPIC -DDEBUG_FRAME
tests_unit_data_dwarf_frames_dbg_LDFLAGS = $(DWARF_FRAMES_LINK) \
	-Wl,--build-id=0x$(DWARF_FRAMES_DBG_ID)
tests_unit_data_dwarf_frames_nobid_SOURCES = tests/unit/data/dwarf-frames.c
tests_unit_data_dwarf_frames_nobid_CFLAGS = -fPIC -DDEBUG_FRAME
tests_unit_data_dwarf_frames_nobid_LDFLAGS = $(DWARF_FRAMES_LINK) -Wl,--build-id=none

OBJCOPY = objcopy
DWARF_DEBUG_BY_ID = tests/unit/data/debug/.build-id/$(shell echo $(DWARF_FRAMES_DBG_ID) | cut -c1-2)
tests/unit/data/dwarf-frames-stripped: tests/unit/data/dwarf-frames-dbg
	@mkdir -p $(DWARF_DEBUG_BY_ID)
	$(AM_V_GEN)$(OBJCOPY) --only-keep-debug $< \
		$(DWARF_DEBUG_BY_ID)/$(shell echo $(DWARF_FRAMES_DBG_ID) | cut -c3-).debug && \
	$(OBJCOPY) --strip-debug $< $@
tests/unit/data/dwarf-frames-link: tests/unit/data/dwarf-frames-nobid
	$(AM_V_GEN)$(OBJCOPY) --only-keep-debug $< $@.debug && \
	$(OBJCOPY) --strip-debug --add-gnu-debuglink=$@.debug $< $@
tests/unit/data/dwarf-frames-badlink: tests/unit/data/dwarf-frames-nobid tests/unit/data/dwarf-frames-dbg
	$(AM_V_GEN)$(OBJCOPY) --only-keep-debug $< $@.debug && \
	$(OBJCOPY) --strip-debug --add-gnu-debuglink=$@.debug $< $@ && \
	$(OBJCOPY) --only-keep-debug tests/unit/data/dwarf-frames-dbg $@.debug
CLEANFILES += tests/unit/data/dwarf-frames-stripped tests/unit/data/dwarf-frames-link \
	tests/unit/data/dwarf-frames-link.debug tests/unit/data/dwarf-frames-badlink \
	tests/unit/data/dwarf-frames-badlink.debug \
	$(DWARF_DEBUG_BY_ID)/$(shell echo $(DWARF_FRAMES_DBG_ID) | cut -c3-).debug
EXTRA_DIST += scripts/bench/20-unwind.sh

# The cache of CFI rows per build id (cfi.c): warm answers are cold ones,
# made without libdw; a cut, corrupt or other module's cache is ignored.
UNIT_TESTS += tests/unit/cficache-test
tests_unit_cficache_test_SOURCES = tests/unit/cficache-test.c tests/unit/cfi-helpers.h \
	tests/unit/elf-helpers.h tests/unit/tmpdir.h
tests_unit_cficache_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_cficache_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)
EXTRA_tests_unit_cficache_test_DEPENDENCIES = tests/unit/data/dwarf-frames$(EXEEXT)

# The vdso's image (ms-collect's own, the stream's in ms-unwind): build id,
# CFI from memory, and images that are garbage, cut or corrupt.
UNIT_TESTS += tests/unit/vdso-test
tests_unit_vdso_test_SOURCES = tests/unit/vdso-test.c
tests_unit_vdso_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_vdso_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)

# The fuzz corpus of the DWARF unwinder (sampled states; cached CFI rows),
# replayed through the fuzz targets in `make check`.
UNIT_TESTS += tests/unit/unwind-corpus-test
tests_unit_unwind_corpus_test_SOURCES = tests/unit/unwind-corpus-test.c tests/unit/corpus-replay.h \
	tests/fuzz/fuzz.h tests/fuzz/fuzz-unwind.c tests/fuzz/fuzz-cfirows.c
tests_unit_unwind_corpus_test_CPPFLAGS = $(AM_CPPFLAGS) -DMS_FUZZ_REPLAY \
	-DMS_FUZZ_CORPUS='"$(abs_top_srcdir)/tests/fuzz/corpus"'
tests_unit_unwind_corpus_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_unwind_corpus_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)

# JIT functions in ms-unwind (unwind/jit.c): rows proved from hand-assembled
# code (tests/unit/jit-code.h) unwind frameless and frame-pointer JIT frames
# to callers in dwarf-frames; read times against mappings, exec and fork;
# latest line wins; malformed rows and pcs past the rows end with no CFI.
UNIT_TESTS += tests/unit/unwind-jit-test
tests_unit_unwind_jit_test_SOURCES = tests/unit/unwind-jit-test.c tests/unit/jit-code.h \
	tests/unit/elf-helpers.h tests/unit/elf-map.h tests/unit/jit-unwind-harness.h
tests_unit_unwind_jit_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_unwind_jit_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)
EXTRA_tests_unit_unwind_jit_test_DEPENDENCIES = tests/unit/data/dwarf-frames$(EXEEXT)

UNIT_TESTS += tests/unit/unwind-jitobj-test
tests_unit_unwind_jitobj_test_SOURCES = tests/unit/unwind-jitobj-test.c tests/unit/jitobj-image.h \
	tests/unit/elf-helpers.h tests/unit/elf-map.h tests/unit/jit-unwind-harness.h
tests_unit_unwind_jitobj_test_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_unwind_jitobj_test_CPPFLAGS = $(AM_CPPFLAGS) -DMS_SRCDIR='"$(abs_top_srcdir)"'
EXTRA_DIST += tests/unit/data/lli14-jitwork.jitobj
tests_unit_unwind_jitobj_test_LDADD = $(MS_LIBS) $(CMOCKA_LIBS)
EXTRA_tests_unit_unwind_jitobj_test_DEPENDENCIES = tests/unit/data/dwarf-frames$(EXEEXT)

# The stream ms-decode would give ms-unwind for JIT code named by a perf
# map, made without a collector (tests/0735-jit-unwind.bats).
check_PROGRAMS += tests/unit/mkjitstream
tests_unit_mkjitstream_SOURCES = tests/unit/mkjitstream.c tests/unit/jit-code.h tests/unit/elf-map.h
tests_unit_mkjitstream_LDADD = $(MS_LIBS)
