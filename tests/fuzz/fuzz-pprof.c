/* Fuzz target: ms_pprof_import() on any bytes (see fuzz.h). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "capture/capture.h"
#include "formats/formats.h"
#include "tests/fuzz/fuzz.h"
#include "util/error.h"

int ms_fuzz_pprof(const uint8_t *data, size_t size)
{
	ms_fuzz_check(ms_pprof_import(data, size, "fuzz.pb.gz", "fuzz 1"));
	return 0;
}

#ifndef MS_FUZZ_REPLAY
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	/* refusals print a message each: run with -close_fd_mask=2 to hide them */
	ms_set_progname("fuzz-pprof");
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return ms_fuzz_pprof(data, size);
}
#endif
