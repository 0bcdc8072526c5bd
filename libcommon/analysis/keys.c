/*
 * Function keys: which frames are "the same function" for every view.
 */
#include "analysis/analysis.h"

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

const char *ms_module_label(const struct ms_capture *cap, uint32_t m)
{
	const char *base;

	if (m == MS_NONE || m >= cap->n_modules)
		return "[unknown]";
	base = ms_module_basename(cap, m);
	if (*base)
		return base;
	/* no path hint: the kind is all there is to say */
	switch (cap->modules[m].kind) {
	case MS_MODULE_KERNEL: return "[kernel]";
	case MS_MODULE_VDSO: return "[vdso]";
	case MS_MODULE_ANON: return "[anon]";
	case MS_MODULE_FILE: return "[no path]";
	default: return "[unknown]";
	}
}

/* The frame's name, or NULL when symbolization found none. */
static const char *frame_name(const struct ms_capture *cap, const struct ms_cap_frame *fr)
{
	const char *name = cap->strings[fr->name];

	return fr->name && *name ? name : NULL;
}

/* Total order of function keys: module, named first, name or address. */
static int cmp_key(const void *a, const void *b, void *data)
{
	const struct ms_capture *cap = data;
	const struct ms_cap_frame *fa = &cap->frames[*(const uint32_t *)a];
	const struct ms_cap_frame *fb = &cap->frames[*(const uint32_t *)b];
	const char *na = frame_name(cap, fa), *nb = frame_name(cap, fb);

	if (fa->module != fb->module)
		return fa->module < fb->module ? -1 : 1;
	if (!na != !nb)
		return na ? -1 : 1;
	if (na)
		return strcmp(na, nb);
	if (fa->address != fb->address)
		return fa->address < fb->address ? -1 : 1;
	return 0;
}

static int label_of(char *buf, size_t size, const struct ms_capture *cap,
		    const struct ms_cap_frame *fr)
{
	/* ms-unwind files an address in no mapping under a module of kind unknown */
	if (fr->module == MS_NONE || cap->modules[fr->module].kind == MS_MODULE_UNKNOWN)
		return snprintf(buf, size, "[no module] 0x%" PRIx64, fr->address);
	return snprintf(buf, size, "%s+0x%" PRIx64, ms_module_label(cap, fr->module),
			fr->address);
}

int ms_funcs_build(struct ms_funcs *f, const struct ms_capture *cap)
{
	uint32_t *order = NULL;
	size_t label_bytes = 0, used = 0;
	uint32_t i, n = 0;

	memset(f, 0, sizeof(*f));
	if (!cap->n_frames)
		return 0;
	order = malloc(cap->n_frames * sizeof(*order));
	f->frame_func = malloc(cap->n_frames * sizeof(*f->frame_func));
	f->funcs = malloc(cap->n_frames * sizeof(*f->funcs));
	if (!order || !f->frame_func || !f->funcs)
		goto oom;
	for (i = 0; i < cap->n_frames; i++)
		order[i] = i;
	qsort_r(order, cap->n_frames, sizeof(*order), cmp_key, (void *)cap);

	for (i = 0; i < cap->n_frames; i++) {
		const struct ms_cap_frame *fr = &cap->frames[order[i]];
		struct ms_func *fn;

		if (i && !cmp_key(&order[i - 1], &order[i], (void *)cap)) {
			f->frame_func[order[i]] = n - 1;
			continue;
		}
		fn = &f->funcs[n];
		fn->module = fr->module;
		fn->name = frame_name(cap, fr) ? fr->name : 0;
		fn->address = fn->name ? 0 : fr->address;
		fn->module_name = ms_module_basename(cap, fr->module);
		fn->module_label = ms_module_label(cap, fr->module);
		if (!fn->name)
			label_bytes += label_of(NULL, 0, cap, fr) + 1;
		f->frame_func[order[i]] = n++;
	}
	f->n = n;

	/* Unnamed labels are made once, into one block; named ones borrow. */
	if (label_bytes && !(f->labels = malloc(label_bytes)))
		goto oom;
	for (i = 0; i < n; i++) {
		struct ms_func *fn = &f->funcs[i];
		struct ms_cap_frame fr = { .module = fn->module, .address = fn->address };

		if (fn->name) {
			fn->label = cap->strings[fn->name];
			continue;
		}
		fn->label = f->labels + used;
		used += label_of(f->labels + used, label_bytes - used, cap, &fr) + 1;
	}
	free(order);
	return 0;
oom:
	free(order);
	ms_funcs_release(f);
	return ms_error("out of memory keying %" PRIu32 " frames", cap->n_frames);
}

void ms_funcs_release(struct ms_funcs *f)
{
	free(f->funcs);
	free(f->frame_func);
	free(f->labels);
	memset(f, 0, sizeof(*f));
}
