/*
 * Faulting memory in ahead of its use: a read-only file mapping from a
 * thread (ms_prefault_start()), a fresh buffer in one call (ms_populate()).
 *
 * A stage reading a saved stream of 100 MB or more through a mapping paid
 * either a fault per 64 KiB as it reached each part, or MAP_POPULATE's one
 * long call before its first record. ms_prefault_start() populates the
 * mapping from a thread of its own instead (MADV_POPULATE_READ), so that
 * the stage starts at once and the faults mostly happen off its path; it
 * populates one page where the kernel maps many for one fault (see
 * prefault.c), which costs less CPU time than the reader faulting them.
 *
 * Measured for issue 14 (on and off alternated in one run): without the
 * thread, bench-smoke part 20's ms-decode alone ran 1.12-1.29x slower on a
 * stream cached in small folios (copied in 4 KiB writes, or the same
 * stream a few minutes after it was written); without the PMD probe, the
 * thread made it 1.12-1.20x slower on a stream just written. Without
 * ms_populate(), parts 10 and 20's pipelines ran 1.04-1.07x slower.
 */
#ifndef MS_UTIL_PREFAULT_H
#define MS_UTIL_PREFAULT_H

#include <stddef.h>

struct ms_prefault;

/*
 * Populate [p, p + len) in a thread. Best effort: NULL when no thread could
 * start (or MADV_POPULATE_READ, Linux 5.14, is unknown), when len is under
 * MS_PREFAULT_MIN, or when the mapping maps by whole PMDs where probed (a
 * file cached in 2 MiB folios, as a stream just written is: a fault per
 * 2 MiB costs less than the thread), and the pages then fault as read.
 */
#define MS_PREFAULT_MIN (16u << 20)
struct ms_prefault *ms_prefault_start(const void *p, size_t len);
/* Wait for the thread (before the mapping goes away) and free pf; NULL is a no-op. */
void ms_prefault_wait(struct ms_prefault *pf);

/*
 * Give [p, p + len) of fresh memory (a buffer that will be written
 * whole) its pages now, in one call (MADV_POPULATE_WRITE, Linux 5.14),
 * rather than one fault per page as it is first written: a fault costs
 * 10 to 15 times as much as populating a page where page faults trap to
 * a hypervisor (measured 10.7 against 0.7 us). Only the whole pages
 * inside the range; best effort, silent where unsupported.
 */
void ms_populate(void *p, size_t len);

/*
 * Zeroed memory on pages of its own (an anonymous mapping), for a large
 * table mostly left untouched: a page costs only when first used. calloc
 * of a block under malloc's mmap threshold clears it whole instead:
 * ms-unwind's 520 KB PC cache cost 127 page touches (about 0.8 ms here)
 * where a run uses a few pages of it. NULL when out of memory; free with
 * ms_pages_free() and the same length.
 */
void *ms_pages_alloc(size_t len);
void ms_pages_free(void *p, size_t len);

#endif
