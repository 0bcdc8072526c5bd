/*
 * The Python processes of a capture (capture.h: ms_cap_py_process) as the
 * summary and problems views show them: per process, what the recording
 * found of its interpreter (version, how its layout was found, the
 * engine), and, for one whose frames could not be walked, why and what to
 * do. Only captures holding such rows show anything, so every other view
 * stays what it was.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "analysis/analysis-internal.h"
#include "python/layout.h"
#include "stream/records.h"
#include "util/text.h"

/* "3.11.7", from PY_VERSION_HEX; "unknown" for 0. */
static void version_text(char *buf, size_t size, uint32_t hex)
{
	if (!hex)
		snprintf(buf, size, "unknown");
	else
		snprintf(buf, size, "%u.%u.%u", hex >> 24, (hex >> 16) & 0xff, (hex >> 8) & 0xff);
}

static const char *source_text(uint32_t source)
{
	const char *name;

	if (!source)
		return "none";
	name = ms_py_source_name((enum ms_py_source)source);
	return strcmp(name, "?") ? name : "unknown";
}

/* What a status means, after "STATUS: ", when the row gives no reason. */
static const char *status_words(uint32_t status)
{
	switch (status) {
	case MS_PY_PROCESS_OK:
		return "its Python frames were walked";
	case MS_PY_PROCESS_UNSUPPORTED:
		return "this Python's version or layout is not supported: its samples show the "
		       "interpreter's C frames only";
	case MS_PY_PROCESS_FAILED:
		return "the process could not be read: its samples show the interpreter's C "
		       "frames only";
	default:
		return "a status this version does not know";
	}
}

static uint32_t count_not_ok(const struct ms_capture *cap)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < cap->n_py_processes; i++)
		n += cap->py_processes[i].status != MS_PY_PROCESS_OK;
	return n;
}

void ms_py_processes_summary_text(FILE *out, const struct ms_capture *cap)
{
	char version[32];

	for (uint32_t i = 0; i < cap->n_py_processes; i++) {
		const struct ms_cap_py_process *x = &cap->py_processes[i];

		version_text(version, sizeof(version), x->version_hex);
		fputs(i ? "             " : "python:      ", out);
		fprintf(out, "pid %" PRIu32 " ", x->pid);
		ms_text_put(out, cap->strings[x->path]);
		fprintf(out, ": %s, Python %s, layout from %s, engine ",
			ms_py_process_status_name(x->status), version, source_text(x->source));
		ms_text_put(out, cap->strings[x->engine]);
		fputs(x->status != MS_PY_PROCESS_OK ? " (ms-analyze problems says more)\n" : "\n",
		      out);
	}
}

void ms_py_processes_problems_text(FILE *out, const struct ms_capture *cap)
{
	uint32_t n = count_not_ok(cap);
	char version[32];

	if (!n)
		return;
	fprintf(out, "\npython: %" PRIu32 " finding%s of %" PRIu32 " whose frames were not walked\n",
		n, n == 1 ? "" : "s", cap->n_py_processes);
	for (uint32_t i = 0; i < cap->n_py_processes; i++) {
		const struct ms_cap_py_process *x = &cap->py_processes[i];
		const char *reason = cap->strings[x->reason];

		if (x->status == MS_PY_PROCESS_OK)
			continue;
		version_text(version, sizeof(version), x->version_hex);
		fprintf(out, "  pid %" PRIu32 "  ", x->pid);
		ms_text_put(out, cap->strings[x->path]);
		fprintf(out, " (Python %s): %s: ", version, ms_py_process_status_name(x->status));
		ms_text_put(out, *reason ? reason : status_words(x->status));
		fputc('\n', out);
	}
}

void ms_py_processes_json(struct ms_json *j, const struct ms_capture *cap, bool problems_only)
{
	char version[32];

	ms_json_array_begin(j);
	for (uint32_t i = 0; i < cap->n_py_processes; i++) {
		const struct ms_cap_py_process *x = &cap->py_processes[i];

		if (problems_only && x->status == MS_PY_PROCESS_OK)
			continue;
		version_text(version, sizeof(version), x->version_hex);
		ms_json_object_begin(j);
		ms_json_key(j, "pid");
		ms_json_uint(j, x->pid);
		ms_json_key(j, "time_ns");
		ms_json_uint(j, x->time);
		ms_json_key(j, "status");
		ms_json_string(j, ms_py_process_status_name(x->status));
		ms_json_key(j, "version");
		ms_json_string(j, version);
		ms_json_key(j, "version_hex");
		ms_json_uint(j, x->version_hex);
		ms_json_key(j, "source");
		ms_json_string(j, source_text(x->source));
		ms_json_key(j, "path");
		ms_json_string(j, cap->strings[x->path]);
		ms_json_key(j, "engine");
		ms_json_string(j, cap->strings[x->engine]);
		ms_json_key(j, "reason");
		ms_json_string(j, *cap->strings[x->reason] ? cap->strings[x->reason] :
				  x->status == MS_PY_PROCESS_OK ? "" : status_words(x->status));
		ms_json_object_end(j);
	}
	ms_json_array_end(j);
}

bool ms_py_processes_any_problem(const struct ms_capture *cap)
{
	return count_not_ok(cap) > 0;
}
