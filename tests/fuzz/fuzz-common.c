/* What every fuzz target checks of an imported capture; see fuzz.h. */
#include "config.h"

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

	if (!cap)
		return;
	if (ms_capture_encode(cap, &buf, &len) < 0)
		abort();
	back = ms_capture_load_buffer(buf, len, "fuzz");
	if (!back || back->n_samples != cap->n_samples || back->n_frames != cap->n_frames)
		abort();
	/* and every exporter takes it */
	for (enum ms_format f = MS_FORMAT_PPROF; f <= MS_FORMAT_SPEEDSCOPE; f++) {
		FILE *out = fopen("/dev/null", "w");

		if (!out || ms_export(out, back, f, NULL) < 0)
			abort();
		fclose(out);
	}
	ms_capture_free(back);
	ms_capture_free(cap);
	free(buf);
}
