# libcommon/util: messages, exit codes, banned functions.
libcommon_a_SOURCES += \
	libcommon/util/banned.h \
	libcommon/util/error.c libcommon/util/error.h \
	libcommon/util/input.c libcommon/util/input.h \
	libcommon/util/publish.c libcommon/util/publish.h \
	libcommon/util/prefault.c libcommon/util/prefault.h
