/*
 * Building small captures with Python frames for the unit tests of
 * looks and views (pylooks-test, snapshots-view-test): the builder fed
 * as the stages feed it (modules, frames, stacks), and a view's output
 * caught in memory. Include after cmocka.h.
 */
#ifndef MS_TESTS_PYCAPTURE_BUILD_H
#define MS_TESTS_PYCAPTURE_BUILD_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/builder.h"
#include "stream/records.h"

#define S(lit) ((struct ms_str){ (lit), sizeof(lit) - 1 })
#define I MS_FRAME_INTERPRETER
#define R MS_FRAME_RETURN
#define NA MS_FRAME_NO_ADDRESS

static char *membuf;
static size_t membuf_len;

/* What call wrote to out (a FILE * in its scope), as a string (membuf, reused). */
#define CAPTURE_OUTPUT(call) ({                                  \
	FILE *out = open_memstream(&membuf, &membuf_len);        \
	assert_non_null(out);                                    \
	assert_int_equal(call, 0);                               \
	assert_int_equal(fclose(out), 0);                        \
	membuf;                                                  \
})

static inline void module(struct ms_capture_builder *b, uint32_t id, uint32_t kind,
			  struct ms_str path)
{
	struct ms_module m;

	memset(&m, 0, sizeof(m));
	m.id = id;
	m.kind = kind;
	m.path = path;
	assert_int_equal(ms_capture_builder_module(b, &m), 0);
}

static inline void native(struct ms_capture_builder *b, uint32_t module, uint64_t address,
			  struct ms_str name)
{
	struct ms_frame f = { .module = module, .address = address, .name = name,
			      .symbol_start = address, .reason = MS_SYM_OK };

	assert_int_equal(ms_capture_builder_frame(b, &f), 0);
}

/* An interpreted frame's fact, as ms-unwind writes it: [qualname, "", file, line, first]. */
static inline void py(struct ms_capture_builder *b, uint64_t key, struct ms_str qualname,
		      struct ms_str file, uint32_t line, uint32_t first)
{
	struct ms_frame *f = calloc(1, sizeof(*f));

	f->module = 1;
	f->address = key;
	f->name = qualname;
	f->reason = MS_SYM_OK;
	f->n_lines = 1;
	f->lines[0].function = qualname;
	f->lines[0].file = file;
	f->lines[0].line = line;
	f->lines[0].function_line = first;
	assert_int_equal(ms_capture_builder_frame(b, f), 0);
	free(f);
}

/*
 * A sample of (100, tid) at time, or (def_id not UINT32_MAX) the
 * STACK_DEF def_id: n frames (module u32, address u64, flags u32) from
 * ap, innermost first, ending with reason.
 */
static inline void stack_va(struct ms_capture_builder *b, uint32_t def_id, uint32_t tid,
			    uint64_t time, uint32_t reason, uint32_t n, va_list ap)
{
	struct ms_stack *s = calloc(1, sizeof(*s));

	if (def_id == UINT32_MAX) {
		s->pid = 100;
		s->tid = tid;
		s->time = time;
		s->period = 1000000;
	}
	s->reason = reason;
	for (uint32_t i = 0; i < n; i++) {
		s->frames[i].module = va_arg(ap, uint32_t);
		s->frames[i].address = va_arg(ap, uint64_t);
		s->frames[i].flags = va_arg(ap, uint32_t);
	}
	s->n_frames = n;
	if (def_id != UINT32_MAX)
		assert_int_equal(ms_capture_builder_stack_def(b, def_id, s), 0);
	else
		assert_int_equal(ms_capture_builder_stack(b, s), 0);
	free(s);
}

#endif
