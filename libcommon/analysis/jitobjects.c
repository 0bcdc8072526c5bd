/*
 * JIT objects (code a process registered through the GDB JIT interface,
 * modules of kind jit-object) as the problems and summary views show
 * them: what each problem the stages count about them means for the
 * profile and what to do, and per process how many objects its samples
 * ran in. Only captures holding them show anything, so every other view
 * stays what it was.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis-internal.h"
#include "stream/records.h"
#include "util/error.h"
#include "util/text.h"

/* The words below name the recording's bound: they must stay its. */
_Static_assert(MS_JIT_OBJECT_MAX == 4u << 20, "an object's bound is no longer 4 MiB");

/* Every sentence ends the same way for code the recording could not name. */
#define UNNAMED "so the code it holds has no names and stacks end in it (no unwind information)"

static const struct {
	const char *stage, *code, *meaning;
} meanings[] = {
	{ "ms-collect", "jit-descriptor-unreadable",
	  "the process's __jit_debug_descriptor could not be read, so none of the objects it "
	  "registered was read: their code has no names and stacks end in it (the recorder "
	  "must be allowed to read the process's memory: root, or ptrace access to it)" },
	{ "ms-collect", "jit-descriptor-version",
	  "the process's __jit_debug_descriptor is not of version 1, the only layout GDB "
	  "documents, so none of its objects was read: their code has no names and stacks "
	  "end in it (the JIT speaks another version of the interface)" },
	{ "ms-collect", "jit-object-too-large",
	  "an object registered is larger than the 4 MiB the recording reads of one and was "
	  "not read, " UNNAMED },
	{ "ms-collect", "jit-object-unreadable",
	  "an object's image could not be read from the process (unmapped or changed while "
	  "it was read), " UNNAMED },
	{ "ms-collect", "jit-objects-max",
	  "the list of registered objects ran past the entries one read walks (or looped), so "
	  "the objects after that were not read: their code has no names and stacks end in it" },
	{ "ms-collect", "jit-object-not-elf",
	  "an image registered is not an ELF64 x86-64 object, so it was not kept, " UNNAMED
	  " (the JIT registers something other than the objects GDB reads)" },
	{ "ms-collect", "jit-process-gone",
	  "the process ended before its JIT objects were read: they lived only in it, so the "
	  "samples in their code stay unnamed and their stacks end there; nothing can name "
	  "them later (a program that runs until its samples are read is named)" },
};

/* ms-unwind's own codes about an object it was given all start so. */
#define UNWIND_PREFIX "jit-object-"

const char *ms_jit_problem_meaning(const char *stage, const char *code)
{
	for (size_t i = 0; i < sizeof(meanings) / sizeof(meanings[0]); i++)
		if (!strcmp(stage, meanings[i].stage) && !strcmp(code, meanings[i].code))
			return meanings[i].meaning;
	if (!strcmp(stage, "ms-unwind") && !strncmp(code, UNWIND_PREFIX, strlen(UNWIND_PREFIX)))
		return "ms-unwind could not use a JIT object the recording read, as the detail "
		       "says (the object is dropped, or the part of it named there): the code it "
		       "would have named has no names and stacks end in it";
	return NULL;
}

/* A process's samples in jit-object code: how many, and in how many objects. */
struct jo_process {
	uint32_t pid;
	uint32_t modules;
	uint64_t samples;
};

struct jo_sample {
	uint32_t pid;
	uint32_t stack;
	uint64_t count;
};

static int cmp_jo_sample(const void *a, const void *b)
{
	const struct jo_sample *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

static bool has_jit_objects(const struct ms_capture *cap)
{
	for (uint32_t i = 0; i < cap->n_modules; i++)
		if (cap->modules[i].kind == MS_MODULE_JIT_OBJECT)
			return true;
	return false;
}

static bool in_jit_object(const struct ms_capture *cap, uint32_t node)
{
	uint32_t m = cap->frames[cap->stacks[node].frame].module;

	return m < cap->n_modules && cap->modules[m].kind == MS_MODULE_JIT_OBJECT;
}

/*
 * Per pid (sorted), the samples with a jit-object frame anywhere on their
 * stack (once each) and the distinct jit-object modules those stacks hold.
 * *n is 0 for a capture without jit-object modules.
 */
static int jo_processes(const struct ms_capture *cap, struct jo_process **out, uint32_t *n)
{
	struct jo_sample *s = NULL;
	struct jo_process *p = NULL;
	uint32_t *stamp = NULL, ns = 0, np = 0, i, node;
	bool *in = NULL;

	*out = NULL;
	*n = 0;
	if (!has_jit_objects(cap) || !cap->n_stacks)
		return 0;
	in = malloc(cap->n_stacks * sizeof(*in));
	s = malloc((cap->n_samples ? cap->n_samples : 1) * sizeof(*s));
	stamp = calloc(cap->n_modules, sizeof(*stamp));
	if (!in || !s || !stamp)
		goto oom;
	/* A parent comes before its children: one pass marks whole paths. */
	for (i = 0; i < cap->n_stacks; i++)
		in[i] = in_jit_object(cap, i) ||
			(cap->stacks[i].parent != MS_NONE && in[cap->stacks[i].parent]);
	for (i = 0; i < cap->n_samples; i++) {
		const struct ms_cap_sample *x = &cap->samples[i];

		if (x->stack < cap->n_stacks && in[x->stack])
			s[ns++] = (struct jo_sample){ cap->threads[x->thread].pid, x->stack, x->count };
	}
	if (!ns)
		goto done;
	qsort(s, ns, sizeof(*s), cmp_jo_sample);
	if (!(p = calloc(ns, sizeof(*p))))
		goto oom;
	for (i = 0; i < ns; i++) {
		if (!i || s[i].pid != s[i - 1].pid)
			p[np++].pid = s[i].pid;
		p[np - 1].samples += s[i].count;
		if (i && s[i].pid == s[i - 1].pid && s[i].stack == s[i - 1].stack)
			continue;
		/* each distinct stack's path once; stamp np counts a module once per process */
		for (node = s[i].stack; node != MS_NONE; node = cap->stacks[node].parent) {
			uint32_t m = cap->frames[cap->stacks[node].frame].module;

			if (in_jit_object(cap, node) && stamp[m] != np) {
				stamp[m] = np;
				p[np - 1].modules++;
			}
		}
	}
done:
	free(in);
	free(s);
	free(stamp);
	*out = p;
	*n = np;
	return 0;
oom:
	free(in);
	free(s);
	free(stamp);
	free(p);
	return ms_error("out of memory counting the JIT objects of %" PRIu32 " samples",
			cap->n_samples);
}

int ms_jit_objects_summary_text(FILE *out, const struct ms_capture *cap)
{
	struct jo_process *p;
	uint32_t n, i;

	if (jo_processes(cap, &p, &n))
		return -1;
	for (i = 0; i < n; i++)
		fprintf(out, "%spid %" PRIu32 ": %" PRIu32 " object%s sampled, %" PRIu64
			" sample%s in their code\n", i ? "             " : "jit objects: ", p[i].pid,
			p[i].modules, p[i].modules == 1 ? "" : "s", p[i].samples,
			p[i].samples == 1 ? "" : "s");
	free(p);
	return 0;
}

int ms_jit_objects_json(struct ms_json *j, const struct ms_capture *cap)
{
	struct jo_process *p;
	uint32_t n, i;

	if (!has_jit_objects(cap))
		return 0;
	if (jo_processes(cap, &p, &n))
		return -1;
	ms_json_key(j, "jit_objects");
	ms_json_array_begin(j);
	for (i = 0; i < n; i++) {
		ms_json_object_begin(j);
		ms_json_key(j, "pid");
		ms_json_uint(j, p[i].pid);
		ms_json_key(j, "objects");
		ms_json_uint(j, p[i].modules);
		ms_json_key(j, "samples");
		ms_json_uint(j, p[i].samples);
		ms_json_object_end(j);
	}
	ms_json_array_end(j);
	free(p);
	return 0;
}
