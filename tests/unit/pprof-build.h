/*
 * A small pprof writer for tests of the pprof import: samples given as
 * "outer;...;inner" stacks with their labels, packed with protobuf-c.
 * Each distinct frame name is one function and one location (ids 1..n).
 * Header-only: tests/unit/pprof-threads-test.c and pprof-mkthreads.c.
 * Aborts when memory runs out (a test tool).
 */
#ifndef MS_TESTS_PPROF_BUILD_H
#define MS_TESTS_PPROF_BUILD_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pprof/profile.pb-c.h"

struct pbuild {
	Perftools__Profiles__Profile p;
	Perftools__Profiles__ValueType st, *stp;
	char **strs;
	size_t n_strs;
	size_t n_funcs;		/* functions and locations, one per name */
	int64_t *func_name;	/* string of function i + 1 */
};

static void *pb_alloc(size_t n)
{
	void *p = calloc(1, n ? n : 1);

	if (!p)
		abort();
	return p;
}

static void *pb_grow(void *arr, size_t n, size_t size)
{
	void *p = realloc(arr, (n ? n : 1) * size);

	if (!p)
		abort();
	return p;
}

/* A new string table entry holding s, even when s is in the table already. */
static int64_t pb_str_dup(struct pbuild *b, const char *s)
{
	b->strs = pb_grow(b->strs, b->n_strs + 1, sizeof(*b->strs));
	b->strs[b->n_strs] = strdup(s);
	if (!b->strs[b->n_strs])
		abort();
	return (int64_t)b->n_strs++;
}

/* The index of s in the string table, added when absent. */
static int64_t pb_str(struct pbuild *b, const char *s)
{
	for (size_t i = 0; i < b->n_strs; i++)
		if (!strcmp(b->strs[i], s))
			return (int64_t)i;
	return pb_str_dup(b, s);
}

/* Samples of type samples/count; no mappings. */
static void pb_begin(struct pbuild *b)
{
	memset(b, 0, sizeof(*b));
	perftools__profiles__profile__init(&b->p);
	pb_str(b, "");
	perftools__profiles__value_type__init(&b->st);
	b->st.type = pb_str(b, "samples");
	b->st.unit = pb_str(b, "count");
	b->stp = &b->st;
	b->p.n_sample_type = 1;
	b->p.sample_type = &b->stp;
}

static uint64_t pb_location(struct pbuild *b, const char *name, size_t len)
{
	char *n = strndup(name, len);
	int64_t s;
	size_t i;

	if (!n)
		abort();
	s = pb_str(b, n);
	free(n);
	for (i = 0; i < b->n_funcs; i++)
		if (b->func_name[i] == s)
			return i + 1;
	b->func_name = pb_grow(b->func_name, b->n_funcs + 1, sizeof(*b->func_name));
	b->func_name[b->n_funcs] = s;
	return ++b->n_funcs;
}

/*
 * A sample of count samples at stack ("outer;inner"), with labels given
 * as triples (key, 's' or 'n', value): a string value is a const char *,
 * a number an int64_t; a key of NULL ends them. 'S' is a string value
 * given its own string table entry (a duplicate). Returns the sample.
 */
static Perftools__Profiles__Sample *pb_sample(struct pbuild *b, const char *stack,
					     int64_t count, ...)
{
	Perftools__Profiles__Sample *s = pb_alloc(sizeof(*s));
	const char *p = stack, *key;
	size_t n = 0;
	va_list ap;

	perftools__profiles__sample__init(s);
	/* locations innermost first */
	while (*p) {
		const char *semi = strchr(p, ';');
		size_t len = semi ? (size_t)(semi - p) : strlen(p);

		s->location_id = pb_grow(s->location_id, n + 1, sizeof(*s->location_id));
		memmove(s->location_id + 1, s->location_id, n * sizeof(*s->location_id));
		s->location_id[0] = pb_location(b, p, len);
		n++;
		p += len + (semi != NULL);
	}
	s->n_location_id = n;
	s->value = pb_alloc(sizeof(*s->value));
	s->value[0] = count;
	s->n_value = 1;
	va_start(ap, count);
	while ((key = va_arg(ap, const char *))) {
		Perftools__Profiles__Label *lb = pb_alloc(sizeof(*lb));
		int type = va_arg(ap, int);

		perftools__profiles__label__init(lb);
		lb->key = pb_str(b, key);
		if (type == 's')
			lb->str = pb_str(b, va_arg(ap, const char *));
		else if (type == 'S')
			lb->str = pb_str_dup(b, va_arg(ap, const char *));
		else
			lb->num = va_arg(ap, int64_t);
		s->label = pb_grow(s->label, s->n_label + 1, sizeof(*s->label));
		s->label[s->n_label++] = lb;
	}
	va_end(ap);
	b->p.sample = pb_grow(b->p.sample, b->p.n_sample + 1, sizeof(*b->p.sample));
	b->p.sample[b->p.n_sample++] = s;
	return s;
}

/* The profile's bytes (plain protobuf), which the caller frees. */
static unsigned char *pb_pack(struct pbuild *b, size_t *len)
{
	Perftools__Profiles__Profile *p = &b->p;
	unsigned char *buf;
	size_t i;

	p->n_function = p->n_location = b->n_funcs;
	p->function = pb_alloc(b->n_funcs * sizeof(*p->function));
	p->location = pb_alloc(b->n_funcs * sizeof(*p->location));
	for (i = 0; i < b->n_funcs; i++) {
		Perftools__Profiles__Function *f = pb_alloc(sizeof(*f));
		Perftools__Profiles__Location *l = pb_alloc(sizeof(*l));
		Perftools__Profiles__Line *ln = pb_alloc(sizeof(*ln));

		perftools__profiles__function__init(f);
		f->id = i + 1;
		f->name = b->func_name[i];
		perftools__profiles__line__init(ln);
		ln->function_id = i + 1;
		perftools__profiles__location__init(l);
		l->id = i + 1;
		l->n_line = 1;
		l->line = pb_alloc(sizeof(*l->line));
		l->line[0] = ln;
		p->function[i] = f;
		p->location[i] = l;
	}
	p->n_string_table = b->n_strs;
	p->string_table = b->strs;
	*len = perftools__profiles__profile__get_packed_size(p);
	buf = pb_alloc(*len);
	perftools__profiles__profile__pack(p, buf);
	for (i = 0; i < b->n_funcs; i++) {
		free(p->function[i]);
		free(p->location[i]->line[0]);
		free(p->location[i]->line);
		free(p->location[i]);
	}
	free(p->function);
	free(p->location);
	p->function = NULL;
	p->location = NULL;
	return buf;
}

static void pb_free(struct pbuild *b)
{
	for (size_t i = 0; i < b->p.n_sample; i++) {
		Perftools__Profiles__Sample *s = b->p.sample[i];

		for (size_t k = 0; k < s->n_label; k++)
			free(s->label[k]);
		free(s->label);
		free(s->location_id);
		free(s->value);
		free(s);
	}
	free(b->p.sample);
	for (size_t i = 0; i < b->n_strs; i++)
		free(b->strs[i]);
	free(b->strs);
	free(b->func_name);
	memset(b, 0, sizeof(*b));
}

#endif
