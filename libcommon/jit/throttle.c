/* When to read a JIT's descriptions again: see throttle.h. */
#include "jit/throttle.h"

bool ms_jit_read_due(const struct ms_jit_throttle *th, uint64_t now_ns, bool mapped_since)
{
	if (!th->empty || mapped_since)
		return true;
	return now_ns >= th->empty_at && now_ns - th->empty_at >= MS_JIT_RETRY_NS;
}

void ms_jit_read_done(struct ms_jit_throttle *th, uint64_t now_ns, bool found_new)
{
	th->empty = !found_new;
	th->empty_at = found_new ? 0 : now_ns;
}
