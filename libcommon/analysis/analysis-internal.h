/* Helpers shared by the analysis views; not part of the layer's API. */
#ifndef MS_ANALYSIS_INTERNAL_H
#define MS_ANALYSIS_INTERNAL_H

#include <stdint.h>

#include "analysis/analysis.h"
#include "util/json.h"

/* Order of two functions by label, then module label, then id. */
int ms_func_cmp_label(const struct ms_funcs *f, uint32_t a, uint32_t b);
/* "file.c:12" (the basename, and the start line when known) for text. */
void ms_func_put_location(FILE *out, const struct ms_func *fn);
/* The keys "file" (the whole path, "" unknown) and "line" (0 unknown). */
void ms_func_json_location(struct ms_json *j, const struct ms_capture *cap,
			   const struct ms_func *fn);
/* Samples ending at each stack node (*out has n_stacks entries, or NULL). */
int ms_stack_samples(uint64_t **out, const struct ms_capture *cap);

#endif
