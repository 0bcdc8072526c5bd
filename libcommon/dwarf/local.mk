# libcommon/dwarf: DWARF read without libdw where speed needs it, with libdw
# where it does not: the DIE reader, line tables, the per-module unit index
# and its cache, .eh_frame function starts, call-frame rows with their
# cache, and one step by a rule over a register state with the expression
# evaluator (step.h).
libcommon_a_SOURCES += \
	libcommon/dwarf/leb128.h \
	libcommon/dwarf/dieread.c libcommon/dwarf/dieread.h \
	libcommon/dwarf/lines.c libcommon/dwarf/lines.h \
	libcommon/dwarf/dwarfidx.c libcommon/dwarf/dwarfidx.h \
	libcommon/dwarf/dwarfidx-impl.h libcommon/dwarf/unitcache.c \
	libcommon/dwarf/ehframe.c libcommon/dwarf/ehframe.h \
	libcommon/dwarf/cfi.c libcommon/dwarf/cfi.h \
	libcommon/dwarf/step.c libcommon/dwarf/step.h
