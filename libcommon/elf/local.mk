# libcommon/elf: ELF files on disk and in memory: opening them, sections,
# build ids, the running kernel's build id, .gnu_debuglink, the one finder
# of separate debug files that ms-unwind and ms-symbolize share, and the
# cache of decompressed debug files.
libcommon_a_SOURCES += \
	libcommon/elf/elffile.c libcommon/elf/elffile.h \
	libcommon/elf/kernel.c libcommon/elf/kernel.h \
	libcommon/elf/debugfind.c libcommon/elf/debugfind.h \
	libcommon/elf/dcache.c libcommon/elf/dcache.h
