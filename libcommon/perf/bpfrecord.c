/* The BPF sampler's records, checked: see bpfrecord.h. */
#include "perf/bpfrecord.h"

#include <stdio.h>
#include <string.h>

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
	return 0;
}
