/*
 * What the converters share: format names, the loss each one makes, output
 * files published whole, input files read whole, and small tables.
 */
#include "config.h"

#include "formats/formats.h"
#include "formats/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capture/funcs.h"
#include "stream/records.h"
#include "util/error.h"
#include "util/grow.h"
#include "util/publish.h"

static const char *const format_names[] = {
	[MS_FORMAT_NONE] = "",
	[MS_FORMAT_CAPTURE] = "capture",
	[MS_FORMAT_PPROF] = "pprof",
	[MS_FORMAT_FOLDED] = "folded",
	[MS_FORMAT_CHROME] = "chrome",
	[MS_FORMAT_SPEEDSCOPE] = "speedscope",
};

const char *ms_format_name(enum ms_format f)
{
	if ((unsigned)f >= sizeof(format_names) / sizeof(format_names[0]))
		return "";
	return format_names[f];
}

enum ms_format ms_format_by_name(const char *name)
{
	for (unsigned f = MS_FORMAT_CAPTURE; f <= MS_FORMAT_SPEEDSCOPE; f++)
		if (!strcmp(name, format_names[f]))
			return f;
	if (!strcmp(name, "msc"))
		return MS_FORMAT_CAPTURE;
	return MS_FORMAT_NONE;
}

int ms_weight_by_name(const char *name, enum ms_weight *out)
{
	if (!strcmp(name, "samples"))
		*out = MS_WEIGHT_SAMPLES;
	else if (!strcmp(name, "time"))
		*out = MS_WEIGHT_TIME;
	else if (!strcmp(name, "off-cpu"))
		*out = MS_WEIGHT_OFF_CPU;
	else if (!strcmp(name, "snapshots"))
		*out = MS_WEIGHT_SNAPSHOTS;
	else
		return -1;
	return 0;
}

int ms_causes_by_name(const char *list, unsigned *causes)
{
	unsigned add = 0;
	const char *p = list;

	do {
		size_t len = strcspn(p, ",");
		uint32_t c;

		for (c = 0; c < MS_CAUSE_COUNT; c++)
			if (len == strlen(ms_off_cpu_cause_name(c)) &&
			    !strncmp(p, ms_off_cpu_cause_name(c), len))
				break;
		if (c == MS_CAUSE_COUNT)
			return -1;
		add |= 1u << c;
		p += len;
	} while (*p++ == ',');
	*causes |= add;
	return 0;
}

int ms_chrome_form_by_name(const char *name, enum ms_chrome_form *out)
{
	if (!strcmp(name, "events"))
		*out = MS_CHROME_EVENTS;
	else if (!strcmp(name, "samples"))
		*out = MS_CHROME_SAMPLES;
	else
		return -1;
	return 0;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcasecmp(s + n - m, suffix);
}

enum ms_format ms_format_by_extension(const char *path)
{
	static const struct {
		const char *suffix;
		enum ms_format f;
	} table[] = {
		/* longest first: ".speedscope.json" before ".json" */
		{ ".speedscope.json", MS_FORMAT_SPEEDSCOPE },
		{ ".msc", MS_FORMAT_CAPTURE },
		{ ".pb.gz", MS_FORMAT_PPROF },
		{ ".pprof", MS_FORMAT_PPROF },
		{ ".pb", MS_FORMAT_PPROF },
		{ ".folded", MS_FORMAT_FOLDED },
		{ ".collapsed", MS_FORMAT_FOLDED },
		{ ".txt", MS_FORMAT_FOLDED },
		{ ".json", MS_FORMAT_CHROME },
	};

	if (!path)
		return MS_FORMAT_NONE;
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (ends_with(path, table[i].suffix))
			return table[i].f;
	return MS_FORMAT_NONE;
}

enum ms_format ms_format_by_magic(const void *buf, size_t len)
{
	const unsigned char *p = buf;

	if (len >= 8 && !memcmp(p, MS_CAPTURE_MAGIC, 8))
		return MS_FORMAT_CAPTURE;
	if (len >= 2 && p[0] == 0x1f && p[1] == 0x8b)
		return MS_FORMAT_PPROF;
	return MS_FORMAT_NONE;
}

int ms_export(FILE *out, const struct ms_capture *cap, enum ms_format f,
	      const struct ms_export_options *o)
{
	static const struct ms_export_options defaults = MS_EXPORT_OPTIONS_INIT;
	struct ms_look_view look;
	int rc;

	if (!o)
		o = &defaults;
	if (f != MS_FORMAT_PPROF && f != MS_FORMAT_FOLDED && f != MS_FORMAT_CHROME &&
	    f != MS_FORMAT_SPEEDSCOPE)
		return ms_error("'%s' is not a format microscope exports", ms_format_name(f));
	/* every format writes the stacks the look gives (capture/look.h) */
	if (ms_look_build(&look, cap, o->look) < 0)
		return -1;
	cap = look.seen;
	switch (f) {
	case MS_FORMAT_PPROF:
		rc = ms_pprof_export(out, cap, o);
		break;
	case MS_FORMAT_FOLDED:
		rc = ms_folded_export(out, cap, o);
		break;
	case MS_FORMAT_CHROME:
		rc = ms_chrome_export(out, cap, o);
		break;
	default:
		rc = ms_speedscope_export(out, cap, o);
		break;
	}
	ms_look_release(&look);
	return rc;
}

/* ---- off-CPU time ---- */

uint64_t ms_interval_weight(const struct ms_capture *cap, const struct ms_export_options *o,
			    const struct ms_cap_interval *iv)
{
	/* an end missing: no duration, never one made up (capture.h) */
	if (iv->missing != MS_INTERVAL_COMPLETE || iv->end < iv->start)
		return 0;
	if (o && o->causes && !(o->causes & 1u << cap->evidence[iv->evidence].cause))
		return 0;
	return iv->end - iv->start;
}

int ms_export_check(const struct ms_capture *cap, enum ms_format f,
		    const struct ms_export_options *o, const char *what)
{
	bool off_cpu = o && o->weight == MS_WEIGHT_OFF_CPU;

	if (o && o->weight == MS_WEIGHT_SNAPSHOTS) {
		if (f != MS_FORMAT_FOLDED && f != MS_FORMAT_SPEEDSCOPE)
			return ms_error("%s weighs samples: --weight snapshots goes with folded or "
					"speedscope (pprof carries snapshots as a sample type of its "
					"own)", ms_format_name(f));
		if (!cap->n_waits)
			return ms_error("'%s' has no thread snapshots to weigh: record it with "
					"microscope record --python snapshot", what);
		if (o->causes)
			return ms_error("--cause chooses off-CPU intervals, which --weight "
					"snapshots does not weigh");
		return 0;
	}
	if (!o || (!off_cpu && !o->causes))
		return 0;
	if (off_cpu && f != MS_FORMAT_FOLDED && f != MS_FORMAT_SPEEDSCOPE)
		return ms_error("%s weighs samples, not off-CPU time: --weight off-cpu goes with "
				"folded or speedscope (pprof carries off-CPU time as a sample "
				"type of its own)", ms_format_name(f));
	if (!off_cpu && f != MS_FORMAT_PPROF)
		return ms_error("%s carries no off-CPU intervals to choose causes of: --cause goes "
				"with pprof, or with --weight off-cpu", ms_format_name(f));
	if (!(cap->flags & MS_CAPTURE_OFF_CPU))
		return ms_error("'%s' has no off-CPU intervals: record it with microscope record "
				"--off-cpu", what);
	return 0;
}

/* ---- loss ---- */

/* Short, for the one line of ms_export_note_loss(); ms-export(1) says what each means. */
static const char *const fact_names[] = {
	"times", "CPUs", "threads", "counts", "periods", "addresses", "modules",
	"frame marks", "stack ends", "problems", "info", "incomplete mark", "duty",
	"off-CPU time", "incomplete intervals", "labels", "thread snapshots",
};

unsigned ms_capture_facts(const struct ms_capture *cap)
{
	unsigned facts = 0;
	uint32_t i;

	if (cap->n_samples)
		facts |= MS_FACT_COUNTS;
	for (i = 0; i < cap->n_samples; i++) {
		const struct ms_cap_sample *s = &cap->samples[i];

		if (s->time && s->time != cap->samples[0].time)
			facts |= MS_FACT_TIMES;
		if (s->cpu)
			facts |= MS_FACT_CPUS;
		if (s->period)
			facts |= MS_FACT_PERIODS;
		if (s->end != MS_END_OUTERMOST && s->end != MS_END_FP_CHAIN && s->end != MS_END_UNKNOWN)
			facts |= MS_FACT_STACK_ENDS;
	}
	for (i = 0; i < cap->n_threads; i++)
		if (cap->threads[i].pid || cap->threads[i].tid || cap->threads[i].name)
			facts |= MS_FACT_THREADS;
	for (i = 0; i < cap->n_frames; i++) {
		if (!(cap->frames[i].flags & MS_FRAME_NO_ADDRESS))
			facts |= MS_FACT_ADDRESSES;
		if (cap->frames[i].flags & (MS_FRAME_RETURN | MS_FRAME_KERNEL | MS_FRAME_FILE_OFFSET))
			facts |= MS_FACT_FRAME_FLAGS;
	}
	if (cap->n_modules)
		facts |= MS_FACT_MODULES;
	if (cap->n_problems || cap->lost_kernel || cap->lost_collector || cap->throttled)
		facts |= MS_FACT_PROBLEMS;
	for (i = 0; i < cap->n_info; i++) {
		const char *key = cap->strings[cap->info[i].key];

		/* what an import or the producers say is not the recording's */
		if (strcmp(key, "import") && strcmp(key, "producers"))
			facts |= MS_FACT_INFO;
	}
	if (cap->flags & MS_CAPTURE_INCOMPLETE)
		facts |= MS_FACT_INCOMPLETE;
	if (cap->n_duty)
		facts |= MS_FACT_DUTY;
	if (cap->n_label_spans)
		facts |= MS_FACT_LABELS;
	if (cap->n_waits)
		facts |= MS_FACT_SNAPSHOTS;
	for (i = 0; i < cap->n_intervals; i++)
		facts |= cap->intervals[i].missing == MS_INTERVAL_COMPLETE ? MS_FACT_OFF_CPU :
			 MS_FACT_INCOMPLETE_INTERVALS;
	return facts;
}

unsigned ms_format_keeps(enum ms_format f, const struct ms_export_options *o)
{
	bool time = o && o->weight == MS_WEIGHT_TIME;
	bool off_cpu = o && o->weight == MS_WEIGHT_OFF_CPU;
	bool snapshots = o && o->weight == MS_WEIGHT_SNAPSHOTS;
	/* every export names why a stack ended early, as its outermost frame */
	unsigned ends = MS_FACT_STACK_ENDS;
	/* what a weight keeps of the samples, or of the intervals or snapshots instead */
	unsigned weighed = off_cpu ? MS_FACT_OFF_CPU : snapshots ? MS_FACT_SNAPSHOTS :
			   time ? MS_FACT_PERIODS | MS_FACT_DUTY : MS_FACT_COUNTS;

	switch (f) {
	case MS_FORMAT_CAPTURE:
		return ~0u;
	case MS_FORMAT_PPROF:
		/* the duty is in its time values; off-CPU time is a sample type */
		return MS_FACT_THREADS | MS_FACT_COUNTS | MS_FACT_PERIODS |
		       MS_FACT_ADDRESSES | MS_FACT_MODULES | MS_FACT_DUTY | MS_FACT_OFF_CPU |
		       MS_FACT_LABELS | MS_FACT_SNAPSHOTS | ends;
	case MS_FORMAT_FOLDED:
		return (o && o->thread_root ? MS_FACT_THREADS : 0) | weighed | ends;
	case MS_FORMAT_CHROME:
		if (o && o->chrome_form == MS_CHROME_SAMPLES)
			return MS_FACT_TIMES | MS_FACT_CPUS | MS_FACT_THREADS | MS_FACT_COUNTS |
			       ends;
		return MS_FACT_TIMES | MS_FACT_THREADS | MS_FACT_PERIODS | ends;
	case MS_FORMAT_SPEEDSCOPE:
		return MS_FACT_THREADS | weighed | ends;
	default:
		return 0;
	}
}

unsigned ms_export_note_loss(const struct ms_capture *cap, enum ms_format f,
			     const struct ms_export_options *o, const char *what)
{
	unsigned dropped = ms_capture_facts(cap) & ~ms_format_keeps(f, o);
	char list[512];
	size_t len = 0;

	if (!dropped)
		return 0;
	list[0] = '\0';
	for (unsigned i = 0; i < sizeof(fact_names) / sizeof(fact_names[0]); i++) {
		int n;

		if (!(dropped & (1u << i)))
			continue;
		n = snprintf(list + len, sizeof(list) - len, "%s%s", len ? ", " : "",
			     fact_names[i]);
		if (n < 0 || (size_t)n >= sizeof(list) - len)
			break;
		len += (size_t)n;
	}
	fprintf(stderr, "%s: note: %s drops %s of '%s' (ms-export(1))\n", ms_progname(),
		ms_format_name(f), list, what);
	return dropped;
}

/* ---- size ---- */

/* bytes as people read them: "1.6 GiB", "190 MiB", "12 KiB" */
static void human_bytes(char *buf, size_t size, uint64_t bytes)
{
	static const char *const units[] = { "bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	double v = (double)bytes;
	unsigned u = 0;

	while (v >= 1024 && u + 1 < sizeof(units) / sizeof(units[0])) {
		v /= 1024;
		u++;
	}
	if (!u)
		snprintf(buf, size, "%" PRIu64 " bytes", bytes);
	else
		snprintf(buf, size, v < 10 ? "%.1f %s" : "%.0f %s", v, units[u]);
}

uint64_t ms_export_warn_size(const struct ms_capture *cap, enum ms_format f,
			     const struct ms_export_options *o, const char *what, uint64_t limit)
{
	struct ms_export_options samples_form;
	uint64_t bytes, alt;
	char size[32], alt_size[32];

	if (f != MS_FORMAT_CHROME)
		return 0;
	bytes = ms_chrome_estimate(cap, o, limit);
	if (bytes <= limit)
		return bytes;
	human_bytes(size, sizeof(size), bytes);
	if (bytes == UINT64_MAX)
		snprintf(size, sizeof(size), "too large to estimate");
	if (o && o->chrome_form == MS_CHROME_SAMPLES) {
		ms_warn("the Chrome trace of '%s' will be about %s; --pprof or --speedscope "
			"write far less (-q: no warning)", what, size);
		return bytes;
	}
	/* the samples form grows with the samples alone: its bound is close enough */
	samples_form = o ? *o : (struct ms_export_options)MS_EXPORT_OPTIONS_INIT;
	samples_form.chrome_form = MS_CHROME_SAMPLES;
	alt = ms_chrome_estimate(cap, &samples_form, UINT64_MAX);
	human_bytes(alt_size, sizeof(alt_size), alt);
	ms_warn("the Chrome trace of '%s' will be about %s; --chrome-form samples writes at "
		"most %s, --pprof or --speedscope far less (-q: no warning)", what, size, alt_size);
	return bytes;
}

/* ---- output published whole ---- */

int ms_export_file(const char *path, const struct ms_capture *cap, enum ms_format f,
		   const struct ms_export_options *o)
{
	struct ms_publish pub;
	FILE *out;
	int fd, dupfd, rc;

	if (!path || !strcmp(path, "-")) {
		rc = ms_export(stdout, cap, f, o);
		/* A reader that went away (| head) is no error, as git has it. */
		if (ms_finish_stdout("the export") != MS_EXIT_OK)
			return -1;
		return rc;
	}
	/* A device or FIFO is written in place; a file is published whole. */
	fd = ms_publish_open(&pub, path);
	if (fd < 0)
		return -1;
	dupfd = dup(fd);
	out = dupfd < 0 ? NULL : fdopen(dupfd, "w");
	if (!out) {
		ms_error_errno("cannot open '%s'", path);
		if (dupfd >= 0)
			close(dupfd);
		ms_publish_abort(&pub);
		return -1;
	}
	rc = ms_export(out, cap, f, o);
	/* exporters leave write errors on out, unreported */
	if (fflush(out) || ferror(out))
		rc = ms_error_errno("cannot write '%s'", path);
	if (fclose(out) && rc == 0)
		rc = ms_error_errno("cannot write '%s'", path);
	if (rc < 0) {
		ms_publish_abort(&pub);
		errno = EIO;	/* EPIPE is stdout's alone (formats.h): a FIFO's was said above */
		return -1;
	}
	return ms_publish_commit(&pub);
}

/* ---- input read whole ---- */

struct ms_capture *ms_import_file(const char *path, enum ms_format f, const char *producer)
{
	const char *name = !path || !strcmp(path, "-") ? "stdin" : path;
	struct ms_capture *cap = NULL;
	unsigned char *buf;
	size_t len;

	if (f != MS_FORMAT_PPROF && f != MS_FORMAT_FOLDED) {
		ms_error("microscope imports pprof and folded files, not '%s'", ms_format_name(f));
		return NULL;
	}
	if (ms_read_file(path, MS_IMPORT_PPROF_MAX, &buf, &len) < 0)
		return NULL;
	if (f == MS_FORMAT_PPROF)
		cap = ms_pprof_import(buf, len, name, producer);
	else
		cap = ms_folded_import(buf, len, name, producer);
	free(buf);
	return cap;
}

int ms_import_write(const char *input, enum ms_format f, const char *output,
		    const char *producer)
{
	struct ms_capture *cap = ms_import_file(input, f, producer);
	int rc;

	if (!cap) {
		ms_error("no capture written to '%s'", output);
		return -1;
	}
	rc = ms_capture_write(cap, output);
	ms_capture_free(cap);
	return rc;
}

void ms_import_header(struct ms_header *h, const char *producer, const char *format)
{
	const char *sp = producer ? strchr(producer, ' ') : NULL;

	memset(h, 0, sizeof(*h));
	h->major = 1;
	h->n_producers = 1;
	snprintf(h->producers[0].name, sizeof(h->producers[0].name), "%.*s --import %s",
		 sp ? (int)(sp - producer) : (int)strlen(producer ? producer : "microscope"),
		 producer ? producer : "microscope", format);
	snprintf(h->producers[0].version, sizeof(h->producers[0].version), "%s",
		 sp ? sp + 1 : "");
}

struct ms_str ms_str_of(const char *s)
{
	return (struct ms_str){ s, (uint32_t)strlen(s) };
}
