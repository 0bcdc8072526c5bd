/*
 * summary: what was recorded and how far it can be trusted.
 */
#include "analysis/analysis.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/intervals.h"
#include "analysis/analysis-internal.h"
#include "analysis/present.h"
#include "capture/funcs.h"
#include "capture/weight.h"
#include "util/text.h"
#include "util/json.h"
#include "stream/records.h"
#include "util/error.h"

double ms_percent(uint64_t n, uint64_t all)
{
	return all ? 100.0 * (double)n / (double)all : 0.0;
}

static int cmp_end(const void *a, const void *b)
{
	const struct ms_summary_end *ea = a, *eb = b;

	if (ea->samples != eb->samples)
		return ea->samples > eb->samples ? -1 : 1;
	if (ea->reason != eb->reason)
		return ea->reason < eb->reason ? -1 : 1;
	return 0;
}

/* A capture has a handful of distinct reasons: a linear search is enough. */
static int count_end(struct ms_summary *s, uint32_t reason, uint64_t count, uint32_t *alloc)
{
	uint32_t i;

	for (i = 0; i < s->n_ends; i++)
		if (s->ends[i].reason == reason) {
			s->ends[i].samples += count;
			return 0;
		}
	if (s->n_ends == *alloc) {
		uint32_t grow = *alloc ? 2 * *alloc : 16;
		struct ms_summary_end *e = realloc(s->ends, grow * sizeof(*e));

		if (!e)
			return -1;
		s->ends = e;
		*alloc = grow;
	}
	s->ends[s->n_ends].reason = reason;
	s->ends[s->n_ends++].samples = count;
	return 0;
}

/*
 * The budget facts of the duty rows (analysis.h). The mean weighs each
 * duty by the time it was in force between the first and the last sample.
 */
static void summarize_duty(struct ms_summary *s, const struct ms_capture *cap)
{
	uint64_t t0 = s->first_time, t1 = s->last_time, at = t0;
	uint32_t i, duty = ms_capture_duty_at(cap, t0);
	double sum = 0;

	s->duty_changes = cap->n_duty;
	if (!cap->n_duty)
		return;
	s->budget_ppm = cap->duty[cap->n_duty - 1].budget_ppm;
	s->lowest_duty_ppm = MS_DUTY_FULL;
	for (i = 0; i < cap->n_duty; i++)
		if (cap->duty[i].duty_ppm < s->lowest_duty_ppm)
			s->lowest_duty_ppm = cap->duty[i].duty_ppm;
	if (t1 <= t0) {
		s->mean_duty_ppm = duty;
		return;
	}
	for (i = 0; i < cap->n_duty; i++) {
		const struct ms_cap_duty *d = &cap->duty[i];

		if (d->time <= t0)
			continue;
		if (d->time >= t1)
			break;
		sum += (double)duty * (double)(d->time - at);
		at = d->time;
		duty = d->duty_ppm;
	}
	sum += (double)duty * (double)(t1 - at);
	s->mean_duty_ppm = (uint32_t)(sum / (double)(t1 - t0) + 0.5);
}

/* Off-CPU time of the whole capture: complete intervals summed, incomplete ones counted apart. */
static void summarize_off_cpu(struct ms_summary *s, const struct ms_capture *cap)
{
	uint32_t i;

	s->off_cpu = cap->flags & MS_CAPTURE_OFF_CPU;
	for (i = 0; s->off_cpu && i < cap->n_intervals; i++) {
		const struct ms_cap_interval *iv = &cap->intervals[i];
		uint32_t m = iv->missing < MS_INTERVAL_MISSING_COUNT ? iv->missing : 0;
		uint64_t ns;

		if (iv->missing != MS_INTERVAL_COMPLETE) {
			s->off_cpu_incomplete++;
			s->off_cpu_missing[m]++;
			continue;
		}
		ns = ms_interval_clipped(iv, 0, UINT64_MAX);
		s->off_cpu_ns = ms_weight_add(s->off_cpu_ns, ns);
		s->off_cpu_intervals++;
		s->off_cpu_cause_ns[ms_interval_cause(cap, iv)] =
			ms_weight_add(s->off_cpu_cause_ns[ms_interval_cause(cap, iv)], ns);
	}
}

int ms_summary_compute(struct ms_summary *s, const struct ms_capture *cap)
{
	uint32_t i, ends_alloc = 0;
	uint64_t pid;
	const char *command;

	memset(s, 0, sizeof(*s));
	command = ms_capture_info_text(cap, "command");
	s->command = command ? command : "";
	/* microscope record's options as used (cmd/microscope/options.h) */
	s->record_options = ms_capture_info_text(cap, "record-options");
	s->import = ms_capture_info_text(cap, "import");
	s->import_file = ms_capture_info_text(cap, "import-file");
	if (ms_capture_info_number(cap, "pid", &pid))
		s->pid = (uint32_t)pid;
	else if (cap->n_threads)	/* sorted by pid: the first process seen */
		s->pid = cap->threads[0].pid;
	s->incomplete = cap->flags & MS_CAPTURE_INCOMPLETE;
	s->lost_kernel = cap->lost_kernel;
	s->lost_collector = cap->lost_collector;
	s->samples = ms_capture_sample_count(cap);
	ms_capture_span(cap, &s->start_time, &s->end_time);
	s->exit_code = cap->target_exit_code;
	if (cap->n_samples) {
		s->first_time = cap->samples[0].time;
		s->last_time = cap->samples[cap->n_samples - 1].time;
	}

	s->n_threads = cap->n_threads;
	if (cap->n_threads && !(s->threads = calloc(cap->n_threads, sizeof(*s->threads))))
		goto oom;
	for (i = 0; i < cap->n_threads; i++) {
		s->threads[i].pid = cap->threads[i].pid;
		s->threads[i].tid = cap->threads[i].tid;
		s->threads[i].name = cap->strings[cap->threads[i].name];
	}
	for (i = 0; i < cap->n_samples; i++) {
		const struct ms_cap_sample *sa = &cap->samples[i];

		s->period += sa->period;
		s->weight = ms_weight_add(s->weight, ms_capture_sample_weight(cap, sa));
		if (sa->thread < cap->n_threads)
			s->threads[sa->thread].samples += sa->count;
		if (count_end(s, sa->end, sa->count, &ends_alloc))
			goto oom;
	}
	if (s->n_ends)
		qsort(s->ends, s->n_ends, sizeof(*s->ends), cmp_end);
	s->time_event = ms_capture_time_event(cap);
	summarize_duty(s, cap);
	/*
	 * Only frames that wait for `microscope symbolize` are deferred: a
	 * module without a build id ([vdso], say) cannot be proved later, and
	 * advising to symbolize again would not name it.
	 */
	for (i = 0; i < cap->n_modules; i++)
		if (cap->modules[i].status == MS_CAP_MODULE_DEFERRED)
			s->deferred = true;
	if (ms_unsymbolized_samples(cap, &s->unsymbolized)) {
		ms_summary_release(s);
		return -1;
	}
	summarize_off_cpu(s, cap);
	return 0;
oom:
	ms_summary_release(s);
	return ms_error("out of memory summarizing %" PRIu32 " sample rows", cap->n_samples);
}

void ms_summary_release(struct ms_summary *s)
{
	free(s->threads);
	free(s->ends);
	memset(s, 0, sizeof(*s));
}

uint64_t ms_summary_duration(const struct ms_summary *s)
{
	return s->last_time >= s->first_time ? s->last_time - s->first_time : 0;
}

/* What a stack end means, for people. */
static const char *end_words(uint32_t reason)
{
	switch (reason) {
	case MS_END_OUTERMOST: return "complete";
	case MS_END_FP_CHAIN: return "frame-pointer chain";
	case MS_END_NO_CFI: return "no unwind information";
	case MS_END_MISSING_REGISTER: return "a register was lost";
	case MS_END_STACK_COPY: return "the stack copy ended";
	case MS_END_CFA_NOT_OUTWARDS: return "the unwinder went backwards";
	case MS_END_NO_MODULE: return "an address in no module";
	case MS_END_DEPTH: return "too deep";
	case MS_END_KERNEL_ONLY: return "kernel threads";
	case MS_END_INTERPRETED_UNKNOWN: return "Python frames not known";
	case MS_END_INTERPRETED_UNPLACED: return "Python frames not placed among native ones";
	case MS_END_INTERPRETED_TRUNCATED: return "Python frames cut short";
	default: return "not known";
	}
}

/*
 * "stacks:      complete 95.8%; cut short 4.2%: the stack copy ended 3.0%,
 * no unwind information 1.2%": the complete share first, then the ends
 * known to be cut (capture/funcs.h), then the others, each by share.
 */
static void write_stacks(FILE *out, const struct ms_summary *s)
{
	uint64_t complete = 0, cut = 0;
	const char *sep = "";
	uint32_t i;

	fputs("stacks:      ", out);
	if (!s->n_ends) {
		fputs("none (no samples)\n", out);
		return;
	}
	/* A profile imported from a format that keeps no end reasons: not "unknown 100 %". */
	if (s->import && s->n_ends == 1 && s->ends[0].reason == MS_END_UNKNOWN) {
		fprintf(out, "how they end is not known (%s keeps none)\n", s->import);
		return;
	}
	for (i = 0; i < s->n_ends; i++) {
		if (s->ends[i].reason == MS_END_OUTERMOST)
			complete = s->ends[i].samples;
		else if (ms_stack_end_truncated(s->ends[i].reason))
			cut += s->ends[i].samples;
	}
	if (complete || !cut) {
		fprintf(out, "complete %.1f%%", ms_percent(complete, s->samples));
		sep = "; ";
	}
	if (cut) {
		fprintf(out, "%scut short %.1f%%:", sep, ms_percent(cut, s->samples));
		for (i = 0, sep = " "; i < s->n_ends; i++)
			if (ms_stack_end_truncated(s->ends[i].reason)) {
				fprintf(out, "%s%s %.1f%%", sep, end_words(s->ends[i].reason),
					ms_percent(s->ends[i].samples, s->samples));
				sep = ", ";
			}
		sep = "; ";
	}
	for (i = 0; i < s->n_ends; i++) {
		uint32_t r = s->ends[i].reason;

		if (r == MS_END_OUTERMOST || ms_stack_end_truncated(r))
			continue;
		fprintf(out, "%s%s %.1f%%", sep, end_words(r), ms_percent(s->ends[i].samples, s->samples));
		if (r == MS_END_FP_CHAIN)
			fputs(" (complete when the program keeps frame pointers)", out);
		sep = "; ";
	}
	fputc('\n', out);
}

void ms_summary_write_header(FILE *out, const struct ms_summary *s)
{
	ms_summary_write_header_color(out, s, false);
}

void ms_summary_write_header_color(FILE *out, const struct ms_summary *s, bool color)
{
	char n[32], of[32];
	bool warn = s->incomplete || s->lost_kernel || s->lost_collector;

	ms_style_put(out, color && warn, MS_STYLE_WARN);
	if (s->incomplete)
		fputs("warning: this capture is incomplete: the recording was cut short\n", out);
	/* Lost records are time the profile does not show: said first, as perf report does. */
	if (s->lost_kernel)
		fprintf(out, "warning: %" PRIu64 " record%s lost by the kernel (its ring buffer "
			"was full): sample less often (-F) or give it more pages (--mmap-pages)\n",
			s->lost_kernel, s->lost_kernel == 1 ? " was" : "s were");
	if (s->lost_collector)
		fprintf(out, "warning: %" PRIu64 " record%s lost by the collector (the stages "
			"after it could not keep up): sample less often (-F)\n", s->lost_collector,
			s->lost_collector == 1 ? " was" : "s were");
	ms_style_put(out, color && warn, MS_STYLE_RESET);
	write_stacks(out, s);
	if (!s->unsymbolized) {
		fputs("names:       every frame has a name\n", out);
		return;
	}
	ms_format_count(n, sizeof(n), s->unsymbolized);
	ms_format_count(of, sizeof(of), s->samples);
	fprintf(out, "names:       %.1f%% of samples (%s of %s) have a frame without a name; %s\n",
		ms_percent(s->unsymbolized, s->samples), n, of,
		s->deferred ? "symbolization was deferred: run microscope symbolize" :
			      "ms-analyze problems lists them");
}

/* The threads with samples: one without any tells nothing (--json lists them all). */
static void write_threads(FILE *out, const struct ms_summary *s)
{
	size_t wpid = 3, wtid = 3, wsamples = 7;
	uint32_t i;

	for (i = 0; i < s->n_threads; i++) {
		const struct ms_summary_thread *t = &s->threads[i];

		if (!t->samples)
			continue;
		if (ms_digits(t->pid) > wpid)
			wpid = ms_digits(t->pid);
		if (ms_digits(t->tid) > wtid)
			wtid = ms_digits(t->tid);
		if (ms_digits(t->samples) > wsamples)
			wsamples = ms_digits(t->samples);
	}
	fprintf(out, "  %*s  %*s  %*s  %6s  name\n", (int)wpid, "pid", (int)wtid, "tid",
		(int)wsamples, "samples", "share");
	for (i = 0; i < s->n_threads; i++) {
		const struct ms_summary_thread *t = &s->threads[i];

		if (!t->samples)
			continue;
		fprintf(out, "  %*" PRIu32 "  %*" PRIu32 "  %*" PRIu64 "  %5.1f%%  ",
			(int)wpid, t->pid, (int)wtid, t->tid, (int)wsamples, t->samples,
			ms_percent(t->samples, s->samples));
		ms_text_put(out, *t->name ? t->name : "(no name)");
		fputc('\n', out);
	}
}

static void write_problems(FILE *out, const struct ms_capture *cap)
{
	size_t wstage = 5, wcode = 4, wcount = 5;
	uint32_t i;

	for (i = 0; i < cap->n_problems; i++) {
		const struct ms_cap_problem *p = &cap->problems[i];
		size_t w;

		if ((w = ms_text_width(cap->strings[p->stage])) > wstage)
			wstage = w;
		if ((w = ms_text_width(cap->strings[p->code])) > wcode)
			wcode = w;
		if ((w = ms_digits(p->count)) > wcount)
			wcount = w;
	}
	fprintf(out, "  %-*s  %-*s  %*s  detail\n", (int)wstage, "stage", (int)wcode, "code",
		(int)wcount, "count");
	for (i = 0; i < cap->n_problems; i++) {
		const struct ms_cap_problem *p = &cap->problems[i];

		fputs("  ", out);
		ms_text_pad(out, cap->strings[p->stage], wstage, 0);
		fputs("  ", out);
		ms_text_pad(out, cap->strings[p->code], wcode, 0);
		fprintf(out, "  %*" PRIu64 "  ", (int)wcount, p->count);
		ms_text_put(out, cap->strings[p->detail]);
		fputc('\n', out);
	}
}

/* A share in millionths as a percentage: 2.0%, or 0.25% under one percent. */
static void put_ppm(FILE *out, uint32_t ppm)
{
	char buf[32];

	ms_format_ppm(buf, sizeof(buf), ppm);
	fputs(buf, out);
}

/*
 * The time the samples stand for, for a time event; and when sampling was
 * paused to keep to a budget, how much: the reason that time is more than
 * the periods, and that sample counts are not shares of time.
 */
static void write_time(FILE *out, const struct ms_summary *s)
{
	char buf[64];

	if (s->time_event && s->samples && !s->period) {
		/* a folded profile: counts, no periods; 0 ns would be a wrong answer */
		fputs("cpu time:    not known (the samples carry no periods)\n", out);
	} else if (s->time_event) {
		ms_format_duration(buf, sizeof(buf), s->weight);
		fprintf(out, "cpu time:    %s, from the samples' periods%s\n", buf,
			s->duty_changes ? ", scaled up where sampling was paused" : "");
	}
	if (!s->duty_changes)
		return;
	fputs("budget:      ", out);
	put_ppm(out, s->budget_ppm);
	fputs(" of one CPU; sampling was on ", out);
	put_ppm(out, s->mean_duty_ppm);
	fputs(" of the time on average, ", out);
	put_ppm(out, s->lowest_duty_ppm);
	fprintf(out, " at the least (%" PRIu32 " change%s)\n", s->duty_changes,
		s->duty_changes == 1 ? "" : "s");
}

/*
 * "off cpu:     1.2 s in 40 complete intervals (sleeping 1.1 s, preempted
 * 0.1 s); 2 incomplete, in no total (ended-inside 2)": only when recorded.
 */
static void write_off_cpu(FILE *out, const struct ms_summary *s)
{
	const char *sep = " (";
	char buf[64];
	uint32_t c, m;

	if (!s->off_cpu)
		return;
	ms_format_duration(buf, sizeof(buf), s->off_cpu_ns);
	fprintf(out, "off cpu:     %s in %" PRIu64 " complete interval%s", buf, s->off_cpu_intervals,
		s->off_cpu_intervals == 1 ? "" : "s");
	for (c = 0; c < MS_CAUSE_COUNT; c++) {
		if (!s->off_cpu_cause_ns[c])
			continue;
		ms_format_duration(buf, sizeof(buf), s->off_cpu_cause_ns[c]);
		fprintf(out, "%s%s %s", sep, ms_off_cpu_cause_name(c), buf);
		sep = ", ";
	}
	if (*sep == ',')
		fputc(')', out);
	if (s->off_cpu_incomplete) {
		fprintf(out, "; %" PRIu64 " incomplete, in no total", s->off_cpu_incomplete);
		for (m = 0, sep = " ("; m < MS_INTERVAL_MISSING_COUNT; m++) {
			if (!s->off_cpu_missing[m])
				continue;
			fprintf(out, "%s%s %" PRIu64, sep, m ? ms_interval_missing_name(m) : "unknown",
				s->off_cpu_missing[m]);
			sep = ", ";
		}
		fputc(')', out);
	}
	fputc('\n', out);
}

/* How long the recording was, in words, into buf. */
static void recorded_for(char *buf, size_t size, const struct ms_summary *s)
{
	char d[32];

	if (s->import && !s->start_time && s->end_time) {
		/* an imported profile's duration: its start and end are no clock's */
		ms_format_duration(d, sizeof(d), s->end_time);
		snprintf(buf, size, "%s (the profile's duration)", d);
	} else if (s->start_time && s->end_time >= s->start_time) {
		ms_format_duration(d, sizeof(d), s->end_time - s->start_time);
		snprintf(buf, size, "%s", d);
	} else if (s->first_time || s->last_time) {
		ms_format_duration(d, sizeof(d), ms_summary_duration(s));
		snprintf(buf, size, "%s between the first and last sample", d);
	} else {
		snprintf(buf, size, "for a time not known (the samples carry no times)");
	}
}

/* "2,001 samples at 999 Hz" for a clock; "of cycles, one per 1,827,827" for another event. */
static void write_samples(FILE *out, const struct ms_capture *cap, const struct ms_summary *s)
{
	const char *event = ms_capture_info_text(cap, "event");
	char n[32], r[32];

	ms_format_count(n, sizeof(n), s->samples);
	fprintf(out, "%s sample%s", n, s->samples == 1 ? "" : "s");
	if (!s->samples || !s->period)
		return;
	if (s->time_event) {
		/* samples per second of CPU time: the frequency asked for */
		ms_format_rate(r, sizeof(r), (double)s->samples * 1e9 / (double)s->period);
		fprintf(out, " at %s", r);
		if (event && strcmp(event, "cpu-clock"))
			fprintf(out, " (%s)", event);
		return;
	}
	ms_format_count(r, sizeof(r), s->period / s->samples);
	fputs(" of ", out);
	ms_text_put(out, event ? event : "an event");
	fprintf(out, ", one per %s on average", r);
}

static int write_text(FILE *out, const struct ms_capture *cap, const struct ms_summary *s,
		      bool color)
{
	char buf[96], a[32], b[32];
	uint32_t i, idle;

	ms_summary_write_header_color(out, s, color);
	fputs("command:     ", out);
	ms_text_put(out, *s->command ? s->command : "(not known)");
	if (s->pid || s->exit_code >= 0) {
		fputs(" (", out);
		if (s->pid)
			fprintf(out, "pid %" PRIu32 "%s", s->pid, s->exit_code >= 0 ? ", " : "");
		if (s->exit_code >= 0)
			fprintf(out, "exit code %" PRId32, s->exit_code);
		fputc(')', out);
	}
	fputc('\n', out);
	if (s->import) {
		fprintf(out, "source:      imported from %s", s->import);
		if (s->import_file) {
			fputs(" ('", out);
			ms_text_put(out, s->import_file);
			fputs("')", out);
		}
		fputc('\n', out);
	}
	recorded_for(buf, sizeof(buf), s);
	fprintf(out, "recorded:    %s, ", buf);
	write_samples(out, cap, s);
	for (i = 0, idle = 0; i < s->n_threads; i++)
		idle += !s->threads[i].samples;
	fprintf(out, ", %" PRIu32 " thread%s\n", s->n_threads - idle,
		s->n_threads - idle == 1 ? "" : "s");
	write_time(out, s);
	write_off_cpu(out, s);
	ms_perf_maps_summary_text(out, cap);
	ms_py_processes_summary_text(out, cap);
	ms_labels_summary_text(out, cap);
	ms_tasks_summary_text(out, cap);
	if (ms_jit_objects_summary_text(out, cap))
		return -1;
	fprintf(out, "threads:     %" PRIu32, s->n_threads - idle);
	if (idle)
		fprintf(out, " with samples (%" PRIu32 " more without, not listed)", idle);
	fputc('\n', out);
	if (idle < s->n_threads)
		write_threads(out, s);
	if (!cap->lost_kernel && !cap->lost_collector) {
		fputs("lost:        no records\n", out);
	} else {
		ms_format_count(a, sizeof(a), cap->lost_kernel);
		ms_format_count(b, sizeof(b), cap->lost_collector);
		fprintf(out, "lost:        records: %s by the kernel, %s by the collector\n", a, b);
	}
	if (cap->throttled) {
		ms_format_count(a, sizeof(a), cap->throttled);
		fprintf(out, "throttled:   the kernel slowed sampling %s time%s\n", a,
			cap->throttled == 1 ? "" : "s");
	}
	if (!cap->n_problems) {
		fputs("problems:    none\n", out);
	} else {
		fprintf(out, "problems:    %" PRIu32 " kind%s\n", cap->n_problems,
			cap->n_problems == 1 ? "" : "s");
		write_problems(out, cap);
	}
	if (s->record_options) {
		fputs("options:     ", out);
		ms_text_put(out, s->record_options);
		fputc('\n', out);
	}
	return 0;
}

/* {"source":"intervals","unit":"ns","total":..,"intervals":..,"causes":{..},"incomplete":..,"missing":{..}} */
static void write_off_cpu_json(struct ms_json *j, const struct ms_summary *s)
{
	uint32_t c, m;

	ms_json_object_begin(j);
	ms_json_key(j, "source");
	ms_json_string(j, "intervals");
	ms_json_key(j, "unit");
	ms_json_string(j, "ns");
	ms_json_key(j, "total");
	ms_json_uint(j, s->off_cpu_ns);
	ms_json_key(j, "intervals");
	ms_json_uint(j, s->off_cpu_intervals);
	ms_json_key(j, "causes");
	ms_json_object_begin(j);
	for (c = 0; c < MS_CAUSE_COUNT; c++) {
		ms_json_key(j, ms_off_cpu_cause_name(c));
		ms_json_uint(j, s->off_cpu_cause_ns[c]);
	}
	ms_json_object_end(j);
	ms_json_key(j, "incomplete");
	ms_json_uint(j, s->off_cpu_incomplete);
	ms_json_key(j, "missing");
	ms_json_object_begin(j);
	for (m = 1; m < MS_INTERVAL_MISSING_COUNT; m++) {
		ms_json_key(j, ms_interval_missing_name(m));
		ms_json_uint(j, s->off_cpu_missing[m]);
	}
	ms_json_object_end(j);
	ms_json_object_end(j);
}

static int write_json(FILE *out, const struct ms_capture *cap, const struct ms_summary *s)
{
	struct ms_json j;
	uint32_t i;

	ms_json_init(&j, out);
	ms_json_object_begin(&j);
	ms_json_key(&j, "command");
	ms_json_string(&j, s->command);
	ms_json_key(&j, "pid");
	ms_json_uint(&j, s->pid);
	ms_json_key(&j, "record_options");
	if (s->record_options)
		ms_json_string(&j, s->record_options);
	else
		ms_json_null(&j);
	ms_json_key(&j, "incomplete");
	ms_json_bool(&j, s->incomplete);
	ms_json_key(&j, "duration_ns");
	ms_json_uint(&j, ms_summary_duration(s));
	ms_json_key(&j, "start_time_ns");
	if (s->start_time)
		ms_json_uint(&j, s->start_time);
	else
		ms_json_null(&j);
	ms_json_key(&j, "end_time_ns");
	if (s->end_time)
		ms_json_uint(&j, s->end_time);
	else
		ms_json_null(&j);
	ms_json_key(&j, "samples");
	ms_json_uint(&j, s->samples);
	ms_json_key(&j, "period");
	ms_json_uint(&j, s->period);
	ms_json_key(&j, "cpu_time_ns");
	if (s->time_event)
		ms_json_uint(&j, s->weight);
	else
		ms_json_null(&j);
	ms_json_key(&j, "off_cpu");
	if (s->off_cpu)
		write_off_cpu_json(&j, s);
	else
		ms_json_null(&j);
	/* only with perf-map settings, so that every other capture's JSON stays as it was */
	if (cap->n_perf_maps) {
		ms_json_key(&j, "perf_maps");
		ms_perf_maps_json(&j, cap, false);
	}
	/* only with Python process rows, likewise */
	if (cap->n_py_processes) {
		ms_json_key(&j, "python");
		ms_py_processes_json(&j, cap, false);
	}
	/* only with label spans, likewise */
	if (cap->n_label_spans) {
		ms_json_key(&j, "labels");
		ms_labels_json(&j, cap);
	}
	/* only with tasks, likewise */
	if (cap->n_tasks) {
		ms_json_key(&j, "tasks");
		ms_tasks_summary_json(&j, cap);
	}
	/* only with jit-object modules, likewise */
	if (ms_jit_objects_json(&j, cap))
		return -1;
	ms_json_key(&j, "budget");
	if (s->duty_changes) {
		ms_json_object_begin(&j);
		ms_json_key(&j, "budget_ppm");
		ms_json_uint(&j, s->budget_ppm);
		ms_json_key(&j, "duty_changes");
		ms_json_uint(&j, s->duty_changes);
		ms_json_key(&j, "lowest_duty_ppm");
		ms_json_uint(&j, s->lowest_duty_ppm);
		ms_json_key(&j, "mean_duty_ppm");
		ms_json_uint(&j, s->mean_duty_ppm);
		ms_json_object_end(&j);
	} else {
		ms_json_null(&j);
	}

	ms_json_key(&j, "threads");
	ms_json_array_begin(&j);
	for (i = 0; i < s->n_threads; i++) {
		ms_json_object_begin(&j);
		ms_json_key(&j, "pid");
		ms_json_uint(&j, s->threads[i].pid);
		ms_json_key(&j, "tid");
		ms_json_uint(&j, s->threads[i].tid);
		ms_json_key(&j, "name");
		ms_json_string(&j, s->threads[i].name);
		ms_json_key(&j, "samples");
		ms_json_uint(&j, s->threads[i].samples);
		ms_json_object_end(&j);
	}
	ms_json_array_end(&j);

	ms_json_key(&j, "lost");
	ms_json_object_begin(&j);
	ms_json_key(&j, "kernel");
	ms_json_uint(&j, cap->lost_kernel);
	ms_json_key(&j, "collector");
	ms_json_uint(&j, cap->lost_collector);
	ms_json_object_end(&j);
	ms_json_key(&j, "throttled");
	ms_json_uint(&j, cap->throttled);
	ms_json_key(&j, "exit_code");
	if (s->exit_code >= 0)
		ms_json_int(&j, s->exit_code);
	else
		ms_json_null(&j);

	ms_json_key(&j, "stack_ends");
	ms_json_array_begin(&j);
	for (i = 0; i < s->n_ends; i++) {
		ms_json_object_begin(&j);
		ms_json_key(&j, "reason");
		ms_json_string(&j, ms_stack_end_name(s->ends[i].reason));
		ms_json_key(&j, "samples");
		ms_json_uint(&j, s->ends[i].samples);
		ms_json_key(&j, "percent");
		ms_json_double(&j, ms_percent(s->ends[i].samples, s->samples), 2);
		ms_json_object_end(&j);
	}
	ms_json_array_end(&j);

	ms_json_key(&j, "unsymbolized");
	ms_json_object_begin(&j);
	ms_json_key(&j, "samples");
	ms_json_uint(&j, s->unsymbolized);
	ms_json_key(&j, "percent");
	ms_json_double(&j, ms_percent(s->unsymbolized, s->samples), 2);
	ms_json_key(&j, "deferred");
	ms_json_bool(&j, s->deferred);
	ms_json_object_end(&j);

	ms_json_key(&j, "problems");
	ms_view_json_problem_rows(&j, cap);
	ms_json_object_end(&j);
	fputc('\n', out);
	return 0;
}

int ms_summary_write_out(const struct ms_view_out *o, const struct ms_capture *cap)
{
	struct ms_summary s;
	int res;

	if (ms_summary_compute(&s, cap))
		return -1;
	res = o->json ? write_json(o->f, cap, &s) : write_text(o->f, cap, &s, o->color);
	ms_summary_release(&s);
	return res;
}

int ms_summary_write(FILE *out, const struct ms_capture *cap, bool json)
{
	struct ms_view_out o = { .f = out, .json = json };

	return ms_summary_write_out(&o, cap);
}
