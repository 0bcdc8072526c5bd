/* What every fuzz target checks of an imported capture; see fuzz.h. */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "capture/capture.h"
#include "formats/formats.h"
#include "tests/fuzz/fuzz.h"

void ms_fuzz_check(struct ms_capture *cap)
{
	unsigned char *buf;
	size_t len;
	struct ms_capture *back;
	bool pprof_fits;

	if (!cap)
		return;
	if (ms_capture_encode(cap, &buf, &len) < 0)
		abort();
	back = ms_capture_load_buffer(buf, len, "fuzz");
	if (!back || back->n_samples != cap->n_samples || back->n_frames != cap->n_frames ||
	    ms_capture_sample_count(back) != ms_capture_sample_count(cap))
		abort();
	/* and every exporter takes it; pprof (int64 values) up to what it can count */
	pprof_fits = ms_capture_sample_count(back) <= INT64_MAX;
	for (enum ms_format f = MS_FORMAT_PPROF; f <= MS_FORMAT_SPEEDSCOPE; f++) {
		FILE *out = fopen("/dev/null", "w");

		if (!out || (ms_export(out, back, f, NULL) < 0 && (f != MS_FORMAT_PPROF || pprof_fits)))
			abort();
		fclose(out);
	}
	ms_capture_free(back);
	ms_capture_free(cap);
	free(buf);
}
