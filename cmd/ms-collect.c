/*
 * ms-collect: record a program's perf events into a microscope stream.
 * Options and wiring only; the work is in libcommon/perf/collect.c.
 */
#include "config.h"

#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jit/recorder.h"
#include "perf/bpfload.h"
#include "perf/collect.h"
#include "perf/cpumeter.h"
#include "perf/pidns.h"
#include "python/pyrecorder.h"
#include "python/pysnapshot.h"
#include "util/error.h"

static const char usage_text[] =
	"usage: ms-collect [-o FILE] [-F HZ | -c PERIOD] [-e cpu-clock|task-clock]\n"
	"                  [--stack-size BYTES] [--duration SECONDS] [--mmap-pages N]\n"
	"                  [--budget PCT [--budget-pid PID]...]\n"
	"                  [--off-cpu [--off-cpu-stack-size BYTES]] [--no-perf-map]\n"
	"                  [--no-jit-objects] [--python bpf|snapshot]\n"
	"                  [--python-interval MS] [--bpf-sampler]\n"
	"                  (-p PID | [--] CMD [ARGS...])\n"
	"\n"
	"Record a program launched as CMD, or the running process PID and every\n"
	"thread it has or starts, and write a microscope stream of the kernel's\n"
	"records to stdout or FILE.\n"
	"\n"
	"  -o, --output FILE     write the stream to FILE (complete or not at all)\n"
	"      --output-fd N     write the stream to open file descriptor N (3 or\n"
	"                        more); a launched program keeps stdout\n"
	"      --lz4             compress the stream (an LZ4 frame; every stage\n"
	"                        reads it): a quarter of the bytes or less\n"
	"  -F, --freq HZ         samples per second per thread (default 999)\n"
	"  -c, --period N        one sample every N events (ns for the clocks)\n"
	"  -e, --event NAME      cpu-clock (default) or task-clock\n"
	"      --stack-size N    bytes of user stack copied per sample: a multiple\n"
	"                        of 8, at most 65528, 0 for none (default 32768)\n"
	"      --duration SECS   stop after SECS seconds (a launched program is\n"
	"                        sent SIGTERM)\n"
	"      --mmap-pages N    data pages per CPU ring, a power of two (default\n"
	"                        256, or 1024 with stacks over 16 KiB)\n"
	"      --budget PCT      keep the recording's own CPU time under PCT % of\n"
	"                        one CPU by pausing the sampler part of the time\n"
	"      --budget-pid PID  count this process too (a live stage downstream)\n"
	"      --off-cpu         also record when and why the threads leave the\n"
	"                        CPU: each switch-out (sched:sched_switch, with its\n"
	"                        stack and prev_state) and each switch in and out\n"
	"                        (needs root; mounts tracefs when it is not)\n"
	"      --off-cpu-stack-size N\n"
	"                        bytes of user stack copied per switch-out\n"
	"                        (default 8192, or --stack-size when smaller)\n"
	"      --no-perf-map     read no perf map (/tmp/perf-PID.map): by default\n"
	"                        a sample in anonymous code no function read\n"
	"                        names makes ms-collect read the process's map\n"
	"                        and prove each new function's frame from its code\n"
	"      --no-jit-objects  read no object registered through the GDB JIT\n"
	"                        interface (__jit_debug_descriptor): by default such\n"
	"                        a sample, or one in no mapping, makes ms-collect\n"
	"                        copy the process's new objects into the stream\n"
	"      --python bpf      name the Python functions each sample ran: a BPF\n"
	"                        program walks the thread's CPython 3.11-3.13\n"
	"                        frames as the sample is taken, and ms-collect\n"
	"                        names their code as it drains them. Needs root\n"
	"                        and ms-collect in the initial pid namespace (the\n"
	"                        target may be in a nested one)\n"
	"      --python snapshot without BPF: every --python-interval ms, read\n"
	"                        each thread's CPython 3.11-3.13 frames from the\n"
	"                        process (process_vm_readv); samples stay native,\n"
	"                        each thread's whole reads become snapshots\n"
	"      --python-interval MS\n"
	"                        ms between two rounds of snapshots, 1 to 1000\n"
	"                        (default 10)\n"
	"      --bpf-sampler     internal, experimental: the BPF sampler alone, with\n"
	"                        no Python layouts: it writes no record (tests)\n"
	"  -p, --pid PID         attach to the running process PID\n"
	"  -h, --help            show this help\n"
	"      --version         show the version\n"
	"\n"
	"A launched program's exit status becomes ms-collect's (128+N for signal\n"
	"N; 127 when it cannot be found, 126 when it cannot be run).\n"
	MS_EXIT_CODES_HELP;

enum {
	OPT_STACK_SIZE = 256,
	OPT_OUTPUT_FD,
	OPT_LZ4,
	OPT_DURATION,
	OPT_MMAP_PAGES,
	OPT_BUDGET,
	OPT_BUDGET_PID,
	OPT_OFF_CPU,
	OPT_OFF_CPU_STACK,
	OPT_NO_PERF_MAP,
	OPT_NO_JIT_OBJECTS,
	OPT_BPF_SAMPLER,
	OPT_PYTHON,
	OPT_PYTHON_INTERVAL,
	OPT_VERSION,
};

static const struct option options[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "output-fd", required_argument, NULL, OPT_OUTPUT_FD },
	{ "lz4", no_argument, NULL, OPT_LZ4 },
	{ "freq", required_argument, NULL, 'F' },
	{ "period", required_argument, NULL, 'c' },
	{ "event", required_argument, NULL, 'e' },
	{ "stack-size", required_argument, NULL, OPT_STACK_SIZE },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "mmap-pages", required_argument, NULL, OPT_MMAP_PAGES },
	{ "budget", required_argument, NULL, OPT_BUDGET },
	{ "budget-pid", required_argument, NULL, OPT_BUDGET_PID },
	{ "off-cpu", no_argument, NULL, OPT_OFF_CPU },
	{ "off-cpu-stack-size", required_argument, NULL, OPT_OFF_CPU_STACK },
	{ "no-perf-map", no_argument, NULL, OPT_NO_PERF_MAP },
	{ "no-jit-objects", no_argument, NULL, OPT_NO_JIT_OBJECTS },
	/* internal: the BPF sampler without the Python recorder (tests/0760) */
	{ "bpf-sampler", no_argument, NULL, OPT_BPF_SAMPLER },
	{ "python", required_argument, NULL, OPT_PYTHON },
	{ "python-interval", required_argument, NULL, OPT_PYTHON_INTERVAL },
	{ "pid", required_argument, NULL, 'p' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 },
};

static uint64_t failed(void *arg)
{
	return ms_bpf_sampler_failed(arg);
}

static void usage_error(void)
{
	fprintf(stderr, "Try 'ms-collect --help'.\n");
	exit(MS_EXIT_USAGE);
}

/* --python ENGINE: "bpf" or "snapshot"; exits for anything else. */
static const char *python_engine(const char *engine)
{
	if (!strcmp(engine, "bpf"))
		return "bpf";
	if (!strcmp(engine, "snapshot"))
		return "snapshot";
	ms_error("--python: unknown engine '%s' (bpf or snapshot)", engine);
	usage_error();
	return NULL;
}

/*
 * --python bpf needs ms-collect in the initial pid namespace: said with
 * the option's name before the loader's own check. 0, or an exit code.
 */
static int python_namespace(void)
{
	char why[256];
	int ns = ms_pidns_is_initial(NULL, why, sizeof(why));

	if (ns > 0)
		return 0;
	ms_error("--python bpf: %s; the BPF walker needs ms-collect in the initial pid "
		 "namespace (perf gives a sample's thread ids in the recorder's namespace, the "
		 "BPF program in the initial one): run ms-collect on the host, outside "
		 "containers or unshare -p (the target may be in a nested namespace), or "
		 "record without --python", why);
	return MS_EXIT_SYSTEM;
}

int main(int argc, char **argv)
{
	struct ms_collect_opts o = {
		.event = "cpu-clock",
		.stack_size = MS_COLLECT_STACK_DEFAULT,
		.version = PACKAGE_VERSION,
	};
	pid_t budget_pids[MS_CPUMETER_PIDS_MAX];
	bool freq_set = false, off_cpu_stack_set = false, perf_map = true, jit_objects = true;
	bool bpf_sampler = false, python = false, snapshot = false, refused;
	uint64_t interval = 0;
	struct ms_bpf_sampler *sampler = NULL;
	struct ms_collect_bpf bpf;
	struct ms_jit_recorder *jit = NULL;
	struct ms_py_recorder *py = NULL;
	struct ms_py_sink py_sink;
	struct ms_collect_watch watch, py_watch;
	uint64_t v;
	int opt, code;

	ms_set_progname("ms-collect");
	opterr = 0;
	/* '+': options end at the command, whose own options are its own. */
	while ((opt = getopt_long(argc, argv, "+:o:F:c:e:p:h", options, NULL)) != -1) {
		switch (opt) {
		case 'o':
			o.output = optarg;
			break;
		case OPT_OUTPUT_FD:
			if (ms_parse_u64(optarg, "--output-fd", INT_MAX, &v) < 0)
				usage_error();
			if (v < 3)
				ms_error("--output-fd: %s is one of stdin, stdout and stderr; use 3 "
					 "or more, or leave it out for stdout", optarg), usage_error();
			o.output_fd = (int)v;
			break;
		case OPT_LZ4:
			o.lz4 = true;
			break;
		case 'F':
			if (ms_parse_u64(optarg, "-F", UINT32_MAX, &o.freq) < 0)
				usage_error();
			freq_set = true;
			break;
		case 'c':
			if (ms_parse_u64(optarg, "-c", UINT64_MAX >> 1, &o.period) < 0)
				usage_error();
			if (!o.period)
				ms_error("-c: the period must be more than 0"), usage_error();
			break;
		case 'e':
			o.event = optarg;
			break;
		case OPT_STACK_SIZE:
			if (ms_parse_u64(optarg, "--stack-size", UINT32_MAX, &v) < 0)
				usage_error();
			o.stack_size = (uint32_t)v;
			break;
		case OPT_DURATION:
			if (ms_parse_seconds(optarg, "--duration", &o.duration_ns) < 0)
				usage_error();
			break;
		case OPT_MMAP_PAGES:
			if (ms_parse_u64(optarg, "--mmap-pages", UINT32_MAX, &v) < 0)
				usage_error();
			o.data_pages = (uint32_t)v;
			if (!o.data_pages)
				ms_error("--mmap-pages: must be more than 0"), usage_error();
			break;
		case OPT_BUDGET:
			if (ms_parse_percent(optarg, "--budget", &o.budget_ppm) < 0)
				usage_error();
			break;
		case OPT_BUDGET_PID:
			if (ms_parse_u64(optarg, "--budget-pid", INT_MAX, &v) < 0)
				usage_error();
			if (!v || o.n_budget_pids == MS_CPUMETER_PIDS_MAX - 1)
				ms_error("--budget-pid: give at most %d process ids, each more than 0",
					 MS_CPUMETER_PIDS_MAX - 1), usage_error();
			budget_pids[o.n_budget_pids++] = (pid_t)v;
			o.budget_pids = budget_pids;
			break;
		case OPT_OFF_CPU:
			o.off_cpu = true;
			break;
		case OPT_NO_PERF_MAP:
			perf_map = false;
			break;
		case OPT_NO_JIT_OBJECTS:
			jit_objects = false;
			break;
		case OPT_BPF_SAMPLER:
			bpf_sampler = true;
			break;
		case OPT_PYTHON:
			o.python = python_engine(optarg);
			python = !strcmp(o.python, "bpf");
			snapshot = !python;
			break;
		case OPT_PYTHON_INTERVAL:
			if (ms_parse_u64(optarg, "--python-interval", UINT32_MAX, &interval) < 0)
				usage_error();
			if (interval < MS_PY_SNAP_INTERVAL_MIN || interval > MS_PY_SNAP_INTERVAL_MAX)
				ms_error("--python-interval: %s ms is out of range: a round of thread "
					 "snapshots every %d to %d ms", optarg, MS_PY_SNAP_INTERVAL_MIN,
					 MS_PY_SNAP_INTERVAL_MAX), usage_error();
			break;
		case OPT_OFF_CPU_STACK:
			if (ms_parse_u64(optarg, "--off-cpu-stack-size", UINT32_MAX, &v) < 0)
				usage_error();
			o.off_cpu_stack_size = (uint32_t)v;
			off_cpu_stack_set = true;
			break;
		case 'p':
			if (ms_parse_u64(optarg, "-p", INT_MAX, &v) < 0)
				usage_error();
			if (!v)
				ms_error("-p: 0 is not a process id"), usage_error();
			o.pid = (pid_t)v;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return fclose(stdout) ? MS_EXIT_ERROR : MS_EXIT_OK;
		case OPT_VERSION:
			printf("ms-collect %s\n", PACKAGE_VERSION);
			return fclose(stdout) ? MS_EXIT_ERROR : MS_EXIT_OK;
		case ':':
			ms_error("option '%s' needs a value", argv[optind - 1]);
			usage_error();
			break;
		default:
			/* A long option's own value: one given a value it does not take. */
			if (optopt >= 256)
				ms_error("option '%s' takes no value", argv[optind - 1]);
			else if (optopt)
				ms_error("unknown option '-%c'", optopt);
			else
				ms_error("unknown option '%s'", argv[optind - 1]);
			usage_error();
		}
	}
	if (optind < argc)
		o.argv = argv + optind;
	if (!freq_set && !o.period)
		o.freq = MS_COLLECT_FREQ_DEFAULT;
	if (freq_set && !o.freq) {
		ms_error("-F: the frequency must be more than 0");
		usage_error();
	}
	if (off_cpu_stack_set && !o.off_cpu) {
		ms_error("--off-cpu-stack-size is the copy of a switch-out: give --off-cpu too");
		usage_error();
	}
	if (!off_cpu_stack_set)
		o.off_cpu_stack_size = ms_collect_off_cpu_stack_default(o.stack_size);
	if (interval && !snapshot) {
		ms_error("--python-interval is the snapshot engine's: give --python snapshot too");
		usage_error();
	}
	if (snapshot)
		o.python_interval_ms = interval ? (uint32_t)interval : MS_PY_SNAP_INTERVAL_DEFAULT;
	if (ms_collect_check(&o) < 0)
		usage_error();
	/* Before the target is launched or attached: a refusal leaves it untouched. */
	if (python && (code = python_namespace()))
		return code;
	if (bpf_sampler || python) {
		if (!(sampler = ms_bpf_sampler_load(&refused))) {
			if (python)
				ms_error("--python bpf: the BPF walker could not be loaded (above); "
					 "record without --python");
			return refused ? MS_EXIT_SYSTEM : MS_EXIT_ERROR;
		}
		bpf = (struct ms_collect_bpf){
			.prog_fd = ms_bpf_sampler_prog_fd(sampler),
			.outputs_fd = ms_bpf_sampler_outputs_fd(sampler),
			.failed = failed,
			.arg = sampler,
		};
		o.bpf = &bpf;
	}
	if (perf_map || jit_objects) {
		if (!(jit = ms_jit_recorder_new())) {
			ms_bpf_sampler_free(sampler);
			return MS_EXIT_ERROR;
		}
		ms_jit_recorder_sources(jit, perf_map, jit_objects);
		ms_jit_recorder_watch(jit, &watch);
		o.watches[o.n_watches++] = &watch;
	}
	if (python || snapshot) {
		/* The snapshot engine loads no BPF: it is the one where BPF is refused. */
		if (snapshot) {
			py = ms_py_snapshot_recorder_new(o.python_interval_ms);
		} else {
			ms_py_recorder_bpf_sink(sampler, &py_sink);
			py = ms_py_recorder_new(&py_sink);
		}
		if (!py) {
			ms_jit_recorder_free(jit);
			ms_bpf_sampler_free(sampler);
			return MS_EXIT_ERROR;
		}
		ms_py_recorder_watch(py, &py_watch);
		o.watches[o.n_watches++] = &py_watch;
	}
	code = ms_collect_run(&o);
	ms_py_recorder_free(py);
	ms_jit_recorder_free(jit);
	ms_bpf_sampler_free(sampler);
	return code;
}
