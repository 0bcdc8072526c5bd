/*
 * microscope record's options as one value: parsed and validated whole
 * before any stage starts (a bad one is one line naming it, exit 2), a
 * preset filled in under the flags given, then handed to each stage as
 * exactly what it needs. The capture keeps its description (info
 * "record-options"), which ms-analyze summary shows.
 */
#ifndef MS_CMD_MICROSCOPE_OPTIONS_H
#define MS_CMD_MICROSCOPE_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define MS_RECORD_DEBUG_DIRS_MAX 32

/* A named starting point; flags given override its fields. */
struct ms_record_preset {
	const char *name;
	const char *why;	/* one line for --help and --print-options */
	uint64_t freq;
	uint32_t stack_size;
	uint32_t mmap_pages;	/* 0: ms-collect's default for the copy size */
	int unwind;		/* enum ms_unwind_policy */
	uint32_t budget_ppm;	/* of one CPU, 0: none (perf/governor.h) */
	bool off_cpu;		/* blocked-time collection (ms-collect --off-cpu) */
	bool python;		/* Python functions named (ms-collect --python bpf) */
};

enum ms_record_python {
	MS_RECORD_PYTHON_OFF = 0,
	MS_RECORD_PYTHON_BPF,		/* ms-collect --python bpf */
	MS_RECORD_PYTHON_SNAPSHOT,	/* ms-collect --python snapshot */
};

struct ms_record_options {
	const struct ms_record_preset *preset;
	uint64_t freq, period;	/* one of them */
	const char *event;
	uint32_t stack_size;
	uint32_t mmap_pages;
	uint64_t duration_ns;	/* 0: until the program ends or a signal */
	int unwind;		/* enum ms_unwind_policy; AUTO: dwarf with a copy, else fp */
	uint32_t budget_ppm;	/* --budget, of one CPU; 0: none */
	bool deferred;		/* --symbolize=deferred */
	bool defer;		/* --defer: process after the program ends */
	bool off_cpu;		/* --off-cpu: when and why threads were off the CPU too */
	bool no_perf_map;	/* --no-perf-map: ms-collect reads no JIT's perf map */
	bool no_jit_objects;	/* --no-jit-objects: nor objects registered for GDB */
	/* --python: enum ms_record_python (0, off: no Python functions named) */
	int python;
	uint32_t python_interval_ms;	/* --python-interval; 0: ms-collect's default */
	const char *output;
	pid_t pid;		/* attach, or 0 */
	char **argv;		/* launch, or NULL */
	const char *debug_dirs[MS_RECORD_DEBUG_DIRS_MAX];
	uint32_t n_debug_dirs;
	bool print_options;	/* print the value and record nothing */
	bool help;
};

/* The presets, in the order --help lists them, and one by name (NULL: none). */
extern const struct ms_record_preset ms_record_presets[];
extern const size_t ms_record_n_presets;
const struct ms_record_preset *ms_record_preset_find(const char *name);

/*
 * Parse argv (argv[0] is "record") into *o and validate it whole:
 * 0, or -1 after one message naming the option (the caller says "Try
 * 'microscope record --help'" and exits 2). o->help set: print the usage.
 */
int ms_record_options_parse(struct ms_record_options *o, int argc, char **argv);
/* The checks alone, for a value built otherwise (tests): 0 or -1 after one message. */
int ms_record_options_check(const struct ms_record_options *o);
/*
 * One line describing the value, as the capture keeps it:
 * "preset=default freq=999 event=cpu-clock stack-size=8192 unwind=auto ...",
 * ending in " defer", " off-cpu" and " python=bpf" (or " python=snapshot
 * python-interval=MS") when they are on.
 * Returns the length it needed (snprintf's).
 */
int ms_record_options_describe(const struct ms_record_options *o, char *buf, size_t len);

#endif
