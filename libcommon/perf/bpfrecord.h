/*
 * The records of ms-collect's BPF sampler program (bpf/sampler.h), checked
 * before any field is used: they come from a stream, so from anywhere.
 *
 * A record is the RAW data of a sample of a BPF output event. It is good
 * when its header fits, its magic is MS_BPF_MAGIC, its version is one this
 * reader knows, its size is at least the header, at most the RAW data and
 * MS_BPF_RECORD_MAX, and leaves under 8 bytes of the RAW data (the
 * kernel's padding), and its kind is known.
 *
 * A record of kind MS_BPF_KIND_PYTHON is good when, besides, its payload
 * is a struct ms_bpf_py_head and exactly n_frames struct ms_bpf_py_frame,
 * n_frames at most MS_BPF_PY_FRAMES_MAX, its status and gil known values,
 * a status that found no thread (NO_THREAD, AMBIGUOUS, SEARCH_BOUND,
 * NO_NAMESPACE) with no frames, and no frame flag this reader does not
 * know; anything else is "py-record-malformed". A record of kind
 * MS_BPF_KIND_SAMPLE carries nothing more to check.
 *
 * Pure: no allocation, nothing printed.
 */
#ifndef MS_PERF_BPFRECORD_H
#define MS_PERF_BPFRECORD_H

#include <stddef.h>
#include <stdint.h>

#include "bpf/sampler.h"

struct ms_bpf_record {
	struct ms_bpf_header h;		/* copied: the raw bytes may be unaligned */
	const uint8_t *payload;		/* borrows from the raw bytes */
	uint32_t payload_len;
	/* kind PYTHON: its head, copied, and its py.n_frames frames (unaligned) */
	struct ms_bpf_py_head py;
	const uint8_t *py_frames;
};

/*
 * Check the len bytes of RAW data at raw and fill out. Returns 0, or -1
 * with *code a stable problem code ("bpf-record-magic") and detail (of
 * detail_size bytes) naming what failed.
 */
int ms_bpf_record_check(const uint8_t *raw, size_t len, struct ms_bpf_record *out,
			const char **code, char *detail, size_t detail_size);

/* Frame i (below r->py.n_frames) of a checked PYTHON record, copied out. */
void ms_bpf_py_frame_get(const struct ms_bpf_record *r, uint32_t i, struct ms_bpf_py_frame *f);

#endif
