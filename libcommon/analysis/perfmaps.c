/*
 * The perf-map settings of a capture (capture.h: ms_cap_perf_map) as the
 * problems and summary views show them: per process, what its last read
 * came to, and what each bound or refusal kept out of the profile, with
 * what it means and what to do. Only captures holding such rows show
 * anything, so every other view stays what it was.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "analysis/analysis-internal.h"
#include "jit/perfmap.h"
#include "stream/records.h"
#include "util/text.h"

/* The words below name the collector's bounds: they must stay its. */
_Static_assert(MS_PERFMAP_READ_MAX == 16u << 20, "a read's bound is no longer 16 MiB");
_Static_assert(MS_PERFMAP_FUNCS_MAX == 4u << 20, "the function bound is no longer 4 Mi");
_Static_assert(MS_PERFMAP_CODE_MAX == 64ull << 20, "the code budget is no longer 64 MiB");

/* What a read's status means, as one sentence after "STATUS: ". */
static const char *status_words(uint32_t status)
{
	switch (status) {
	case MS_JIT_READ_OK:
		return "read to its end";
	case MS_JIT_READ_BOUNDED:
		return "the last read stopped at its bound of 16 MiB; what the process wrote "
		       "after that was never read, so the functions named there have no name "
		       "(a longer recording reads on)";
	case MS_JIT_READ_MISSING:
		return "the process wrote no perf map, so its JIT code has no names (start it "
		       "with its runtime's perf-map option, such as python -X perf)";
	case MS_JIT_READ_STALE:
		return "written by an earlier process with this pid; not read, so its JIT code "
		       "has no names (remove the old map before recording)";
	case MS_JIT_READ_FAILED:
		return "opening or reading it failed, so its JIT code has no names (make the "
		       "map readable by the recorder)";
	default:
		return "a status this microscope does not know";
	}
}

/* The counted refusals of a setting, each with what it means for the profile. */
struct issue {
	const char *what;	/* JSON's key and text's label */
	const char *one, *many;	/* the thing counted */
	const char *meaning;
};
static const struct issue issues[] = {
	{ "malformed", "line", "lines",
	  "not START SIZE NAME: skipped, so the code they meant to name has none "
	  "(the program that writes the map wrote them)" },
	{ "over_max", "function", "functions",
	  "past the bound of 4 Mi functions a map: not kept, so their code has no name" },
	{ "no_code", "function", "functions",
	  "past the 64 MiB code budget: named, but no frame was proved from their code, "
	  "so stacks end in them (no unwind information)" },
	{ "code_unread", "function", "functions",
	  "whose code could not be read from the process (gone before it was read): "
	  "named, but stacks end in them (no unwind information)" },
};
#define N_ISSUES (sizeof(issues) / sizeof(issues[0]))

static uint64_t issue_count(const struct ms_cap_perf_map *x, size_t i)
{
	const uint64_t n[N_ISSUES] = { x->malformed, x->over_max, x->no_code, x->code_unread };

	return n[i];
}

/* "errno 13 (EACCES)", or "" without an errno. */
static void errno_text(char *buf, size_t size, uint32_t err)
{
	const char *name = err ? strerrorname_np((int)err) : NULL;

	if (!err)
		buf[0] = '\0';
	else if (name)
		snprintf(buf, size, "errno %" PRIu32 " (%s)", err, name);
	else
		snprintf(buf, size, "errno %" PRIu32, err);
}

/* Whether a setting has anything to report: a status other than ok, or a count. */
static bool to_report(const struct ms_cap_perf_map *x)
{
	if (x->status != MS_JIT_READ_OK)
		return true;
	for (size_t i = 0; i < N_ISSUES; i++)
		if (issue_count(x, i))
			return true;
	return false;
}

void ms_perf_maps_problems_text(FILE *out, const struct ms_capture *cap)
{
	uint32_t i, n_report = 0;
	size_t wcount = 1, k;
	char err[64];

	if (!cap->n_perf_maps)
		return;
	for (i = 0; i < cap->n_perf_maps; i++) {
		n_report += to_report(&cap->perf_maps[i]);
		for (k = 0; k < N_ISSUES; k++)
			if (ms_digits(issue_count(&cap->perf_maps[i], k)) > wcount)
				wcount = ms_digits(issue_count(&cap->perf_maps[i], k));
	}
	fprintf(out, "\nperf maps: %" PRIu32 " process%s read%s, %" PRIu32 " with something "
		"to report\n", cap->n_perf_maps, cap->n_perf_maps == 1 ? "" : "es",
		cap->n_perf_maps == 1 ? "s" : "", n_report);
	for (i = 0; i < cap->n_perf_maps; i++) {
		const struct ms_cap_perf_map *x = &cap->perf_maps[i];

		fprintf(out, "  pid %" PRIu32 "  ", x->pid);
		ms_text_put(out, cap->strings[x->path]);
		fprintf(out, ": %s, %" PRIu64 " function%s, %" PRIu64 " bytes read\n",
			ms_jit_read_status_name(x->status), x->functions,
			x->functions == 1 ? "" : "s", x->offset);
		if (x->status != MS_JIT_READ_OK) {
			errno_text(err, sizeof(err), x->err);
			fprintf(out, "    %s: %s%s%s\n", ms_jit_read_status_name(x->status),
				status_words(x->status), *err ? "; " : "", err);
		}
		for (k = 0; k < N_ISSUES; k++) {
			uint64_t n = issue_count(x, k);

			if (n)
				fprintf(out, "    %*" PRIu64 " %s %s\n", (int)wcount, n,
					n == 1 ? issues[k].one : issues[k].many, issues[k].meaning);
		}
	}
}

void ms_perf_maps_json(struct ms_json *j, const struct ms_capture *cap, bool detail)
{
	char err[64];

	ms_json_array_begin(j);
	for (uint32_t i = 0; i < cap->n_perf_maps; i++) {
		const struct ms_cap_perf_map *x = &cap->perf_maps[i];

		ms_json_object_begin(j);
		ms_json_key(j, "pid");
		ms_json_uint(j, x->pid);
		ms_json_key(j, "path");
		ms_json_string(j, cap->strings[x->path]);
		ms_json_key(j, "status");
		ms_json_string(j, ms_jit_read_status_name(x->status));
		ms_json_key(j, "functions");
		ms_json_uint(j, x->functions);
		if (detail) {
			errno_text(err, sizeof(err), x->err);
			ms_json_key(j, "meaning");
			ms_json_string(j, status_words(x->status));
			ms_json_key(j, "err");
			ms_json_uint(j, x->err);
			ms_json_key(j, "error");
			ms_json_string(j, err);
			ms_json_key(j, "time_ns");
			ms_json_uint(j, x->time);
			ms_json_key(j, "bytes_read");
			ms_json_uint(j, x->offset);
			ms_json_key(j, "code_bytes");
			ms_json_uint(j, x->code_bytes);
			ms_json_key(j, "issues");
			ms_json_array_begin(j);
			for (size_t k = 0; k < N_ISSUES; k++) {
				if (!issue_count(x, k))
					continue;
				ms_json_object_begin(j);
				ms_json_key(j, "what");
				ms_json_string(j, issues[k].what);
				ms_json_key(j, "count");
				ms_json_uint(j, issue_count(x, k));
				ms_json_key(j, "meaning");
				ms_json_string(j, issues[k].meaning);
				ms_json_object_end(j);
			}
			ms_json_array_end(j);
		}
		ms_json_object_end(j);
	}
	ms_json_array_end(j);
}

void ms_perf_maps_summary_text(FILE *out, const struct ms_capture *cap)
{
	uint32_t i;

	for (i = 0; i < cap->n_perf_maps; i++) {
		const struct ms_cap_perf_map *x = &cap->perf_maps[i];

		fputs(i ? "             " : "perf maps:   ", out);
		fprintf(out, "pid %" PRIu32 " ", x->pid);
		ms_text_put(out, cap->strings[x->path]);
		fprintf(out, ": %" PRIu64 " function%s, %s%s\n", x->functions,
			x->functions == 1 ? "" : "s", ms_jit_read_status_name(x->status),
			to_report(x) ? " (ms-analyze problems says more)" : "");
	}
}
