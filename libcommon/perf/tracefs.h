/*
 * The kernel's tracefs, for the tracepoints ms-collect opens (--off-cpu:
 * sched:sched_switch): where it is, mounting it when it is not, and the
 * parse of an event's format file into a TRACEPOINT record (struct
 * ms_tracepoint), which tells later stages where each field of the RAW
 * data is, since they read no files of the host.
 *
 * The format file is treated as untrusted text: lines are bounded, every
 * number is checked, and anything not of the expected shape is refused
 * with a message naming the line. Its shape (Linux 3.x to 6.x):
 *
 *   name: sched_switch
 *   ID: 372
 *   format:
 *   <TAB>field:unsigned short common_type;<TAB>offset:0;<TAB>size:2;<TAB>signed:0;
 *   ...
 *   <TAB>field:char prev_comm[16];<TAB>offset:8;<TAB>size:16;<TAB>signed:0;
 *
 *   print fmt: "..."
 */
#ifndef MS_PERF_TRACEFS_H
#define MS_PERF_TRACEFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stream/records.h"

/* Where tracefs is looked for, in order; the first is where it is mounted. */
#define MS_TRACEFS_DIR "/sys/kernel/tracing"
#define MS_TRACEFS_DEBUG_DIR "/sys/kernel/debug/tracing"
/* Bounds on a format file: its bytes, one line's, one field name's. */
#define MS_TRACEFS_FORMAT_MAX 65536
#define MS_TRACEFS_LINE_MAX 1024
#define MS_TRACEFS_NAME_MAX 64
/* A field's offset and size: within a perf record (at most 64 KiB). */
#define MS_TRACEFS_OFFSET_MAX 65535u

/*
 * Parse the format file text[0..len) of the tracepoint called name (as
 * "system:event", for the record and messages; the file's "name:" line
 * must be its event part) into *tp: config from the "ID:" line, one entry
 * per field. tp's strings point into text and name, which must outlive
 * it. 0, or -1 with why[] saying what is wrong and on which line.
 */
int ms_tracepoint_parse(const char *text, size_t len, const char *name,
			struct ms_tracepoint *tp, char *why, size_t why_len);

/* The index of the field called field in tp, or -1. */
int ms_tracepoint_field(const struct ms_tracepoint *tp, const char *field);

/* A tracepoint's format read from tracefs: the record and the text it points into. */
struct ms_tracepoint_file {
	struct ms_tracepoint tp;
	char name[128];		/* "sched:sched_switch" */
	char path[256];		/* of its format file, for messages */
	char text[MS_TRACEFS_FORMAT_MAX];
};

/*
 * The tracefs directory that holds events/ into dir[0..len): the first
 * of MS_TRACEFS_DIR and MS_TRACEFS_DEBUG_DIR that has it. When neither
 * does and this process is root, tracefs is mounted at MS_TRACEFS_DIR,
 * and *mounted says so (the caller tells the user once). 0, or -1 after
 * a message naming what is missing and how to mount it.
 */
int ms_tracefs_find(char *dir, size_t len, bool *mounted);

/*
 * Read and parse events/SYSTEM/EVENT/format under the tracefs directory
 * dir, for the tracepoint "system:event". 0, or -1 after a message
 * naming the file and what to do.
 */
int ms_tracepoint_load(const char *dir, const char *system, const char *event,
		       struct ms_tracepoint_file *f);

#endif
