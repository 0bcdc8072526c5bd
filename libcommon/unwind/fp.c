/*
 * The first unwind method: the user frame-pointer chain the kernel walked
 * at sample time (PERF_SAMPLE_CALLCHAIN). uchain[0] is the user IP, exact;
 * the rest are return addresses. The chain is what the kernel could follow;
 * where it stopped the stack ends with MS_END_FP_CHAIN.
 */
#include "unwind/unwind.h"

static int fp_walk(struct ms_unwinder *u, struct ms_process *proc, const struct ms_sample *s,
		   uint32_t max, struct ms_user_stack *out)
{
	uint32_t i, n = s->n_uchain;

	(void)u;
	(void)proc;
	out->n = 0;
	out->end = MS_END_FP_CHAIN;
	if (!n) {
		/* No chain sampled but a user IP: that one frame is known. */
		if (s->cpumode == MS_CPUMODE_USER && s->ip && max) {
			out->frames[0] = (struct ms_uframe){ .pc = s->ip, .flags = 0 };
			out->n = 1;
		}
		return 0;
	}
	if (n > max) {
		n = max;
		out->end = MS_END_DEPTH;
	}
	for (i = 0; i < n; i++)
		out->frames[i] = (struct ms_uframe){
			.pc = s->uchain[i],
			.flags = i ? MS_FRAME_RETURN : 0,
		};
	out->n = n;
	return 0;
}

const struct ms_unwind_method ms_unwind_method_fp = {
	.name = "fp",
	.walk = fp_walk,
};
