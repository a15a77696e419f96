/*
 * bench/context.h
 *		What the parts of bench/context share: the shape of the load, the
 *		view a session is compacted to, and the results of each timing.
 *		bench/context.c says what is measured and how.
 */
#ifndef BENCH_CONTEXT_H
#define BENCH_CONTEXT_H

#include <libpq-fe.h>

#define MAX_SIZES 8
#define BATCH 1000				/* messages per append_messages call */
#define VIEW 200				/* context items kept after compaction */
#define LEAF 200				/* messages per leaf summary, at most */
#define MAX_SUMMARIES 10		/* condense when more summaries are in view */
#define PROTECT 1000			/* prune_tool_outputs protect_tokens */
#define MINIMUM 500			/* prune_tool_outputs minimum_tokens */
#define TAIL 200				/* messages appended, uncompacted, before prune */
#define BUDGET "100000000"		/* keeps everything in the view */

/* the messages' texts (context_load.c) */
extern const char user_text[];
extern const char assistant_text[];
extern const char tool_output[];
extern const char summary_text[];

/* the command line's (context.c) */
extern int	calls;
extern int	warmup;
extern char run_tag[32];

typedef struct Item
{
	char		id[64];
	int			is_summary;
	long long	seq;
} Item;

typedef struct View
{
	Item	   *items;
	int			n;
} View;

typedef struct SwapResult
{
	long		size;
	int			held;			/* another snapshot was open across the swap */
	double		swap_ms;		/* the commit_summary itself */
	double		first_ms;		/* the first build_context after it */
	double		median_ms;		/* the median of calls after it */
	int			rows;
} SwapResult;

typedef struct SizeResult
{
	long		size;
	char		session[64];
	int			view_items;
	int			view_summaries;
	long		leaves;
	long		condensations;
	int			rows_build;
	int			rows_base;
	double		build_ms;
	double		base_ms;
	double		three_ms;		/* a turn's reads as three statements */
	double		turn_ms;		/* the same as one turn_context */
	double		prune_ms;
	int			pruned;
	double		commit_ms;
	double		load_s;
} SizeResult;

/* context_load.c: loading and compacting a session */
extern PGresult *run_prepared(PGconn *conn, const char *name, int nparams,
							  const char *const *params);
extern void read_view(PGconn *conn, const char *session, View *view);
extern char *id_array(const View *view, int from, int n);
extern void create_session(PGconn *conn, const char *session);
extern void append_batch(PGconn *conn, const char *session, long first, int n);
extern double summarise(PGconn *conn, const char *session, const char *sid, const View *view,
						int from, int n, int condensed);
extern void load(PGconn *conn, SizeResult *r);

/* context_measure.c: the timings of one loaded session */
extern void measure(PGconn *conn, SizeResult *r);

/* context_swap.c: build_context right after a swap */
extern void swap_case(PGconn *conn, SwapResult *r);
extern void print_swaps(const SwapResult *s, int n);

#endif							/* BENCH_CONTEXT_H */
