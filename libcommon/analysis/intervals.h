/*
 * Off-CPU intervals as the views read them (capture.h: ms_cap_interval,
 * ms_cap_evidence): the cause an interval's evidence gives, what its
 * missing end means, and the part of it the capture knows. Only a
 * complete interval has a duration; an incomplete one is never closed at
 * a time the capture does not hold, so views count it apart and state
 * at most the lower bound its known part gives.
 */
#ifndef MS_ANALYSIS_INTERVALS_H
#define MS_ANALYSIS_INTERVALS_H

#include <stdbool.h>
#include <stdint.h>

#include "capture/capture.h"

/* The cause iv's evidence row gives; MS_CAUSE_UNKNOWN when it names none. */
uint32_t ms_interval_cause(const struct ms_capture *cap, const struct ms_cap_interval *iv);

/*
 * What a missing reason means for text ("off CPU when the recording
 * began"); JSON names it with ms_interval_missing_name() (capture.h).
 */
const char *ms_interval_missing_words(uint32_t missing);

/* Complete interval iv's time inside [lo, hi) in ns; 0 for an incomplete one. */
uint64_t ms_interval_clipped(const struct ms_cap_interval *iv, uint64_t lo, uint64_t hi);

/*
 * The time [*from, *to) the capture knows iv's thread was off CPU: a
 * complete interval's whole; began-inside, from the recording's start to
 * its end; ended-inside, from its start to the recording's end (when the
 * capture knows them, else nothing). A lost end leaves only the known
 * end as a point (*from == *to): records were lost, so how long it
 * lasted is not known. *to - *from is the lower bound of its duration.
 */
void ms_interval_known(const struct ms_capture *cap, const struct ms_cap_interval *iv,
		       uint64_t *from, uint64_t *to);

/* The time off CPU that the capture's complete intervals hold, saturating. */
uint64_t ms_intervals_complete_ns(const struct ms_capture *cap);

#endif
