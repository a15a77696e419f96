/*
 * append_load.h
 *		bench/append's workload: the same generated turns for both sides,
 *		encoded before any timing (append_load.c).
 */
#ifndef MNEMO_BENCH_APPEND_LOAD_H
#define MNEMO_BENCH_APPEND_LOAD_H

#include <stdbool.h>
#include <stdint.h>

#define BATCH_TURNS 50			/* 100 messages */

/*
 * A run's turns, generated and encoded for both sides before any timing:
 * what is timed is the database work, not the generator.
 */
typedef struct Load
{
	int			n;
	char	  **json;			/* mnemo: one append_messages array per turn */
	char	  **user;			/* plain: the rows' content */
	char	  **assistant;
	char	  **tool;			/* NULL where the turn has no tool */
} Load;

/* Batches of BATCH_TURNS turns: 100 messages per call against COPY. */
typedef struct Batches
{
	int			n;
	char	  **json;			/* mnemo: 50 turns in one array */
	char	  **copy;			/* plain: COPY text rows, seqs from 1 */
} Batches;

/* n turns of a session seeded with seed; every third with a tool call
 * and a ~4 KB result when tools is set. */
Load	   *make_load(int n, uint64_t seed, bool tools);
void		free_load(Load *l);
Batches    *make_batches(int nbatches, uint64_t seed);
void		free_batches(Batches *b);

/* The COPY data of one batch with a run's session id in each row
 * (malloc'd). */
char	   *copy_for_session(const char *data, const char *session);

#endif
