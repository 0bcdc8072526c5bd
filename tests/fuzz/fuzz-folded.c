/* Fuzz target: ms_folded_import() on any bytes (see fuzz.h). */
#include "config.h"

#include "capture/capture.h"
#include "formats/formats.h"
#include "tests/fuzz/fuzz.h"
#include "util/error.h"

int ms_fuzz_folded(const uint8_t *data, size_t size)
{
	ms_fuzz_check(ms_folded_import(data, size, "fuzz.folded", "fuzz 1"));
	return 0;
}

MS_FUZZ_TARGET("fuzz-folded", ms_fuzz_folded)
