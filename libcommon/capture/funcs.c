/*
 * Function keys: which frames are "the same function" for every view, and
 * the inline chain each frame stands for.
 */
#include "capture/funcs.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "stream/records.h"
#include "util/error.h"

const char *ms_module_basename(const struct ms_capture *cap, uint32_t m)
{
	const char *path, *slash;

	if (m == MS_NONE || m >= cap->n_modules)
		return "";
	path = cap->strings[cap->modules[m].path];
	slash = strrchr(path, '/');
	/* "dir/" has no basename worth showing: keep the whole hint */
	return slash && slash[1] ? slash + 1 : path;
}

const char *ms_module_kind_name(uint32_t kind)
{
	switch (kind) {
	case MS_MODULE_FILE: return "file";
	case MS_MODULE_KERNEL: return "kernel";
	case MS_MODULE_VDSO: return "vdso";
	case MS_MODULE_ANON: return "anon";
	case MS_MODULE_PERF_MAP: return "perf-map";
	case MS_MODULE_JIT_OBJECT: return "jit-object";
	case MS_MODULE_INTERPRETED: return "interpreted";
	default: return "unknown";
	}
}

const char *ms_module_label(const struct ms_capture *cap, uint32_t m)
{
	const char *base;

	if (m == MS_NONE || m >= cap->n_modules)
		return "[unknown]";
	/*
	 * A jit-object module's path holds its entry's address, which differs
	 * from run to run: its kind, so that its functions are the same keys
	 * in every run (ms-analyze diff) and its unnamed frames read as JIT code.
	 */
	if (cap->modules[m].kind == MS_MODULE_JIT_OBJECT)
		return "[jit-object]";
	base = ms_module_basename(cap, m);
	if (*base)
		return base;
	/* no path hint: the kind is all there is to say */
	switch (cap->modules[m].kind) {
	case MS_MODULE_KERNEL: return "[kernel]";
	case MS_MODULE_VDSO: return "[vdso]";
	case MS_MODULE_ANON: return "[anon]";
	case MS_MODULE_PERF_MAP: return "[perf-map]";
	case MS_MODULE_INTERPRETED: return "[interpreted]";
	case MS_MODULE_FILE: return "[no path]";
	default: return "[unknown]";
	}
}

bool ms_frame_unnamed(const struct ms_capture *cap, const struct ms_cap_frame *fr)
{
	return !fr->n_lines && (!fr->name || !*cap->strings[fr->name]);
}

uint32_t ms_frame_chain_len(const struct ms_cap_frame *fr)
{
	return fr->n_lines ? fr->n_lines : 1;
}

/*
 * The key of one entry of a frame's chain: a function of the debug
 * information (name, file, start line), a symbol name, or, unnamed, an
 * address: the start .eh_frame gives the function, else the frame's own.
 */
struct item {
	uint32_t module;
	uint32_t name;		/* string id; 0 when unnamed */
	uint32_t file;		/* string id */
	uint32_t line;
	uint64_t address;	/* unnamed only */
};

/* The address a frame without a name is known by: its function's start when only an FDE gave that. */
static uint64_t label_address(const struct ms_cap_frame *fr)
{
	return fr->reason == MS_SYM_FDE_ONLY && fr->symbol_start ? fr->symbol_start : fr->address;
}

static void item_of(struct item *it, const struct ms_capture *cap, const struct ms_cap_frame *fr,
		    uint32_t j)
{
	memset(it, 0, sizeof(*it));
	it->module = fr->module;
	if (fr->n_lines) {
		/* j counts from the outermost entry, the last of the chain */
		const struct ms_cap_function *fn =
			&cap->functions[cap->lines[fr->first_line + fr->n_lines - 1 - j].function];

		it->name = fn->name;
		it->file = fn->file;
		it->line = fn->start_line;
		/* a function without a name in the debug information: the symbol's */
		if (!*cap->strings[it->name])
			it->name = fr->name;
		if (it->name && *cap->strings[it->name])
			return;
		it->name = it->file = it->line = 0;
	} else if (fr->name && *cap->strings[fr->name]) {
		it->name = fr->name;
		return;
	}
	it->address = label_address(fr);
}

struct key_ctx {
	const struct ms_capture *cap;
	const struct item *items;
};

/*
 * Whether two entries are one function: the same module and, named, the
 * same name and start line, or, unnamed, the same address. Not the file:
 * a function whose inlined lines come from several files (glibc's
 * __vfprintf_internal, from vfprintf-internal.c and vfprintf-process-arg.c)
 * is one function, as pprof counts it. 0 when they are; else the order.
 */
static int cmp_func(const struct key_ctx *k, const struct item *x, const struct item *y)
{
	int c;

	if (x->module != y->module)
		return x->module < y->module ? -1 : 1;
	if (!x->name != !y->name)
		return x->name ? -1 : 1;
	if (x->name) {
		if ((c = strcmp(k->cap->strings[x->name], k->cap->strings[y->name])))
			return c;
		if (x->line != y->line)
			return x->line < y->line ? -1 : 1;
		/* interpreted code: functions of one name in two files stay apart */
		if (x->module != MS_NONE &&
		    k->cap->modules[x->module].kind == MS_MODULE_INTERPRETED)
			return strcmp(k->cap->strings[x->file], k->cap->strings[y->file]);
		return 0;
	}
	if (x->address != y->address)
		return x->address < y->address ? -1 : 1;
	return 0;
}

/* Total order: by function, then file, so that a function's first entry (the file it shows) is always the same. */
static int cmp_item(const void *a, const void *b, void *data)
{
	const struct key_ctx *k = data;
	const struct item *x = &k->items[*(const uint32_t *)a], *y = &k->items[*(const uint32_t *)b];
	int c = cmp_func(k, x, y);

	if (c || !x->name)
		return c;
	return strcmp(k->cap->strings[x->file], k->cap->strings[y->file]);
}

static int label_of(char *buf, size_t size, const struct ms_capture *cap, uint32_t module,
		    uint64_t address)
{
	/* ms-unwind files an address in no mapping under a module of kind unknown */
	if (module == MS_NONE || cap->modules[module].kind == MS_MODULE_UNKNOWN)
		return snprintf(buf, size, "[no module] 0x%" PRIx64, address);
	return snprintf(buf, size, "%s+0x%" PRIx64, ms_module_label(cap, module), address);
}

int ms_frame_label(char *buf, size_t size, const struct ms_capture *cap,
		   const struct ms_cap_frame *fr)
{
	return label_of(buf, size, cap, fr->module, label_address(fr));
}

bool ms_stack_end_truncated(uint32_t end)
{
	return end != MS_END_OUTERMOST && end != MS_END_KERNEL_ONLY && end != MS_END_FP_CHAIN &&
	       end != MS_END_UNKNOWN;
}

const char *ms_truncated_label(uint32_t end)
{
	switch (end) {
	case MS_END_NO_CFI: return "[truncated: no-cfi]";
	case MS_END_MISSING_REGISTER: return "[truncated: missing-register]";
	case MS_END_STACK_COPY: return "[truncated: stack-copy]";
	case MS_END_CFA_NOT_OUTWARDS: return "[truncated: cfa-not-outwards]";
	case MS_END_NO_MODULE: return "[truncated: no-module]";
	case MS_END_DEPTH: return "[truncated: depth]";
	case MS_END_INTERPRETED_UNKNOWN: return "[truncated: interpreted-unknown]";
	case MS_END_INTERPRETED_UNPLACED: return "[truncated: interpreted-unplaced]";
	case MS_END_INTERPRETED_TRUNCATED: return "[truncated: interpreted-truncated]";
	default: return "[truncated: unknown]";
	}
}

static bool interpreted(const struct ms_capture *cap, const struct ms_func *fn)
{
	return fn->module != MS_NONE && cap->modules[fn->module].kind == MS_MODULE_INTERPRETED;
}

/* "qualname (file:line)": an interpreted function's name says where it is. */
static int interpreted_label(char *buf, size_t size, const struct ms_capture *cap,
			     const struct ms_func *fn)
{
	return snprintf(buf, size, "%s (%s:%" PRIu32 ")", cap->strings[fn->name],
			cap->strings[fn->file], fn->line);
}

static const char *basename_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash && slash[1] ? slash + 1 : path;
}

int ms_funcs_build(struct ms_funcs *f, const struct ms_capture *cap)
{
	struct item *items = NULL;
	uint32_t *order = NULL;
	size_t label_bytes = 0, used = 0;
	uint64_t total = 0;
	uint32_t i, j, n = 0;
	struct key_ctx k;

	memset(f, 0, sizeof(*f));
	if (!cap->n_frames)
		return 0;
	for (i = 0; i < cap->n_frames; i++)
		total += ms_frame_chain_len(&cap->frames[i]);
	if (total >= UINT32_MAX)
		return ms_error("cannot key %" PRIu64 " inline frames (at most 2^32-2)", total);
	f->chain_start = malloc(((size_t)cap->n_frames + 1) * sizeof(*f->chain_start));
	f->chain = malloc(total * sizeof(*f->chain));
	f->frame_func = malloc(cap->n_frames * sizeof(*f->frame_func));
	f->funcs = malloc(total * sizeof(*f->funcs));
	items = malloc(total * sizeof(*items));
	order = malloc(total * sizeof(*order));
	if (!f->chain_start || !f->chain || !f->frame_func || !f->funcs || !items || !order)
		goto oom;
	total = 0;
	for (i = 0; i < cap->n_frames; i++) {
		const struct ms_cap_frame *fr = &cap->frames[i];

		f->chain_start[i] = total;
		for (j = 0; j < ms_frame_chain_len(fr); j++, total++) {
			item_of(&items[total], cap, fr, j);
			order[total] = total;
		}
	}
	f->chain_start[cap->n_frames] = total;
	k.cap = cap;
	k.items = items;
	qsort_r(order, total, sizeof(*order), cmp_item, &k);

	for (i = 0; i < total; i++) {
		const struct item *it = &items[order[i]];
		struct ms_func *fn;

		if (i && !cmp_func(&k, &items[order[i - 1]], it)) {
			f->chain[order[i]] = n - 1;
			continue;
		}
		fn = &f->funcs[n];
		memset(fn, 0, sizeof(*fn));
		fn->module = it->module;
		fn->name = it->name;
		fn->address = it->address;
		fn->file = it->file;
		fn->line = it->line;
		fn->file_name = basename_of(cap->strings[it->file]);
		fn->module_name = ms_module_basename(cap, it->module);
		fn->module_label = ms_module_label(cap, it->module);
		if (!fn->name)
			label_bytes += label_of(NULL, 0, cap, it->module, it->address) + 1;
		else if (interpreted(cap, fn))
			label_bytes += interpreted_label(NULL, 0, cap, fn) + 1;
		f->chain[order[i]] = n++;
	}
	f->n = n;
	/* Where the address is: the innermost entry of the chain. */
	for (i = 0; i < cap->n_frames; i++)
		f->frame_func[i] = f->chain[f->chain_start[i + 1] - 1];

	/* Unnamed labels are made once, into one block; named ones borrow. */
	if (label_bytes && !(f->labels = malloc(label_bytes)))
		goto oom;
	for (i = 0; i < n; i++) {
		struct ms_func *fn = &f->funcs[i];

		if (fn->name && interpreted(cap, fn)) {
			fn->label = cap->strings[fn->name];
			fn->qualified = f->labels + used;
			used += interpreted_label(f->labels + used, label_bytes - used, cap, fn) + 1;
			continue;
		}
		if (fn->name) {
			fn->label = fn->qualified = cap->strings[fn->name];
			continue;
		}
		fn->label = fn->qualified = f->labels + used;
		used += label_of(f->labels + used, label_bytes - used, cap, fn->module,
				 fn->address) + 1;
	}
	free(items);
	free(order);
	return 0;
oom:
	free(items);
	free(order);
	ms_funcs_release(f);
	return ms_error("out of memory keying %" PRIu32 " frames", cap->n_frames);
}

void ms_funcs_release(struct ms_funcs *f)
{
	free(f->funcs);
	free(f->frame_func);
	free(f->chain_start);
	free(f->chain);
	free(f->labels);
	memset(f, 0, sizeof(*f));
}

uint32_t ms_stacks_max_depth(const struct ms_capture *cap)
{
	uint32_t max = 0;

	for (uint32_t i = 0; i < cap->n_stacks; i++)
		if (cap->stacks[i].depth > max)
			max = cap->stacks[i].depth;
	return max;
}

uint32_t ms_stack_nodes(const struct ms_capture *cap, uint32_t stack, uint32_t *path)
{
	uint32_t n, i;

	if (stack == MS_NONE)
		return 0;
	n = cap->stacks[stack].depth;
	/* The loader proved parent < node, so the walk ends; depth bounds it too. */
	for (i = n; i > 0 && stack != MS_NONE; stack = cap->stacks[stack].parent)
		path[--i] = stack;
	if (i) {
		/* depth disagreed with the chain: keep what the chain says */
		memmove(path, path + i, (n - i) * sizeof(*path));
		n -= i;
	}
	return n;
}

uint32_t ms_funcs_max_path(const struct ms_capture *cap, const struct ms_funcs *funcs)
{
	uint32_t chain = 1, depth = ms_stacks_max_depth(cap);

	for (uint32_t f = 0; f < cap->n_frames; f++)
		if (funcs->chain_start[f + 1] - funcs->chain_start[f] > chain)
			chain = funcs->chain_start[f + 1] - funcs->chain_start[f];
	return depth ? depth * chain : 1;
}

uint32_t ms_stack_funcs(const struct ms_capture *cap, const struct ms_funcs *funcs,
			uint32_t stack, uint32_t *nodes, uint32_t *path)
{
	uint32_t n = ms_stack_nodes(cap, stack, nodes), len = 0;

	for (uint32_t k = 0; k < n; k++) {
		uint32_t f = cap->stacks[nodes[k]].frame;

		for (uint32_t c = funcs->chain_start[f]; c < funcs->chain_start[f + 1]; c++)
			path[len++] = funcs->chain[c];
	}
	return len;
}
