/*
 * Fuzz targets of the importers (formats/formats.h). Each takes any bytes;
 * an import either fails with a message or gives a capture that must
 * encode and load back through the validating reader with the same
 * samples: anything else aborts, which libFuzzer reports as a crash.
 *
 * Built two ways: by `make fuzz` with clang -fsanitize=fuzzer (each file
 * then defines LLVMFuzzerTestOneInput), and, with MS_FUZZ_REPLAY, into
 * tests/unit/formats-corpus-test, which replays the committed corpus in
 * `make check`.
 */
#ifndef MS_TESTS_FUZZ_H
#define MS_TESTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>

struct ms_capture;

int ms_fuzz_pprof(const uint8_t *data, size_t size);
int ms_fuzz_folded(const uint8_t *data, size_t size);
int ms_fuzz_decode(const uint8_t *data, size_t size);
int ms_fuzz_stream(const uint8_t *data, size_t size);
int ms_fuzz_unwind(const uint8_t *data, size_t size);
int ms_fuzz_cfirows(const uint8_t *data, size_t size);
int ms_fuzz_capture(const uint8_t *data, size_t size);
/* The checks both targets make on what an import returned. */
void ms_fuzz_check(struct ms_capture *cap);

/*
 * libFuzzer's entry points for target fn, named name in messages; refusals
 * print a message each: run with -close_fd_mask=2 to hide them.
 */
#ifndef MS_FUZZ_REPLAY
#define MS_FUZZ_TARGET(name, fn)                                            \
	int LLVMFuzzerInitialize(int *argc, char ***argv);                  \
	int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);       \
	int LLVMFuzzerInitialize(int *argc, char ***argv)                   \
	{                                                                   \
		(void)argc;                                                 \
		(void)argv;                                                 \
		ms_set_progname(name);                                      \
		return 0;                                                   \
	}                                                                   \
	int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)        \
	{                                                                   \
		return fn(data, size);                                      \
	}
#else
#define MS_FUZZ_TARGET(name, fn)
#endif

#endif
