/* The BPF sampler's records, checked: see bpfrecord.h. */
#include "perf/bpfrecord.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* Statuses of a walk that found no thread state: it read no frame. */
static bool no_thread(uint32_t status)
{
	return status == MS_BPF_PY_NO_THREAD || status == MS_BPF_PY_AMBIGUOUS ||
	       status == MS_BPF_PY_SEARCH_BOUND || status == MS_BPF_PY_NO_NAMESPACE;
}

/* The payload of a PYTHON record: see bpfrecord.h. Fills out->py and py_frames. */
static int check_python(struct ms_bpf_record *out, char *detail, size_t detail_size)
{
	struct ms_bpf_py_head *py = &out->py;
	const char *me = "python walker record";
	uint32_t len = out->payload_len, want;

	if (len < sizeof(*py)) {
		snprintf(detail, detail_size, "%s of thread %u: a payload of %u bytes cannot hold "
			 "its %zu-byte head", me, out->h.tid, len, sizeof(*py));
		return -1;
	}
	memcpy(py, out->payload, sizeof(*py));
	if (py->n_frames > MS_BPF_PY_FRAMES_MAX) {
		snprintf(detail, detail_size, "%s of thread %u with %u frames (at most %u)", me,
			 out->h.tid, py->n_frames, MS_BPF_PY_FRAMES_MAX);
		return -1;
	}
	want = (uint32_t)sizeof(*py) + py->n_frames * (uint32_t)sizeof(struct ms_bpf_py_frame);
	if (len != want) {
		snprintf(detail, detail_size, "%s of thread %u: a payload of %u bytes for %u "
			 "frames, which take %u", me, out->h.tid, len, py->n_frames, want);
		return -1;
	}
	if (py->status >= MS_BPF_PY_STATUS_COUNT || py->gil >= MS_BPF_PY_GIL_COUNT) {
		snprintf(detail, detail_size, "%s of thread %u with status %u and gil %u (known: "
			 "below %u and %u)", me, out->h.tid, py->status, py->gil,
			 MS_BPF_PY_STATUS_COUNT, MS_BPF_PY_GIL_COUNT);
		return -1;
	}
	if (no_thread(py->status) && py->n_frames) {
		snprintf(detail, detail_size, "%s of thread %u: status %u found no thread state, "
			 "yet %u frames follow", me, out->h.tid, py->status, py->n_frames);
		return -1;
	}
	out->py_frames = out->payload + sizeof(*py);
	for (uint32_t i = 0; i < py->n_frames; i++) {
		struct ms_bpf_py_frame f;

		ms_bpf_py_frame_get(out, i, &f);
		if (f.flags & ~(uint32_t)MS_BPF_PY_ENTRY) {
			snprintf(detail, detail_size, "%s of thread %u: frame %u has flags 0x%x "
				 "(known: 0x%x)", me, out->h.tid, i, f.flags, MS_BPF_PY_ENTRY);
			return -1;
		}
	}
	return 0;
}

int ms_bpf_record_check(const uint8_t *raw, size_t len, struct ms_bpf_record *out,
			const char **code, char *detail, size_t detail_size)
{
	struct ms_bpf_header *h = &out->h;

	if (len < sizeof(*h)) {
		*code = "bpf-record-short";
		snprintf(detail, detail_size, "bpf record of %zu bytes cannot hold its %zu-byte header",
			 len, sizeof(*h));
		return -1;
	}
	memcpy(h, raw, sizeof(*h));
	if (h->magic != MS_BPF_MAGIC) {
		*code = "bpf-record-magic";
		snprintf(detail, detail_size, "bpf record with magic 0x%08x, not 0x%08x",
			 h->magic, MS_BPF_MAGIC);
		return -1;
	}
	if (h->version != MS_BPF_VERSION) {
		*code = "bpf-record-version";
		snprintf(detail, detail_size, "bpf record of version %u: this reader knows %u "
			 "(was the recording made by another ms-collect?)", h->version,
			 MS_BPF_VERSION);
		return -1;
	}
	if (h->size < sizeof(*h) || h->size > len || h->size > MS_BPF_RECORD_MAX ||
	    len - h->size >= 8) {
		*code = "bpf-record-size";
		snprintf(detail, detail_size, "bpf record of size %u in %zu bytes of raw data "
			 "(at least %zu, at most %u, and the raw data at most 7 bytes more)",
			 h->size, len, sizeof(*h), MS_BPF_RECORD_MAX);
		return -1;
	}
	if (h->kind != MS_BPF_KIND_SAMPLE && h->kind != MS_BPF_KIND_PYTHON) {
		*code = "bpf-record-kind";
		snprintf(detail, detail_size, "bpf record of unknown kind %u", h->kind);
		return -1;
	}
	out->payload = raw + sizeof(*h);
	out->payload_len = h->size - (uint32_t)sizeof(*h);
	memset(&out->py, 0, sizeof(out->py));
	out->py_frames = NULL;
	if (h->kind == MS_BPF_KIND_PYTHON && check_python(out, detail, detail_size) < 0) {
		*code = "py-record-malformed";
		return -1;
	}
	return 0;
}

void ms_bpf_py_frame_get(const struct ms_bpf_record *r, uint32_t i, struct ms_bpf_py_frame *f)
{
	memcpy(f, r->py_frames + (size_t)i * sizeof(*f), sizeof(*f));
}
