/*
 * The on-disk layout of a capture, version 1.7 (man/microscope-capture.5 is
 * the normative text; keep the two in step). All integers little-endian.
 *
 *   header     40 bytes at offset 0
 *   directory  n_sections entries of 40 bytes, sorted by section id
 *   sections   the stored (compressed) bytes of each section
 */
#ifndef MS_CAPTURE_FORMAT_H
#define MS_CAPTURE_FORMAT_H

#include <stdint.h>

#include "capture/capture.h"

/* Header fields (byte offsets). */
#define MS_CAPF_MAGIC 0		/* 8 bytes, MS_CAPTURE_MAGIC */
#define MS_CAPF_MAJOR 8		/* u32 */
#define MS_CAPF_MINOR 12	/* u32 */
#define MS_CAPF_FLAGS 16	/* u32, enum ms_capture_flags */
#define MS_CAPF_N_SECTIONS 20	/* u32 */
#define MS_CAPF_FILE_SIZE 24	/* u64, the whole file */
#define MS_CAPF_RESERVED 32	/* u32, zero */
#define MS_CAPF_CHECKSUM 36	/* u32, crc32 of bytes 0-35 then the directory */
#define MS_CAPF_HEADER_SIZE 40

/*
 * Flags 0-15 are facts a reader may ignore when it does not know them;
 * flags 16-31 are features a reader must understand or refuse the file.
 */
#define MS_CAPF_FLAGS_REQUIRED 0xffff0000u
#define MS_CAPF_FLAGS_KNOWN \
	((uint32_t)(MS_CAPTURE_INCOMPLETE | MS_CAPTURE_OFF_CPU | MS_CAPTURE_WEIGHTED | \
		    MS_CAPTURE_DUTY))

/* Directory entry fields (offsets within the entry). */
#define MS_CAPF_DIR_ID 0	/* u32, enum ms_capf_section */
#define MS_CAPF_DIR_CODEC 4	/* u32, enum ms_capf_codec */
#define MS_CAPF_DIR_OFFSET 8	/* u64, from the start of the file */
#define MS_CAPF_DIR_SIZE 16	/* u64, stored bytes */
#define MS_CAPF_DIR_RAW_SIZE 24	/* u64, bytes after decompression */
#define MS_CAPF_DIR_CHECKSUM 32	/* u32, crc32 of the stored bytes */
#define MS_CAPF_DIR_RESERVED 36	/* u32, zero */
#define MS_CAPF_DIR_SIZE_BYTES 40

/* At most this many directory entries (1.0 wrote 9, 1.1 writes 11, 1.2 to 1.7 11 to 19). */
#define MS_CAPF_SECTIONS_MAX 1024

enum ms_capf_codec {
	MS_CAPF_CODEC_LZ4F = 1,	/* one LZ4 frame (lz4 frame format) */
};

/*
 * Section ids. Every section but strings is a table: u32 n_rows, u32
 * row_size, then n_rows rows of row_size bytes, whose first bytes are the
 * v1 fields below; a later minor version may append fields (a larger
 * row_size), which a v1 reader skips. strings is u32 n_strings, u32 zero,
 * then n_strings NUL-terminated strings back to back.
 */
enum ms_capf_section {
	MS_CAPF_STRINGS = 1,
	MS_CAPF_INFO = 2,	/* key u32, value_text u32, value_number u64 */
	MS_CAPF_MODULES = 3,	/* path, kind, build_id_len u32, build_id[20],
				   dev_maj, dev_min u32, ino, size, mtime u64;
				   1.1: status, status_reason u32;
				   1.6: base u64 (rows of 80 bytes in a file
				   holding JIT data, 72 otherwise: a reader
				   takes shorter rows as bases of 0) */
	MS_CAPF_FRAMES = 4,	/* module, flags u32, address u64, name, reason u32,
				   symbol_start u64; 1.1: first_line, n_lines u32 */
	MS_CAPF_STACKS = 5,	/* parent, frame, depth u32 */
	MS_CAPF_THREADS = 6,	/* pid, tid, name, zero u32, first_time, last_time u64 */
	MS_CAPF_SAMPLES = 7,	/* time u64, thread, cpu, stack, end u32, period u64 */
	MS_CAPF_PROBLEMS = 8,	/* stage, code, detail, zero u32, count u64 */
	MS_CAPF_TOTALS = 9,	/* one row: lost_kernel, lost_collector, throttled,
				   start_time, end_time u64, target_exit_code i32,
				   zero u32 */
	/*
	 * Minor 1. A file of minor 0 lacks them (and has the 1.0 rows of
	 * modules and frames): the reader gives it empty tables. A file of
	 * minor 1 or later must have them.
	 */
	MS_CAPF_FUNCTIONS = 10,	/* name, system_name, file, start_line u32 */
	MS_CAPF_LINES = 11,	/* function, line u32 */
	/*
	 * Minor 2: one row per sample row, in the same order: count u64. In a
	 * file exactly when its header sets MS_CAPTURE_WEIGHTED: a recording
	 * (every count 1) has neither, and is the 1.1 file it always was.
	 */
	MS_CAPF_COUNTS = 12,
	/*
	 * Minor 3: the sampling duty's changes (a recording held to a CPU
	 * budget), sorted by time, one per time: time u64, duty_ppm u32,
	 * share_ppm u32, rate u64, budget_ppm u32, zero u32. In a file exactly
	 * when its header sets MS_CAPTURE_DUTY, with at least one row.
	 */
	MS_CAPF_DUTY = 13,
	/*
	 * Minor 4: records lost, one row per (time, source), sorted by them:
	 * time u64, count u64, source u32, zero u32. In a file only when it
	 * has rows; no flag: a reader before 1.4 skips the section and keeps
	 * the totals, which the rows add up to at most (capture.h).
	 */
	MS_CAPF_LOSSES = 14,
	/*
	 * Minor 5, both exactly when the header sets MS_CAPTURE_OFF_CPU (not a
	 * required flag: a reader before 1.5 skips them and the samples stay
	 * whole), possibly with no rows.
	 * intervals: time off CPU (capture.h: ms_cap_interval), sorted by
	 * (start, or end when the start is missing; thread, end, stack), ties
	 * by start, missing, cpu, stack_end, evidence: start u64, end u64,
	 * thread, cpu, stack, stack_end, missing, evidence u32.
	 * evidence: why a thread left (ms_cap_evidence), unique and sorted by
	 * (cause, sources, state, preempt): cause u32, sources u32, state u64,
	 * preempt u32, zero u32.
	 */
	MS_CAPF_INTERVALS = 15,
	MS_CAPF_EVIDENCE = 16,
	/*
	 * Minor 6: each process's perf-map setting (capture.h:
	 * ms_cap_perf_map), one row per pid, sorted by it: pid, path, status,
	 * err u32, time, offset, functions, malformed, over_max, no_code,
	 * code_unread, code_bytes u64. In a file only when it has rows; no
	 * flag: a reader before 1.6 skips it and loses nothing it reads.
	 */
	MS_CAPF_PERF_MAPS = 17,
	/*
	 * Minor 7: what the recording found of each process's Python
	 * interpreter (capture.h: ms_cap_py_process), sorted by (pid, time,
	 * status, version_hex, source, path, engine, reason), each distinct:
	 * pid, status, version_hex, source u32, time u64, path, engine,
	 * reason, zero u32. In a file only when it has rows; no flag: a
	 * reader before 1.7 skips it.
	 */
	MS_CAPF_PY_PROCESSES = 18,
	/*
	 * Minor 7 too: labels over runs of a thread's samples (capture.h:
	 * ms_cap_label_span), sorted by (thread, key, start), the spans of
	 * one thread and key apart: thread, key, value, zero u32, start,
	 * end, samples u64. In a file only when it has rows; no flag: a
	 * reader before it skips it.
	 */
	MS_CAPF_LABEL_SPANS = 19,
	/*
	 * Minor 8: tasks and their wait rows (capture.h: ms_cap_task,
	 * ms_cap_wait), each in a file only when it has rows (waits only
	 * with tasks); no flag: a reader before 1.8 skips them, and its
	 * samples are whole.
	 * tasks: pid, thread, kind, zero u32, id, first_time, last_time,
	 * waits, changed, dropped u64.
	 * waits: task, stack, reason, zero u32, time u64.
	 */
	MS_CAPF_TASKS = 20,
	MS_CAPF_WAITS = 21,
	MS_CAPF_SECTION_LAST = MS_CAPF_WAITS,
};
/* The last section a file of minor 0 has, and the last every file of minor 1 or later has. */
#define MS_CAPF_SECTION_LAST_1_0 MS_CAPF_TOTALS
#define MS_CAPF_SECTION_LAST_1_1 MS_CAPF_LINES

/* Row sizes of 1.7; modules were shorter before it, frames in 1.0. */
#define MS_CAPF_TABLE_HEADER 8
#define MS_CAPF_ROW_INFO 16
#define MS_CAPF_ROW_MODULES_1_6 80
#define MS_CAPF_ROW_MODULES 72	/* 1.1 to 1.5 */
#define MS_CAPF_ROW_MODULES_1_0 64
#define MS_CAPF_ROW_FRAMES 40
#define MS_CAPF_ROW_FRAMES_1_0 32
#define MS_CAPF_ROW_STACKS 12
#define MS_CAPF_ROW_THREADS 32
#define MS_CAPF_ROW_SAMPLES 32
#define MS_CAPF_ROW_PROBLEMS 24
#define MS_CAPF_ROW_TOTALS 48
#define MS_CAPF_ROW_FUNCTIONS 16
#define MS_CAPF_ROW_LINES 8
#define MS_CAPF_ROW_COUNTS 8
#define MS_CAPF_ROW_DUTY 32
#define MS_CAPF_ROW_LOSSES 24
#define MS_CAPF_ROW_INTERVALS 40
#define MS_CAPF_ROW_EVIDENCE 24
#define MS_CAPF_ROW_PERF_MAPS 80
#define MS_CAPF_ROW_PY_PROCESSES 40
#define MS_CAPF_ROW_LABEL_SPANS 40
#define MS_CAPF_ROW_TASKS 64
#define MS_CAPF_ROW_WAITS 24
/* A reader refuses rows larger than this (a sanity bound, not a format limit). */
#define MS_CAPF_ROW_MAX 4096

/* Name of a section id ("samples"), or NULL when unknown. */
const char *ms_capf_section_name(uint32_t id);

static inline void ms_put_u32(unsigned char *p, uint32_t v)
{
	p[0] = v; p[1] = v >> 8; p[2] = v >> 16; p[3] = v >> 24;
}

static inline void ms_put_u64(unsigned char *p, uint64_t v)
{
	ms_put_u32(p, (uint32_t)v);
	ms_put_u32(p + 4, (uint32_t)(v >> 32));
}

static inline uint32_t ms_get_u32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t ms_get_u64(const unsigned char *p)
{
	return (uint64_t)ms_get_u32(p) | (uint64_t)ms_get_u32(p + 4) << 32;
}

#endif
