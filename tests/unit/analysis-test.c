/*
 * Unit tests of libcommon/analysis over captures built by hand in memory:
 * function keys, the query, top, tree, summary, the report and the JSON
 * writer. Views are asked through a typed query (analysis/query.h).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/keys.h"
#include "analysis/select.h"
#include "capture/funcs.h"
#include "util/json.h"
#include "capture/capture.h"
#include "stream/records.h"
#include "tests/unit/stderr-capture.h"

/* ---- building captures ---- */

#define T_STRINGS 64
#define T_MODULES 8
#define T_FRAMES 32
#define T_STACKS 64
#define T_THREADS 8
#define T_SAMPLES 128

struct tcap {
	struct ms_capture cap;
	const char *strings[T_STRINGS];
	struct ms_cap_info info[4];
	struct ms_cap_module modules[T_MODULES];
	struct ms_cap_frame frames[T_FRAMES];
	struct ms_cap_stack stacks[T_STACKS];
	struct ms_cap_thread threads[T_THREADS];
	struct ms_cap_sample samples[T_SAMPLES];
	struct ms_cap_problem problems[4];
	struct ms_cap_function functions[16];
	struct ms_cap_line lines[32];
	struct ms_cap_duty duty[8];
	struct ms_cap_loss losses[4];
};

static void tcap_init(struct tcap *t)
{
	memset(t, 0, sizeof(*t));
	t->cap.major = MS_CAPTURE_MAJOR;
	t->cap.minor = MS_CAPTURE_MINOR;
	t->cap.strings = t->strings;
	t->cap.info = t->info;
	t->cap.modules = t->modules;
	t->cap.frames = t->frames;
	t->cap.stacks = t->stacks;
	t->cap.threads = t->threads;
	t->cap.samples = t->samples;
	t->cap.problems = t->problems;
	t->cap.functions = t->functions;
	t->cap.lines = t->lines;
	t->cap.duty = t->duty;
	t->cap.losses = t->losses;
	t->cap.target_exit_code = -1;
	t->strings[t->cap.n_strings++] = "";
}

static uint32_t str(struct tcap *t, const char *s)
{
	uint32_t i;

	for (i = 0; i < t->cap.n_strings; i++)
		if (!strcmp(t->strings[i], s))
			return i;
	assert_true(t->cap.n_strings < T_STRINGS);
	t->strings[t->cap.n_strings] = s;
	return t->cap.n_strings++;
}

static uint32_t module(struct tcap *t, const char *path, uint32_t kind)
{
	assert_true(t->cap.n_modules < T_MODULES);
	t->modules[t->cap.n_modules] = (struct ms_cap_module){ .path = str(t, path), .kind = kind };
	return t->cap.n_modules++;
}

static uint32_t frame(struct tcap *t, uint32_t mod, uint64_t address, const char *name)
{
	assert_true(t->cap.n_frames < T_FRAMES);
	t->frames[t->cap.n_frames] = (struct ms_cap_frame){
		.module = mod,
		.address = address,
		.name = name ? str(t, name) : 0,
		.reason = mod == MS_NONE ? MS_SYM_NO_MODULE : name ? MS_SYM_OK : MS_SYM_NO_SYMBOL,
	};
	return t->cap.n_frames++;
}

/* The stack node of a path given outermost first, ending with MS_NONE. */
static uint32_t path(struct tcap *t, ...)
{
	uint32_t node = MS_NONE, depth = 0, fr, i;
	va_list ap;

	va_start(ap, t);
	while ((fr = va_arg(ap, uint32_t)) != MS_NONE) {
		for (i = 0; i < t->cap.n_stacks; i++)
			if (t->stacks[i].parent == node && t->stacks[i].frame == fr)
				break;
		if (i == t->cap.n_stacks) {
			assert_true(t->cap.n_stacks < T_STACKS);
			t->stacks[i] = (struct ms_cap_stack){ node, fr, depth + 1 };
			t->cap.n_stacks++;
		}
		node = i;
		depth++;
	}
	va_end(ap);
	return node;
}

static uint32_t thread(struct tcap *t, uint32_t pid, uint32_t tid, const char *name)
{
	assert_true(t->cap.n_threads < T_THREADS);
	t->threads[t->cap.n_threads] = (struct ms_cap_thread){ .pid = pid, .tid = tid,
							       .name = str(t, name) };
	return t->cap.n_threads++;
}

/* Samples are added in time order, 1 ms apart from time 1000 on. */
static void samples(struct tcap *t, uint32_t n, uint32_t thr, uint32_t stack, uint32_t end)
{
	while (n--) {
		assert_true(t->cap.n_samples < T_SAMPLES);
		t->samples[t->cap.n_samples] = (struct ms_cap_sample){
			.time = 1000 + 1000000ull * t->cap.n_samples,
			.thread = thr,
			.stack = stack,
			.end = end,
			.period = 1000000,
			.count = 1,
		};
		t->cap.n_samples++;
	}
}

/*
 * The main test capture, 11 samples (outermost frame first):
 *   3  libc:__libc_start_main burn:main burn:run burn:burn_60     fp-chain
 *   1  ... burn:run burn:burn_60 (another address, thread 2)       fp-chain
 *   2  ... burn:run burn:burn_30                                   fp-chain
 *   2  ... burn:main burn:rec burn:rec burn:rec (recursion)        depth
 *   1  ... burn:main burn+0x1234 (unnamed)                         outermost
 *   1  [no module] 0xdead                                          no-module
 *   1  no frames at all                                            kernel-only
 */
static struct tcap *main_capture(void)
{
	struct tcap *t = malloc(sizeof(*t));
	uint32_t burn, libc, start, mainf, run, b60, b60b, b30, rec, anon, nomod;
	uint32_t t1, t2;

	assert_non_null(t);
	tcap_init(t);
	burn = module(t, "/usr/bin/burn", MS_MODULE_FILE);
	libc = module(t, "/lib/x86_64-linux-gnu/libc.so.6", MS_MODULE_FILE);
	start = frame(t, libc, 0x27000, "__libc_start_main");
	mainf = frame(t, burn, 0x1100, "main");
	run = frame(t, burn, 0x1200, "run");
	b60 = frame(t, burn, 0x1300, "burn_60");
	b60b = frame(t, burn, 0x1310, "burn_60");
	b30 = frame(t, burn, 0x1400, "burn_30");
	rec = frame(t, burn, 0x1500, "rec");
	anon = frame(t, burn, 0x1234, NULL);
	nomod = frame(t, MS_NONE, 0xdead, NULL);
	t1 = thread(t, 42, 42, "burn");
	t2 = thread(t, 42, 43, "worker");

	samples(t, 3, t1, path(t, start, mainf, run, b60, MS_NONE), MS_END_FP_CHAIN);
	samples(t, 1, t2, path(t, start, mainf, run, b60b, MS_NONE), MS_END_FP_CHAIN);
	samples(t, 2, t1, path(t, start, mainf, run, b30, MS_NONE), MS_END_FP_CHAIN);
	samples(t, 2, t2, path(t, start, mainf, rec, rec, rec, MS_NONE), MS_END_DEPTH);
	samples(t, 1, t1, path(t, start, mainf, anon, MS_NONE), MS_END_OUTERMOST);
	samples(t, 1, t1, path(t, nomod, MS_NONE), MS_END_NO_MODULE);
	samples(t, 1, t1, MS_NONE, MS_END_KERNEL_ONLY);

	t->info[0] = (struct ms_cap_info){ .key = str(t, "command"), .value_text = str(t, "./burn 1") };
	t->info[1] = (struct ms_cap_info){ .key = str(t, "pid"), .value_number = 42 };
	t->cap.n_info = 2;
	t->problems[0] = (struct ms_cap_problem){ str(t, "ms-unwind"), str(t, "no-cfi"),
						   str(t, "no CFI for \"burn\"+0x1234"), 3 };
	t->cap.n_problems = 1;
	t->cap.lost_kernel = 5;
	t->cap.lost_collector = 1;
	t->cap.throttled = 2;
	t->cap.start_time = 500;
	t->cap.end_time = 2000000500;
	t->cap.target_exit_code = 0;
	return t;
}

/*
 * What a writer printed, as a NUL-terminated string the caller frees. The
 * buffer lives outside the expression: open_memstream() writes to it at
 * fclose().
 */
static char *membuf;
static size_t membuf_len;
#define CAPTURE_OUTPUT(call) ({                                  \
	FILE *out = open_memstream(&membuf, &membuf_len);        \
	assert_non_null(out);                                    \
	assert_int_equal(call, 0);                               \
	assert_int_equal(fclose(out), 0);                        \
	membuf;                                                  \
})

static bool starts_with(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* A query of view v with the defaults. */
static struct ms_query query(enum ms_view v)
{
	struct ms_query q;

	ms_query_init(&q, v);
	return q;
}

/* Where CAPTURE_OUTPUT's stream is: text, or JSON. */
#define TEXT_OUT (&(struct ms_view_out){ .f = out })
#define JSON_OUT (&(struct ms_view_out){ .f = out, .json = true })
#define VIEW_OUT(json) ((json) ? JSON_OUT : TEXT_OUT)

/* What the view q names prints of cap, text or JSON; the caller frees it. */
static char *view(const struct ms_capture *cap, const struct ms_query *q, bool json)
{
	return CAPTURE_OUTPUT(ms_view_write(VIEW_OUT(json), cap, q));
}

/* A key's label in a selection. */
static const char *key_label(const struct ms_select *s, uint32_t key)
{
	assert_true(key < s->keys.n);
	return s->keys.keys[key].label;
}

/* The function (struct ms_funcs) of a key that has one. */
static const struct ms_func *key_func(const struct ms_select *s, uint32_t key)
{
	assert_true(key < s->keys.n);
	assert_true(s->keys.keys[key].func < s->keys.funcs.n);
	return &s->keys.funcs.funcs[s->keys.keys[key].func];
}

/* ms_top_compute() under a query of view top sorted by sort. */
static void top_sorted(struct ms_top *top, const struct ms_capture *cap, enum ms_sort sort)
{
	struct ms_query q = query(MS_VIEW_TOP);

	q.sort = sort;
	assert_int_equal(ms_top_compute(top, cap, &q), 0);
}

/* ms_tree_build() under the default query. */
static void tree_of(struct ms_tree *tree, const struct ms_capture *cap)
{
	struct ms_query q = query(MS_VIEW_TREE);

	assert_int_equal(ms_tree_build(tree, cap, &q), 0);
}

/* ---- function keys ---- */

static uint32_t func_of(const struct ms_funcs *f, const struct tcap *t, uint32_t frame_id)
{
	assert_true(frame_id < t->cap.n_frames);
	return f->frame_func[frame_id];
}

static void test_keys(void **state)
{
	struct tcap *t = main_capture();
	struct ms_funcs f;
	uint32_t i;

	assert_int_equal(ms_funcs_build(&f, &t->cap), 0);
	/* 9 frames, burn_60 twice: 8 functions */
	assert_int_equal(f.n, 8);
	assert_int_equal(func_of(&f, t, 3), func_of(&f, t, 4));
	for (i = 0; i < t->cap.n_frames; i++)
		assert_true(f.frame_func[i] < f.n);

	/* ids follow the key order: module 0 (burn) named by name, unnamed, module 1, none */
	assert_string_equal(f.funcs[0].label, "burn_30");
	assert_string_equal(f.funcs[1].label, "burn_60");
	assert_string_equal(f.funcs[2].label, "main");
	assert_string_equal(f.funcs[3].label, "rec");
	assert_string_equal(f.funcs[4].label, "run");
	assert_string_equal(f.funcs[5].label, "burn+0x1234");
	assert_string_equal(f.funcs[5].module_name, "burn");
	assert_int_equal(f.funcs[5].name, 0);
	assert_int_equal(f.funcs[5].address, 0x1234);
	assert_string_equal(f.funcs[6].label, "__libc_start_main");
	assert_string_equal(f.funcs[6].module_name, "libc.so.6");
	assert_string_equal(f.funcs[7].label, "[no module] 0xdead");
	assert_string_equal(f.funcs[7].module_name, "");
	assert_string_equal(f.funcs[7].module_label, "[unknown]");
	assert_int_equal(f.funcs[7].module, MS_NONE);
	ms_funcs_release(&f);
	free(t);
}

static void test_keys_modules_without_path(void **state)
{
	struct tcap t;
	struct ms_funcs f;
	uint32_t kern, vdso, anon, file, unk, dir;

	tcap_init(&t);
	kern = module(&t, "", MS_MODULE_KERNEL);
	vdso = module(&t, "", MS_MODULE_VDSO);
	anon = module(&t, "", MS_MODULE_ANON);
	file = module(&t, "", MS_MODULE_FILE);
	unk = module(&t, "", MS_MODULE_UNKNOWN);
	dir = module(&t, "/odd/dir/", MS_MODULE_FILE);
	frame(&t, kern, 0xffffffff81000000ull, NULL);
	frame(&t, vdso, 0x10, NULL);
	frame(&t, anon, 0x20, NULL);
	frame(&t, file, 0x30, NULL);
	frame(&t, unk, 0x40, NULL);
	frame(&t, dir, 0x50, NULL);
	frame(&t, file, 0x60, NULL);

	assert_int_equal(ms_funcs_build(&f, &t.cap), 0);
	assert_int_equal(f.n, 7);
	assert_string_equal(f.funcs[0].label, "[kernel]+0xffffffff81000000");
	assert_string_equal(f.funcs[0].module_name, "");
	assert_string_equal(f.funcs[1].label, "[vdso]+0x10");
	assert_string_equal(f.funcs[2].label, "[anon]+0x20");
	assert_string_equal(f.funcs[3].label, "[no path]+0x30");
	assert_string_equal(f.funcs[4].label, "[no path]+0x60");
	assert_string_equal(f.funcs[5].label, "[no module] 0x40");
	assert_string_equal(f.funcs[5].module_label, "[unknown]");
	assert_string_equal(f.funcs[6].label, "/odd/dir/+0x50");
	ms_funcs_release(&f);
}

static void test_keys_empty(void **state)
{
	struct tcap t;
	struct ms_funcs f;

	tcap_init(&t);
	assert_int_equal(ms_funcs_build(&f, &t.cap), 0);
	assert_int_equal(f.n, 0);
	ms_funcs_release(&f);
}

/* ---- top ---- */

struct expect_top {
	const char *label;
	uint64_t self, total;
};

static void check_top(const struct ms_top *top, const struct expect_top *e, uint32_t n)
{
	uint32_t i;

	assert_int_equal(top->n, n);
	for (i = 0; i < n; i++) {
		const struct ms_top_entry *en = &top->entries[i];

		assert_string_equal(key_label(&top->sel, en->key), e[i].label);
		assert_int_equal(en->self, e[i].self);
		assert_int_equal(en->total, e[i].total);
	}
}

static void test_top_self(void **state)
{
	static const struct expect_top expect[] = {
		{ "burn_60", 4, 4 },
		{ "burn_30", 2, 2 },	/* ties rec on self and total: label decides */
		{ "rec", 2, 2 },	/* three deep, counted once per sample */
		{ "[no module] 0xdead", 1, 1 },
		{ "burn+0x1234", 1, 1 },
		{ "__libc_start_main", 0, 9 },
		{ "main", 0, 9 },
		{ "run", 0, 6 },
	};
	struct tcap *t = main_capture();
	struct ms_top top;

	top_sorted(&top, &t->cap, MS_SORT_SELF);
	assert_int_equal(top.sel.selected, 11);
	assert_int_equal(top.sel.selected_samples, 11);
	assert_int_equal(top.sel.all, 11);
	check_top(&top, expect, 8);
	ms_top_release(&top);
	free(t);
}

static void test_top_total(void **state)
{
	static const struct expect_top expect[] = {
		{ "__libc_start_main", 0, 9 },
		{ "main", 0, 9 },
		{ "run", 0, 6 },
		{ "burn_60", 4, 4 },
		{ "burn_30", 2, 2 },
		{ "rec", 2, 2 },
		{ "[no module] 0xdead", 1, 1 },
		{ "burn+0x1234", 1, 1 },
	};
	struct tcap *t = main_capture();
	struct ms_top top;

	top_sorted(&top, &t->cap, MS_SORT_TOTAL);
	check_top(&top, expect, 8);
	ms_top_release(&top);
	free(t);
}

/* Two functions with one name in two modules: the module breaks the tie. */
static void test_top_same_name_two_modules(void **state)
{
	struct tcap t;
	struct ms_top top;
	uint32_t a, b, fa, fb, fb2;

	tcap_init(&t);
	b = module(&t, "/b/libz.so", MS_MODULE_FILE);
	a = module(&t, "/a/liba.so", MS_MODULE_FILE);
	fb = frame(&t, b, 0x10, "dup");
	fa = frame(&t, a, 0x10, "dup");
	fb2 = frame(&t, b, 0x20, "dup");	/* same function as fb */
	thread(&t, 1, 1, "x");
	samples(&t, 2, 0, path(&t, fb, MS_NONE), MS_END_OUTERMOST);
	samples(&t, 2, 0, path(&t, fa, MS_NONE), MS_END_OUTERMOST);
	samples(&t, 1, 0, path(&t, fb, fb2, MS_NONE), MS_END_OUTERMOST);

	top_sorted(&top, &t.cap, MS_SORT_SELF);
	assert_int_equal(top.n, 2);
	/* libz's dup: self 3 (2 + the inner frame of the recursion), total 3 */
	assert_string_equal(key_func(&top.sel, top.entries[0].key)->module_name, "libz.so");
	assert_int_equal(top.entries[0].self, 3);
	assert_int_equal(top.entries[0].total, 3);
	assert_string_equal(key_func(&top.sel, top.entries[1].key)->module_name, "liba.so");
	ms_top_release(&top);

	/* equal counts: liba.so sorts before libz.so */
	t.cap.n_samples = 4;
	top_sorted(&top, &t.cap, MS_SORT_SELF);
	assert_string_equal(key_func(&top.sel, top.entries[0].key)->module_name, "liba.so");
	assert_string_equal(key_func(&top.sel, top.entries[1].key)->module_name, "libz.so");
	ms_top_release(&top);
}

static void test_top_json(void **state)
{
	struct tcap *t = main_capture();
	struct ms_query q = query(MS_VIEW_TOP);
	char *text;

	q.limit = 3;
	text = CAPTURE_OUTPUT(ms_top_write(JSON_OUT, &t->cap, &q));
	assert_string_equal(text,
		"{\"source\":\"cpu-sampling\",\"unit\":\"samples\",\"by\":\"function\",\"look\":\"mixed\","
		"\"samples\":11,\"total\":11,\"capture_total\":11,\"functions\":["
		"{\"name\":\"burn_60\",\"module\":\"burn\",\"file\":\"\",\"line\":0,\"self\":4,\"self_percent\":36.36,"
		"\"total\":4,\"total_percent\":36.36},"
		"{\"name\":\"burn_30\",\"module\":\"burn\",\"file\":\"\",\"line\":0,\"self\":2,\"self_percent\":18.18,"
		"\"total\":2,\"total_percent\":18.18},"
		"{\"name\":\"rec\",\"module\":\"burn\",\"file\":\"\",\"line\":0,\"self\":2,\"self_percent\":18.18,"
		"\"total\":2,\"total_percent\":18.18}]}\n");
	free(text);

	q.limit = 0;
	q.sort = MS_SORT_TOTAL;
	text = CAPTURE_OUTPUT(ms_top_write(JSON_OUT, &t->cap, &q));
	assert_non_null(strstr(text, "\"samples\":11,\"total\":11,\"capture_total\":11,"
				    "\"functions\":[{\"name\":\"__libc_start_main\","
				    "\"module\":\"libc.so.6\",\"file\":\"\",\"line\":0,\"self\":0,\"self_percent\":0,"
				    "\"total\":9,\"total_percent\":81.82},"));
	assert_non_null(strstr(text, "{\"name\":\"[no module] 0xdead\",\"module\":\"\",\"file\":\"\",\"line\":0,\"self\":1,"
				    "\"self_percent\":9.09,\"total\":1,\"total_percent\":9.09}"));
	assert_non_null(strstr(text, "\"total_percent\":9.09}]}\n"));
	free(text);
	free(t);
}

static void test_top_text(void **state)
{
	struct tcap *t = main_capture();
	struct ms_query q = query(MS_VIEW_TOP);
	char *text;

	q.limit = 4;
	text = CAPTURE_OUTPUT(ms_top_write(TEXT_OUT, &t->cap, &q));
	assert_string_equal(text,
		"11 samples, 8 functions (the first 4 shown)\n"
		" self%  self  total%  total  module     function\n"
		" 36.4%     4   36.4%      4  burn       burn_60\n"
		" 18.2%     2   18.2%      2  burn       burn_30\n"
		" 18.2%     2   18.2%      2  burn       rec\n"
		"  9.1%     1    9.1%      1  [unknown]  [no module] 0xdead\n");
	free(text);
	free(t);
}

/*
 * --width holds with a long module name: the module column gives way
 * before the names would be cut below their least (a sample in
 * ld-linux-x86-64.so.2's start-up pushed every line to 62-65 columns).
 */
static void test_top_text_width(void **state)
{
	struct tcap t;
	struct ms_query q = query(MS_VIEW_TOP);
	uint32_t m, ld;
	char *text, *line;

	(void)state;
	tcap_init(&t);
	m = module(&t, "/x/prog", MS_MODULE_FILE);
	ld = module(&t, "/lib64/ld-linux-x86-64.so.2", MS_MODULE_FILE);
	thread(&t, 1, 1, "x");
	samples(&t, 10, 0, path(&t, frame(&t, m, 1, "__memset_avx512_unaligned_erms"), MS_NONE), 0);
	samples(&t, 3, 0, path(&t, frame(&t, ld, 2, "_dl_relocate_object"), MS_NONE), 0);
	text = CAPTURE_OUTPUT(ms_top_write(&(struct ms_view_out){ .f = out, .width = 60 },
					   &t.cap, &q));
	for (line = strchr(text, '\n') + 1; *line; line = strchr(line, '\n') + 1) {
		size_t cols = 0;

		for (const char *c = line; *c && *c != '\n'; c++)
			cols += ((unsigned char)*c & 0xc0) != 0x80;
		if (cols > 60)
			fail_msg("%zu columns: %.*s", cols, (int)(strchr(line, '\n') - line), line);
	}
	assert_non_null(strstr(text, "\u2026"));
	free(text);
}

/* Names are hostile bytes: text shows no control character. */
static void test_top_text_sanitized(void **state)
{
	struct tcap t;
	struct ms_query q = query(MS_VIEW_TOP);
	uint32_t m;
	char *text;

	tcap_init(&t);
	m = module(&t, "/x/m\tod", MS_MODULE_FILE);
	thread(&t, 1, 1, "x");
	samples(&t, 1, 0, path(&t, frame(&t, m, 1, "evil\x1b[2Jname\xff"), MS_NONE), 0);
	text = CAPTURE_OUTPUT(ms_top_write(TEXT_OUT, &t.cap, &q));
	assert_null(strchr(text, '\x1b'));
	assert_null(strchr(text, '\t'));
	assert_non_null(strstr(text, "m?od    evil?[2Jname?\n"));
	free(text);
}

static void test_top_empty(void **state)
{
	struct tcap t;
	struct ms_query q = query(MS_VIEW_TOP);
	char *text;

	tcap_init(&t);
	text = CAPTURE_OUTPUT(ms_top_write(JSON_OUT, &t.cap, &q));
	assert_string_equal(text, "{\"source\":\"cpu-sampling\",\"unit\":\"samples\",\"by\":\"function\","
				 "\"look\":\"mixed\",\"samples\":0,\"total\":0,\"capture_total\":0,"
				 "\"functions\":[]}\n");
	free(text);
	text = CAPTURE_OUTPUT(ms_top_write(TEXT_OUT, &t.cap, &q));
	assert_string_equal(text, "0 samples, 0 functions\n"
				 " self%  self  total%  total  module  function\n");
	free(text);
}

/* ---- tree ---- */

static uint32_t child(const struct ms_tree *t, uint32_t node, uint32_t i)
{
	assert_true(i < t->nodes[node].n_children);
	return t->children[t->nodes[node].first_child + i];
}

static void check_node(const struct ms_tree *t, uint32_t node, const char *label,
		       uint64_t self, uint64_t total, uint32_t n_children)
{
	const struct ms_tree_node *nd = &t->nodes[node];

	assert_string_equal(node ? key_label(&t->sel, nd->key) : t->root_label, label);
	assert_int_equal(nd->self, self);
	assert_int_equal(nd->total, total);
	assert_int_equal(nd->n_children, n_children);
}

/*
 * The depth and no-module stacks are known to be cut: each starts with its
 * truncated key, so their outermost frames are not roots (they were
 * children of __libc_start_main and of the root before).
 */
static void test_tree_shape(void **state)
{
	struct tcap *t = main_capture();
	struct ms_tree tr;
	uint32_t libc, mainn, run, rec, cut;

	tree_of(&tr, &t->cap);
	assert_int_equal(tr.sel.selected, 11);
	assert_int_equal(tr.nodes[0].key, MS_NONE);
	check_node(&tr, 0, "[root]", 1, 11, 3);	/* self: the sample without frames */

	libc = child(&tr, 0, 0);
	check_node(&tr, libc, "__libc_start_main", 0, 7, 1);
	mainn = child(&tr, libc, 0);
	check_node(&tr, mainn, "main", 0, 7, 2);
	run = child(&tr, mainn, 0);
	check_node(&tr, run, "run", 0, 6, 2);
	/* both burn_60 addresses merged into one node */
	check_node(&tr, child(&tr, run, 0), "burn_60", 4, 4, 0);
	check_node(&tr, child(&tr, run, 1), "burn_30", 2, 2, 0);
	check_node(&tr, child(&tr, mainn, 1), "burn+0x1234", 1, 1, 0);

	cut = child(&tr, 0, 1);
	check_node(&tr, cut, "[truncated: depth]", 0, 2, 1);
	assert_int_equal(tr.sel.keys.keys[tr.nodes[cut].key].kind, MS_KEY_TRUNCATED);
	libc = child(&tr, cut, 0);
	check_node(&tr, libc, "__libc_start_main", 0, 2, 1);
	mainn = child(&tr, libc, 0);
	check_node(&tr, mainn, "main", 0, 2, 1);
	rec = child(&tr, mainn, 0);
	check_node(&tr, rec, "rec", 0, 2, 1);
	rec = child(&tr, rec, 0);
	check_node(&tr, rec, "rec", 0, 2, 1);
	check_node(&tr, child(&tr, rec, 0), "rec", 2, 2, 0);
	assert_int_equal(tr.nodes[child(&tr, rec, 0)].depth, 6);

	cut = child(&tr, 0, 2);
	check_node(&tr, cut, "[truncated: no-module]", 0, 1, 1);
	check_node(&tr, child(&tr, cut, 0), "[no module] 0xdead", 1, 1, 0);
	ms_tree_release(&tr);
	free(t);
}

#define HEAD(unit, by, samples, total, all) \
	"\"source\":\"cpu-sampling\",\"unit\":\"" unit "\",\"by\":\"" by "\",\"look\":\"mixed\"," \
	"\"samples\":" #samples ",\"total\":" #total ",\"capture_total\":" #all ","

static const char main_tree_json[] =
	"{" HEAD("samples", "function", 11, 11, 11)
	"\"root\":{\"name\":\"[root]\",\"self\":1,\"total\":11,\"children\":["
	"{\"name\":\"__libc_start_main\",\"module\":\"libc.so.6\",\"file\":\"\",\"line\":0,\"self\":0,\"total\":7,\"children\":["
	"{\"name\":\"main\",\"module\":\"burn\",\"file\":\"\",\"line\":0,\"self\":0,\"total\":7,\"children\":["
	"{\"name\":\"run\",\"module\":\"burn\",\"file\":\"\",\"line\":0,\"self\":0,\"total\":6,\"children\":["
	"{\"name\":\"burn_60\",\"module\":\"burn\",\"file\":\"\",\"line\":0,\"self\":4,\"total\":4,\"children\":[]},"
	"{\"name\":\"burn_30\",\"module\":\"burn\",\"file\":\"\",\"line\":0,\"self\":2,\"total\":2,\"children\":[]}]},"
	"{\"name\":\"burn+0x1234\",\"module\":\"burn\",\"file\":\"\",\"line\":0,\"self\":1,\"total\":1,\"children\":[]}]}]},"
	"{\"name\":\"[truncated: depth]\",\"kind\":\"truncated\",\"self\":0,\"total\":2,\"children\":["
	"{\"name\":\"__libc_start_main\",\"module\":\"libc.so.6\",\"file\":\"\",\"line\":0,\"self\":0,\"total\":2,\"children\":["
	"{\"name\":\"main\",\"module\":\"burn\",\"file\":\"\",\"line\":0,\"self\":0,\"total\":2,\"children\":["
	"{\"name\":\"rec\",\"module\":\"burn\",\"file\":\"\",\"line\":0,\"self\":0,\"total\":2,\"children\":["
	"{\"name\":\"rec\",\"module\":\"burn\",\"file\":\"\",\"line\":0,\"self\":0,\"total\":2,\"children\":["
	"{\"name\":\"rec\",\"module\":\"burn\",\"file\":\"\",\"line\":0,\"self\":2,\"total\":2,\"children\":[]}]}]}]}]}]},"
	"{\"name\":\"[truncated: no-module]\",\"kind\":\"truncated\",\"self\":0,\"total\":1,\"children\":["
	"{\"name\":\"[no module] 0xdead\",\"module\":\"\",\"file\":\"\",\"line\":0,\"self\":1,\"total\":1,\"children\":[]}]}]}}\n";

static void test_tree_json(void **state)
{
	struct tcap *t = main_capture();
	struct ms_query q = query(MS_VIEW_TREE);
	char *text;

	text = CAPTURE_OUTPUT(ms_tree_write(JSON_OUT, &t->cap, &q));
	assert_string_equal(text, main_tree_json);
	free(text);

	/* 10% leaves out the nodes of one sample (9.09%) */
	q.hide_below = 10;
	text = CAPTURE_OUTPUT(ms_tree_write(JSON_OUT, &t->cap, &q));
	assert_null(strstr(text, "0xdead"));
	assert_null(strstr(text, "burn+0x1234"));
	assert_null(strstr(text, "no-module"));
	assert_non_null(strstr(text, "{\"name\":\"rec\",\"module\":\"burn\",\"file\":\"\",\"line\":0,\"self\":0,\"total\":2,"
				    "\"children\":[{\"name\":\"rec\""));
	assert_non_null(strstr(text, "\"total\":2,\"children\":[]}]}]}]}]}]}]}}\n"));
	free(text);
	free(t);
}

static void test_tree_text(void **state)
{
	struct tcap *t = main_capture();
	struct ms_query q = query(MS_VIEW_TREE);
	char *text;

	q.hide_below = 10;
	text = CAPTURE_OUTPUT(ms_tree_write(TEXT_OUT, &t->cap, &q));
	assert_string_equal(text,
		"11 samples (nodes under 10.0% left out)\n"
		"total%   self%  total  self  function\n"
		"100.0%    9.1%     11     1  [root]\n"
		" 63.6%    0.0%      7     0    __libc_start_main (libc.so.6)\n"
		" 63.6%    0.0%      7     0      main (burn)\n"
		" 54.5%    0.0%      6     0        run (burn)\n"
		" 36.4%   36.4%      4     4          burn_60 (burn)\n"
		" 18.2%   18.2%      2     2          burn_30 (burn)\n"
		" 18.2%    0.0%      2     0    [truncated: depth]\n"
		" 18.2%    0.0%      2     0      __libc_start_main (libc.so.6)\n"
		" 18.2%    0.0%      2     0        main (burn)\n"
		" 18.2%   18.2%      2     2          rec (burn)  [recursion ×3 folded]\n");
	free(text);

	q.hide_below = 0;
	text = CAPTURE_OUTPUT(ms_tree_write(TEXT_OUT, &t->cap, &q));
	assert_non_null(strstr(text, "\n  9.1%    9.1%      1     1        burn+0x1234\n"));
	assert_non_null(strstr(text, "\n  9.1%    0.0%      1     0    [truncated: no-module]\n"
				    "  9.1%    9.1%      1     1      [no module] 0xdead\n"));
	free(text);
	free(t);
}

static void test_tree_empty(void **state)
{
	struct tcap t;
	struct ms_query q = query(MS_VIEW_TREE);
	char *text;

	tcap_init(&t);
	text = CAPTURE_OUTPUT(ms_tree_write(JSON_OUT, &t.cap, &q));
	assert_string_equal(text, "{" HEAD("samples", "function", 0, 0, 0)
				 "\"root\":{\"name\":\"[root]\",\"self\":0,"
				 "\"total\":0,\"children\":[]}}\n");
	free(text);
	q.hide_below = 0.5;
	text = CAPTURE_OUTPUT(ms_tree_write(TEXT_OUT, &t.cap, &q));
	assert_string_equal(text, "0 samples (nodes under 0.5% left out)\n"
				 "total%   self%  total  self  function\n"
				 "  0.0%    0.0%      0     0  [root]\n");
	free(text);
}

/* A recursion far deeper than any C stack would allow to walk recursively. */
static void test_tree_deep(void **state)
{
	enum { DEPTH = 200000 };
	struct ms_capture cap = { 0 };
	const char *strings[] = { "", "/bin/deep", "f" };
	struct ms_cap_module mod = { .path = 1 };
	struct ms_cap_frame fr = { .module = 0, .address = 0x10, .name = 2 };
	struct ms_cap_thread thr = { .pid = 1, .tid = 1, .name = 2 };
	struct ms_cap_sample sa = { .time = 1, .stack = DEPTH - 1, .period = 1, .count = 1 };
	struct ms_cap_stack *stacks = calloc(DEPTH, sizeof(*stacks));
	struct ms_query q = query(MS_VIEW_TREE);
	struct ms_top top;
	uint32_t i;
	char *text;
	size_t opens = 0;

	assert_non_null(stacks);
	for (i = 0; i < DEPTH; i++)
		stacks[i] = (struct ms_cap_stack){ i ? i - 1 : MS_NONE, 0, i + 1 };
	cap.n_strings = 3;
	cap.strings = strings;
	cap.n_modules = 1;
	cap.modules = &mod;
	cap.n_frames = 1;
	cap.frames = &fr;
	cap.n_stacks = DEPTH;
	cap.stacks = stacks;
	cap.n_threads = 1;
	cap.threads = &thr;
	cap.n_samples = 1;
	cap.samples = &sa;
	cap.target_exit_code = -1;

	top_sorted(&top, &cap, MS_SORT_SELF);
	assert_int_equal(top.n, 1);
	assert_int_equal(top.entries[0].self, 1);
	assert_int_equal(top.entries[0].total, 1);
	ms_top_release(&top);

	text = CAPTURE_OUTPUT(ms_tree_write(JSON_OUT, &cap, &q));
	for (const char *p = text; *p; p++)	/* not strstr: quadratic under ASan */
		if (*p == '{' && !strncmp(p, "{\"name\":\"f\"", 11))
			opens++;
	assert_int_equal(opens, DEPTH);
	free(text);
	free(stacks);
}

/* ---- summary ---- */

static void test_summary_numbers(void **state)
{
	struct tcap *t = main_capture();
	struct ms_summary s;

	assert_int_equal(ms_summary_compute(&s, &t->cap), 0);
	assert_string_equal(s.command, "./burn 1");
	assert_int_equal(s.pid, 42);
	assert_false(s.incomplete);
	assert_int_equal(s.samples, 11);
	assert_int_equal(s.period, 11000000);
	assert_int_equal(ms_summary_duration(&s), 10000000);
	assert_int_equal(s.n_threads, 2);
	assert_int_equal(s.threads[0].tid, 42);
	assert_int_equal(s.threads[0].samples, 8);
	assert_string_equal(s.threads[1].name, "worker");
	assert_int_equal(s.threads[1].samples, 3);
	/* by samples, then reason: ties of one sample in enum order */
	assert_int_equal(s.n_ends, 5);
	assert_int_equal(s.ends[0].reason, MS_END_FP_CHAIN);
	assert_int_equal(s.ends[0].samples, 6);
	assert_int_equal(s.ends[1].reason, MS_END_DEPTH);
	assert_int_equal(s.ends[1].samples, 2);
	assert_int_equal(s.ends[2].reason, MS_END_OUTERMOST);
	assert_int_equal(s.ends[3].reason, MS_END_NO_MODULE);
	assert_int_equal(s.ends[4].reason, MS_END_KERNEL_ONLY);
	assert_int_equal(s.exit_code, 0);
	ms_summary_release(&s);
	free(t);
}

static void test_summary_json(void **state)
{
	struct tcap *t = main_capture();
	char *text;

	text = CAPTURE_OUTPUT(ms_summary_write(out, &t->cap, true));
	assert_string_equal(text,
		"{\"command\":\"./burn 1\",\"pid\":42,\"record_options\":null,\"incomplete\":false,\"duration_ns\":10000000,"
		"\"start_time_ns\":500,\"end_time_ns\":2000000500,"
		"\"samples\":11,\"period\":11000000,\"cpu_time_ns\":11000000,\"off_cpu\":null,"
		"\"budget\":null,"
		"\"threads\":[{\"pid\":42,\"tid\":42,\"name\":\"burn\",\"samples\":8},"
		"{\"pid\":42,\"tid\":43,\"name\":\"worker\",\"samples\":3}],"
		"\"lost\":{\"kernel\":5,\"collector\":1},\"throttled\":2,\"exit_code\":0,"
		"\"stack_ends\":[{\"reason\":\"fp-chain\",\"samples\":6,\"percent\":54.55},"
		"{\"reason\":\"depth\",\"samples\":2,\"percent\":18.18},"
		"{\"reason\":\"outermost\",\"samples\":1,\"percent\":9.09},"
		"{\"reason\":\"no-module\",\"samples\":1,\"percent\":9.09},"
		"{\"reason\":\"kernel-only\",\"samples\":1,\"percent\":9.09}],"
		"\"unsymbolized\":{\"samples\":2,\"percent\":18.18,\"deferred\":false},"
		"\"problems\":[{\"stage\":\"ms-unwind\",\"code\":\"no-cfi\",\"count\":3,"
		"\"detail\":\"no CFI for \\\"burn\\\"+0x1234\"}]}\n");
	free(text);
	free(t);
}

static void test_summary_text(void **state)
{
	struct tcap *t = main_capture();
	char *text;

	text = CAPTURE_OUTPUT(ms_summary_write(out, &t->cap, false));
	/* Lost records first: the profile does not show that time. */
	assert_string_equal(text,
		"warning: 5 records were lost by the kernel (its ring buffer was full): sample less "
		"often (-F) or give it more pages (--mmap-pages)\n"
		"warning: 1 record was lost by the collector (the stages after it could not keep "
		"up): sample less often (-F)\n"
		"stacks:      complete 9.1%; cut short 27.3%: too deep 18.2%, an address in no "
		"module 9.1%; frame-pointer chain 54.5% (complete when the program keeps frame "
		"pointers); kernel threads 9.1%\n"
		"names:       18.2% of samples (2 of 11) have a frame without a name; "
		"ms-analyze problems lists them\n"
		"command:     ./burn 1 (pid 42, exit code 0)\n"
		"recorded:    2.0 s, 11 samples at 1.0 kHz, 2 threads\n"
		"cpu time:    11.0 ms, from the samples' periods\n"
		"threads:     2\n"
		"  pid  tid  samples   share  name\n"
		"   42   42        8   72.7%  burn\n"
		"   42   43        3   27.3%  worker\n"
		"lost:        records: 5 by the kernel, 1 by the collector\n"
		"throttled:   the kernel slowed sampling 2 times\n"
		"problems:    1 kind\n"
		"  stage      code    count  detail\n"
		"  ms-unwind  no-cfi      3  no CFI for \"burn\"+0x1234\n");
	free(text);
	free(t);
}

/* Threads without samples are counted, not listed, in text; --json lists them all. */
static void test_summary_idle_threads(void **state)
{
	struct tcap *t = main_capture();
	char *text;

	(void)state;
	thread(t, 42, 44, "idle-a");
	thread(t, 42, 45, "idle-b");
	text = CAPTURE_OUTPUT(ms_summary_write(out, &t->cap, false));
	assert_non_null(strstr(text,
		"threads:     2 with samples (2 more without, not listed)\n"
		"  pid  tid  samples   share  name\n"
		"   42   42        8   72.7%  burn\n"
		"   42   43        3   27.3%  worker\n"
		"lost:"));
	assert_null(strstr(text, "idle-a"));
	free(text);
	text = CAPTURE_OUTPUT(ms_summary_write(out, &t->cap, true));
	assert_non_null(strstr(text, "\"idle-a\""));
	assert_non_null(strstr(text, "\"idle-b\""));
	free(text);
	free(t);
}

static void test_summary_incomplete(void **state)
{
	struct tcap *t = main_capture();
	char *text;

	t->cap.flags |= MS_CAPTURE_INCOMPLETE;
	t->cap.target_exit_code = -1;
	text = CAPTURE_OUTPUT(ms_summary_write(out, &t->cap, false));
	assert_true(starts_with(text, "warning: this capture is incomplete: the recording was cut short\n"
				      "warning: 5 records were lost by the kernel (its ring buffer was full): sample less "
				      "often (-F) or give it more pages (--mmap-pages)\n"
				      "warning: 1 record was lost by the collector (the stages after it could not keep "
				      "up): sample less often (-F)\n"
				      "stacks:      complete 9.1%; cut short 27.3%:"));
	assert_non_null(strstr(text, "\ncommand:     ./burn 1 (pid 42)\n"));
	free(text);
	text = CAPTURE_OUTPUT(ms_summary_write(out, &t->cap, true));
	assert_non_null(strstr(text, "\"incomplete\":true,"));
	assert_non_null(strstr(text, "\"exit_code\":null,"));
	free(text);
	free(t);
}

static void test_summary_empty(void **state)
{
	struct tcap t;
	char *text;

	tcap_init(&t);
	text = CAPTURE_OUTPUT(ms_summary_write(out, &t.cap, true));
	assert_string_equal(text,
		"{\"command\":\"\",\"pid\":0,\"record_options\":null,\"incomplete\":false,\"duration_ns\":0,"
		"\"start_time_ns\":null,\"end_time_ns\":null,\"samples\":0,\"period\":0,"
		"\"cpu_time_ns\":0,\"off_cpu\":null,\"budget\":null,"
		"\"threads\":[],\"lost\":{\"kernel\":0,\"collector\":0},\"throttled\":0,"
		"\"exit_code\":null,\"stack_ends\":[],"
		"\"unsymbolized\":{\"samples\":0,\"percent\":0,\"deferred\":false},\"problems\":[]}\n");
	free(text);
	text = CAPTURE_OUTPUT(ms_summary_write(out, &t.cap, false));
	assert_true(starts_with(text, "stacks:      none (no samples)\nnames:       every frame has a name\n"
				      "command:     (not known)\n"));
	free(text);
}

/* Without an info "pid", the lowest pid among the threads stands in. */
static void test_summary_pid_from_threads(void **state)
{
	struct tcap t;
	struct ms_summary s;

	tcap_init(&t);
	thread(&t, 7, 7, "a");
	thread(&t, 9, 9, "b");
	assert_int_equal(ms_summary_compute(&s, &t.cap), 0);
	assert_int_equal(s.pid, 7);
	assert_int_equal(s.threads[1].samples, 0);
	ms_summary_release(&s);
}

/* ---- report ---- */

static void test_report(void **state)
{
	struct tcap *t = main_capture();
	struct ms_query q = query(MS_VIEW_REPORT);
	char *text, *top, *tree;

	t->cap.flags |= MS_CAPTURE_INCOMPLETE;
	text = CAPTURE_OUTPUT(ms_report_write(TEXT_OUT, &t->cap, &q));
	assert_true(starts_with(text, "warning: this capture is incomplete: the recording was cut short\n"
				      "warning: 5 records were lost by the kernel (its ring buffer was full): sample less "
				      "often (-F) or give it more pages (--mmap-pages)\n"
				      "warning: 1 record was lost by the collector (the stages after it could not keep "
				      "up): sample less often (-F)\n"
				      "stacks:      complete 9.1%; cut short 27.3%:"));
	top = strstr(text, "\nhottest functions\n11 samples, 8 functions\n");
	tree = strstr(text, "\ncall tree\n11 samples\n");
	assert_non_null(top);
	assert_non_null(tree);
	assert_true(top < tree);
	assert_non_null(strstr(tree, "          rec (burn)  [recursion ×3 folded]\n"));
	free(text);

	/* the query: a shorter top */
	q.limit = 1;
	text = CAPTURE_OUTPUT(ms_report_write(TEXT_OUT, &t->cap, &q));
	assert_non_null(strstr(text, "8 functions (the first 1 shown)\n"));
	free(text);

	/* a pruned tree: --hide-below is the tree's; the top keeps its rows */
	q.hide_below = 50;
	q.limit = 0;
	text = CAPTURE_OUTPUT(ms_report_write(TEXT_OUT, &t->cap, &q));
	assert_non_null(strstr(text, "\n11 samples, 8 functions\n"));
	assert_non_null(strstr(text, "burn_60"));
	assert_null(strstr(strstr(text, "\ncall tree\n"), "burn_60"));
	assert_non_null(strstr(text, "\ncall tree\n11 samples (nodes under 50.0% left out)\n"));
	assert_non_null(strstr(text, "        run (burn)\n"));
	free(text);
	free(t);
}

/* ---- JSON writer ---- */

static void test_json_strings(void **state)
{
	char *text;

	text = CAPTURE_OUTPUT((ms_json_quote(out, "a\"b\\c\n\t\x01\x7f"), 0));
	assert_string_equal(text, "\"a\\\"b\\\\c\\n\\t\\u0001\x7f\"");
	free(text);
	/* valid UTF-8 passes, broken sequences, overlongs and surrogates do not */
	text = CAPTURE_OUTPUT((ms_json_quote(out, "caf\xc3\xa9 \xf0\x9f\x94\xac"), 0));
	assert_string_equal(text, "\"caf\xc3\xa9 \xf0\x9f\x94\xac\"");
	free(text);
	text = CAPTURE_OUTPUT((ms_json_quote(out, "\xff\xc3(\xc0\xaf\xed\xa0\x80z\xe2\x82"), 0));
	assert_string_equal(text, "\"\\ufffd\\ufffd(\\ufffd\\ufffd\\ufffd\\ufffd\\ufffdz"
				 "\\ufffd\\ufffd\"");
	free(text);
}

static void test_json_values(void **state)
{
	struct ms_json j;
	char *text;

	text = CAPTURE_OUTPUT(({
		ms_json_init(&j, out);
		ms_json_object_begin(&j);
		ms_json_key(&j, "a");
		ms_json_array_begin(&j);
		ms_json_double(&j, 60.0, 2);
		ms_json_double(&j, 100.0 / 3, 2);
		ms_json_double(&j, 0.004, 2);
		ms_json_double(&j, -0.001, 2);
		ms_json_double(&j, 1.0 / 0.0, 2);
		ms_json_int(&j, -1);
		ms_json_uint(&j, UINT64_MAX);
		ms_json_bool(&j, true);
		ms_json_null(&j);
		ms_json_array_begin(&j);
		ms_json_array_end(&j);
		ms_json_object_begin(&j);
		ms_json_object_end(&j);
		ms_json_array_end(&j);
		ms_json_key(&j, "b");
		ms_json_string(&j, NULL);
		ms_json_object_end(&j);
		0;
	}));
	assert_string_equal(text, "{\"a\":[60,33.33,0,0,null,-1,18446744073709551615,true,null,"
				 "[],{}],\"b\":\"\"}");
	free(text);
}

/* ---- inline frames ---- */

static uint32_t function(struct tcap *t, const char *name, const char *file, uint32_t start)
{
	assert_true(t->cap.n_functions < 16);
	t->functions[t->cap.n_functions] = (struct ms_cap_function){
		.name = str(t, name), .file = str(t, file), .start_line = start };
	return t->cap.n_functions++;
}

/* Give frame fr an inline chain of n (function, line) pairs, innermost first. */
static void chain(struct tcap *t, uint32_t fr, uint32_t n, ...)
{
	va_list ap;
	uint32_t i;

	t->frames[fr].first_line = t->cap.n_lines;
	t->frames[fr].n_lines = n;
	va_start(ap, n);
	for (i = 0; i < n; i++) {
		assert_true(t->cap.n_lines < 32);
		t->lines[t->cap.n_lines].function = va_arg(ap, uint32_t);
		t->lines[t->cap.n_lines].line = va_arg(ap, uint32_t);
		t->cap.n_lines++;
	}
	va_end(ap);
}

/*
 * 11 samples over inline chains (outermost first):
 *   5  main  outer>mid>leaf    (one frame: leaf inlined into mid into outer)
 *   3  main  outer>mid         (another address of outer, mid inlined)
 *   2  main  inl+0x13f0        (no symbol; .eh_frame gave the start 0x13f0)
 *   1  main  inl+0x13f0        (another address of that function)
 */
static struct tcap *inline_capture(void)
{
	struct tcap *t = malloc(sizeof(*t));
	uint32_t inl, outer, mid, leaf, mainf, f1, f2, f3, f5, f6;

	assert_non_null(t);
	tcap_init(t);
	inl = module(t, "/bin/inl", MS_MODULE_FILE);
	outer = function(t, "outer", "/src/a.c", 38);
	mid = function(t, "mid", "/src/a.h", 25);
	leaf = function(t, "leaf", "/src/a.c", 10);
	mainf = function(t, "main", "/src/a.c", 48);
	f1 = frame(t, inl, 0x1110, "outer");
	chain(t, f1, 3, leaf, 12u, mid, 30u, outer, 40u);
	f2 = frame(t, inl, 0x1120, "outer");
	chain(t, f2, 2, mid, 31u, outer, 41u);
	f3 = frame(t, inl, 0x1210, "main");
	chain(t, f3, 1, mainf, 50u);
	f5 = frame(t, inl, 0x1400, NULL);
	t->frames[f5].reason = MS_SYM_FDE_ONLY;
	t->frames[f5].symbol_start = 0x13f0;
	f6 = frame(t, inl, 0x1404, NULL);
	t->frames[f6].reason = MS_SYM_FDE_ONLY;
	t->frames[f6].symbol_start = 0x13f0;
	thread(t, 9, 9, "inl");
	samples(t, 5, 0, path(t, f3, f1, MS_NONE), MS_END_OUTERMOST);
	samples(t, 3, 0, path(t, f3, f2, MS_NONE), MS_END_OUTERMOST);
	samples(t, 2, 0, path(t, f3, f5, MS_NONE), MS_END_OUTERMOST);
	samples(t, 1, 0, path(t, f3, f6, MS_NONE), MS_END_OUTERMOST);
	return t;
}

static void test_inline_keys(void **state)
{
	struct tcap *t = inline_capture();
	struct ms_funcs f;
	uint32_t k;

	assert_int_equal(ms_funcs_build(&f, &t->cap), 0);
	/* leaf main mid outer, then the unnamed function by its start */
	assert_int_equal(f.n, 5);
	assert_string_equal(f.funcs[0].label, "leaf");
	assert_string_equal(f.funcs[0].file_name, "a.c");
	assert_int_equal(f.funcs[0].line, 10);
	assert_string_equal(f.funcs[1].label, "main");
	assert_string_equal(f.funcs[2].label, "mid");
	assert_string_equal(f.funcs[2].file_name, "a.h");
	assert_string_equal(f.funcs[3].label, "outer");
	assert_string_equal(f.funcs[4].label, "inl+0x13f0");
	assert_string_equal(f.funcs[4].file_name, "");
	/* frame 0's chain, outermost first; its address is in leaf */
	assert_int_equal(f.chain_start[1] - f.chain_start[0], 3);
	k = f.chain_start[0];
	assert_string_equal(f.funcs[f.chain[k]].label, "outer");
	assert_string_equal(f.funcs[f.chain[k + 1]].label, "mid");
	assert_string_equal(f.funcs[f.chain[k + 2]].label, "leaf");
	assert_int_equal(f.frame_func[0], 0);
	assert_int_equal(f.frame_func[1], 2);	/* mid */
	assert_int_equal(f.frame_func[3], f.frame_func[4]);	/* one .eh_frame function */
	assert_int_equal(f.chain_start[5], 3 + 2 + 1 + 1 + 1);
	ms_funcs_release(&f);
	free(t);
}

/*
 * A function is one key whatever file its inlined lines come from (glibc's
 * __vfprintf_internal, split by file before); a function of the same name
 * that starts elsewhere stays another.
 */
static void test_function_one_key_across_files(void **state)
{
	static const struct expect_top expect[] = {
		{ "fmt", 7, 7 },
		{ "fmt", 2, 2 },
		{ "main", 0, 9 },
	};
	struct tcap *t = malloc(sizeof(*t));
	struct ms_funcs f;
	struct ms_top top;
	uint32_t mod, a, b, other, mainf, f1, f2, f3, f4;

	(void)state;
	assert_non_null(t);
	tcap_init(t);
	mod = module(t, "/lib/libc.so.6", MS_MODULE_FILE);
	a = function(t, "fmt", "/src/fmt-internal.c", 683);
	b = function(t, "fmt", "/src/fmt-process-arg.c", 683);
	other = function(t, "fmt", "/src/other.c", 10);
	mainf = function(t, "main", "/src/main.c", 5);
	f1 = frame(t, mod, 0x100, "fmt");
	chain(t, f1, 1, a, 690u);
	f2 = frame(t, mod, 0x200, "fmt");
	chain(t, f2, 1, b, 700u);
	f3 = frame(t, mod, 0x300, "fmt");
	chain(t, f3, 1, other, 12u);
	f4 = frame(t, mod, 0x400, "main");
	chain(t, f4, 1, mainf, 6u);
	thread(t, 1, 1, "t");
	samples(t, 3, 0, path(t, f4, f1, MS_NONE), MS_END_OUTERMOST);
	samples(t, 4, 0, path(t, f4, f2, MS_NONE), MS_END_OUTERMOST);
	samples(t, 2, 0, path(t, f4, f3, MS_NONE), MS_END_OUTERMOST);

	assert_int_equal(ms_funcs_build(&f, &t->cap), 0);
	assert_int_equal(f.n, 3);
	assert_int_equal(f.frame_func[f1], f.frame_func[f2]);
	assert_int_not_equal(f.frame_func[f1], f.frame_func[f3]);
	/* the file it shows is the first by name, whichever frame came first */
	assert_string_equal(f.funcs[f.frame_func[f2]].file_name, "fmt-internal.c");
	assert_int_equal(f.funcs[f.frame_func[f2]].line, 683);
	assert_int_equal(f.funcs[f.frame_func[f3]].line, 10);
	ms_funcs_release(&f);

	top_sorted(&top, &t->cap, MS_SORT_SELF);
	check_top(&top, expect, 3);
	ms_top_release(&top);
	free(t);
}

static void test_inline_top(void **state)
{
	static const struct expect_top expect[] = {
		{ "leaf", 5, 5 },
		{ "mid", 3, 8 },
		{ "inl+0x13f0", 3, 3 },
		{ "main", 0, 11 },
		{ "outer", 0, 8 },
	};
	struct tcap *t = inline_capture();
	struct ms_query q = query(MS_VIEW_TOP);
	struct ms_top top;
	char *text;

	top_sorted(&top, &t->cap, MS_SORT_SELF);
	check_top(&top, expect, 5);
	ms_top_release(&top);

	q.limit = 3;
	text = CAPTURE_OUTPUT(ms_top_write(TEXT_OUT, &t->cap, &q));
	assert_string_equal(text,
		"11 samples, 5 functions (the first 3 shown)\n"
		" self%  self  total%  total  module  function\n"
		" 45.5%     5   45.5%      5  inl     leaf (a.c:10)\n"
		" 27.3%     3   72.7%      8  inl     mid (a.h:25)\n"
		" 27.3%     3   27.3%      3  inl     inl+0x13f0\n");
	free(text);

	q.limit = 2;
	text = CAPTURE_OUTPUT(ms_top_write(JSON_OUT, &t->cap, &q));
	assert_string_equal(text,
		"{" HEAD("samples", "function", 11, 11, 11) "\"functions\":["
		"{\"name\":\"leaf\",\"module\":\"inl\",\"file\":\"/src/a.c\",\"line\":10,"
		"\"self\":5,\"self_percent\":45.45,\"total\":5,\"total_percent\":45.45},"
		"{\"name\":\"mid\",\"module\":\"inl\",\"file\":\"/src/a.h\",\"line\":25,"
		"\"self\":3,\"self_percent\":27.27,\"total\":8,\"total_percent\":72.73}]}\n");
	free(text);
	free(t);
}

static void test_inline_tree(void **state)
{
	struct tcap *t = inline_capture();
	struct ms_tree tr;
	struct ms_query q = query(MS_VIEW_TREE);
	uint32_t mainn, outer, mid;
	char *text;

	tree_of(&tr, &t->cap);
	assert_int_equal(tr.nodes[0].n_children, 1);
	mainn = child(&tr, 0, 0);
	check_node(&tr, mainn, "main", 0, 11, 2);
	outer = child(&tr, mainn, 0);
	check_node(&tr, outer, "outer", 0, 8, 1);
	mid = child(&tr, outer, 0);
	check_node(&tr, mid, "mid", 3, 8, 1);
	check_node(&tr, child(&tr, mid, 0), "leaf", 5, 5, 0);
	assert_int_equal(tr.nodes[child(&tr, mid, 0)].depth, 4);
	check_node(&tr, child(&tr, mainn, 1), "inl+0x13f0", 3, 3, 0);
	ms_tree_release(&tr);

	text = CAPTURE_OUTPUT(ms_tree_write(TEXT_OUT, &t->cap, &q));
	assert_string_equal(text,
		"11 samples\n"
		"total%   self%  total  self  function\n"
		"100.0%    0.0%     11     0  [root]\n"
		"100.0%    0.0%     11     0    main (a.c:48, inl)\n"
		" 72.7%    0.0%      8     0      outer (a.c:38, inl)\n"
		" 72.7%   27.3%      8     3        mid (a.h:25, inl)\n"
		" 45.5%   45.5%      5     5          leaf (a.c:10, inl)\n"
		" 27.3%   27.3%      3     3      inl+0x13f0\n");
	free(text);

	text = CAPTURE_OUTPUT(ms_tree_write(JSON_OUT, &t->cap, &q));
	assert_non_null(strstr(text,
		"{\"name\":\"mid\",\"module\":\"inl\",\"file\":\"/src/a.h\",\"line\":25,\"self\":3,"
		"\"total\":8,\"children\":[{\"name\":\"leaf\",\"module\":\"inl\",\"file\":\"/src/a.c\","
		"\"line\":10,\"self\":5,\"total\":5,\"children\":[]}]}"));
	assert_non_null(strstr(text, "{\"name\":\"inl+0x13f0\",\"module\":\"inl\",\"file\":\"\","
				    "\"line\":0,\"self\":3,\"total\":3,\"children\":[]}"));
	free(text);
	free(t);
}

/* An inlined function that recurses into itself is counted once per sample. */
static void test_inline_recursion(void **state)
{
	struct tcap t;
	struct ms_top top;
	uint32_t m, g, fr;

	tcap_init(&t);
	m = module(&t, "/bin/r", MS_MODULE_FILE);
	g = function(&t, "g", "/src/r.c", 3);
	fr = frame(&t, m, 0x10, "g");
	chain(&t, fr, 3, g, 4u, g, 5u, g, 6u);
	thread(&t, 1, 1, "r");
	samples(&t, 2, 0, path(&t, fr, fr, MS_NONE), MS_END_OUTERMOST);
	top_sorted(&top, &t.cap, MS_SORT_SELF);
	assert_int_equal(top.n, 1);
	assert_int_equal(top.entries[0].self, 2);
	assert_int_equal(top.entries[0].total, 2);
	ms_top_release(&top);
}

/* ---- symbolization problems ---- */

/*
 * 10 samples (outermost first):
 *   4  libc:0x500 prog:0x10           libc deferred, prog without build id
 *   2  libc:0x500 prog:0x20 prog:0x20 (one address: a return and a leaf frame)
 *   1  ok:main libm:sqrt              libm named, but no debug file
 *   1  [no module] 0xdead
 *   2  ok:main
 */
static struct tcap *problems_capture(void)
{
	struct tcap *t = malloc(sizeof(*t));
	uint32_t prog, libc, libm, ok, p1, p2, p2r, c1, d1, k1, nm;

	assert_non_null(t);
	tcap_init(t);
	prog = module(t, "/tmp/x/prog", MS_MODULE_FILE);
	t->modules[prog].dev_maj = 8;
	t->modules[prog].dev_min = 2;
	t->modules[prog].ino = 77;
	t->modules[prog].size = 9000;
	t->modules[prog].mtime = 123;
	t->modules[prog].status = MS_CAP_MODULE_NO_BUILD_ID;
	libc = module(t, "/lib/libc.so.6", MS_MODULE_FILE);
	t->modules[libc].build_id_len = 4;
	memcpy(t->modules[libc].build_id, "\xab\xcd\x01\x02", 4);
	t->modules[libc].status = MS_CAP_MODULE_DEFERRED;
	libm = module(t, "/lib/libm.so.6", MS_MODULE_FILE);
	t->modules[libm].status = MS_CAP_MODULE_PARTIAL;
	t->modules[libm].status_reason = MS_SYM_NO_DEBUG;
	ok = module(t, "/lib/libok.so", MS_MODULE_FILE);
	p1 = frame(t, prog, 0x10, NULL);
	p2 = frame(t, prog, 0x20, NULL);
	p2r = frame(t, prog, 0x20, NULL);
	t->frames[p2r].flags = MS_FRAME_RETURN;
	c1 = frame(t, libc, 0x500, NULL);
	t->frames[p1].reason = t->frames[p2].reason = t->frames[p2r].reason =
		t->frames[c1].reason = MS_CAP_UNSYMBOLIZED;
	d1 = frame(t, libm, 0x30, "sqrt");
	t->frames[d1].reason = MS_SYM_NO_DEBUG;
	k1 = frame(t, ok, 0x40, "main");
	nm = frame(t, MS_NONE, 0xdead, NULL);
	thread(t, 1, 1, "prog");
	samples(t, 4, 0, path(t, c1, p1, MS_NONE), MS_END_OUTERMOST);
	samples(t, 2, 0, path(t, c1, p2r, p2, MS_NONE), MS_END_OUTERMOST);
	samples(t, 1, 0, path(t, k1, d1, MS_NONE), MS_END_OUTERMOST);
	samples(t, 1, 0, path(t, nm, MS_NONE), MS_END_NO_MODULE);
	samples(t, 2, 0, path(t, k1, MS_NONE), MS_END_OUTERMOST);
	return t;
}

static void test_problems_numbers(void **state)
{
	struct tcap *t = problems_capture();
	struct ms_sym_problems v;
	uint64_t n;

	assert_int_equal(ms_unsymbolized_samples(&t->cap, &n), 0);
	assert_int_equal(n, 7);
	assert_int_equal(ms_sym_problems_compute(&v, &t->cap), 0);
	assert_int_equal(v.samples, 10);
	assert_int_equal(v.unsymbolized, 7);
	assert_int_equal(v.n_modules, 4);
	/* prog and libc touch 6 samples each: the module id decides */
	assert_int_equal(v.modules[0].module, 0);
	assert_int_equal(v.modules[0].samples, 6);
	assert_int_equal(v.modules[0].n_addresses, 2);
	assert_int_equal(v.modules[1].module, 1);
	assert_int_equal(v.modules[1].samples, 6);
	assert_int_equal(v.modules[2].module, 2);
	assert_int_equal(v.modules[2].samples, 1);
	assert_int_equal(v.modules[2].n_addresses, 0);
	assert_int_equal(v.modules[3].module, MS_NONE);
	assert_int_equal(v.n_addresses, 4);
	assert_int_equal(v.addresses[0].address, 0x10);
	assert_int_equal(v.addresses[0].samples, 4);
	assert_int_equal(v.addresses[1].address, 0x20);
	assert_int_equal(v.addresses[1].samples, 2);	/* twice on the stack, once per sample */
	assert_int_equal(v.addresses[2].address, 0x500);
	assert_int_equal(v.addresses[2].samples, 6);
	assert_int_equal(v.addresses[2].reason, MS_CAP_UNSYMBOLIZED);
	assert_int_equal(v.addresses[3].address, 0xdead);
	assert_int_equal(v.addresses[3].reason, MS_SYM_NO_MODULE);
	ms_sym_problems_release(&v);
	free(t);
}

static void test_problems_text(void **state)
{
	struct tcap *t = problems_capture();
	char *text;

	text = CAPTURE_OUTPUT(ms_sym_problems_write(out, &t->cap, false));
	assert_string_equal(text,
		"unsymbolized: 7 of 10 samples (70.0%) have a frame without a name\n"
		"4 modules to report, 4 addresses without a name\n"
		"\n"
		"/tmp/x/prog: no-build-id, 6 samples (60.0%)\n"
		"  identity: file, no build id, device 8:2, inode 77, size 9000, mtime 123\n"
		"  samples   share  reason          address\n"
		"        4   40.0%  not-symbolized  0x10\n"
		"        2   20.0%  not-symbolized  0x20\n"
		"\n"
		"/lib/libc.so.6: deferred, 6 samples (60.0%)\n"
		"  identity: file, build id abcd0102\n"
		"  samples   share  reason          address\n"
		"        6   60.0%  not-symbolized  0x500\n"
		"\n"
		"/lib/libm.so.6: partial (no-debug-file), 1 sample (10.0%)\n"
		"  identity: file, no build id\n"
		"\n"
		"[no module]: 1 sample (10.0%)\n"
		"  samples   share  reason          address\n"
		"        1   10.0%  no-module       0xdead\n");
	free(text);
	free(t);
}

static void test_problems_json(void **state)
{
	struct tcap *t = problems_capture();
	char *text;

	text = CAPTURE_OUTPUT(ms_sym_problems_write(out, &t->cap, true));
	assert_string_equal(text,
		"{\"samples\":10,\"unsymbolized\":7,\"unsymbolized_percent\":70,\"modules\":["
		"{\"path\":\"/tmp/x/prog\",\"kind\":\"file\",\"build_id\":\"\",\"dev_major\":8,"
		"\"dev_minor\":2,\"inode\":77,\"size\":9000,\"mtime\":123,\"status\":\"no-build-id\","
		"\"reason\":\"\",\"samples\":6,\"addresses\":["
		"{\"address\":\"0x10\",\"reason\":\"not-symbolized\",\"samples\":4},"
		"{\"address\":\"0x20\",\"reason\":\"not-symbolized\",\"samples\":2}]},"
		"{\"path\":\"/lib/libc.so.6\",\"kind\":\"file\",\"build_id\":\"abcd0102\",\"dev_major\":0,"
		"\"dev_minor\":0,\"inode\":0,\"size\":0,\"mtime\":0,\"status\":\"deferred\","
		"\"reason\":\"\",\"samples\":6,\"addresses\":["
		"{\"address\":\"0x500\",\"reason\":\"not-symbolized\",\"samples\":6}]},"
		"{\"path\":\"/lib/libm.so.6\",\"kind\":\"file\",\"build_id\":\"\",\"dev_major\":0,"
		"\"dev_minor\":0,\"inode\":0,\"size\":0,\"mtime\":0,\"status\":\"partial\","
		"\"reason\":\"no-debug-file\",\"samples\":1,\"addresses\":[]},"
		"{\"path\":\"\",\"kind\":\"none\",\"build_id\":\"\",\"dev_major\":0,\"dev_minor\":0,"
		"\"inode\":0,\"size\":0,\"mtime\":0,\"status\":\"\",\"reason\":\"\",\"samples\":1,"
		"\"addresses\":[{\"address\":\"0xdead\",\"reason\":\"no-module\",\"samples\":1}]}],"
		"\"off_cpu\":null,\"recording\":[]}\n");
	free(text);
	free(t);
}

static void test_problems_none(void **state)
{
	struct tcap *t = inline_capture();
	struct tcap e;
	char *text;

	/* every frame named: the .eh_frame ones get a symbol too */
	t->frames[3].name = t->frames[4].name = str(t, "fde");
	t->frames[3].reason = t->frames[4].reason = MS_SYM_OK;
	text = CAPTURE_OUTPUT(ms_sym_problems_write(out, &t->cap, false));
	assert_string_equal(text, "unsymbolized: none\nno module or address to report\n");
	free(text);
	free(t);
	tcap_init(&e);
	text = CAPTURE_OUTPUT(ms_sym_problems_write(out, &e.cap, true));
	assert_string_equal(text, "{\"samples\":0,\"unsymbolized\":0,\"unsymbolized_percent\":0,"
				 "\"modules\":[],\"off_cpu\":null,\"recording\":[]}\n");
	free(text);
}

/* The summary says what share is unsymbolized, and what to do when it was deferred. */
static void test_summary_deferred(void **state)
{
	struct tcap *t = problems_capture();
	char *text;

	text = CAPTURE_OUTPUT(ms_summary_write(out, &t->cap, false));
	assert_non_null(strstr(text, "\nnames:       70.0% of samples (7 of 10) have a frame without "
				    "a name; symbolization was deferred: run microscope symbolize\n"));
	free(text);
	text = CAPTURE_OUTPUT(ms_summary_write(out, &t->cap, true));
	assert_non_null(strstr(text, "\"unsymbolized\":{\"samples\":7,\"percent\":70,\"deferred\":true}"));
	free(text);
	free(t);
}

/* ---- weighted sample rows ---- */

/*
 * The capture t with each run of rows of one thread, stack and end merged
 * into one row whose count and period are the run's: what an importer
 * makes of "this stack, N times".
 */
static struct tcap *weighed(const struct tcap *t)
{
	struct tcap *w = malloc(sizeof(*w));
	uint32_t i, n = 0;

	assert_non_null(w);
	*w = *t;
	w->cap.strings = w->strings;
	w->cap.info = w->info;
	w->cap.modules = w->modules;
	w->cap.frames = w->frames;
	w->cap.stacks = w->stacks;
	w->cap.threads = w->threads;
	w->cap.samples = w->samples;
	w->cap.problems = w->problems;
	w->cap.functions = w->functions;
	w->cap.lines = w->lines;
	w->cap.duty = w->duty;
	for (i = 0; i < t->cap.n_samples; i++) {
		const struct ms_cap_sample *s = &t->samples[i];
		struct ms_cap_sample *last = n ? &w->samples[n - 1] : NULL;

		if (last && last->thread == s->thread && last->stack == s->stack &&
		    last->end == s->end) {
			last->count += s->count;
			last->period += s->period;
			continue;
		}
		w->samples[n++] = *s;
	}
	w->cap.n_samples = n;
	w->cap.flags |= MS_CAPTURE_WEIGHTED;
	return w;
}

/* Every view of a weighted capture says what the capture of its expanded rows says. */
static void expect_same_views(const struct tcap *t, uint32_t rows)
{
	struct tcap *w = weighed(t);
	struct ms_summary a, b;
	char *x, *y;
	int json;

	assert_int_equal(w->cap.n_samples, rows);
	assert_true(rows < t->cap.n_samples);
	assert_int_equal(ms_capture_sample_count(&w->cap), t->cap.n_samples);
	for (json = 0; json <= 1; json++) {
		struct ms_query to = query(MS_VIEW_TOP), tr = query(MS_VIEW_TREE);

		x = view(&t->cap, &to, json);
		y = view(&w->cap, &to, json);
		assert_string_equal(x, y);
		free(x);
		free(y);
		to.sort = MS_SORT_TOTAL;
		x = view(&t->cap, &to, json);
		y = view(&w->cap, &to, json);
		assert_string_equal(x, y);
		free(x);
		free(y);
		x = view(&t->cap, &tr, json);
		y = view(&w->cap, &tr, json);
		assert_string_equal(x, y);
		free(x);
		free(y);
		x = CAPTURE_OUTPUT(ms_sym_problems_write(out, &t->cap, json));
		y = CAPTURE_OUTPUT(ms_sym_problems_write(out, &w->cap, json));
		assert_string_equal(x, y);
		free(x);
		free(y);
		/* the views of the query: by address, in CPU time, threads, callers */
		for (int v = MS_VIEW_TOP; v <= MS_VIEW_THREADS; v++) {
			struct ms_query q = query((enum ms_view)v);

			q.function = "main";
			q.by = MS_BY_ADDRESS;
			x = view(&t->cap, &q, json);
			y = view(&w->cap, &q, json);
			assert_string_equal(x, y);
			free(x);
			free(y);
			q.unit = MS_UNIT_CPU_TIME;
			x = view(&t->cap, &q, json);
			y = view(&w->cap, &q, json);
			assert_string_equal(x, y);
			free(x);
			free(y);
		}
	}
	/* the summary's sums (its times are the rows' own) */
	assert_int_equal(ms_summary_compute(&a, &t->cap), 0);
	assert_int_equal(ms_summary_compute(&b, &w->cap), 0);
	assert_int_equal(a.samples, b.samples);
	assert_int_equal(a.period, b.period);
	assert_int_equal(a.unsymbolized, b.unsymbolized);
	assert_int_equal(a.n_threads, b.n_threads);
	for (uint32_t i = 0; i < a.n_threads; i++)
		assert_int_equal(a.threads[i].samples, b.threads[i].samples);
	assert_int_equal(a.n_ends, b.n_ends);
	for (uint32_t i = 0; i < a.n_ends; i++) {
		assert_int_equal(a.ends[i].reason, b.ends[i].reason);
		assert_int_equal(a.ends[i].samples, b.ends[i].samples);
	}
	ms_summary_release(&a);
	ms_summary_release(&b);
	free(w);
}

static void test_weighted_views(void **state)
{
	struct tcap *t = main_capture();

	/* 11 samples in 7 runs */
	expect_same_views(t, 7);
	free(t);
	t = problems_capture();
	/* 10 samples in 5 runs */
	expect_same_views(t, 5);
	free(t);
}

/* A row that stands for 2^40 samples is counted so, in every sum. */
static void test_weighted_huge(void **state)
{
	struct tcap *t = main_capture();
	struct ms_top top;
	struct ms_tree tree;
	struct ms_summary s;
	struct ms_query q;
	uint64_t n;
	char *text;

	/* the first row (burn_60 on thread 1) stands for 2^40 samples, not 1 */
	t->samples[0].count = 1ull << 40;
	t->cap.flags |= MS_CAPTURE_WEIGHTED;
	n = (1ull << 40) + 10;
	assert_int_equal(ms_capture_sample_count(&t->cap), n);
	top_sorted(&top, &t->cap, MS_SORT_SELF);
	assert_int_equal(top.sel.selected, n);
	assert_int_equal(top.sel.selected_samples, n);
	assert_string_equal(key_label(&top.sel, top.entries[0].key), "burn_60");
	assert_int_equal(top.entries[0].self, (1ull << 40) + 3);
	ms_top_release(&top);
	tree_of(&tree, &t->cap);
	assert_int_equal(tree.sel.selected, n);
	assert_int_equal(tree.nodes[0].total, n);
	assert_int_equal(tree.nodes[0].self, 1);	/* the row without frames */
	ms_tree_release(&tree);
	assert_int_equal(ms_summary_compute(&s, &t->cap), 0);
	assert_int_equal(s.samples, n);
	assert_int_equal(s.threads[0].samples, (1ull << 40) + 7);
	assert_int_equal(s.ends[0].reason, MS_END_FP_CHAIN);
	assert_int_equal(s.ends[0].samples, (1ull << 40) + 5);
	ms_summary_release(&s);
	q = query(MS_VIEW_TOP);
	q.limit = 1;
	text = CAPTURE_OUTPUT(ms_top_write(TEXT_OUT, &t->cap, &q));
	assert_true(starts_with(text, "1099511627786 samples"));
	assert_non_null(strstr(text, "1099511627779"));	/* burn_60's self */
	free(text);
	free(t);
}

/* ---- summary of a recording held to a CPU budget ---- */

static void duty(struct tcap *t, uint64_t time, uint32_t duty_ppm, uint32_t budget_ppm)
{
	assert_true(t->cap.n_duty < sizeof(t->duty) / sizeof(t->duty[0]));
	t->duty[t->cap.n_duty++] = (struct ms_cap_duty){ .time = time, .duty_ppm = duty_ppm,
							  .share_ppm = 30000, .rate = 500,
							  .budget_ppm = budget_ppm };
	t->cap.flags |= MS_CAPTURE_DUTY;
}

/* Info "event" (info is sorted by key: between "command" and "pid"). */
static void set_event(struct tcap *t, const char *event)
{
	t->info[2] = t->info[1];
	t->info[1] = (struct ms_cap_info){ .key = str(t, "event"), .value_text = str(t, event) };
	t->cap.n_info = 3;
}

/*
 * main_capture()'s 11 samples (1 ms apart from 1000 ns, 1 ms periods)
 * taken at a duty of 80% (from before the first), 50% (samples 2-4), 25%
 * (5-7), then 100%: they stand for 2 x 1.25 + 3 x 2 + 3 x 4 + 3 x 1 =
 * 23.5 ms, and over the 10 ms between the first and the last sample
 * sampling was on (2 x 0.8 + 3 x 0.5 + 3 x 0.25 + 2 x 1) / 10 = 58.5%.
 */
static struct tcap *budget_capture(void)
{
	struct tcap *t = main_capture();

	duty(t, 500, 800000, 20000);
	duty(t, 1000 + 2000000, 500000, 20000);
	duty(t, 1000 + 5000000, 250000, 20000);
	duty(t, 1000 + 8000000, 1000000, 20000);
	return t;
}

static void test_summary_duty_numbers(void **state)
{
	struct tcap *t = budget_capture();
	struct ms_summary s;

	assert_int_equal(ms_summary_compute(&s, &t->cap), 0);
	assert_int_equal(s.period, 11000000);
	assert_int_equal(s.weight, 23500000);
	assert_true(s.time_event);
	assert_int_equal(s.duty_changes, 4);
	assert_int_equal(s.budget_ppm, 20000);
	assert_int_equal(s.lowest_duty_ppm, 250000);
	assert_int_equal(s.mean_duty_ppm, 585000);
	/* counts are still samples */
	assert_int_equal(s.samples, 11);
	ms_summary_release(&s);

	/* one sample: no time between first and last, the duty at it */
	t->cap.n_samples = 1;
	t->samples[0].time = 3000000;
	t->samples[0].count = 3;
	t->samples[0].period = 3000000;
	assert_int_equal(ms_summary_compute(&s, &t->cap), 0);
	assert_int_equal(s.mean_duty_ppm, 500000);
	/* a row standing for 3 samples: its period is their sum, scaled once */
	assert_int_equal(s.weight, 6000000);
	ms_summary_release(&s);
	free(t);
}

static void test_summary_duty_text(void **state)
{
	struct tcap *t = budget_capture();
	char *text;

	text = CAPTURE_OUTPUT(ms_summary_write(out, &t->cap, false));
	assert_non_null(strstr(text,
		"cpu time:    23.5 ms, from the samples' periods, scaled up where "
		"sampling was paused\n"
		"budget:      2.0% of one CPU; sampling was on 58.5% of the time on average, "
		"25.0% at the least (4 changes)\n"
		"threads:     2\n"));
	free(text);

	/* a budget under 1%, one change; periods that are not time get no cpu time */
	t->cap.n_duty = 1;
	t->duty[0].budget_ppm = 2500;
	set_event(t, "sched:sched_switch");
	text = CAPTURE_OUTPUT(ms_summary_write(out, &t->cap, false));
	assert_non_null(strstr(text, ", 11 samples of sched:sched_switch, one per 1,000,000 on average, "));
	assert_non_null(strstr(text,
		"budget:      0.25% of one CPU; sampling was on 80.0% of the time on average, "
		"80.0% at the least (1 change)\n"));
	assert_null(strstr(text, "cpu time:"));
	free(text);
	free(t);
}

static void test_summary_duty_json(void **state)
{
	struct tcap *t = budget_capture();
	char *text;

	text = CAPTURE_OUTPUT(ms_summary_write(out, &t->cap, true));
	assert_non_null(strstr(text,
		"\"samples\":11,\"period\":11000000,\"cpu_time_ns\":23500000,\"off_cpu\":null,"
		"\"budget\":{\"budget_ppm\":20000,\"duty_changes\":4,\"lowest_duty_ppm\":250000,"
		"\"mean_duty_ppm\":585000},\"threads\":"));
	free(text);
	set_event(t, "sched:sched_switch");
	text = CAPTURE_OUTPUT(ms_summary_write(out, &t->cap, true));
	assert_non_null(strstr(text, "\"period\":11000000,\"cpu_time_ns\":null,\"off_cpu\":null,\"budget\":{"));
	free(text);
	free(t);
}

/* ---- the query ---- */

/* call returns -1 after one message holding frag. */
#define EXPECT_ERROR(call, frag) do {                                                   \
	const char *msg_;                                                               \
	int rc_;                                                                        \
	stderr_begin();                                                                 \
	rc_ = (call);                                                                   \
	msg_ = stderr_end();                                                            \
	if (rc_ != -1 || count_lines(msg_) != 1 || !strstr(msg_, (frag)))               \
		fail_msg("%s: expected -1 and one message with \"%s\"; got %d and \"%s\"", \
			 #call, (frag), rc_, msg_);                                     \
} while (0)

/* call returns 0 and says nothing. */
#define EXPECT_QUIET(call) do {                                                         \
	const char *msg_;                                                               \
	int rc_;                                                                        \
	stderr_begin();                                                                 \
	rc_ = (call);                                                                   \
	msg_ = stderr_end();                                                            \
	if (rc_ != 0 || *msg_)                                                          \
		fail_msg("%s: expected 0 and no message; got %d and \"%s\"", #call, rc_, msg_); \
} while (0)

static void test_query_names(void **state)
{
	static const char *const views[] = { "report", "summary", "top", "tree", "callers",
					     "callees", "threads", "timeline", "problems", "diff",
					     "off-cpu", "wall", "tasks" };
	static const char *const bys[] = { "function", "line", "address", "module" };
	enum ms_view v;
	enum ms_by b;
	enum ms_look l;
	enum ms_unit u;
	int i;

	assert_int_equal(sizeof(views) / sizeof(views[0]), MS_VIEW_COUNT);
	for (i = 0; i < MS_VIEW_COUNT; i++) {
		assert_string_equal(ms_view_name((enum ms_view)i), views[i]);
		v = MS_VIEW_COUNT;
		EXPECT_QUIET(ms_view_parse(views[i], &v));
		assert_int_equal(v, i);
		v = MS_VIEW_COUNT;
		EXPECT_QUIET(ms_view_parse_quiet(views[i], &v));
		assert_int_equal(v, i);
	}
	for (i = 0; i < MS_BY_COUNT; i++) {
		assert_string_equal(ms_by_name((enum ms_by)i), bys[i]);
		EXPECT_QUIET(ms_by_parse(bys[i], &b));
		assert_int_equal(b, i);
	}
	assert_string_equal(ms_look_name(MS_LOOK_NATIVE), "native");
	EXPECT_QUIET(ms_look_parse("native", &l));
	assert_int_equal(l, MS_LOOK_NATIVE);
	assert_string_equal(ms_unit_name(MS_UNIT_SAMPLES), "samples");
	assert_string_equal(ms_unit_name(MS_UNIT_CPU_TIME), "cpu-time");
	EXPECT_QUIET(ms_unit_parse("cpu-time", &u));
	assert_int_equal(u, MS_UNIT_CPU_TIME);
	EXPECT_QUIET(ms_unit_parse("samples", &u));
	assert_int_equal(u, MS_UNIT_SAMPLES);
	assert_string_equal(ms_unit_measure(MS_UNIT_SAMPLES), "samples");
	assert_string_equal(ms_unit_measure(MS_UNIT_CPU_TIME), "ns");
	assert_string_equal(ms_unit_name(MS_UNIT_OFF_CPU), "off-cpu");
	EXPECT_QUIET(ms_unit_parse("off-cpu", &u));
	assert_int_equal(u, MS_UNIT_OFF_CPU);
	assert_string_equal(ms_unit_measure(MS_UNIT_OFF_CPU), "ns");
	assert_string_equal(ms_unit_name(MS_UNIT_SNAPSHOTS), "snapshots");
	EXPECT_QUIET(ms_unit_parse("snapshots", &u));
	assert_int_equal(u, MS_UNIT_SNAPSHOTS);
	assert_string_equal(ms_unit_measure(MS_UNIT_SNAPSHOTS), "snapshots");
	assert_string_equal(ms_unit_source(MS_UNIT_SNAPSHOTS), "thread-snapshots");

	/* out of range: no name */
	assert_null(ms_view_name(MS_VIEW_COUNT));
	assert_null(ms_view_name((enum ms_view)-1));
	assert_null(ms_by_name(MS_BY_COUNT));
	assert_null(ms_look_name(MS_LOOK_COUNT));
	assert_null(ms_unit_name(MS_UNIT_COUNT));
}

static void test_query_parsers_refuse(void **state)
{
	enum ms_view v = MS_VIEW_TREE;
	enum ms_by b = MS_BY_LINE;
	enum ms_look l = MS_LOOK_NATIVE;
	enum ms_unit u = MS_UNIT_CPU_TIME;

	EXPECT_ERROR(ms_view_parse("tops", &v),
		     "microscope: unknown view 'tops': use report, summary, top, tree, callers, "
		     "callees, threads, timeline, problems, diff, off-cpu, wall, tasks\n");
	EXPECT_ERROR(ms_by_parse("lines", &b),
		     "unknown granularity for --by 'lines': use function, line, address, module\n");
	EXPECT_ERROR(ms_by_parse("Function", &b), "'Function'");
	EXPECT_ERROR(ms_look_parse("py", &l), "unknown look 'py': use mixed, native, python\n");
	EXPECT_ERROR(ms_unit_parse("cpu", &u), "unknown unit 'cpu': use samples, cpu-time, off-cpu, snapshots\n");
	EXPECT_ERROR(ms_unit_parse("", &u), "unknown unit '': use samples, cpu-time, off-cpu, snapshots\n");
	/* the quiet one says nothing */
	stderr_begin();
	assert_int_equal(ms_view_parse_quiet("tops", &v), -1);
	assert_int_equal(ms_view_parse_quiet("", &v), -1);
	assert_string_equal(stderr_end(), "");
	/* a refused value leaves the output alone */
	assert_int_equal(v, MS_VIEW_TREE);
	assert_int_equal(b, MS_BY_LINE);
	assert_int_equal(l, MS_LOOK_NATIVE);
	assert_int_equal(u, MS_UNIT_CPU_TIME);
}

static void expect_time(const char *arg, bool has_start, uint64_t start, bool has_end, uint64_t end)
{
	struct ms_query q = query(MS_VIEW_TOP);

	EXPECT_QUIET(ms_query_parse_time(&q, arg));
	if (q.has_time_start != has_start || q.has_time_end != has_end ||
	    (has_start && q.time_start != start) || (has_end && q.time_end != end))
		fail_msg("'%s': got %d %llu .. %d %llu", arg, q.has_time_start,
			 (unsigned long long)q.time_start, q.has_time_end,
			 (unsigned long long)q.time_end);
}

static void test_query_parse_time(void **state)
{
	struct ms_query q = query(MS_VIEW_TOP);
	static const char *const bad[] = {
		"1s", "1s-2s", "1..2..3", "-1..2", "1..-2", "+1..", "x..", "1x..", "1 s..", "..2h",
		"nan..", "inf..", "..1e30", "1.5.s..", "1s....2s", "...", "", "1s..2s..",
		"..", "0...5",
	};
	size_t i;

	expect_time("1.5s..2500ms", true, 1500000000, true, 2500000000);
	expect_time("..2", false, 0, true, 2000000000);
	expect_time("10ms..", true, 10000000, false, 0);
	expect_time("250us..1min", true, 250000, true, 60000000000);
	expect_time("7ns..8ns", true, 7, true, 8);
	expect_time("0..0.5", true, 0, true, 500000000);
	expect_time("1e-9..", true, 1, false, 0);	/* strtod's forms: one ns */

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char want[160];

		snprintf(want, sizeof(want), "--time wants START..END, each a time from the "
			 "recording's start such as 1.5s, 250ms or 2 (seconds), either side "
			 "empty; not '%s'\n", bad[i]);
		EXPECT_ERROR(ms_query_parse_time(&q, bad[i]), want);
	}

	/* a refused range leaves the query as it was */
	q = query(MS_VIEW_TOP);
	assert_int_equal(ms_query_parse_time(&q, "1s..2s"), 0);
	stderr_begin();
	assert_int_equal(ms_query_parse_time(&q, "5s..later"), -1);
	stderr_end();
	assert_true(q.has_time_start && q.time_start == 1000000000 && q.time_end == 2000000000);

	/* a range that parses but ends where it starts, or before, is refused by the check */
	q = query(MS_VIEW_TOP);
	EXPECT_QUIET(ms_query_parse_time(&q, "2s..1s"));
	EXPECT_ERROR(ms_query_check(&q), "--time ends before it starts");
	EXPECT_QUIET(ms_query_parse_time(&q, "1s..1s"));
	EXPECT_ERROR(ms_query_check(&q), "--time ends before it starts");
	EXPECT_QUIET(ms_query_parse_time(&q, "1s..1001ms"));
	EXPECT_QUIET(ms_query_check(&q));
}

static void test_query_tids(void **state)
{
	static const char *const bad[] = {
		"", "12,", ",12", "1,,2", "-1", "+1", "12a", "1;2", "4294967296", "0x10",
		"99999999999999999999",
	};
	struct ms_query q = query(MS_VIEW_TOP);
	size_t i;

	EXPECT_QUIET(ms_query_add_tids(&q, "123"));
	EXPECT_QUIET(ms_query_add_tids(&q, "12,13"));
	EXPECT_QUIET(ms_query_add_tids(&q, "4294967295"));
	EXPECT_QUIET(ms_query_add_tids(&q, "0"));
	assert_int_equal(q.n_tids, 5);
	assert_int_equal(q.tids[0], 123);
	assert_int_equal(q.tids[1], 12);
	assert_int_equal(q.tids[2], 13);
	assert_int_equal(q.tids[3], UINT32_MAX);
	assert_int_equal(q.tids[4], 0);

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char want[128];

		q = query(MS_VIEW_TOP);
		snprintf(want, sizeof(want),
			 "--tid wants thread ids such as 1234 or 1234,1240; not '%s'\n", bad[i]);
		EXPECT_ERROR(ms_query_add_tids(&q, bad[i]), want);
	}

	/* at most MS_QUERY_MAX_THREADS ids, and names */
	q = query(MS_VIEW_TOP);
	for (i = 0; i < MS_QUERY_MAX_THREADS; i++)
		EXPECT_QUIET(ms_query_add_tids(&q, "7"));
	EXPECT_ERROR(ms_query_add_tids(&q, "7"), "at most 64 thread ids in --tid\n");
	assert_int_equal(q.n_tids, MS_QUERY_MAX_THREADS);
	for (i = 0; i < MS_QUERY_MAX_THREADS; i++)
		EXPECT_QUIET(ms_query_add_thread_name(&q, "w"));
	EXPECT_ERROR(ms_query_add_thread_name(&q, "w"), "at most 64 names in --thread\n");
	assert_int_equal(q.n_thread_names, MS_QUERY_MAX_THREADS);
}

static void test_query_check(void **state)
{
	struct ms_query q;
	int v;

	for (v = 0; v < MS_VIEW_COUNT; v++) {
		q = query((enum ms_view)v);
		if (v == MS_VIEW_CALLERS || v == MS_VIEW_CALLEES) {
			char want[64];

			snprintf(want, sizeof(want), "%s needs the function to start from\n",
				 ms_view_name((enum ms_view)v));
			EXPECT_ERROR(ms_query_check(&q), want);
			q.function = "";
			EXPECT_ERROR(ms_query_check(&q), want);
			q.function = "f";
		}
		EXPECT_QUIET(ms_query_check(&q));
		assert_false(ms_query_filters(&q));
	}

	q = query(MS_VIEW_TOP);
	q.hide_below = -1;
	EXPECT_ERROR(ms_query_check(&q), "--hide-below wants a share from 0 to 100\n");
	q.hide_below = 100.5;
	EXPECT_ERROR(ms_query_check(&q), "--hide-below wants a share from 0 to 100\n");
	q.hide_below = 0.0 / 0.0;
	EXPECT_ERROR(ms_query_check(&q), "--hide-below wants a share from 0 to 100\n");
	q.hide_below = 100;
	EXPECT_QUIET(ms_query_check(&q));
	assert_false(ms_query_filters(&q));	/* hides rows, selects every sample */

	q = query(MS_VIEW_TOP);
	q.focus = "(";
	EXPECT_ERROR(ms_query_check(&q), "--focus '(' is not a regular expression: ");
	q.focus = "^ma(in)?$";
	EXPECT_QUIET(ms_query_check(&q));
	q.ignore = "a[";
	EXPECT_ERROR(ms_query_check(&q), "--ignore 'a[' is not a regular expression: ");

	q = query(MS_VIEW_COUNT);
	EXPECT_ERROR(ms_query_check(&q), "a query with a value out of range\n");
	q = query(MS_VIEW_TOP);
	q.by = MS_BY_COUNT;
	EXPECT_ERROR(ms_query_check(&q), "a query with a value out of range\n");
	q = query(MS_VIEW_TOP);
	q.unit = MS_UNIT_COUNT;
	EXPECT_ERROR(ms_query_check(&q), "a query with a value out of range\n");
	q = query(MS_VIEW_TOP);
	q.look = MS_LOOK_COUNT;
	EXPECT_ERROR(ms_query_check(&q), "a query with a value out of range\n");

	/* each filter makes the query select */
	q = query(MS_VIEW_TOP);
	q.n_tids = 1;
	assert_true(ms_query_filters(&q));
	q = query(MS_VIEW_TOP);
	q.n_thread_names = 1;
	assert_true(ms_query_filters(&q));
	q = query(MS_VIEW_TOP);
	q.has_time_start = true;
	assert_true(ms_query_filters(&q));
	q = query(MS_VIEW_TOP);
	q.has_time_end = true;
	assert_true(ms_query_filters(&q));
	q = query(MS_VIEW_TOP);
	q.module = "m";
	assert_true(ms_query_filters(&q));
	q = query(MS_VIEW_TOP);
	q.focus = "f";
	assert_true(ms_query_filters(&q));
	q = query(MS_VIEW_TOP);
	q.ignore = "f";
	assert_true(ms_query_filters(&q));
}

static void test_query_check_capture(void **state)
{
	struct tcap *t = main_capture();
	struct ms_query q = query(MS_VIEW_TOP);

	/* no event: cpu-clock */
	EXPECT_QUIET(ms_query_check_capture(&q, &t->cap, "x.msc"));
	q.unit = MS_UNIT_CPU_TIME;
	EXPECT_QUIET(ms_query_check_capture(&q, &t->cap, "x.msc"));
	set_event(t, "task-clock");
	EXPECT_QUIET(ms_query_check_capture(&q, &t->cap, "x.msc"));
	set_event(t, "cpu");
	EXPECT_QUIET(ms_query_check_capture(&q, &t->cap, "x.msc"));
	set_event(t, "cycles");
	EXPECT_ERROR(ms_query_check_capture(&q, &t->cap, "x.msc"),
		     "'x.msc' was recorded on the event 'cycles', whose periods are not time: "
		     "there is no CPU time to show; use --unit samples\n");
	q.unit = MS_UNIT_SAMPLES;
	EXPECT_QUIET(ms_query_check_capture(&q, &t->cap, "x.msc"));
	free(t);
}

static void test_query_origin(void **state)
{
	struct tcap *t = main_capture();

	assert_int_equal(ms_query_origin(&t->cap), 500);
	t->cap.start_time = 0;
	assert_int_equal(ms_query_origin(&t->cap), 1000);	/* the first sample */
	t->cap.n_samples = 0;
	assert_int_equal(ms_query_origin(&t->cap), 0);
	free(t);
}

/* ---- filters ---- */

/*
 * top under q as one line: "selected/all: label self/total, ..." (rows in
 * order), into a static buffer.
 */
static const char *top_line(const struct ms_capture *cap, const struct ms_query *q)
{
	static char buf[2048];
	struct ms_top top;
	size_t used;
	uint32_t i;

	assert_int_equal(ms_top_compute(&top, cap, q), 0);
	used = (size_t)snprintf(buf, sizeof(buf), "%llu/%llu:", (unsigned long long)top.sel.selected,
				(unsigned long long)top.sel.all);
	for (i = 0; i < top.n && used < sizeof(buf); i++)
		used += (size_t)snprintf(buf + used, sizeof(buf) - used, "%s %s %llu/%llu",
					 i ? "," : "", key_label(&top.sel, top.entries[i].key),
					 (unsigned long long)top.entries[i].self,
					 (unsigned long long)top.entries[i].total);
	assert_true(used < sizeof(buf));
	ms_top_release(&top);
	return buf;
}

/*
 * A tree as lines "  label self/total", two spaces a level, children in
 * order (all of them, none hidden), into a static buffer.
 */
static void tree_lines(char *buf, size_t size, size_t *used, const struct ms_tree *t, uint32_t node)
{
	const struct ms_tree_node *nd = &t->nodes[node];
	uint32_t i;

	*used += (size_t)snprintf(buf + *used, size - *used, "%*s%s %llu/%llu\n",
				  (int)(2 * nd->depth), "",
				  node ? key_label(&t->sel, nd->key) : t->root_label,
				  (unsigned long long)nd->self, (unsigned long long)nd->total);
	assert_true(*used < size);
	for (i = 0; i < nd->n_children; i++)
		tree_lines(buf, size, used, t, t->children[nd->first_child + i]);
}

/* The tree (or callers, callees: by q->view) of cap under q, as tree_lines(). */
static const char *tree_text(const struct ms_capture *cap, const struct ms_query *q)
{
	static char buf[4096];
	struct ms_tree t;
	size_t used = 0;

	if (q->view == MS_VIEW_CALLERS || q->view == MS_VIEW_CALLEES)
		assert_int_equal(ms_tree_build_from(&t, cap, q), 0);
	else
		assert_int_equal(ms_tree_build(&t, cap, q), 0);
	tree_lines(buf, sizeof(buf), &used, &t, 0);
	ms_tree_release(&t);
	return buf;
}

/* main_capture() with the recording starting at its first sample: sample i is at i ms. */
static struct tcap *timed_capture(void)
{
	struct tcap *t = main_capture();

	t->cap.start_time = 1000;
	return t;
}

static void test_filter_tids(void **state)
{
	struct tcap *t = main_capture();
	struct ms_query q = query(MS_VIEW_TOP);
	char *text;

	assert_int_equal(ms_query_add_tids(&q, "43"), 0);
	/* samples 3, 6 and 7 */
	assert_string_equal(top_line(&t->cap, &q), "3/11: rec 2/2, burn_60 1/1, "
			    "__libc_start_main 0/3, main 0/3, run 0/1");
	/* percentages are of the selection */
	q.limit = 1;
	text = view(&t->cap, &q, false);
	assert_string_equal(text,
		"3 samples, 5 functions (the first 1 shown)\n"
		"selected 3 of 11 samples: threads 43\n"
		" self%  self  total%  total  module  function\n"
		" 66.7%     2   66.7%      2  burn    rec\n");
	free(text);
	text = view(&t->cap, &q, true);
	assert_true(starts_with(text, "{" HEAD("samples", "function", 3, 3, 11) "\"functions\":["
				      "{\"name\":\"rec\",\"module\":\"burn\",\"file\":\"\",\"line\":0,"
				      "\"self\":2,\"self_percent\":66.67,"));
	free(text);

	q = query(MS_VIEW_TOP);
	assert_int_equal(ms_query_add_tids(&q, "42,43"), 0);
	assert_true(starts_with(top_line(&t->cap, &q), "11/11: burn_60 4/4,"));
	q = query(MS_VIEW_TOP);
	assert_int_equal(ms_query_add_tids(&q, "99"), 0);
	assert_string_equal(top_line(&t->cap, &q), "0/11:");
	/* a tid is a thread id, not a pid: 42 is also the pid of both */
	q = query(MS_VIEW_TOP);
	assert_int_equal(ms_query_add_tids(&q, "42"), 0);
	assert_true(starts_with(top_line(&t->cap, &q), "8/11: "));
	free(t);
}

static void test_filter_thread_names(void **state)
{
	struct tcap *t = main_capture();
	struct ms_query q = query(MS_VIEW_TOP);
	char *text;

	assert_int_equal(ms_query_add_thread_name(&q, "worker"), 0);
	assert_string_equal(top_line(&t->cap, &q), "3/11: rec 2/2, burn_60 1/1, "
			    "__libc_start_main 0/3, main 0/3, run 0/1");
	q = query(MS_VIEW_TOP);
	assert_int_equal(ms_query_add_thread_name(&q, "burn"), 0);
	assert_string_equal(top_line(&t->cap, &q),
			    "8/11: burn_60 3/3, burn_30 2/2, [no module] 0xdead 1/1, "
			    "burn+0x1234 1/1, __libc_start_main 0/6, main 0/6, run 0/5");
	/* names match whole, not in part */
	q = query(MS_VIEW_TOP);
	assert_int_equal(ms_query_add_thread_name(&q, "work"), 0);
	assert_string_equal(top_line(&t->cap, &q), "0/11:");
	/* a tid or a name: either is enough */
	q = query(MS_VIEW_TOP);
	assert_int_equal(ms_query_add_tids(&q, "43"), 0);
	assert_int_equal(ms_query_add_thread_name(&q, "burn"), 0);
	assert_true(starts_with(top_line(&t->cap, &q), "11/11: "));
	q.limit = 1;
	text = view(&t->cap, &q, false);
	assert_non_null(strstr(text, "\nselected 11 of 11 samples: threads 43 'burn'\n"));
	free(text);
	free(t);
}

static void test_filter_time(void **state)
{
	struct tcap *t = timed_capture();
	struct ms_query q = query(MS_VIEW_TOP);
	struct ms_tree tr;
	char *text;

	/* [2 ms, 5 ms): samples 2, 3 and 4, the one at 5 ms left out */
	assert_int_equal(ms_query_parse_time(&q, "2ms..5ms"), 0);
	assert_string_equal(top_line(&t->cap, &q), "3/11: burn_60 2/2, burn_30 1/1, "
			    "__libc_start_main 0/3, main 0/3, run 0/3");
	q.limit = 1;
	text = view(&t->cap, &q, false);
	assert_non_null(strstr(text, "\nselected 3 of 11 samples: time 2.000 ms..5.000 ms\n"));
	free(text);
	/* a nanosecond later on both sides: samples 3, 4 and 5 */
	assert_int_equal(ms_query_parse_time(&q, "2000001ns..5000001ns"), 0);
	assert_string_equal(top_line(&t->cap, &q), "3/11: burn_30 2/2, burn_60 1/1, "
			    "__libc_start_main 0/3, main 0/3, run 0/3");
	/* only an end, only a start */
	assert_int_equal(ms_query_parse_time(&q, "..1ms"), 0);
	assert_true(starts_with(top_line(&t->cap, &q), "1/11: burn_60 1/1,"));
	assert_int_equal(ms_query_parse_time(&q, "10ms.."), 0);
	assert_string_equal(top_line(&t->cap, &q), "1/11:");	/* the sample without frames */
	q.view = MS_VIEW_TREE;
	assert_int_equal(ms_tree_build(&tr, &t->cap, &q), 0);
	check_node(&tr, 0, "[root]", 1, 1, 0);
	ms_tree_release(&tr);
	/* past the last sample */
	assert_int_equal(ms_query_parse_time(&q, "1s.."), 0);
	assert_string_equal(top_line(&t->cap, &q), "0/11:");
	free(t);

	/*
	 * Times are from the recording's start (500 ns before the first
	 * sample here), not from the clock's 0 nor from the first sample:
	 * [2.000501 ms, 5.000501 ms) holds the samples at 2.0005 + 1, 3.0005
	 * and 4.0005 ms after the start, so samples 3, 4 and 5.
	 */
	t = main_capture();
	assert_int_equal(ms_query_parse_time(&q, "2000501ns..5000501ns"), 0);
	q.view = MS_VIEW_TOP;
	assert_string_equal(top_line(&t->cap, &q), "3/11: burn_30 2/2, burn_60 1/1, "
			    "__libc_start_main 0/3, main 0/3, run 0/3");
	assert_int_equal(ms_query_parse_time(&q, "2000500ns..5000500ns"), 0);
	assert_string_equal(top_line(&t->cap, &q), "3/11: burn_60 2/2, burn_30 1/1, "
			    "__libc_start_main 0/3, main 0/3, run 0/3");
	free(t);
}

static void test_filter_module(void **state)
{
	struct tcap *t = main_capture();
	struct ms_query q = query(MS_VIEW_TOP);
	char *text;

	/* the innermost frame's module: not the no-module sample, nor the one without frames */
	q.module = "burn";
	assert_string_equal(top_line(&t->cap, &q),
			    "9/11: burn_60 4/4, burn_30 2/2, rec 2/2, burn+0x1234 1/1, "
			    "__libc_start_main 0/9, main 0/9, run 0/6");
	q.limit = 1;
	text = view(&t->cap, &q, false);
	assert_non_null(strstr(text, "\nselected 9 of 11 samples: in module 'burn'\n"));
	free(text);
	q.module = "/usr/bin/burn";	/* its path */
	assert_true(starts_with(top_line(&t->cap, &q), "9/11: burn_60 4/4,"));
	/* libc is on every stack but innermost in none */
	q.module = "libc.so.6";
	assert_string_equal(top_line(&t->cap, &q), "0/11:");
	q.module = "bur";	/* a name is whole */
	assert_string_equal(top_line(&t->cap, &q), "0/11:");
	q.module = "/usr/bin";
	assert_string_equal(top_line(&t->cap, &q), "0/11:");
	free(t);
}

static void test_filter_focus(void **state)
{
	struct tcap *t = main_capture();
	struct ms_query q = query(MS_VIEW_TOP);
	char *text;

	q.focus = "^run$";
	assert_string_equal(top_line(&t->cap, &q), "6/11: burn_60 4/4, burn_30 2/2, "
			    "__libc_start_main 0/6, main 0/6, run 0/6");
	q.view = MS_VIEW_TREE;
	text = view(&t->cap, &q, false);
	assert_string_equal(text,
		"6 samples\n"
		"selected 6 of 11 samples: through '^run$'\n"
		"total%   self%  total  self  function\n"
		"100.0%    0.0%      6     0  [root]\n"
		"100.0%    0.0%      6     0    __libc_start_main (libc.so.6)\n"
		"100.0%    0.0%      6     0      main (burn)\n"
		"100.0%    0.0%      6     0        run (burn)\n"
		" 66.7%   66.7%      4     4          burn_60 (burn)\n"
		" 33.3%   33.3%      2     2          burn_30 (burn)\n");
	free(text);
	q.view = MS_VIEW_TOP;
	/* a key anywhere on the stack, the innermost too */
	q.focus = "burn_30|rec";
	assert_string_equal(top_line(&t->cap, &q), "4/11: burn_30 2/2, rec 2/2, "
			    "__libc_start_main 0/4, main 0/4, run 0/2");
	/* the truncated key of a cut stack is on its path */
	q.focus = "depth";
	assert_string_equal(top_line(&t->cap, &q), "2/11: rec 2/2, __libc_start_main 0/2, main 0/2");
	q.focus = "^nothing$";
	assert_string_equal(top_line(&t->cap, &q), "0/11:");
	free(t);

	/* through an inlined function: the frames whose inline chain holds it */
	t = inline_capture();
	q.focus = "^mid$";
	assert_string_equal(top_line(&t->cap, &q), "8/11: leaf 5/5, mid 3/8, main 0/8, outer 0/8");
	q.focus = "^leaf$";
	assert_string_equal(top_line(&t->cap, &q), "5/11: leaf 5/5, main 0/5, mid 0/5, outer 0/5");
	free(t);
}

static void test_filter_ignore(void **state)
{
	struct tcap *t = main_capture();
	struct ms_query q = query(MS_VIEW_TOP);
	char *text;

	/* burn_60 and burn_30 dropped: their self moves out to run */
	q.ignore = "^burn_";
	assert_string_equal(top_line(&t->cap, &q),
			    "11/11: run 6/6, rec 2/2, [no module] 0xdead 1/1, burn+0x1234 1/1, "
			    "__libc_start_main 0/9, main 0/9");
	/* a recursion dropped whole: its self moves to main */
	q.ignore = "^rec$";
	assert_string_equal(top_line(&t->cap, &q),
			    "11/11: burn_60 4/4, main 2/9, burn_30 2/2, [no module] 0xdead 1/1, "
			    "burn+0x1234 1/1, __libc_start_main 0/9, run 0/6");
	q.view = MS_VIEW_TREE;
	assert_string_equal(tree_text(&t->cap, &q),
			    "[root] 1/11\n"
			    "  __libc_start_main 0/7\n"
			    "    main 0/7\n"
			    "      run 0/6\n"
			    "        burn_60 4/4\n"
			    "        burn_30 2/2\n"
			    "      burn+0x1234 1/1\n"
			    "  [truncated: depth] 0/2\n"
			    "    __libc_start_main 0/2\n"
			    "      main 2/2\n"
			    "  [truncated: no-module] 0/1\n"
			    "    [no module] 0xdead 1/1\n");
	text = view(&t->cap, &q, false);
	assert_non_null(strstr(text, "\nselected 11 of 11 samples: frames '^rec$' dropped\n"));
	free(text);

	/* the truncated keys dropped: the tree the cut stacks made before they had them */
	q.ignore = "^\\[truncated";
	assert_string_equal(tree_text(&t->cap, &q),
			    "[root] 1/11\n"
			    "  __libc_start_main 0/9\n"
			    "    main 0/9\n"
			    "      run 0/6\n"
			    "        burn_60 4/4\n"
			    "        burn_30 2/2\n"
			    "      rec 0/2\n"
			    "        rec 0/2\n"
			    "          rec 2/2\n"
			    "      burn+0x1234 1/1\n"
			    "  [no module] 0xdead 1/1\n");
	/* every key dropped: every sample is the root's */
	q.ignore = ".";
	assert_string_equal(tree_text(&t->cap, &q), "[root] 11/11\n");
	q.view = MS_VIEW_TOP;
	assert_string_equal(top_line(&t->cap, &q), "11/11:");
	free(t);

	/* an inlined function dropped: leaf's caller is outer */
	t = inline_capture();
	q.ignore = "^mid$";
	assert_string_equal(top_line(&t->cap, &q),
			    "11/11: leaf 5/5, outer 3/8, inl+0x13f0 3/3, main 0/11");
	q.view = MS_VIEW_TREE;
	assert_string_equal(tree_text(&t->cap, &q),
			    "[root] 0/11\n"
			    "  main 0/11\n"
			    "    outer 3/8\n"
			    "      leaf 5/5\n"
			    "    inl+0x13f0 3/3\n");
	free(t);
}

static void test_filter_hide_below(void **state)
{
	struct tcap *t = main_capture();
	struct ms_query q = query(MS_VIEW_TOP);
	char *text;

	/* rows under 15% of the selection by the sorted measure: 9.1% ends the list */
	q.hide_below = 15;
	text = view(&t->cap, &q, false);
	assert_string_equal(text,
		"11 samples, 8 functions (the first 3 shown)\n"
		" self%  self  total%  total  module  function\n"
		" 36.4%     4   36.4%      4  burn    burn_60\n"
		" 18.2%     2   18.2%      2  burn    burn_30\n"
		" 18.2%     2   18.2%      2  burn    rec\n");
	free(text);
	text = view(&t->cap, &q, true);
	assert_non_null(strstr(text, "{\"name\":\"rec\","));
	assert_null(strstr(text, "0xdead"));
	free(text);
	/* exactly on the bound is shown: 2 of 8 samples is 25% */
	q.n_tids = 1;
	q.tids[0] = 42;
	q.hide_below = 25;
	text = view(&t->cap, &q, false);
	assert_non_null(strstr(text, "8 samples, 7 functions (the first 2 shown)\n"));
	assert_non_null(strstr(text, " 25.0%     2   25.0%      2  burn    burn_30\n"));
	free(text);

	/* by total */
	q = query(MS_VIEW_TOP);
	q.sort = MS_SORT_TOTAL;
	q.hide_below = 60;
	text = view(&t->cap, &q, false);
	assert_true(starts_with(text, "11 samples, 8 functions (the first 2 shown)\n"));
	assert_non_null(strstr(text, "  __libc_start_main\n"));
	assert_non_null(strstr(text, "  main\n"));
	free(text);
	free(t);
}

static void test_filter_combined(void **state)
{
	struct tcap *t = timed_capture();
	struct ms_query q = query(MS_VIEW_TREE);
	char *text;

	/* thread 42 in [0, 9 ms): samples 0, 1, 2, 4, 5, 8; all innermost in burn, through main */
	assert_int_equal(ms_query_add_tids(&q, "42"), 0);
	assert_int_equal(ms_query_parse_time(&q, "0..9ms"), 0);
	q.module = "burn";
	q.focus = "^main$";
	q.ignore = "^run$";
	text = view(&t->cap, &q, false);
	assert_string_equal(text,
		"6 samples\n"
		"selected 6 of 11 samples: threads 42, time 0 ns..9.000 ms, in module 'burn', "
		"through '^main$', frames '^run$' dropped\n"
		"total%   self%  total  self  function\n"
		"100.0%    0.0%      6     0  [root]\n"
		"100.0%    0.0%      6     0    __libc_start_main (libc.so.6)\n"
		"100.0%    0.0%      6     0      main (burn)\n"
		" 50.0%   50.0%      3     3        burn_60 (burn)\n"
		" 33.3%   33.3%      2     2        burn_30 (burn)\n"
		" 16.7%   16.7%      1     1        burn+0x1234\n");
	free(text);
	/* thread 43 instead: samples 3, 6 and 7 */
	q.tids[0] = 43;
	assert_string_equal(tree_text(&t->cap, &q),
			    "[root] 0/3\n"
			    "  [truncated: depth] 0/2\n"
			    "    __libc_start_main 0/2\n"
			    "      main 0/2\n"
			    "        rec 0/2\n"
			    "          rec 0/2\n"
			    "            rec 2/2\n"
			    "  __libc_start_main 0/1\n"
			    "    main 0/1\n"
			    "      burn_60 1/1\n");
	/* and a thread that has no samples: nothing */
	q.tids[0] = 44;
	assert_string_equal(tree_text(&t->cap, &q), "[root] 0/0\n");
	/* the module filter and focus together on what is left */
	q = query(MS_VIEW_TOP);
	q.module = "burn";
	q.focus = "rec|burn_30";
	assert_int_equal(ms_query_parse_time(&q, "5ms.."), 0);
	assert_string_equal(top_line(&t->cap, &q), "3/11: rec 2/2, burn_30 1/1, "
			    "__libc_start_main 0/3, main 0/3, run 0/1");
	free(t);
}

/* ---- granularity ---- */

/*
 * 10 samples through three modules (outermost first), all reaching the entry:
 *   4  libc:start prog:main prog:work prog:helper
 *   3  libc:start prog:main libc:qsort prog:cmp       (a callback)
 *   2  libc:start prog:main prog:work libm:sqrt
 *   1  libc:start prog:main libc:memcpy
 */
static struct tcap *module_capture(void)
{
	struct tcap *t = malloc(sizeof(*t));
	uint32_t prog, libc, libm, start, mainf, work, helper, qsortf, cmp, sqrtf, memcpyf;

	assert_non_null(t);
	tcap_init(t);
	prog = module(t, "/bin/prog", MS_MODULE_FILE);
	libc = module(t, "/lib/libc.so.6", MS_MODULE_FILE);
	libm = module(t, "/lib/libm.so.6", MS_MODULE_FILE);
	start = frame(t, libc, 0x100, "start");
	mainf = frame(t, prog, 0x100, "main");
	work = frame(t, prog, 0x200, "work");
	helper = frame(t, prog, 0x300, "helper");
	qsortf = frame(t, libc, 0x200, "qsort");
	cmp = frame(t, prog, 0x400, "cmp");
	sqrtf = frame(t, libm, 0x100, "sqrt");
	memcpyf = frame(t, libc, 0x300, "memcpy");
	thread(t, 5, 5, "prog");
	samples(t, 4, 0, path(t, start, mainf, work, helper, MS_NONE), MS_END_OUTERMOST);
	samples(t, 3, 0, path(t, start, mainf, qsortf, cmp, MS_NONE), MS_END_OUTERMOST);
	samples(t, 2, 0, path(t, start, mainf, work, sqrtf, MS_NONE), MS_END_OUTERMOST);
	samples(t, 1, 0, path(t, start, mainf, memcpyf, MS_NONE), MS_END_OUTERMOST);
	return t;
}

/* Runs of frames in one module are one key; a module left and entered again is another. */
static void test_by_module(void **state)
{
	struct tcap *t = module_capture();
	struct ms_query q = query(MS_VIEW_TOP);
	char *text;

	q.by = MS_BY_MODULE;
	assert_string_equal(top_line(&t->cap, &q), "10/10: prog 7/10, libm.so.6 2/2, libc.so.6 1/10");
	text = view(&t->cap, &q, false);
	assert_string_equal(text,
		"10 samples, 3 modules\n"
		" self%  self  total%  total  module\n"
		" 70.0%     7  100.0%     10  prog\n"
		" 20.0%     2   20.0%      2  libm.so.6\n"
		" 10.0%     1  100.0%     10  libc.so.6\n");
	free(text);
	text = view(&t->cap, &q, true);
	assert_string_equal(text,
		"{" HEAD("samples", "module", 10, 10, 10) "\"functions\":["
		"{\"name\":\"prog\",\"kind\":\"module\",\"module\":\"prog\",\"self\":7,\"self_percent\":70,"
		"\"total\":10,\"total_percent\":100},"
		"{\"name\":\"libm.so.6\",\"kind\":\"module\",\"module\":\"libm.so.6\",\"self\":2,"
		"\"self_percent\":20,\"total\":2,\"total_percent\":20},"
		"{\"name\":\"libc.so.6\",\"kind\":\"module\",\"module\":\"libc.so.6\",\"self\":1,"
		"\"self_percent\":10,\"total\":10,\"total_percent\":100}]}\n");
	free(text);

	q.view = MS_VIEW_TREE;
	assert_string_equal(tree_text(&t->cap, &q),
			    "[root] 0/10\n"
			    "  libc.so.6 0/10\n"
			    "    prog 4/10\n"
			    "      libc.so.6 1/4\n"
			    "        prog 3/3\n"
			    "      libm.so.6 2/2\n");
	text = view(&t->cap, &q, false);
	assert_non_null(strstr(text, "\n 40.0%   10.0%      4     1        libc.so.6\n"));
	free(text);

	/* callers of libc: the qsort and memcpy runs (innermost), and start for the rest */
	q.view = MS_VIEW_CALLERS;
	q.function = "libc.so.6";
	assert_string_equal(tree_text(&t->cap, &q),
			    "libc.so.6 6/10\n"
			    "  prog 0/4\n"
			    "    libc.so.6 4/4\n");
	free(t);

	/* frames in no module are one key, [unknown]; truncated keys stay outermost */
	t = main_capture();
	q = query(MS_VIEW_TOP);
	q.by = MS_BY_MODULE;
	assert_string_equal(top_line(&t->cap, &q), "11/11: burn 9/9, [unknown] 1/1, libc.so.6 0/9");
	q.view = MS_VIEW_TREE;
	assert_string_equal(tree_text(&t->cap, &q),
			    "[root] 1/11\n"
			    "  libc.so.6 0/7\n"
			    "    burn 7/7\n"
			    "  [truncated: depth] 0/2\n"
			    "    libc.so.6 0/2\n"
			    "      burn 2/2\n"
			    "  [truncated: no-module] 0/1\n"
			    "    [unknown] 1/1\n");
	free(t);
}

/* --module selects by the innermost frame's module, whatever the granularity. */
static void test_filter_module_innermost(void **state)
{
	struct tcap *t = module_capture();
	struct ms_query q = query(MS_VIEW_TOP);

	q.module = "libc.so.6";
	assert_string_equal(top_line(&t->cap, &q), "1/10: memcpy 1/1, main 0/1, start 0/1");
	q.module = "/lib/libm.so.6";
	assert_string_equal(top_line(&t->cap, &q), "2/10: sqrt 2/2, main 0/2, start 0/2, work 0/2");
	q.module = "prog";
	q.by = MS_BY_MODULE;
	assert_string_equal(top_line(&t->cap, &q), "7/10: prog 7/7, libc.so.6 0/7");
	free(t);
}

static void test_by_line(void **state)
{
	struct tcap *t = inline_capture();
	struct ms_query q = query(MS_VIEW_TOP);
	char *text;

	/* an inline chain is a key per function, each at its own line */
	q.by = MS_BY_LINE;
	assert_string_equal(top_line(&t->cap, &q),
			    "11/11: leaf 5/5, inl+0x13f0 3/3, mid 3/3, main 0/11, mid 0/5, outer 0/5, "
			    "outer 0/3");
	text = view(&t->cap, &q, false);
	assert_string_equal(text,
		"11 samples, 7 lines\n"
		" self%  self  total%  total  module  line\n"
		" 45.5%     5   45.5%      5  inl     leaf (a.c:12)\n"
		" 27.3%     3   27.3%      3  inl     inl+0x13f0\n"
		" 27.3%     3   27.3%      3  inl     mid (a.h:31)\n"
		"  0.0%     0  100.0%     11  inl     main (a.c:50)\n"
		"  0.0%     0   45.5%      5  inl     mid (a.h:30)\n"
		"  0.0%     0   45.5%      5  inl     outer (a.c:40)\n"
		"  0.0%     0   27.3%      3  inl     outer (a.c:41)\n");
	free(text);
	q.limit = 1;
	text = view(&t->cap, &q, true);
	assert_string_equal(text,
		"{" HEAD("samples", "line", 11, 11, 11) "\"functions\":["
		"{\"name\":\"leaf\",\"kind\":\"line\",\"module\":\"inl\",\"file\":\"/src/a.c\",\"line\":12,"
		"\"self\":5,\"self_percent\":45.45,\"total\":5,\"total_percent\":45.45}]}\n");
	free(text);

	q.view = MS_VIEW_TREE;
	assert_string_equal(tree_text(&t->cap, &q),
			    "[root] 0/11\n"
			    "  main 0/11\n"
			    "    outer 0/5\n"
			    "      mid 0/5\n"
			    "        leaf 5/5\n"
			    "    inl+0x13f0 3/3\n"
			    "    outer 0/3\n"
			    "      mid 3/3\n");
	text = view(&t->cap, &q, false);
	assert_non_null(strstr(text, "\n 45.5%    0.0%      5     0      outer (a.c:40, inl)\n"
				    " 45.5%    0.0%      5     0        mid (a.h:30, inl)\n"
				    " 45.5%   45.5%      5     5          leaf (a.c:12, inl)\n"));
	free(text);
	free(t);
}

static void test_by_address(void **state)
{
	struct tcap *t = inline_capture();
	struct ms_query q = query(MS_VIEW_TOP);
	char *text;

	/* inlined functions at one address are keys of their own; one function at two, two keys */
	q.by = MS_BY_ADDRESS;
	assert_string_equal(top_line(&t->cap, &q),
			    "11/11: leaf 5/5, mid 3/3, inl+0x13f0 2/2, inl+0x13f0 1/1, main 0/11, "
			    "mid 0/5, outer 0/5, outer 0/3");
	q.limit = 4;
	text = view(&t->cap, &q, false);
	assert_string_equal(text,
		"11 samples, 8 addresses (the first 4 shown)\n"
		" self%  self  total%  total  module  address\n"
		" 45.5%     5   45.5%      5  inl     leaf (0x1110)\n"
		" 27.3%     3   27.3%      3  inl     mid (0x1120)\n"
		" 18.2%     2   18.2%      2  inl     inl+0x13f0 (0x1400)\n"
		"  9.1%     1    9.1%      1  inl     inl+0x13f0 (0x1404)\n");
	free(text);
	q.limit = 1;
	text = view(&t->cap, &q, true);
	assert_string_equal(text,
		"{" HEAD("samples", "address", 11, 11, 11) "\"functions\":["
		"{\"name\":\"leaf\",\"kind\":\"address\",\"module\":\"inl\",\"file\":\"/src/a.c\",\"line\":0,"
		"\"address\":\"0x1110\",\"self\":5,\"self_percent\":45.45,\"total\":5,\"total_percent\":45.45}]}\n");
	free(text);
	q.view = MS_VIEW_TREE;
	assert_string_equal(tree_text(&t->cap, &q),
			    "[root] 0/11\n"
			    "  main 0/11\n"
			    "    outer 0/5\n"
			    "      mid 0/5\n"
			    "        leaf 5/5\n"
			    "    outer 0/3\n"
			    "      mid 3/3\n"
			    "    inl+0x13f0 2/2\n"
			    "    inl+0x13f0 1/1\n");
	free(t);

	/* without inline chains: one key per address of a function */
	t = main_capture();
	q = query(MS_VIEW_TOP);
	q.by = MS_BY_ADDRESS;
	q.focus = "burn_60";
	assert_string_equal(top_line(&t->cap, &q), "4/11: burn_60 3/3, burn_60 1/1, "
			    "__libc_start_main 0/4, main 0/4, run 0/4");
	free(t);
}

/* ---- unit ---- */

/*
 * budget_capture()'s samples in CPU time: 1 ms periods over duties of 80%
 * (samples 0-1: 1.25 ms each), 50% (2-4: 2 ms), 25% (5-7: 4 ms) and 100%
 * (8-10: 1 ms): burn_60 (0-3) 6.5 ms, burn_30 (4-5) 6 ms, rec (6-7) 8 ms.
 */
static void test_unit_cpu_time(void **state)
{
	struct tcap *t = budget_capture();
	struct ms_query q = query(MS_VIEW_TOP);
	char *text;

	q.unit = MS_UNIT_CPU_TIME;
	EXPECT_QUIET(ms_query_check_capture(&q, &t->cap, "b.msc"));
	assert_string_equal(top_line(&t->cap, &q),
			    "23500000/23500000: rec 8000000/8000000, burn_60 6500000/6500000, "
			    "burn_30 6000000/6000000, [no module] 0xdead 1000000/1000000, "
			    "burn+0x1234 1000000/1000000, __libc_start_main 0/21500000, "
			    "main 0/21500000, run 0/12500000");
	q.limit = 2;
	text = view(&t->cap, &q, false);
	assert_string_equal(text,
		"23.500 ms of CPU time, 8 functions (the first 2 shown)\n"
		" self%      self  total%     total  module  function\n"
		" 34.0%  8.000 ms   34.0%  8.000 ms  burn    rec\n"
		" 27.7%  6.500 ms   27.7%  6.500 ms  burn    burn_60\n");
	free(text);
	text = view(&t->cap, &q, true);
	assert_string_equal(text,
		"{" HEAD("ns", "function", 11, 23500000, 23500000) "\"functions\":["
		"{\"name\":\"rec\",\"module\":\"burn\",\"file\":\"\",\"line\":0,\"self\":8000000,"
		"\"self_percent\":34.04,\"total\":8000000,\"total_percent\":34.04},"
		"{\"name\":\"burn_60\",\"module\":\"burn\",\"file\":\"\",\"line\":0,\"self\":6500000,"
		"\"self_percent\":27.66,\"total\":6500000,\"total_percent\":27.66}]}\n");
	free(text);

	/* the tree weighs the same; a filter selects time, not samples */
	q.view = MS_VIEW_TREE;
	assert_int_equal(ms_query_add_tids(&q, "43"), 0);
	assert_string_equal(tree_text(&t->cap, &q),
			    "[root] 0/10000000\n"
			    "  [truncated: depth] 0/8000000\n"
			    "    __libc_start_main 0/8000000\n"
			    "      main 0/8000000\n"
			    "        rec 0/8000000\n"
			    "          rec 0/8000000\n"
			    "            rec 8000000/8000000\n"
			    "  __libc_start_main 0/2000000\n"
			    "    main 0/2000000\n"
			    "      run 0/2000000\n"
			    "        burn_60 2000000/2000000\n");
	text = view(&t->cap, &q, false);
	assert_true(starts_with(text, "10.000 ms of CPU time\n"
				      "selected 10.000 ms of 23.500 ms: threads 43\n"
				      "total%   self%      total      self  function\n"
				      "100.0%    0.0%  10.000 ms      0 ns  [root]\n"));
	free(text);
	text = view(&t->cap, &q, true);
	assert_true(starts_with(text, "{" HEAD("ns", "function", 3, 10000000, 23500000) "\"root\":"));
	free(text);

	/* without duty rows, the periods */
	t->cap.n_duty = 0;
	q = query(MS_VIEW_TOP);
	q.unit = MS_UNIT_CPU_TIME;
	assert_true(starts_with(top_line(&t->cap, &q), "11000000/11000000: burn_60 4000000/4000000,"));
	/* a weighted row's period is its samples' sum */
	t->samples[0].count = 3;
	t->samples[0].period = 5000000;
	t->cap.flags |= MS_CAPTURE_WEIGHTED;
	assert_true(starts_with(top_line(&t->cap, &q), "15000000/15000000: burn_60 8000000/8000000,"));
	q.unit = MS_UNIT_SAMPLES;
	assert_true(starts_with(top_line(&t->cap, &q), "13/13: burn_60 6/6,"));

	/* a capture of an event that is not time has no CPU time to show */
	set_event(t, "sched:sched_switch");
	q.unit = MS_UNIT_CPU_TIME;
	EXPECT_ERROR(ms_query_check_capture(&q, &t->cap, "b.msc"),
		     "'b.msc' was recorded on the event 'sched:sched_switch', whose periods are "
		     "not time: there is no CPU time to show; use --unit samples\n");
	free(t);
}

/* ---- truncated stacks ---- */

/*
 * 13 samples of main > f, one or two per way a stack ends:
 *   no-cfi, missing-register, 2 stack-copy (and 1 without frames),
 *   cfa-not-outwards, no-module, depth, 9 (a reason past the known ones):
 *   cut short, each under its truncated key;
 *   outermost, fp-chain, unknown (255), kernel-only (without frames):
 *   not known to be cut.
 */
static struct tcap *truncated_capture(void)
{
	struct tcap *t = malloc(sizeof(*t));
	uint32_t prog, mainf, f, st;

	assert_non_null(t);
	tcap_init(t);
	prog = module(t, "/bin/prog", MS_MODULE_FILE);
	mainf = frame(t, prog, 0x10, "main");
	f = frame(t, prog, 0x20, "f");
	thread(t, 3, 3, "prog");
	st = path(t, mainf, f, MS_NONE);
	samples(t, 1, 0, st, MS_END_NO_CFI);
	samples(t, 1, 0, st, MS_END_MISSING_REGISTER);
	samples(t, 2, 0, st, MS_END_STACK_COPY);
	samples(t, 1, 0, MS_NONE, MS_END_STACK_COPY);
	samples(t, 1, 0, st, MS_END_CFA_NOT_OUTWARDS);
	samples(t, 1, 0, st, MS_END_NO_MODULE);
	samples(t, 1, 0, st, MS_END_DEPTH);
	samples(t, 1, 0, st, MS_END_OUTERMOST);
	samples(t, 1, 0, st, MS_END_FP_CHAIN);
	samples(t, 1, 0, MS_NONE, MS_END_KERNEL_ONLY);
	samples(t, 1, 0, st, MS_END_UNKNOWN);
	samples(t, 1, 0, st, MS_END_INTERPRETED_TRUNCATED + 1);
	return t;
}

static void test_truncated_keys(void **state)
{
	struct tcap *t = truncated_capture();
	struct ms_query q = query(MS_VIEW_TREE);
	struct ms_select s;
	char *text;
	uint32_t e, f;

	/* one key per reason known to cut a stack; none for the others */
	assert_int_equal(ms_select_build(&s, &t->cap, &q), 0);
	for (e = 0; e < MS_KEYS_ENDS; e++) {
		uint32_t key = ms_keys_truncated(&s.keys, e);

		if (!ms_stack_end_truncated(e)) {
			assert_int_equal(key, MS_NONE);
			continue;
		}
		assert_true(key < s.keys.n);
		assert_int_equal(s.keys.keys[key].kind, MS_KEY_TRUNCATED);
		assert_string_equal(key_label(&s, key), ms_truncated_label(e));
		/* the known reasons have a key each; those past them share one */
		for (f = 0; f < e; f++)
			if (ms_stack_end_truncated(f) && f > MS_END_INTERPRETED_TRUNCATED)
				assert_int_equal(ms_keys_truncated(&s.keys, f), key);
			else if (ms_stack_end_truncated(f))
				assert_int_not_equal(ms_keys_truncated(&s.keys, f), key);
	}
	assert_string_equal(key_label(&s, ms_keys_truncated(&s.keys, 200)), "[truncated: unknown]");
	/* the no-frames sample of a cut stack is its class's, not the root's */
	assert_int_equal(s.noframe[0], 1);
	assert_int_equal(s.noframe[s.class_of_end[MS_END_STACK_COPY]], 1);
	ms_select_release(&s);

	/* outermost, each under the root; top has no row for them */
	assert_string_equal(tree_text(&t->cap, &q),
			    "[root] 1/13\n"
			    "  [truncated: stack-copy] 1/3\n"
			    "    main 0/2\n"
			    "      f 2/2\n"
			    "  main 0/3\n"
			    "    f 3/3\n"
			    "  [truncated: cfa-not-outwards] 0/1\n"
			    "    main 0/1\n"
			    "      f 1/1\n"
			    "  [truncated: depth] 0/1\n"
			    "    main 0/1\n"
			    "      f 1/1\n"
			    "  [truncated: missing-register] 0/1\n"
			    "    main 0/1\n"
			    "      f 1/1\n"
			    "  [truncated: no-cfi] 0/1\n"
			    "    main 0/1\n"
			    "      f 1/1\n"
			    "  [truncated: no-module] 0/1\n"
			    "    main 0/1\n"
			    "      f 1/1\n"
			    "  [truncated: unknown] 0/1\n"
			    "    main 0/1\n"
			    "      f 1/1\n");
	q.view = MS_VIEW_TOP;
	assert_string_equal(top_line(&t->cap, &q), "13/13: f 11/11, main 0/11");

	/* text names them without a module; JSON gives their kind */
	q.view = MS_VIEW_TREE;
	q.hide_below = 20;
	text = view(&t->cap, &q, false);
	assert_string_equal(text,
		"13 samples (nodes under 20.0% left out)\n"
		"total%   self%  total  self  function\n"
		"100.0%    7.7%     13     1  [root]\n"
		" 23.1%    7.7%      3     1    [truncated: stack-copy]\n"
		" 23.1%    0.0%      3     0    main (prog)\n"
		" 23.1%   23.1%      3     3      f (prog)\n");
	free(text);
	text = view(&t->cap, &q, true);
	assert_string_equal(text,
		"{" HEAD("samples", "function", 13, 13, 13) "\"root\":{\"name\":\"[root]\",\"self\":1,"
		"\"total\":13,\"children\":[{\"name\":\"[truncated: stack-copy]\",\"kind\":\"truncated\","
		"\"self\":1,\"total\":3,\"children\":[]},"
		"{\"name\":\"main\",\"module\":\"prog\",\"file\":\"\",\"line\":0,\"self\":0,\"total\":3,"
		"\"children\":[{\"name\":\"f\",\"module\":\"prog\",\"file\":\"\",\"line\":0,\"self\":3,"
		"\"total\":3,\"children\":[]}]}]}}\n");
	free(text);

	/* callers of f end at the truncated keys; callees of one start there */
	q = query(MS_VIEW_CALLERS);
	q.function = "f";
	assert_string_equal(tree_text(&t->cap, &q),
			    "f 0/11\n"
			    "  main 3/11\n"
			    "    [truncated: stack-copy] 2/2\n"
			    "    [truncated: cfa-not-outwards] 1/1\n"
			    "    [truncated: depth] 1/1\n"
			    "    [truncated: missing-register] 1/1\n"
			    "    [truncated: no-cfi] 1/1\n"
			    "    [truncated: no-module] 1/1\n"
			    "    [truncated: unknown] 1/1\n");
	q.view = MS_VIEW_CALLEES;
	q.function = "[truncated: stack-copy]";
	assert_string_equal(tree_text(&t->cap, &q),
			    "[truncated: stack-copy] 1/3\n"
			    "  main 0/2\n"
			    "    f 2/2\n");

	/* one truncated key ignored: its stacks are whole ones, its no-frames sample the root's */
	q = query(MS_VIEW_TREE);
	q.ignore = "stack-copy";
	assert_true(starts_with(tree_text(&t->cap, &q),
				"[root] 2/13\n"
				"  main 0/5\n"
				"    f 5/5\n"
				"  [truncated: cfa-not-outwards] 0/1\n"));
	/* focus on one: its samples, the one without frames too */
	q = query(MS_VIEW_TREE);
	q.focus = "stack-copy";
	assert_string_equal(tree_text(&t->cap, &q),
			    "[root] 0/3\n"
			    "  [truncated: stack-copy] 1/3\n"
			    "    main 0/2\n"
			    "      f 2/2\n");
	free(t);
}

/*
 * The reader keeps any 32-bit end reason. One past every reason the keys
 * table holds (300, UINT32_MAX) is cut short as ms_stack_end_truncated()
 * says, so it goes under [truncated: unknown] like 12 does, not to the root.
 */
static void test_truncated_end_past_table(void **state)
{
	struct tcap *t = truncated_capture();
	struct ms_query q = query(MS_VIEW_TREE);
	struct ms_select s;
	uint32_t st = t->samples[0].stack;

	assert_true(ms_stack_end_truncated(300));
	samples(t, 1, 0, st, 300);
	samples(t, 1, 0, MS_NONE, UINT32_MAX);
	assert_int_equal(ms_select_build(&s, &t->cap, &q), 0);
	assert_string_equal(key_label(&s, ms_keys_truncated(&s.keys, 300)), "[truncated: unknown]");
	assert_int_equal(ms_keys_truncated(&s.keys, 300), ms_keys_truncated(&s.keys, 12));
	ms_select_release(&s);
	assert_true(starts_with(tree_text(&t->cap, &q),
				"[root] 1/15\n"
				"  [truncated: stack-copy] 1/3\n"
				"    main 0/2\n"
				"      f 2/2\n"
				"  [truncated: unknown] 1/3\n"
				"    main 0/2\n"
				"      f 2/2\n"
				"  main 0/3\n"));
	free(t);
}

/* ---- callers and callees ---- */

/*
 * 10 samples, all reaching the entry (outermost first):
 *   3  main a b
 *   2  main a b a b    (b and a recurse through each other)
 *   1  main b
 *   2  main a c
 *   1  main c b
 *   1  main b2         (a name b is in part of)
 */
static struct tcap *callers_capture(void)
{
	struct tcap *t = malloc(sizeof(*t));
	uint32_t m, mainf, a, b, c, b2;

	assert_non_null(t);
	tcap_init(t);
	m = module(t, "/bin/calls", MS_MODULE_FILE);
	mainf = frame(t, m, 0x10, "main");
	a = frame(t, m, 0x20, "a");
	b = frame(t, m, 0x30, "b");
	c = frame(t, m, 0x40, "c");
	b2 = frame(t, m, 0x50, "b2");
	thread(t, 1, 1, "calls");
	samples(t, 3, 0, path(t, mainf, a, b, MS_NONE), MS_END_OUTERMOST);
	samples(t, 2, 0, path(t, mainf, a, b, a, b, MS_NONE), MS_END_OUTERMOST);
	samples(t, 1, 0, path(t, mainf, b, MS_NONE), MS_END_OUTERMOST);
	samples(t, 2, 0, path(t, mainf, a, c, MS_NONE), MS_END_OUTERMOST);
	samples(t, 1, 0, path(t, mainf, c, b, MS_NONE), MS_END_OUTERMOST);
	samples(t, 1, 0, path(t, mainf, b2, MS_NONE), MS_END_OUTERMOST);
	return t;
}

/* The root of callers/callees of f counts what top counts as f's total. */
static void expect_root_total(const struct ms_capture *cap, enum ms_view v, const char *f,
			      uint64_t total)
{
	struct ms_query q = query(v);
	struct ms_top top;
	struct ms_tree t;
	uint32_t i;

	q.function = f;
	assert_int_equal(ms_tree_build_from(&t, cap, &q), 0);
	assert_int_equal(t.nodes[0].total, total);
	assert_string_equal(t.root_label, f);
	ms_tree_release(&t);
	top_sorted(&top, cap, MS_SORT_SELF);
	for (i = 0; i < top.n; i++)
		if (!strcmp(key_label(&top.sel, top.entries[i].key), f))
			assert_int_equal(top.entries[i].total, total);
	ms_top_release(&top);
}

static void test_callers(void **state)
{
	struct tcap *t = callers_capture();
	struct ms_query q = query(MS_VIEW_CALLERS);
	char *text;

	q.view = MS_VIEW_TOP;
	assert_string_equal(top_line(&t->cap, &q), "10/10: b 7/7, c 2/3, b2 1/1, main 0/10, a 0/7");

	/* from b's innermost activation outwards: the recursion counted once */
	q.view = MS_VIEW_CALLERS;
	q.function = "b";
	assert_string_equal(tree_text(&t->cap, &q),
			    "b 0/7\n"
			    "  a 0/5\n"
			    "    main 3/3\n"
			    "    b 0/2\n"
			    "      a 0/2\n"
			    "        main 2/2\n"
			    "  c 0/1\n"
			    "    main 1/1\n"
			    "  main 1/1\n");
	text = view(&t->cap, &q, false);
	assert_string_equal(text,
		"callers of b: 7 (70.0%) of 10 samples\n"
		"total%   self%  total  self  function\n"
		" 70.0%    0.0%      7     0  b\n"
		" 50.0%    0.0%      5     0    a (calls)\n"
		" 30.0%   30.0%      3     3      main (calls)\n"
		" 20.0%    0.0%      2     0      b (calls)\n"
		" 20.0%    0.0%      2     0        a (calls)\n"
		" 20.0%   20.0%      2     2          main (calls)\n"
		" 10.0%    0.0%      1     0    c (calls)\n"
		" 10.0%   10.0%      1     1      main (calls)\n"
		" 10.0%   10.0%      1     1    main (calls)\n");
	free(text);
	q.hide_below = 25;
	text = view(&t->cap, &q, true);
	assert_string_equal(text,
		"{" HEAD("samples", "function", 10, 10, 10) "\"view\":\"callers\","
		"\"root\":{\"name\":\"b\",\"self\":0,\"total\":7,\"children\":["
		"{\"name\":\"a\",\"module\":\"calls\",\"file\":\"\",\"line\":0,\"self\":0,\"total\":5,"
		"\"children\":[{\"name\":\"main\",\"module\":\"calls\",\"file\":\"\",\"line\":0,"
		"\"self\":3,\"total\":3,\"children\":[]}]}]}}\n");
	free(text);

	q = query(MS_VIEW_CALLERS);
	q.function = "a";
	assert_string_equal(tree_text(&t->cap, &q),
			    "a 0/7\n"
			    "  main 5/5\n"
			    "  b 0/2\n"
			    "    a 0/2\n"
			    "      main 2/2\n");
	expect_root_total(&t->cap, MS_VIEW_CALLERS, "a", 7);
	expect_root_total(&t->cap, MS_VIEW_CALLERS, "b", 7);
	expect_root_total(&t->cap, MS_VIEW_CALLERS, "c", 3);
	expect_root_total(&t->cap, MS_VIEW_CALLERS, "main", 10);
	free(t);

	/* a recursion three deep under a truncated key */
	t = main_capture();
	q.function = "rec";
	assert_string_equal(tree_text(&t->cap, &q),
			    "rec 0/2\n"
			    "  rec 0/2\n"
			    "    rec 0/2\n"
			    "      main 0/2\n"
			    "        __libc_start_main 0/2\n"
			    "          [truncated: depth] 2/2\n");
	expect_root_total(&t->cap, MS_VIEW_CALLERS, "rec", 2);
	expect_root_total(&t->cap, MS_VIEW_CALLERS, "main", 9);
	free(t);
}

static void test_callees(void **state)
{
	struct tcap *t = callers_capture();
	struct ms_query q = query(MS_VIEW_CALLEES);
	char *text;

	/* from b's outermost activation inwards */
	q.function = "b";
	assert_string_equal(tree_text(&t->cap, &q),
			    "b 5/7\n"
			    "  a 0/2\n"
			    "    b 2/2\n");
	text = view(&t->cap, &q, false);
	assert_string_equal(text,
		"callees of b: 7 (70.0%) of 10 samples\n"
		"total%   self%  total  self  function\n"
		" 70.0%   50.0%      7     5  b\n"
		" 20.0%    0.0%      2     0    a (calls)\n"
		" 20.0%   20.0%      2     2      b (calls)\n");
	free(text);
	text = view(&t->cap, &q, true);
	assert_string_equal(text,
		"{" HEAD("samples", "function", 10, 10, 10) "\"view\":\"callees\","
		"\"root\":{\"name\":\"b\",\"self\":5,\"total\":7,\"children\":["
		"{\"name\":\"a\",\"module\":\"calls\",\"file\":\"\",\"line\":0,\"self\":0,\"total\":2,"
		"\"children\":[{\"name\":\"b\",\"module\":\"calls\",\"file\":\"\",\"line\":0,"
		"\"self\":2,\"total\":2,\"children\":[]}]}]}}\n");
	free(text);

	q.function = "a";
	assert_string_equal(tree_text(&t->cap, &q),
			    "a 0/7\n"
			    "  b 3/5\n"
			    "    a 0/2\n"
			    "      b 2/2\n"
			    "  c 2/2\n");
	q.function = "main";
	assert_string_equal(tree_text(&t->cap, &q),
			    "main 0/10\n"
			    "  a 0/7\n"
			    "    b 3/5\n"
			    "      a 0/2\n"
			    "        b 2/2\n"
			    "    c 2/2\n"
			    "  b 1/1\n"
			    "  b2 1/1\n"
			    "  c 0/1\n"
			    "    b 1/1\n");
	expect_root_total(&t->cap, MS_VIEW_CALLEES, "a", 7);
	expect_root_total(&t->cap, MS_VIEW_CALLEES, "b", 7);
	expect_root_total(&t->cap, MS_VIEW_CALLEES, "c", 3);
	expect_root_total(&t->cap, MS_VIEW_CALLEES, "b2", 1);
	free(t);

	/* the rec recursion: two levels under its outermost activation */
	t = main_capture();
	q.function = "rec";
	assert_string_equal(tree_text(&t->cap, &q),
			    "rec 0/2\n"
			    "  rec 0/2\n"
			    "    rec 2/2\n");
	/* through an inlined function */
	free(t);
	t = inline_capture();
	q.function = "mid";
	assert_string_equal(tree_text(&t->cap, &q),
			    "mid 3/8\n"
			    "  leaf 5/5\n");
	q.view = MS_VIEW_CALLERS;
	assert_string_equal(tree_text(&t->cap, &q),
			    "mid 0/8\n"
			    "  outer 0/8\n"
			    "    main 8/8\n");
	free(t);
}

/* A view that must fail: -1 and one message holding frag, and nothing written. */
static void expect_view_refused(const struct ms_capture *cap, const struct ms_query *q, bool json,
				const char *frag)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	assert_non_null(out);
	EXPECT_ERROR(ms_view_write(VIEW_OUT(json), cap, q), frag);
	assert_int_equal(fclose(out), 0);
	assert_string_equal(buf, "");
	free(buf);
}

static void test_callers_naming(void **state)
{
	struct tcap *t = callers_capture();
	struct ms_query q = query(MS_VIEW_CALLERS);
	int json;

	/* an exact name wins over the regex it also is: "b" is in b2 */
	q.function = "b";
	expect_root_total(&t->cap, MS_VIEW_CALLERS, "b", 7);
	/* a regex naming one key: the key's name is the root's */
	q.function = "c$";
	assert_string_equal(tree_text(&t->cap, &q), "c 0/3\n  a 0/2\n    main 2/2\n  main 1/1\n");
	q.function = "^b.$";
	assert_string_equal(tree_text(&t->cap, &q), "b2 0/1\n  main 1/1\n");

	for (json = 0; json <= 1; json++) {
		q.view = json ? MS_VIEW_CALLEES : MS_VIEW_CALLERS;
		q.function = "^b";
		expect_view_refused(&t->cap, &q, json,
				    "'^b' matches more than one function ('b', 'b2', ...): "
				    "give one name exactly\n");
		q.function = "^(a|c|main)$";
		expect_view_refused(&t->cap, &q, json,
				    "'^(a|c|main)$' matches more than one function ('main', 'a', ...)");
		q.function = "zzz";
		expect_view_refused(&t->cap, &q, json,
				    "no function matches 'zzz': see ms-analyze top for the names\n");
		q.function = "(";
		expect_view_refused(&t->cap, &q, json,
				    "no function is called '(' (and it is not a regular expression)\n");
	}
	free(t);

	/* several keys of one name are one function to start from: burn_60 at two addresses */
	t = main_capture();
	q = query(MS_VIEW_CALLERS);
	q.by = MS_BY_ADDRESS;
	q.function = "burn_60";
	assert_string_equal(tree_text(&t->cap, &q),
			    "burn_60 0/4\n"
			    "  run 0/4\n"
			    "    main 0/4\n"
			    "      __libc_start_main 4/4\n");
	q.function = "burn_6.";
	assert_true(starts_with(tree_text(&t->cap, &q), "burn_60 0/4\n"));
	/* a function the filters leave no sample of */
	assert_int_equal(ms_query_add_tids(&q, "99"), 0);
	assert_string_equal(tree_text(&t->cap, &q), "burn_60 0/0\n");
	free(t);
}

/* ---- threads and timeline ---- */

static void test_threads(void **state)
{
	struct tcap *t = main_capture();
	struct ms_query q = query(MS_VIEW_THREADS);
	char *text;

	text = view(&t->cap, &q, false);
	assert_string_equal(text,
		"11 samples in 2 threads\n"
		" share       samples       pid       tid  name\n"
		" 72.7%             8        42        42  burn\n"
		" 27.3%             3        42        43  worker\n");
	free(text);
	text = view(&t->cap, &q, true);
	assert_string_equal(text,
		"{" HEAD("samples", "function", 11, 11, 11) "\"threads\":["
		"{\"pid\":42,\"tid\":42,\"name\":\"burn\",\"samples\":8,\"total\":8,\"percent\":72.73},"
		"{\"pid\":42,\"tid\":43,\"name\":\"worker\",\"samples\":3,\"total\":3,\"percent\":27.27}]}\n");
	free(text);

	/* ties by pid then tid; threads without samples counted in text, listed in JSON */
	thread(t, 42, 44, "idle");
	thread(t, 7, 70, "");
	samples(t, 3, 3, t->samples[0].stack, MS_END_FP_CHAIN);
	text = view(&t->cap, &q, false);
	assert_string_equal(text,
		"14 samples in 4 threads (1 not listed: no selected samples)\n"
		" share       samples       pid       tid  name\n"
		" 57.1%             8        42        42  burn\n"
		" 21.4%             3         7        70  (no name)\n"
		" 21.4%             3        42        43  worker\n");
	free(text);
	text = view(&t->cap, &q, true);
	assert_non_null(strstr(text, "{\"pid\":42,\"tid\":43,\"name\":\"worker\",\"samples\":3,\"total\":3,"
				    "\"percent\":21.43},{\"pid\":42,\"tid\":44,\"name\":\"idle\",\"samples\":0,"
				    "\"total\":0,\"percent\":0}]}\n"));
	free(text);

	/* filters, and --hide-below */
	assert_int_equal(ms_query_add_tids(&q, "43"), 0);
	text = view(&t->cap, &q, false);
	assert_string_equal(text,
		"3 samples in 4 threads (3 not listed: no selected samples)\n"
		"selected 3 of 14 samples: threads 43\n"
		" share       samples       pid       tid  name\n"
		"100.0%             3        42        43  worker\n");
	free(text);
	q = query(MS_VIEW_THREADS);
	q.hide_below = 50;
	text = view(&t->cap, &q, false);
	assert_true(starts_with(text, "14 samples in 4 threads (3 not listed: no selected samples "
				      "or under --hide-below)\n"));
	free(text);
	free(t);

	/* in CPU time: thread 42's samples 0-2, 4-5, 8-10 stand for 13.5 ms */
	t = budget_capture();
	q = query(MS_VIEW_THREADS);
	q.unit = MS_UNIT_CPU_TIME;
	text = view(&t->cap, &q, false);
	assert_string_equal(text,
		"23.500 ms of CPU time in 2 threads\n"
		" share      cpu time       pid       tid  name\n"
		" 57.4%     13.500 ms        42        42  burn\n"
		" 42.6%     10.000 ms        42        43  worker\n");
	free(text);
	text = view(&t->cap, &q, true);
	assert_string_equal(text,
		"{" HEAD("ns", "function", 11, 23500000, 23500000) "\"threads\":["
		"{\"pid\":42,\"tid\":42,\"name\":\"burn\",\"samples\":8,\"total\":13500000,\"percent\":57.45},"
		"{\"pid\":42,\"tid\":43,\"name\":\"worker\",\"samples\":3,\"total\":10000000,"
		"\"percent\":42.55}]}\n");
	free(text);
	free(t);
}

/*
 * The timeline of timed_capture() recorded for 12 ms: with 12 buckets,
 * sample i is in bucket i.
 */
/* Loss rows (minor 4) mark their buckets; the rest are said to be of no known time. */
static void test_timeline_losses(void **state)
{
	struct tcap *t = main_capture();
	struct ms_query q = query(MS_VIEW_TIMELINE);
	char *text;

	(void)state;
	/* main_capture lost 5 (kernel) and 1 (collector); 3 at 3 ms, 1 past the end */
	t->losses[0] = (struct ms_cap_loss){ .time = 3001000, .count = 3, .source = MS_LOST_KERNEL };
	t->losses[1] = (struct ms_cap_loss){ .time = 3000000000ull, .count = 1,
					     .source = MS_LOST_COLLECTOR };
	t->cap.n_losses = 2;
	q.buckets = 4;
	text = view(&t->cap, &q, true);
	assert_non_null(strstr(text, "\"lost\":6,\"lost_untimed\":2,\"lost_buckets\":[3,0,0,0],"));
	free(text);
	text = view(&t->cap, &q, false);
	assert_non_null(strstr(text, "warning: 2 records were lost at times the capture does not "
				    "keep: no bucket marks them\n"
				    "note: 1 record was lost outside this window\n"));
	assert_non_null(strstr(text, "\nlost records            |!   |         3\n"));
	free(text);
	/* without rows (a capture before 1.4): every loss is of no known time, nothing marked */
	t->cap.n_losses = 0;
	text = view(&t->cap, &q, false);
	assert_non_null(strstr(text, "warning: 6 records were lost at times"));
	assert_null(strstr(text, "lost records"));
	free(text);
	free(t);
}

static void test_timeline_json(void **state)
{
	struct tcap *t = timed_capture();
	struct ms_query q = query(MS_VIEW_TIMELINE);
	char *text;

	t->cap.end_time = 1000 + 12000000;
	q.buckets = 12;
	text = view(&t->cap, &q, true);
	assert_string_equal(text,
		"{" HEAD("samples", "function", 11, 11, 11)
		"\"start\":0,\"end\":12000000,\"bucket_ns\":1000000,\"lost\":6,\"lost_untimed\":6,"
		"\"lost_buckets\":[0,0,0,0,0,0,0,0,0,0,0,0],\"lanes\":["
		"{\"pid\":42,\"tid\":42,\"name\":\"burn\",\"total\":8,\"buckets\":[1,1,1,0,1,1,0,0,1,1,1,0]},"
		"{\"pid\":42,\"tid\":43,\"name\":\"worker\",\"total\":3,\"buckets\":[0,0,0,1,0,0,1,1,0,0,0,0]}],"
		"\"off_cpu\":null}\n");
	free(text);

	/* 5 buckets of 2.4 ms */
	q.buckets = 5;
	text = view(&t->cap, &q, true);
	assert_non_null(strstr(text, "\"bucket_ns\":2400000,"));
	assert_non_null(strstr(text, "\"total\":8,\"buckets\":[3,1,1,2,1]}"));
	assert_non_null(strstr(text, "\"total\":3,\"buckets\":[0,1,2,0,0]}"));
	free(text);

	/* --time's window: [2 ms, 6 ms) in 4 buckets */
	q.buckets = 4;
	assert_int_equal(ms_query_parse_time(&q, "2ms..6ms"), 0);
	text = view(&t->cap, &q, true);
	assert_string_equal(text,
		"{" HEAD("samples", "function", 4, 4, 11)
		"\"start\":2000000,\"end\":6000000,\"bucket_ns\":1000000,\"lost\":6,\"lost_untimed\":6,"
		"\"lost_buckets\":[0,0,0,0],\"lanes\":["
		"{\"pid\":42,\"tid\":42,\"name\":\"burn\",\"total\":3,\"buckets\":[1,0,1,1]},"
		"{\"pid\":42,\"tid\":43,\"name\":\"worker\",\"total\":1,\"buckets\":[0,1,0,0]}],\"off_cpu\":null}\n");
	free(text);
	/* from 10 ms to the recording's end; a lane only for threads with selected samples */
	assert_int_equal(ms_query_parse_time(&q, "10ms.."), 0);
	q.buckets = 2;
	text = view(&t->cap, &q, true);
	assert_true(starts_with(strstr(text, "\"start\""),
				"\"start\":10000000,\"end\":12000000,\"bucket_ns\":1000000,\"lost\":6,"
				    "\"lost_untimed\":6,\"lost_buckets\":[0,0],"
				"\"lanes\":[{\"pid\":42,\"tid\":42,\"name\":\"burn\",\"total\":1,"
				"\"buckets\":[1,0]}],\"off_cpu\":null}\n"));
	free(text);

	/* a filter: thread 43 only */
	q = query(MS_VIEW_TIMELINE);
	q.buckets = 3;
	assert_int_equal(ms_query_add_thread_name(&q, "worker"), 0);
	text = view(&t->cap, &q, true);
	assert_non_null(strstr(text, "\"lanes\":[{\"pid\":42,\"tid\":43,\"name\":\"worker\",\"total\":3,"
				    "\"buckets\":[1,2,0]}],\"off_cpu\":null}\n"));
	free(text);

	/* the default: MS_TIMELINE_BUCKETS in JSON; more than the most is refused */
	q = query(MS_VIEW_TIMELINE);
	text = view(&t->cap, &q, true);
	assert_non_null(strstr(text, "\"bucket_ns\":200000,"));
	free(text);
	q.buckets = MS_TIMELINE_MAX_BUCKETS + 1;
	expect_view_refused(&t->cap, &q, true, "at most 10000 buckets, not 10001\n");
	free(t);
}

/*
 * Two lanes of weighted rows, one 1 ms bucket each: a (8, 4, 1, 0), b (0,
 * 0, 0, 2); one scale for both, any weight at least the lowest level.
 */
static struct tcap *levels_capture(void)
{
	struct tcap *t = malloc(sizeof(*t));
	uint32_t m, st;

	assert_non_null(t);
	tcap_init(t);
	m = module(t, "/bin/lv", MS_MODULE_FILE);
	st = path(t, frame(t, m, 0x10, "spin"), MS_NONE);
	thread(t, 1, 1, "a");
	thread(t, 1, 2, "b");
	samples(t, 3, 0, st, MS_END_OUTERMOST);
	samples(t, 1, 1, st, MS_END_OUTERMOST);
	t->samples[0].count = 8;
	t->samples[1].count = 4;
	t->samples[3].count = 2;
	t->cap.flags |= MS_CAPTURE_WEIGHTED;
	t->cap.start_time = 1000;
	t->cap.end_time = 1000 + 4000000;
	return t;
}

static void test_timeline_text(void **state)
{
	struct tcap *t = levels_capture();
	struct ms_query q = query(MS_VIEW_TIMELINE);
	char *text;

	q.buckets = 4;
	text = view(&t->cap, &q, false);
	assert_true(starts_with(text, "15 samples over 4 buckets of 1.000 ms\n"));
	assert_non_null(strstr(text, "\n"
		"1 a                     |█▄▁ |        13\n"
		"2 b                     |   ▂|         2\n"));
	free(text);

	/* enough buckets for both ends of the window; the lost records said */
	q.buckets = 16;
	t->cap.lost_kernel = 2;
	text = view(&t->cap, &q, false);
	assert_string_equal(text,
		"15 samples over 16 buckets of 250.000 us\n"
		"warning: 2 records were lost at times the capture does not keep: no bucket "
		"marks them\n"
		"thread                  |0 ns    4.000 ms|     total\n"
		"1 a                     |█   ▄   ▁       |        13\n"
		"2 b                     |            ▂   |         2\n");
	free(text);

	/* the buckets fit the width when not given */
	q.buckets = 0;
	text = CAPTURE_OUTPUT(ms_timeline_write(&(struct ms_view_out){ .f = out, .width = 60 },
						&t->cap, &q));
	assert_true(starts_with(text, "15 samples over 24 buckets of 166.667 us\n"));
	free(text);

	/* a filter that leaves nothing */
	q.buckets = 4;
	q.focus = "^nothing$";
	text = view(&t->cap, &q, false);
	assert_non_null(strstr(text, "\nselected 0 of 15 samples: through '^nothing$'\n"));
	assert_non_null(strstr(text, "|     total\n(no selected samples)\n"));
	free(text);
	free(t);
}

/*
 * The fullest bucket is drawn full whatever the scale: with at most one
 * sample a bucket every sampled bucket is the peak, and with at most two,
 * a bucket of one is half of it.
 */
static void test_timeline_peak_level(void **state)
{
	struct tcap *t = timed_capture();
	struct ms_query q = query(MS_VIEW_TIMELINE);
	char *text;

	t->cap.end_time = 1000 + 12000000;
	t->cap.lost_kernel = t->cap.lost_collector = 0;
	q.buckets = 12;
	text = view(&t->cap, &q, false);
	assert_non_null(strstr(text, "\n"
		"42 burn                 |███ ██  ███ |         8\n"
		"43 worker               |   █  ██    |         3\n"));
	free(text);
	q.buckets = 6;
	text = view(&t->cap, &q, false);
	assert_non_null(strstr(text, "\n"
		"42 burn                 |█▄█ █▄|         8\n"
		"43 worker               | ▄ █  |         3\n"));
	free(text);
	free(t);
}

/*
 * The header's bars stand over the lanes' whatever the bucket count: the
 * window's ends are written when they fit, the start alone when only it
 * does, neither when it does not.
 */
static void test_timeline_header_columns(void **state)
{
	struct tcap *t = timed_capture();
	struct ms_query q = query(MS_VIEW_TIMELINE);
	char *text;

	t->cap.end_time = 1000 + 12000000;
	t->cap.lost_kernel = t->cap.lost_collector = 0;
	q.buckets = 6;
	text = view(&t->cap, &q, false);
	assert_string_equal(text,
		"11 samples over 6 buckets of 2.000 ms\n"
		"thread                  |0 ns  |     total\n"
		"42 burn                 |█▄█ █▄|         8\n"
		"43 worker               | ▄ █  |         3\n");
	free(text);
	q.buckets = 2;
	assert_int_equal(ms_query_parse_time(&q, "10ms.."), 0);
	text = view(&t->cap, &q, false);
	assert_string_equal(text,
		"1 samples over 2 buckets of 1.000 ms\n"
		"selected 1 of 11 samples: time 10.000 ms..\n"
		"thread                  |  |     total\n"
		"42 burn                 |█ |         1\n");
	free(text);
	free(t);
}

/* ---- diff ---- */

/*
 * main > f, g, k, h with these many samples each (none: no frame of it
 * either); B's frames made in another order, its module at another path,
 * so that only their identity matches them.
 */
static struct tcap *diff_capture(bool b_side, uint32_t nf, uint32_t ng, uint32_t nk, uint32_t nh)
{
	struct tcap *t = malloc(sizeof(*t));
	uint32_t m, mainf, fr[4], n[4] = { nf, ng, nk, nh }, i;
	static const char *const names[4] = { "f", "g", "k", "h" };

	assert_non_null(t);
	tcap_init(t);
	m = module(t, b_side ? "/opt/app" : "/bin/app", MS_MODULE_FILE);
	if (b_side)
		for (i = 4; i-- > 0;)
			fr[i] = n[i] ? frame(t, m, 0x100 + 0x10 * i, names[i]) : MS_NONE;
	mainf = frame(t, m, 0x10, "main");
	if (!b_side)
		for (i = 0; i < 4; i++)
			fr[i] = n[i] ? frame(t, m, 0x100 + 0x10 * i, names[i]) : MS_NONE;
	thread(t, 1, 1, "app");
	for (i = 0; i < 4; i++)
		if (n[i])
			samples(t, n[i], 0, path(t, mainf, fr[i], MS_NONE), MS_END_OUTERMOST);
	return t;
}

#define DIFF_OUTPUT(a, b, q, json) \
	CAPTURE_OUTPUT(ms_diff_write(VIEW_OUT(json), &(a)->cap, "a.msc", &(b)->cap, \
				     "b.msc", (q)))

/* Diff must refuse: -1, one message holding frag, nothing written. */
static void expect_diff_refused(const struct tcap *a, const struct tcap *b,
				const struct ms_query *q, const char *frag)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	assert_non_null(out);
	EXPECT_ERROR(ms_diff_write(TEXT_OUT, &a->cap, "a.msc", &b->cap, "b.msc", q), frag);
	assert_int_equal(fclose(out), 0);
	assert_string_equal(buf, "");
	free(buf);
}

/*
 * A (10 samples): f 5, g 3, k 2. B (20): f 6, g 4, h 10. By share: h is
 * new (+50 points), k gone (-20), f -20 though it gained a sample, g -10:
 * the normalized change orders them, then the absolute one.
 */
static void test_diff(void **state)
{
	struct tcap *a = diff_capture(false, 5, 3, 2, 0), *b = diff_capture(true, 6, 4, 0, 10);
	struct ms_query q = query(MS_VIEW_DIFF);
	char *text;

	text = DIFF_OUTPUT(a, b, &q, false);
	assert_string_equal(text,
		"A: a.msc (10 samples)\n"
		"B: b.msc (20 samples)\n"
		"4 changed; by self share, largest change first (change: points of each capture's total)\n"
		" change      A%      B%           A           B  function\n"
		"    new    0.0%   50.0%           0          10  h (app)\n"
		"   gone   20.0%    0.0%           2           0  k (app)\n"
		"  -20.0   50.0%   30.0%           5           6  f (app)\n"
		"  -10.0   30.0%   20.0%           3           4  g (app)\n");
	free(text);
	text = DIFF_OUTPUT(a, b, &q, true);
	assert_string_equal(text,
		"{\"source\":\"cpu-sampling\",\"unit\":\"samples\",\"by\":\"function\",\"look\":\"mixed\","
		"\"sort\":\"self\",\"a\":{\"file\":\"a.msc\",\"total\":10},"
		"\"b\":{\"file\":\"b.msc\",\"total\":20},\"functions\":["
		"{\"name\":\"h\",\"module\":\"app\",\"file\":\"\",\"line\":0,\"status\":\"new\",\"a_self\":0,"
		"\"a_total\":0,\"b_self\":10,\"b_total\":10,\"delta\":10,\"change_points\":50},"
		"{\"name\":\"k\",\"module\":\"app\",\"file\":\"\",\"line\":0,\"status\":\"gone\",\"a_self\":2,"
		"\"a_total\":2,\"b_self\":0,\"b_total\":0,\"delta\":-2,\"change_points\":-20},"
		"{\"name\":\"f\",\"module\":\"app\",\"file\":\"\",\"line\":0,\"status\":\"both\",\"a_self\":5,"
		"\"a_total\":5,\"b_self\":6,\"b_total\":6,\"delta\":1,\"change_points\":-20},"
		"{\"name\":\"g\",\"module\":\"app\",\"file\":\"\",\"line\":0,\"status\":\"both\",\"a_self\":3,"
		"\"a_total\":3,\"b_self\":4,\"b_total\":4,\"delta\":1,\"change_points\":-10}]}\n");
	free(text);

	/* by total: main is 100% of both, but 10 samples more */
	q.sort = MS_SORT_TOTAL;
	text = DIFF_OUTPUT(a, b, &q, false);
	assert_true(starts_with(strstr(text, "5 changed"), "5 changed; by total share"));
	assert_non_null(strstr(text, "  -10.0   30.0%   20.0%           3           4  g (app)\n"
				    "   +0.0  100.0%  100.0%          10          20  main (app)\n"));
	free(text);

	/* --limit, --hide-below (points of change) */
	q = query(MS_VIEW_DIFF);
	q.limit = 2;
	text = DIFF_OUTPUT(a, b, &q, false);
	assert_non_null(strstr(text, " changed (the first 2 shown);"));
	assert_non_null(strstr(text, "  k (app)\n"));
	assert_null(strstr(text, "  f (app)\n"));
	free(text);
	q = query(MS_VIEW_DIFF);
	q.hide_below = 20;
	text = DIFF_OUTPUT(a, b, &q, true);
	assert_non_null(strstr(text, "\"name\":\"f\""));
	assert_null(strstr(text, "\"name\":\"g\""));
	free(text);

	/* B against A: the same rows the other way */
	q = query(MS_VIEW_DIFF);
	text = CAPTURE_OUTPUT(ms_diff_write(TEXT_OUT, &b->cap, "b.msc", &a->cap, "a.msc", &q));
	assert_non_null(strstr(text,
		"   gone   50.0%    0.0%          10           0  h (app)\n"
		"    new    0.0%   20.0%           0           2  k (app)\n"
		"  +20.0   30.0%   50.0%           6           5  f (app)\n"
		"  +10.0   20.0%   30.0%           4           3  g (app)\n"));
	free(text);

	/* a capture against itself: nothing changed */
	text = DIFF_OUTPUT(a, a, &q, false);
	assert_non_null(strstr(text, "\n0 changed;"));
	assert_true(strstr(text, "  function\n")[strlen("  function\n")] == '\0');
	free(text);

	/* a filter applies to both sides (k and f change as much: k lost more samples) */
	q.focus = "^(f|k)$";
	text = DIFF_OUTPUT(a, b, &q, false);
	assert_string_equal(text,
		"A: a.msc (7 samples)\n"
		"B: b.msc (6 samples)\n"
		"selected 6 of 20 samples: through '^(f|k)$'\n"
		"2 changed; by self share, largest change first (change: points of each capture's total)\n"
		" change      A%      B%           A           B  function\n"
		"   gone   28.6%    0.0%           2           0  k (app)\n"
		"  +28.6   71.4%  100.0%           5           6  f (app)\n");
	free(text);

	/* the view dispatch does not diff */
	q = query(MS_VIEW_DIFF);
	expect_view_refused(&a->cap, &q, false, "the view diff compares two captures: use ms_diff_write()\n");
	free(a);
	free(b);
}

/* Samples of different events, or CPU time of an event that is not time, are not compared. */
static void test_diff_refused(void **state)
{
	struct tcap *a = diff_capture(false, 5, 3, 2, 0), *b = diff_capture(true, 6, 4, 0, 10);
	struct ms_query q = query(MS_VIEW_DIFF);
	char *text;

	b->info[0] = (struct ms_cap_info){ .key = str(b, "event"), .value_text = str(b, "instructions") };
	b->cap.n_info = 1;
	expect_diff_refused(a, b, &q, "cannot compare 'a.msc' and 'b.msc': one counts samples of "
			    "'cpu-clock', the other of 'instructions', which are different units; "
			    "record both on one event\n");
	q.unit = MS_UNIT_CPU_TIME;
	expect_diff_refused(a, b, &q, "'b.msc' was recorded on the event 'instructions', whose periods "
			    "are not time: there is no CPU time to show; use --unit samples\n");

	/* two clock events compare in CPU time, not in samples */
	b->info[0].value_text = str(b, "task-clock");
	text = DIFF_OUTPUT(a, b, &q, false);
	assert_true(starts_with(text, "A: a.msc (10.000 ms of CPU time)\n"
				      "B: b.msc (20.000 ms of CPU time)\n"));
	assert_non_null(strstr(text, "    new    0.0%   50.0%        0 ns   10.000 ms  h (app)\n"));
	free(text);
	q.unit = MS_UNIT_SAMPLES;
	expect_diff_refused(a, b, &q, "one counts samples of 'cpu-clock', the other of 'task-clock'");
	/* an event named is the event assumed when none is */
	b->info[0].value_text = str(b, "cpu-clock");
	text = DIFF_OUTPUT(a, b, &q, false);
	assert_non_null(strstr(text, "\n4 changed;"));
	free(text);
	free(a);
	free(b);
}

/*
 * A function with as many samples in both captures but a different share
 * of each has changed: A (10): f 5, g 5; B (20): f 10, g 5, h 5. g keeps
 * its 5 samples and falls from 50% to 25%, a change as large as h's; f
 * gains 5 samples and keeps its share.
 */
static void test_diff_same_count_other_share(void **state)
{
	struct tcap *a = diff_capture(false, 5, 5, 0, 0), *b = diff_capture(true, 10, 5, 0, 5);
	struct ms_query q = query(MS_VIEW_DIFF);
	char *text;

	text = DIFF_OUTPUT(a, b, &q, false);
	assert_non_null(strstr(text,
		"\n3 changed; by self share, largest change first (change: points of each capture's total)\n"
		" change      A%      B%           A           B  function\n"
		"    new    0.0%   25.0%           0           5  h (app)\n"
		"  -25.0   50.0%   25.0%           5           5  g (app)\n"
		"   +0.0   50.0%   50.0%           5          10  f (app)\n"));
	free(text);
	text = DIFF_OUTPUT(a, b, &q, true);
	assert_non_null(strstr(text, "{\"name\":\"g\",\"module\":\"app\",\"file\":\"\",\"line\":0,"
				    "\"status\":\"both\",\"a_self\":5,\"a_total\":5,\"b_self\":5,"
				    "\"b_total\":5,\"delta\":0,\"change_points\":-25}"));
	free(text);
	free(a);
	free(b);
}

/* ---- report, dispatch, determinism, hostile captures ---- */

/* The report's JSON is the summary's, top's and tree's objects under one. */
static void test_report_json(void **state)
{
	struct tcap *t = main_capture();
	struct ms_query q = query(MS_VIEW_REPORT), top = query(MS_VIEW_TOP);
	struct ms_query tree = query(MS_VIEW_TREE);
	char *text, *s, *x, *y, *want;
	size_t len;

	text = view(&t->cap, &q, true);
	s = CAPTURE_OUTPUT(ms_summary_write(out, &t->cap, true));
	x = view(&t->cap, &top, true);
	y = view(&t->cap, &tree, true);
	len = strlen(s) + strlen(x) + strlen(y) + 64;
	want = malloc(len);
	assert_non_null(want);
	/* the three objects, each without its newline: one line */
	s[strlen(s) - 1] = 0;
	x[strlen(x) - 1] = 0;
	y[strlen(y) - 1] = 0;
	snprintf(want, len, "{\"summary\":%s,\"top\":%s,\"tree\":%s}\n", s, x, y);
	assert_string_equal(text, want);
	assert_true(starts_with(text, "{\"summary\":{\"command\":\"./burn 1\","));
	assert_non_null(strstr(text, "},\"top\":{\"source\":\"cpu-sampling\","));
	assert_ptr_equal(strchr(text, '\n'), text + strlen(text) - 1);
	free(text);
	free(s);
	free(x);
	free(y);
	free(want);

	/* under a query: top and tree are filtered, the summary is the capture's */
	assert_int_equal(ms_query_add_tids(&q, "43"), 0);
	q.by = MS_BY_MODULE;
	text = view(&t->cap, &q, true);
	assert_non_null(strstr(text, "{\"summary\":{\"command\":\"./burn 1\",\"pid\":42,"));
	assert_non_null(strstr(text, "\"samples\":11,\"period\":11000000,"));
	assert_non_null(strstr(text, ",\"top\":{" HEAD("samples", "module", 3, 3, 11) "\"functions\":["
				    "{\"name\":\"burn\",\"kind\":\"module\",\"module\":\"burn\",\"self\":3,"));
	assert_non_null(strstr(text, ",\"tree\":{" HEAD("samples", "module", 3, 3, 11) "\"root\":"));
	free(text);
	free(t);
}

static void test_report_query(void **state)
{
	struct tcap *t = budget_capture();
	struct ms_query q = query(MS_VIEW_REPORT);
	char *text;

	assert_int_equal(ms_query_add_tids(&q, "43"), 0);
	q.unit = MS_UNIT_CPU_TIME;
	text = view(&t->cap, &q, false);
	/* the summary's numbers are the capture's; the report's defaults are the command line's */
	q.limit = MS_REPORT_TOP_LIMIT;
	q.hide_below = MS_REPORT_TREE_HIDE_BELOW;
	free(text);
	text = view(&t->cap, &q, false);
	assert_non_null(strstr(text, ", 11 samples at "));
	assert_non_null(strstr(text,
		"\nhottest functions\n"
		"10.000 ms of CPU time, 5 functions\n"
		"selected 10.000 ms of 23.500 ms: threads 43\n"
		" self%      self  total%      total  module     function\n"
		" 80.0%  8.000 ms   80.0%   8.000 ms  burn       rec\n"
		" 20.0%  2.000 ms   20.0%   2.000 ms  burn       burn_60\n"
		"  0.0%      0 ns  100.0%  10.000 ms  libc.so.6  __libc_start_main\n"
		"  0.0%      0 ns  100.0%  10.000 ms  burn       main\n"
		"  0.0%      0 ns   20.0%   2.000 ms  burn       run\n"
		"\n"
		"call tree\n"
		"10.000 ms of CPU time (nodes under 1.0% left out)\n"
		"selected 10.000 ms of 23.500 ms: threads 43\n"
		"total%   self%      total      self  function\n"
		"100.0%    0.0%  10.000 ms      0 ns  [root]\n"
		" 80.0%    0.0%   8.000 ms      0 ns    [truncated: depth]\n"));
	free(text);
	free(t);
}

/* ms_view_write() writes what each view's writer writes. */
static void test_view_dispatch(void **state)
{
	struct tcap *t = main_capture();
	int v, json;

	for (json = 0; json <= 1; json++)
		for (v = 0; v < MS_VIEW_COUNT; v++) {
			struct ms_query q = query((enum ms_view)v);
			char *x, *y;

			q.function = "main";
			q.buckets = 10;
			/*
			 * diff takes two captures; off-cpu and wall want intervals
			 * (offcpu-test.c), tasks thread snapshots (snapshots-view-test.c)
			 */
			if (v == MS_VIEW_DIFF || v == MS_VIEW_OFF_CPU || v == MS_VIEW_WALL ||
			    v == MS_VIEW_TASKS)
				continue;
			x = view(&t->cap, &q, json);
			switch (v) {
			case MS_VIEW_REPORT:
				y = CAPTURE_OUTPUT(ms_report_write(VIEW_OUT(json), &t->cap, &q));
				break;
			case MS_VIEW_SUMMARY:
				y = CAPTURE_OUTPUT(ms_summary_write(out, &t->cap, json));
				break;
			case MS_VIEW_TOP:
				y = CAPTURE_OUTPUT(ms_top_write(VIEW_OUT(json), &t->cap, &q));
				break;
			case MS_VIEW_THREADS:
				y = CAPTURE_OUTPUT(ms_threads_write(VIEW_OUT(json), &t->cap, &q));
				break;
			case MS_VIEW_TIMELINE:
				y = CAPTURE_OUTPUT(ms_timeline_write(VIEW_OUT(json), &t->cap, &q));
				break;
			case MS_VIEW_PROBLEMS:
				y = CAPTURE_OUTPUT(ms_sym_problems_write(out, &t->cap, json));
				break;
			default:
				y = CAPTURE_OUTPUT(ms_tree_write(VIEW_OUT(json), &t->cap, &q));
				break;
			}
			assert_string_equal(x, y);
			assert_true(*x);
			free(x);
			free(y);
		}
	free(t);
}

/* Every view of cap under q, text and JSON, is the same bytes when written again. */
static void expect_twice_same(const struct ms_capture *cap, struct ms_query q)
{
	int v, json;

	for (json = 0; json <= 1; json++)
		for (v = 0; v < MS_VIEW_COUNT; v++) {
			char *x, *y;

			/* diff takes two captures; off-cpu and wall want intervals (offcpu-test.c) */
			if (v == MS_VIEW_DIFF || v == MS_VIEW_OFF_CPU || v == MS_VIEW_WALL)
				continue;
			q.view = (enum ms_view)v;
			x = view(cap, &q, json);
			y = view(cap, &q, json);
			assert_string_equal(x, y);
			free(x);
			free(y);
		}
}

static void test_views_deterministic(void **state)
{
	struct tcap *(*const make[])(void) = {
		main_capture, inline_capture, module_capture, truncated_capture, callers_capture,
		budget_capture, problems_capture,
	};
	static const char *const functions[] = { "main", "main", "main", "f", "b", "rec", "main" };
	static const char *const modules[] = { "burn", "inl", "prog", "prog", "calls", "burn", "libok.so" };
	size_t i;
	int by;

	for (i = 0; i < sizeof(make) / sizeof(make[0]); i++) {
		struct tcap *t = make[i](), *u = make[i]();
		struct ms_query q = query(MS_VIEW_REPORT);
		char *x, *y;

		q.buckets = 7;
		for (by = 0; by < MS_BY_COUNT; by++) {
			q.by = (enum ms_by)by;
			q.function = by == MS_BY_MODULE ? modules[i] : functions[i];
			q.unit = MS_UNIT_SAMPLES;
			expect_twice_same(&t->cap, q);
			q.unit = MS_UNIT_CPU_TIME;
			expect_twice_same(&t->cap, q);
		}
		/* a capture built again the same way: the same bytes */
		q = query(MS_VIEW_TREE);
		x = view(&t->cap, &q, true);
		y = view(&u->cap, &q, true);
		assert_string_equal(x, y);
		free(x);
		free(y);
		q = query(MS_VIEW_DIFF);
		x = CAPTURE_OUTPUT(ms_diff_write(JSON_OUT, &t->cap, "a", &u->cap, "b", &q));
		y = CAPTURE_OUTPUT(ms_diff_write(JSON_OUT, &t->cap, "a", &u->cap, "b", &q));
		assert_string_equal(x, y);
		assert_non_null(strstr(x, "\"functions\":[]}\n"));	/* nothing changed */
		free(x);
		free(y);
		free(t);
		free(u);
	}
}

/* A capture without samples: every view answers, and says there is nothing. */
static void test_views_no_samples(void **state)
{
	struct tcap t;
	struct ms_query q = query(MS_VIEW_REPORT);
	char *text;
	int by, unit;

	tcap_init(&t);
	for (by = 0; by < MS_BY_COUNT; by++)
		for (unit = 0; unit < MS_UNIT_COUNT; unit++) {
			q.by = (enum ms_by)by;
			q.unit = (enum ms_unit)unit;
			q.function = "[truncated: depth]";	/* the truncated keys are there */
			expect_twice_same(&t.cap, q);
			q.view = MS_VIEW_CALLERS;
			q.function = "main";
			expect_view_refused(&t.cap, &q, false, "no function matches 'main'");
		}

	q = query(MS_VIEW_THREADS);
	text = view(&t.cap, &q, false);
	assert_string_equal(text, "0 samples in 0 threads\n"
				 " share       samples       pid       tid  name\n");
	free(text);
	text = view(&t.cap, &q, true);
	assert_string_equal(text, "{" HEAD("samples", "function", 0, 0, 0) "\"threads\":[]}\n");
	free(text);
	q = query(MS_VIEW_TIMELINE);
	text = view(&t.cap, &q, false);
	assert_string_equal(text, "0 samples over 60 buckets of 1 ns\n"
				 "thread                  |0 ns"
				 "                                                    1 ns|     total\n"
				 "(no selected samples)\n");
	free(text);
	text = view(&t.cap, &q, true);
	assert_true(starts_with(text, "{" HEAD("samples", "function", 0, 0, 0)
				      "\"start\":0,\"end\":1,\"bucket_ns\":1,\"lost\":0,\"lost_untimed\":0,"
				      "\"lost_buckets\":[0,0,"));
	assert_non_null(strstr(text, ",0],\"lanes\":[],\"off_cpu\":null}\n"));
	free(text);
	q = query(MS_VIEW_CALLEES);
	q.function = "[truncated: depth]";
	text = view(&t.cap, &q, true);
	assert_string_equal(text, "{" HEAD("samples", "function", 0, 0, 0) "\"view\":\"callees\","
				 "\"root\":{\"name\":\"[truncated: depth]\",\"self\":0,\"total\":0,"
				 "\"children\":[]}}\n");
	free(text);
	/* diff of two of them */
	q = query(MS_VIEW_DIFF);
	text = CAPTURE_OUTPUT(ms_diff_write(TEXT_OUT, &t.cap, "a", &t.cap, "b", &q));
	assert_string_equal(text, "A: a (0 samples)\nB: b (0 samples)\n"
				 "0 changed; by self share, largest change first (change: points of "
				 "each capture's total)\n"
				 " change      A%      B%           A           B  function\n");
	free(text);

	/* threads and frames, but no sample: the same */
	thread(&t, 1, 1, "idle");
	path(&t, frame(&t, module(&t, "/bin/x", MS_MODULE_FILE), 0x10, "main"), MS_NONE);
	q = query(MS_VIEW_REPORT);
	q.function = "main";
	expect_twice_same(&t.cap, q);
	q.view = MS_VIEW_CALLERS;
	assert_string_equal(tree_text(&t.cap, &q), "main 0/0\n");
	q.view = MS_VIEW_THREADS;
	text = view(&t.cap, &q, false);
	assert_true(starts_with(text, "0 samples in 1 thread (1 not listed: no selected samples)\n"));
	free(text);
}

/* Samples without any frame: the root's (or their truncated key's) self, no top row. */
static void test_views_no_frames(void **state)
{
	struct tcap t;
	struct ms_query q = query(MS_VIEW_TREE);
	char *text;

	tcap_init(&t);
	thread(&t, 1, 1, "k");
	samples(&t, 2, 0, MS_NONE, MS_END_KERNEL_ONLY);
	samples(&t, 1, 0, MS_NONE, MS_END_STACK_COPY);
	assert_string_equal(tree_text(&t.cap, &q), "[root] 2/3\n  [truncated: stack-copy] 1/1\n");
	q.view = MS_VIEW_TOP;
	assert_string_equal(top_line(&t.cap, &q), "3/3:");
	text = view(&t.cap, &q, false);
	assert_string_equal(text, "3 samples, 0 functions\n"
				 " self%  self  total%  total  module  function\n");
	free(text);
	q.view = MS_VIEW_CALLERS;
	q.function = "[truncated: stack-copy]";
	assert_string_equal(tree_text(&t.cap, &q), "[truncated: stack-copy] 1/1\n");
	q.module = "x";	/* no innermost frame: no module */
	assert_string_equal(tree_text(&t.cap, &q), "[truncated: stack-copy] 0/0\n");
	q = query(MS_VIEW_THREADS);
	text = view(&t.cap, &q, false);
	assert_non_null(strstr(text, "100.0%             3         1         1  k\n"));
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keys),
		cmocka_unit_test(test_keys_modules_without_path),
		cmocka_unit_test(test_keys_empty),
		cmocka_unit_test(test_top_self),
		cmocka_unit_test(test_top_total),
		cmocka_unit_test(test_top_same_name_two_modules),
		cmocka_unit_test(test_top_json),
		cmocka_unit_test(test_top_text),
		cmocka_unit_test(test_top_text_width),
		cmocka_unit_test(test_top_text_sanitized),
		cmocka_unit_test(test_top_empty),
		cmocka_unit_test(test_tree_shape),
		cmocka_unit_test(test_tree_json),
		cmocka_unit_test(test_tree_text),
		cmocka_unit_test(test_tree_empty),
		cmocka_unit_test(test_tree_deep),
		cmocka_unit_test(test_summary_numbers),
		cmocka_unit_test(test_summary_json),
		cmocka_unit_test(test_summary_text),
		cmocka_unit_test(test_summary_idle_threads),
		cmocka_unit_test(test_summary_incomplete),
		cmocka_unit_test(test_summary_empty),
		cmocka_unit_test(test_summary_pid_from_threads),
		cmocka_unit_test(test_summary_duty_numbers),
		cmocka_unit_test(test_summary_duty_text),
		cmocka_unit_test(test_summary_duty_json),
		cmocka_unit_test(test_report),
		cmocka_unit_test(test_inline_keys),
		cmocka_unit_test(test_inline_top),
		cmocka_unit_test(test_function_one_key_across_files),
		cmocka_unit_test(test_inline_tree),
		cmocka_unit_test(test_inline_recursion),
		cmocka_unit_test(test_problems_numbers),
		cmocka_unit_test(test_problems_text),
		cmocka_unit_test(test_problems_json),
		cmocka_unit_test(test_problems_none),
		cmocka_unit_test(test_summary_deferred),
		cmocka_unit_test(test_json_strings),
		cmocka_unit_test(test_json_values),
		cmocka_unit_test(test_weighted_views),
		cmocka_unit_test(test_weighted_huge),
		cmocka_unit_test(test_query_names),
		cmocka_unit_test(test_query_parsers_refuse),
		cmocka_unit_test(test_query_parse_time),
		cmocka_unit_test(test_query_tids),
		cmocka_unit_test(test_query_check),
		cmocka_unit_test(test_query_check_capture),
		cmocka_unit_test(test_query_origin),
		cmocka_unit_test(test_filter_tids),
		cmocka_unit_test(test_filter_thread_names),
		cmocka_unit_test(test_filter_time),
		cmocka_unit_test(test_filter_module),
		cmocka_unit_test(test_filter_focus),
		cmocka_unit_test(test_filter_ignore),
		cmocka_unit_test(test_filter_hide_below),
		cmocka_unit_test(test_filter_combined),
		cmocka_unit_test(test_by_module),
		cmocka_unit_test(test_filter_module_innermost),
		cmocka_unit_test(test_by_line),
		cmocka_unit_test(test_by_address),
		cmocka_unit_test(test_unit_cpu_time),
		cmocka_unit_test(test_truncated_keys),
		cmocka_unit_test(test_truncated_end_past_table),
		cmocka_unit_test(test_callers),
		cmocka_unit_test(test_callees),
		cmocka_unit_test(test_callers_naming),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_timeline_json),
		cmocka_unit_test(test_timeline_losses),
		cmocka_unit_test(test_timeline_text),
		cmocka_unit_test(test_timeline_peak_level),
		cmocka_unit_test(test_timeline_header_columns),
		cmocka_unit_test(test_diff),
		cmocka_unit_test(test_diff_refused),
		cmocka_unit_test(test_diff_same_count_other_share),
		cmocka_unit_test(test_report_json),
		cmocka_unit_test(test_report_query),
		cmocka_unit_test(test_view_dispatch),
		cmocka_unit_test(test_views_deterministic),
		cmocka_unit_test(test_views_no_samples),
		cmocka_unit_test(test_views_no_frames),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
