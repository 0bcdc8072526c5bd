/*
 * Fuzz targets of the parsers of untrusted bytes: the importers
 * (formats/formats.h), the perf record decoder and the stream reader, the
 * unwinder and its CFI rows cache, the capture reader, the JIT frame
 * prover and its row tables, the BPF sampler's records. Each takes any
 * bytes; the code under test either refuses them with a message or gives
 * a result whose documented invariants the target checks: anything else
 * aborts, which libFuzzer reports as a crash. Each file's head says what
 * its input means.
 *
 * Built two ways: by `make fuzz` with clang -fsanitize=fuzzer (each file
 * then defines LLVMFuzzerTestOneInput), and, with MS_FUZZ_REPLAY, into
 * tests/unit/formats-, stream-, unwind-, capture-, prove-, perfmap-,
 * rows- and bpfrecord-corpus-test, which replay the committed corpus (tests/fuzz/corpus/NAME) in `make check`.
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
int ms_fuzz_prove(const uint8_t *data, size_t size);
int ms_fuzz_perfmap(const uint8_t *data, size_t size);
int ms_fuzz_rows(const uint8_t *data, size_t size);
int ms_fuzz_bpfrecord(const uint8_t *data, size_t size);
/* The checks the importers' targets make on what an import returned. */
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
