/* microscope record's options, parsed and validated whole: see options.h. */
#include "config.h"

#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "cmd/microscope/options.h"
#include "perf/collect.h"
#include "python/pysnapshot.h"
#include "unwind/unwind.h"
#include "util/error.h"
#include "util/text.h"

/*
 * Why each number (microscope(1) says the same):
 *  light: 99 Hz is a tenth of the default's samples and of its cost, for
 *         a production process; frame pointers carry on where the 8 KiB
 *         copy ends, at no cost per sample; and a budget of 1 % of one
 *         CPU, so that a burst of threads cannot make it cost more.
 *  default: 999 Hz, perf's own default rate (a prime, off the beat of
 *         timers); a 32 KiB copy, the smallest that leaves 95 % of the
 *         stacks of bzip2 -9, git log -p, sqlite3 .read of a recursive
 *         query and python3.11 with re and json whole (8 KiB: 0-92 %,
 *         16 KiB: sqlite3 87 %; scripts/stack-completeness); it costs no
 *         slowdown measurable here over 8 KiB, as the kernel stops the
 *         copy where the stack's mapping ends and ms-collect keeps only
 *         what it copied. Rings follow the copy (1024 pages above 16 KiB).
 *         DWARF unwinding.
 *  deep:  the largest copy the kernel takes (65528 bytes) for the deepest
 *         stacks, with 4 MiB rings (1024 pages) to hold samples that big.
 *  wall:  the default's sampling plus blocked-time collection (--off-cpu):
 *         every switch-out of the program's threads with its stack and
 *         why, for wall-clock and off-CPU views. It costs the program per
 *         context switch, not per sample (ms-collect(1) has the numbers).
 *  python: the default's sampling with the Python walker (--python bpf):
 *         the functions and lines of CPython 3.11-3.13 programs; needs root
 *         and the initial pid namespace.
 */
const struct ms_record_preset ms_record_presets[] = {
	{ "light", "low rate for production: 99 Hz, 8 KiB copies, dwarf+fp, 1 % CPU budget",
	  99, 8192, 0, MS_UNWIND_DWARF_FP, 10000, false, false },
	{ "default", "999 Hz, 32 KiB copies, dwarf", 999, 32768, 0, MS_UNWIND_AUTO, 0, false,
	  false },
	{ "deep", "the deepest stacks: 999 Hz, 64 KiB copies, dwarf", 999, 65528, 1024,
	  MS_UNWIND_DWARF, 0, false, false },
	{ "wall", "default + off-CPU (blocked) time (--off-cpu), for wall-clock views", 999,
	  32768, 0, MS_UNWIND_AUTO, 0, true, false },
	{ "python", "default + Python functions and lines (--python bpf; root)", 999, 32768, 0,
	  MS_UNWIND_AUTO, 0, false, true },
};
const size_t ms_record_n_presets = sizeof(ms_record_presets) / sizeof(ms_record_presets[0]);

const struct ms_record_preset *ms_record_preset_find(const char *name)
{
	for (size_t i = 0; i < ms_record_n_presets; i++)
		if (!strcmp(ms_record_presets[i].name, name))
			return &ms_record_presets[i];
	return NULL;
}

enum {
	OPT_STACK_SIZE = 256,
	OPT_DURATION,
	OPT_MMAP_PAGES,
	OPT_SYMBOLIZE,
	OPT_UNWIND,
	OPT_DEBUG_DIR,
	OPT_PRESET,
	OPT_PRINT_OPTIONS,
	OPT_DEFER,
	OPT_BUDGET,
	OPT_OFF_CPU,
	OPT_NO_OFF_CPU,
	OPT_NO_PERF_MAP,
	OPT_NO_JIT_OBJECTS,
	OPT_PYTHON,
	OPT_PYTHON_INTERVAL,
};

/* Which fields a flag set: the preset fills in the others. */
enum {
	SET_RATE = 1 << 0,
	SET_STACK = 1 << 1,
	SET_PAGES = 1 << 2,
	SET_UNWIND = 1 << 3,
	SET_BUDGET = 1 << 4,
	SET_OFF_CPU = 1 << 5,
	SET_PYTHON = 1 << 6,
};

static const struct option options[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "freq", required_argument, NULL, 'F' },
	{ "period", required_argument, NULL, 'c' },
	{ "event", required_argument, NULL, 'e' },
	{ "pid", required_argument, NULL, 'p' },
	{ "stack-size", required_argument, NULL, OPT_STACK_SIZE },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "mmap-pages", required_argument, NULL, OPT_MMAP_PAGES },
	{ "symbolize", required_argument, NULL, OPT_SYMBOLIZE },
	{ "unwind", required_argument, NULL, OPT_UNWIND },
	{ "debug-dir", required_argument, NULL, OPT_DEBUG_DIR },
	{ "preset", required_argument, NULL, OPT_PRESET },
	{ "print-options", no_argument, NULL, OPT_PRINT_OPTIONS },
	{ "defer", no_argument, NULL, OPT_DEFER },
	{ "budget", required_argument, NULL, OPT_BUDGET },
	{ "off-cpu", no_argument, NULL, OPT_OFF_CPU },
	{ "no-off-cpu", no_argument, NULL, OPT_NO_OFF_CPU },
	{ "no-perf-map", no_argument, NULL, OPT_NO_PERF_MAP },
	{ "no-jit-objects", no_argument, NULL, OPT_NO_JIT_OBJECTS },
	{ "python", required_argument, NULL, OPT_PYTHON },
	{ "python-interval", required_argument, NULL, OPT_PYTHON_INTERVAL },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int parse_one(struct ms_record_options *o, int c, const char *arg, unsigned *set,
		     bool *freq_given)
{
	uint64_t v;

	switch (c) {
	case 'o':
		o->output = arg;
		return 0;
	case 'F':
		if (ms_parse_u64(arg, "-F", UINT32_MAX, &o->freq) < 0)
			return -1;
		if (!o->freq)
			return ms_error("-F: the frequency must be more than 0");
		*set |= SET_RATE;
		*freq_given = true;
		return 0;
	case 'c':
		if (ms_parse_u64(arg, "-c", UINT64_MAX >> 1, &o->period) < 0)
			return -1;
		if (!o->period)
			return ms_error("-c: the period must be more than 0");
		*set |= SET_RATE;
		return 0;
	case 'e':
		o->event = arg;
		return 0;
	case 'p':
		if (ms_parse_u64(arg, "-p", INT_MAX, &v) < 0)
			return -1;
		if (!v)
			return ms_error("-p: 0 is not a process id");
		o->pid = (pid_t)v;
		return 0;
	case OPT_STACK_SIZE:
		if (ms_parse_u64(arg, "--stack-size", UINT32_MAX, &v) < 0)
			return -1;
		o->stack_size = (uint32_t)v;
		*set |= SET_STACK;
		return 0;
	case OPT_DURATION:
		return ms_parse_seconds(arg, "--duration", &o->duration_ns);
	case OPT_MMAP_PAGES:
		if (ms_parse_u64(arg, "--mmap-pages", UINT32_MAX, &v) < 0)
			return -1;
		if (!v)
			return ms_error("--mmap-pages: must be more than 0");
		o->mmap_pages = (uint32_t)v;
		*set |= SET_PAGES;
		return 0;
	case OPT_SYMBOLIZE:
		if (strcmp(arg, "deferred") && strcmp(arg, "immediate"))
			return ms_error("--symbolize wants immediate or deferred, not '%s'", arg);
		o->deferred = arg[0] == 'd';
		return 0;
	case OPT_UNWIND:
		if (ms_unwind_policy_parse(arg) <= MS_UNWIND_AUTO)
			return ms_error("--unwind wants dwarf, fp or dwarf+fp, not '%s'", arg);
		o->unwind = ms_unwind_policy_parse(arg);
		*set |= SET_UNWIND;
		return 0;
	case OPT_DEBUG_DIR:
		if (o->n_debug_dirs == MS_RECORD_DEBUG_DIRS_MAX)
			return ms_error("--debug-dir: at most %d are taken", MS_RECORD_DEBUG_DIRS_MAX);
		o->debug_dirs[o->n_debug_dirs++] = arg;
		return 0;
	case OPT_PRESET:
		if (!(o->preset = ms_record_preset_find(arg)))
			return ms_error("--preset: no preset '%s'; the presets are light, default, "
					"deep, wall and python (microscope record --help)", arg);
		return 0;
	case OPT_PRINT_OPTIONS:
		o->print_options = true;
		return 0;
	case OPT_DEFER:
		o->defer = true;
		return 0;
	case OPT_BUDGET:
		*set |= SET_BUDGET;
		if (!strcmp(arg, "off")) {
			o->budget_ppm = 0;
			return 0;
		}
		return ms_parse_percent(arg, "--budget", &o->budget_ppm);
	case OPT_OFF_CPU:
	case OPT_NO_OFF_CPU:
		o->off_cpu = c == OPT_OFF_CPU;
		*set |= SET_OFF_CPU;
		return 0;
	case OPT_NO_PERF_MAP:
		o->no_perf_map = true;
		return 0;
	case OPT_NO_JIT_OBJECTS:
		o->no_jit_objects = true;
		return 0;
	case OPT_PYTHON:
		*set |= SET_PYTHON;
		if (!strcmp(arg, "bpf") || !strcmp(arg, "off") || !strcmp(arg, "snapshot")) {
			o->python = arg[0] == 'b' ? MS_RECORD_PYTHON_BPF :
				    arg[0] == 's' ? MS_RECORD_PYTHON_SNAPSHOT : MS_RECORD_PYTHON_OFF;
			return 0;
		}
		return ms_error("--python wants bpf, snapshot or off, not '%s'", arg);
	case OPT_PYTHON_INTERVAL:
		if (ms_parse_u64(arg, "--python-interval", UINT32_MAX, &v) < 0)
			return -1;
		if (v < MS_PY_SNAP_INTERVAL_MIN || v > MS_PY_SNAP_INTERVAL_MAX)
			return ms_error("--python-interval: %s ms is out of range: a round of thread "
					"snapshots every %d to %d ms", arg, MS_PY_SNAP_INTERVAL_MIN,
					MS_PY_SNAP_INTERVAL_MAX);
		o->python_interval_ms = (uint32_t)v;
		return 0;
	case 'h':
		o->help = true;
		return 0;
	}
	return -1;
}

int ms_record_options_parse(struct ms_record_options *o, int argc, char **argv)
{
	unsigned set = 0;
	bool freq_given = false;
	int c;

	memset(o, 0, sizeof(*o));
	o->output = "microscope.msc";
	o->event = "cpu-clock";
	o->preset = ms_record_preset_find("default");
	optind = 0;	/* GNU getopt: start afresh, whatever ran before */
	opterr = 0;
	/* '+': options end at the command, whose own options are its own. */
	while ((c = getopt_long(argc, argv, "+:o:F:c:e:p:h", options, NULL)) != -1) {
		if (c == ':')
			return ms_error("option '%s' needs a value", argv[optind - 1]);
		if (c == '?') {
			/* A long option's own value: one given a value it does not take. */
			if (optopt >= 256)
				return ms_error("option '%s' takes no value", argv[optind - 1]);
			if (optopt)
				return ms_error("unknown option '-%c'", optopt);
			return ms_error("unknown option '%s'", argv[optind - 1]);
		}
		if (parse_one(o, c, optarg, &set, &freq_given) < 0)
			return -1;
		if (o->help)
			return 0;
	}
	if (optind < argc)
		o->argv = argv + optind;
	/* The preset under the flags given. */
	if (!(set & SET_RATE))
		o->freq = o->preset->freq;
	if (!(set & SET_STACK))
		o->stack_size = o->preset->stack_size;
	if (!(set & SET_PAGES))
		o->mmap_pages = o->preset->mmap_pages;
	if (!(set & SET_UNWIND))
		o->unwind = o->preset->unwind;
	if (!(set & SET_BUDGET))
		o->budget_ppm = o->preset->budget_ppm;
	if (!(set & SET_OFF_CPU))
		o->off_cpu = o->preset->off_cpu;
	if (!(set & SET_PYTHON))
		o->python = o->preset->python ? MS_RECORD_PYTHON_BPF : MS_RECORD_PYTHON_OFF;
	if (freq_given && o->period)
		return ms_error("give either -F HZ or -c PERIOD, not both");
	if (o->period)
		o->freq = 0;
	return ms_record_options_check(o);
}

int ms_record_options_check(const struct ms_record_options *o)
{
	struct ms_collect_opts c = {
		.event = o->event, .freq = o->freq, .period = o->period,
		.stack_size = o->stack_size, .data_pages = o->mmap_pages,
		.duration_ns = o->duration_ns, .pid = o->pid, .argv = o->argv,
		.off_cpu = o->off_cpu,
		.off_cpu_stack_size = ms_collect_off_cpu_stack_default(o->stack_size),
	};

	if (o->python_interval_ms && o->python != MS_RECORD_PYTHON_SNAPSHOT)
		return ms_error("--python-interval is the snapshot engine's: give --python "
				"snapshot too");
	if (!strcmp(o->output, "-"))
		return ms_error("-o: a capture is written to a file, not to stdout ('-'); "
				"the launched program's stdout stays its own");
	/* Without a stack copy there is nothing for DWARF to unwind. */
	if (!o->stack_size && (o->unwind == MS_UNWIND_DWARF || o->unwind == MS_UNWIND_DWARF_FP))
		return ms_error("--unwind %s needs a stack copy, but --stack-size is 0: give a "
				"copy size, or --unwind fp", ms_unwind_policy_name(o->unwind));
	/* ms-collect's own checks, with its messages: it would refuse the same. */
	return ms_collect_check(&c);
}

int ms_record_options_describe(const struct ms_record_options *o, char *buf, size_t len)
{
	char rate[48], duration[48], pages[32], budget[32], python[64];

	if (o->period)
		snprintf(rate, sizeof(rate), "period=%" PRIu64, o->period);
	else
		snprintf(rate, sizeof(rate), "freq=%" PRIu64, o->freq);
	if (o->duration_ns)
		snprintf(duration, sizeof(duration), "%" PRIu64 ".%09" PRIu64 "s",
			 o->duration_ns / 1000000000u, o->duration_ns % 1000000000u);
	else
		snprintf(duration, sizeof(duration), "none");
	if (o->mmap_pages)
		snprintf(pages, sizeof(pages), "%" PRIu32, o->mmap_pages);
	else
		snprintf(pages, sizeof(pages), "auto");
	if (o->budget_ppm)
		ms_format_ppm(budget, sizeof(budget), o->budget_ppm);
	else
		snprintf(budget, sizeof(budget), "off");
	if (o->python == MS_RECORD_PYTHON_SNAPSHOT)
		snprintf(python, sizeof(python), " python=snapshot python-interval=%" PRIu32,
			 o->python_interval_ms ? o->python_interval_ms : MS_PY_SNAP_INTERVAL_DEFAULT);
	else
		snprintf(python, sizeof(python), "%s",
			 o->python == MS_RECORD_PYTHON_BPF ? " python=bpf" : "");
	return snprintf(buf, len, "preset=%s %s event=%s stack-size=%" PRIu32 " unwind=%s "
			"symbolize=%s duration=%s mmap-pages=%s budget=%s%s%s%s%s%s", o->preset->name,
			rate, o->event, o->stack_size, ms_unwind_policy_name(o->unwind),
			o->deferred ? "deferred" : "immediate", duration, pages, budget,
			o->defer ? " defer" : "", o->off_cpu ? " off-cpu" : "",
			o->no_perf_map ? " no-perf-map" : "", o->no_jit_objects ? " no-jit-objects" : "",
			python);
}
