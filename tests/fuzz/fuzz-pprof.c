/* Fuzz target: ms_pprof_import() on any bytes (see fuzz.h). */
#include "config.h"

#include "capture/capture.h"
#include "formats/formats.h"
#include "tests/fuzz/fuzz.h"
#include "util/error.h"

int ms_fuzz_pprof(const uint8_t *data, size_t size)
{
	ms_fuzz_check(ms_pprof_import(data, size, "fuzz.pb.gz", "fuzz 1"));
	return 0;
}

MS_FUZZ_TARGET("fuzz-pprof", ms_fuzz_pprof)
