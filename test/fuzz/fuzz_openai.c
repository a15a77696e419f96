/*
 * fuzz_openai.c
 *		libFuzzer target: OpenAI Chat Completions streams (SSE parser and
 *		decoder).  An input is a response body; it must decode to the same
 *		deltas whole, byte by byte and in chunks, keep every invariant of
 *		the delta stream (fuzz_common.h), and never crash or leak.
 *
 *	bash test/fuzz/run.sh     builds and runs it on corpus/fuzz_openai/
 */
#include "fuzz_common.h"

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_stream(MN_PROVIDER_OPENAI, data, size);
}
