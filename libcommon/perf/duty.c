/* The sampling duty, kept on account: see perf/duty.h. */
#include "perf/duty.h"

void ms_duty_init(struct ms_duty_slicer *d, uint64_t slice_ns, uint64_t now_ns)
{
	*d = (struct ms_duty_slicer){
		.duty_ppm = MS_DUTY_FULL, .slice_ns = slice_ns ? slice_ns : 1,
		.since_ns = now_ns, .changed_ns = now_ns, .on = true,
	};
}

/* On-time owed at now (negative: ahead), in ns. */
static int64_t owed(const struct ms_duty_slicer *d, uint64_t now_ns)
{
	uint64_t elapsed = now_ns > d->since_ns ? now_ns - d->since_ns : 0;
	uint64_t on = d->on_ns + (d->on && now_ns > d->changed_ns ? now_ns - d->changed_ns : 0);
	/* elapsed * duty / FULL, without overflow for any recording under 10^13 s */
	uint64_t due = elapsed / MS_DUTY_FULL * d->duty_ppm +
		       elapsed % MS_DUTY_FULL * d->duty_ppm / MS_DUTY_FULL;

	return (int64_t)due - (int64_t)on + d->carried_ns;
}

void ms_duty_set(struct ms_duty_slicer *d, uint32_t duty_ppm, uint64_t now_ns)
{
	int64_t err = owed(d, now_ns);
	uint32_t old = d->duty_ppm;

	if (!duty_ppm)
		duty_ppm = 1;
	d->duty_ppm = duty_ppm > MS_DUTY_FULL ? MS_DUTY_FULL : duty_ppm;
	/* what is owed, as time stood for, owed again at the new duty (see duty.h) */
	d->carried_ns = old >= MS_DUTY_FULL ? 0 : err / (int64_t)old * (int64_t)d->duty_ppm +
			err % (int64_t)old * (int64_t)d->duty_ppm / (int64_t)old;
	d->since_ns = d->changed_ns = now_ns;
	d->on_ns = 0;
}

/* While off, the time until quantum is owed: the debt grows at duty a nanosecond. */
static uint64_t until_owed(const struct ms_duty_slicer *d, int64_t err, uint64_t quantum)
{
	return ((uint64_t)((int64_t)quantum - err) * MS_DUTY_FULL + d->duty_ppm - 1) / d->duty_ppm;
}

/* While on, the time until nothing is owed: the debt shrinks at 1 - duty a nanosecond. */
static uint64_t until_paid(const struct ms_duty_slicer *d, int64_t err)
{
	return (uint64_t)err * MS_DUTY_FULL / (MS_DUTY_FULL - d->duty_ppm) + 1;
}

bool ms_duty_on(const struct ms_duty_slicer *d, uint64_t now_ns, uint64_t *next_ns)
{
	uint64_t quantum = d->slice_ns / 1000 * d->duty_ppm / 1000;
	int64_t err;
	bool on;

	if (quantum < MS_DUTY_MIN_ON_NS)
		quantum = MS_DUTY_MIN_ON_NS;

	if (d->duty_ppm >= MS_DUTY_FULL) {
		*next_ns = UINT64_MAX;
		return true;
	}
	if (!quantum)
		quantum = 1;
	err = owed(d, now_ns);
	/* On while anything is owed; off until a quantum is. */
	on = d->on ? err > 0 : err >= (int64_t)quantum;
	*next_ns = now_ns + (on ? until_paid(d, err) : until_owed(d, err, quantum));
	return on;
}

void ms_duty_switched(struct ms_duty_slicer *d, bool on, uint64_t now_ns)
{
	if (on == d->on)
		return;
	if (d->on && now_ns > d->changed_ns)
		d->on_ns += now_ns - d->changed_ns;
	d->on = on;
	d->changed_ns = now_ns > d->since_ns ? now_ns : d->since_ns;
}

/* Of this duty's own time: what it carried over does not count. */
uint32_t ms_duty_kept(const struct ms_duty_slicer *d, uint64_t now_ns)
{
	uint64_t elapsed = now_ns > d->since_ns ? now_ns - d->since_ns : 0;
	uint64_t on = d->on_ns + (d->on && now_ns > d->changed_ns ? now_ns - d->changed_ns : 0);

	if (!elapsed)
		return d->duty_ppm;
	return (uint32_t)(on / elapsed * MS_DUTY_FULL + on % elapsed * MS_DUTY_FULL / elapsed);
}
