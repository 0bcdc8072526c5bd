# libcommon/util: messages, exit codes, banned functions.
libcommon_a_SOURCES += \
	libcommon/util/banned.h \
	libcommon/util/error.c libcommon/util/error.h
