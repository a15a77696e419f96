/*
 * fork.c
 *		mnemo.fork_session(): a new session that continues another's line
 *		from a point, without copying its history.
 *
 * "at" names the point on the source's live line: a checkpoint label (the
 * source's own, or one its ancestors had within what it inherited), a seq
 * written as an integer ("0" forks nothing of it), or "run:<run id>" for a
 * completed run of the source.  The child inherits the source's line up to
 * that point as references (mnemo.lineage: ranges of seqs, each of the
 * session that holds those rows, read in place by lineage.c) and gets the
 * source's context view as of that point as rows of its own (rebuild.c):
 * the cost is in the size of the view, not in the length of the history.
 * Its own messages take seqs from fork_seq + 1.  It copies the source's
 * model, provider, agent, title, metadata, system prompt and state, its
 * parent_id is the source, and it and its rows are the source's tenant's
 * (new_id is an id of that tenant: MN004 only if that tenant has it; the
 * ancestors it refers to are all of that tenant).
 *
 * A fork after a run takes exactly what snapshot(source, run) returns: the
 * messages without a run and those of runs completed at or before it; the
 * messages of runs in flight or completed later, even interleaved, are
 * left out (the inheritance then has gaps), and so are the summaries that
 * cover any of them (the view expands them).  Its fork point is the
 * source's end.  It looks at the source's own messages only: the runs are
 * the source's, and what the source inherited it inherits whole.
 *
 * The source's session lock (the one every append takes) orders the fork with
 * the source's appends: the fork sees each append entirely or not at all,
 * and a later append is past what it inherits.  The source counts its
 * forks (sessions.forks): purge_session refuses a session that forks still
 * read from.
 *
 * Errors, each before anything is written (and the function is one
 * statement: a failure leaves nothing): MN001 for an unknown source, MN012
 * for an inactive one, MN004 for a new_id the source's tenant has, MN011 for an unknown
 * checkpoint, MN010 for a run that is not completed, 22023 for a seq past
 * the end or not on the live line (discarded by a resume).
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "utils/builtins.h"

#include "mnemo.h"
#include "tenancy/tenancy.h"
#include "reads/reads.h"
#include "lifecycle/lifecycle.h"

static SPIPlanPtr checkpoint_plan;
static SPIPlanPtr source_plan;
static SPIPlanPtr insert_plan;
static SPIPlanPtr lineage_plan;
static SPIPlanPtr count_plan;
static SPIPlanPtr excluded_plan;
static SPIPlanPtr excluded_summaries_plan;
static SPIPlanPtr result_plan;

/*
 * The seq of checkpoint label on the line: the session's own checkpoint, or
 * one of an ancestor's within what the line inherited from it (an ancestor
 * is of the line's tenant).  MN011 if there is none.
 */
int64
MnemoFindCheckpoint(MnemoLine *line, const char *label)
{
	int			i;

	MnemoPrepare(&checkpoint_plan,
				 "SELECT seq FROM mnemo.checkpoints "
				 "WHERE session_id = $1 AND tenant = $3 AND label = $2",
				 3, (Oid[]) {TEXTOID, TEXTOID, TEXTOID});
	for (i = -1; i < line->ninherited; i++)
	{
		const char *session = i < 0 ? line->session_id : line->segs[i].owner;
		int64		seq;
		int			j;

		if (i > 0 && strcmp(session, line->segs[i - 1].owner) == 0)
			continue;
		if (MnemoExecute(checkpoint_plan,
						 (Datum[]) {CStringGetTextDatum(session), CStringGetTextDatum(label),
						 CStringGetTextDatum(line->tenant)},
						 NULL, false, 1) != 1)
			continue;
		seq = MnemoGetInt64(0, 1, NULL);
		if (i < 0)
			return seq;
		/* within the inheritance from that ancestor */
		for (j = i; j < line->ninherited && strcmp(line->segs[j].owner, session) == 0; j++)
			if (seq <= line->segs[j].to)
				return seq;
	}
	ereport(ERROR,
			(errcode(ERRCODE_MNEMO_CHECKPOINT_NOT_FOUND),
			 errmsg("checkpoint \"%s\" does not exist in session \"%s\"", label, line->session_id)));
	return 0;					/* keep compiler quiet */
}

/* The line up to seq upto, without the seqs in excluded (ascending). */
void
MnemoClipLine(MnemoLine *line, int64 upto, int64 *excluded, int nexcluded, MnemoLine *out)
{
	int			i;
	int			x = 0;

	*out = *line;
	out->segs = palloc(sizeof(MnemoSegment) * (line->nsegs + nexcluded + 1));
	out->nsegs = 0;
	out->ninherited = 0;
	for (i = 0; i < line->nsegs; i++)
	{
		int64		from = line->segs[i].from;
		int64		to = Min(line->segs[i].to, upto);

		while (from <= to)
		{
			int64		end = to;

			while (x < nexcluded && excluded[x] < from)
				x++;
			if (x < nexcluded && excluded[x] <= to)
				end = excluded[x] - 1;
			if (end >= from)
			{
				out->segs[out->nsegs].owner = line->segs[i].owner;
				out->segs[out->nsegs].from = from;
				out->segs[out->nsegs].to = end;
				out->nsegs++;
				if (i < line->ninherited)
					out->ninherited = out->nsegs;
			}
			from = end + 2;		/* past the excluded seq */
			if (end == to)
				break;
		}
	}
}

/*
 * For a fork after run_id: the source's own seqs not in snapshot(source,
 * run_id) -- messages of runs in flight or completed after it, and the
 * summaries that cover any of them -- ascending, into *excluded.  MN010 if
 * the run is not completed.
 */
static int
ExcludedByRun(MnemoLine *src, const char *run_id, int64 **excluded)
{
	int64		cutoff;
	bool		claimed = MnemoFindRun(src->session_id, src->tenant, run_id, true, &cutoff);
	Datum	   *raw;
	int64	   *out;
	uint64		nraw;
	uint64		nsum;
	uint64		i;
	int			n = 0;
	Datum		values[4];

	if (cutoff == 0)
		ereport(ERROR,
				(errcode(ERRCODE_MNEMO_RUN_NOT_COMPLETED),
				 errmsg("run \"%s\" of session \"%s\" is not completed", run_id, src->session_id),
				 claimed ? errdetail("It is still in flight; a fork after a run needs a completed run.")
				 : errdetail("It was never claimed; a fork after a run needs a completed run.")));
	values[0] = CStringGetTextDatum(src->session_id);
	values[1] = Int64GetDatum(cutoff);
	values[2] = Int64GetDatum(src->is_fork ? src->fork_seq : 0);
	values[3] = CStringGetTextDatum(src->tenant);
	MnemoPrepare(&excluded_plan,
				 "SELECT m.seq FROM mnemo.messages m "
				 "WHERE m.session_id = $1 AND m.tenant = $4 AND m.seq > $3 AND NOT m.is_summary "
				 "AND m.run_id IS NOT NULL AND NOT EXISTS (SELECT FROM mnemo.runs r "
				 "WHERE r.session_id = $1 AND r.tenant = $4 AND r.run_id = m.run_id "
				 "AND r.completion_seq <= $2) "
				 "ORDER BY m.seq",
				 4, (Oid[]) {TEXTOID, INT8OID, INT8OID, TEXTOID});
	nraw = MnemoExecute(excluded_plan, values, NULL, false, 0);
	raw = palloc(sizeof(Datum) * Max(nraw, 1));
	for (i = 0; i < nraw; i++)
		raw[i] = Int64GetDatum(MnemoGetInt64(i, 1, NULL));

	/* the summaries over any of them: those seqs and the raw ones, merged */
	MnemoPrepare(&excluded_summaries_plan,
				 "SELECT m.seq FROM mnemo.messages m, "
				 "LATERAL (SELECT n.seq_start, n.seq_end FROM mnemo.summary_nodes n "
				 "         WHERE n.session_id = $1 AND n.tenant = $4 AND n.id = m.id OFFSET 0) n "
				 "WHERE m.session_id = $1 AND m.tenant = $4 AND m.is_summary AND m.seq > $3 "
				 "AND EXISTS (SELECT FROM unnest($2::bigint[]) x(seq) "
				 "            WHERE x.seq BETWEEN n.seq_start AND n.seq_end) "
				 "UNION ALL SELECT x.seq FROM unnest($2::bigint[]) x(seq) ORDER BY 1",
				 4, (Oid[]) {TEXTOID, INT8ARRAYOID, INT8OID, TEXTOID});
	nsum = MnemoExecute(excluded_summaries_plan,
						(Datum[]) {values[0],
						PointerGetDatum(construct_array(raw, nraw, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE)),
						values[2], values[3]},
						NULL, false, 0);
	out = palloc(sizeof(int64) * Max(nsum, 1));
	for (i = 0; i < nsum; i++)
		out[n++] = MnemoGetInt64(i, 1, NULL);
	*excluded = out;
	return n;
}

/*
 * The fork point named by "at" on the source's line (see the header
 * comment); *excluded and *nexcluded the seqs a fork after a run leaves out.
 */
static int64
ForkPoint(MnemoLine *src, const char *at, char **run_id, int64 **excluded, int *nexcluded)
{
	const char *p;
	int64		seq;

	*run_id = NULL;
	*excluded = NULL;
	*nexcluded = 0;
	if (strncmp(at, "run:", 4) == 0)
	{
		if (at[4] == '\0')
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("fork point \"run:\" names no run")));
		*run_id = pstrdup(at + 4);
		*nexcluded = ExcludedByRun(src, *run_id, excluded);
		return src->last_seq;
	}
	for (p = at; *p >= '0' && *p <= '9'; p++)
		;
	if (p == at || *p != '\0')
	{
		seq = MnemoFindCheckpoint(src, at);
		if (seq > 0 && MnemoLineSegment(src, seq) == NULL && !(src->is_fork && seq == src->fork_seq))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("checkpoint \"%s\" of session \"%s\" is in a discarded suffix", at,
							src->session_id),
					 errdetail("A resume took seq " INT64_FORMAT " off the live line.", seq)));
		return seq;
	}
	errno = 0;
	seq = strtoll(at, NULL, 10);
	if (errno == ERANGE)
		seq = PG_INT64_MAX;		/* past any end */
	if (seq > src->last_seq)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("fork point %s is past the end of session \"%s\" (seq " INT64_FORMAT ")",
						at, src->session_id, src->last_seq)));
	if (seq > 0 && MnemoLineSegment(src, seq) == NULL && !(src->is_fork && seq == src->fork_seq))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("seq " INT64_FORMAT " of session \"%s\" is not on its live line", seq,
						src->session_id),
				 errdetail("A resume discarded it, or a fork after a run left it out.")));
	return seq;
}

PG_FUNCTION_INFO_V1(mnemo_fork_session);
Datum
mnemo_fork_session(PG_FUNCTION_ARGS)
{
	MemoryContext callcxt = CurrentMemoryContext;
	char	   *source_id = MnemoRequireTextArg(fcinfo, 0, "source_id");
	char	   *at = MnemoRequireTextArg(fcinfo, 1, "at");
	char	   *new_id = MnemoTextArgOrNull(fcinfo, 2);
	MnemoSessionLock lock;
	MnemoLine	src;
	MnemoLine	keep;
	MnemoViewItem *items;
	char	   *run_id;
	int64	   *excluded;
	int			nexcluded;
	int64		fork_seq;
	int			nitems;
	Datum	   *owners;
	Datum	   *froms;
	Datum	   *tos;
	Datum		values[14];
	char		nulls[14];
	Datum		result;
	MnemoCall	call;
	int			i;

	if (new_id == NULL)
		new_id = MnemoNewId("sess");
	MnemoCheckId(new_id, "new_id");
	MnemoConnect(&call);
	MnemoLockSession(source_id, 0, true, &lock);
	MnemoReadLine(source_id, lock.last_seq, true, true, &src);
	fork_seq = ForkPoint(&src, at, &run_id, &excluded, &nexcluded);
	MnemoClipLine(&src, fork_seq, excluded, nexcluded, &keep);
	items = MnemoViewAsOf(&src, &keep, &nitems);

	/* the child's row, with what it takes of the source's */
	MnemoPrepare(&source_plan,
				 "SELECT model_id, provider_id, agent, title, metadata, system_prompt, state "
				 "FROM mnemo.sessions WHERE id = $1 AND tenant = $2",
				 2, (Oid[]) {TEXTOID, TEXTOID});
	MnemoExecute(source_plan,
				 (Datum[]) {CStringGetTextDatum(source_id), CStringGetTextDatum(lock.tenant)},
				 NULL, false, 1);
	memset(nulls, ' ', sizeof(nulls));
	values[0] = CStringGetTextDatum(new_id);
	values[1] = CStringGetTextDatum(source_id);
	for (i = 0; i < 7; i++)
	{
		bool		isnull;

		values[2 + i] = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, i + 1, &isnull);
		if (isnull)
			nulls[2 + i] = 'n';
	}
	values[9] = Int64GetDatum(MnemoNowMs());
	values[10] = Int64GetDatum(fork_seq);
	values[11] = CStringGetTextDatum(lock.tenant);
	values[12] = run_id ? CStringGetTextDatum(run_id) : (Datum) 0;
	if (run_id == NULL)
		nulls[12] = 'n';
	MnemoPrepare(&insert_plan,
				 "INSERT INTO mnemo.sessions (id, parent_id, model_id, provider_id, agent, title, "
				 "metadata, system_prompt, state, created_at, updated_at, "
				 "tenant, fork_seq, fork_run, context_tail_seq) "
				 "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10, $12, $11, $13, $11)",
				 13, (Oid[]) {TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, JSONBOID,
				 TEXTOID, JSONBOID, INT8OID, INT8OID, TEXTOID, TEXTOID});
	MnemoInsert(insert_plan, values, nulls, "session", new_id);

	/* what it inherits, as references */
	if (keep.nsegs > 0)
	{
		owners = palloc(sizeof(Datum) * keep.nsegs);
		froms = palloc(sizeof(Datum) * keep.nsegs);
		tos = palloc(sizeof(Datum) * keep.nsegs);
		for (i = 0; i < keep.nsegs; i++)
		{
			owners[i] = CStringGetTextDatum(keep.segs[i].owner);
			froms[i] = Int64GetDatum(keep.segs[i].from);
			tos[i] = Int64GetDatum(keep.segs[i].to);
		}
		MnemoPrepare(&lineage_plan,
					 "INSERT INTO mnemo.lineage (session_id, seq_from, seq_to, ancestor_id, tenant) "
					 "SELECT $1, l.f, l.t, l.o, $5 FROM unnest($2, $3, $4) AS l(f, t, o)",
					 5, (Oid[]) {TEXTOID, INT8ARRAYOID, INT8ARRAYOID, TEXTARRAYOID, TEXTOID});
		MnemoExecute(lineage_plan,
					 (Datum[]) {values[0],
						 PointerGetDatum(construct_array(froms, keep.nsegs, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE)),
						 PointerGetDatum(construct_array(tos, keep.nsegs, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE)),
						 PointerGetDatum(construct_array(owners, keep.nsegs, TEXTOID, -1, false, TYPALIGN_INT)),
					 values[11]},
					 NULL, false, 0);
	}
	MnemoWriteView(new_id, lock.tenant, 0, items, nitems);

	MnemoPrepare(&count_plan,
				 "UPDATE mnemo.sessions SET forks = forks + 1 WHERE id = $1 AND tenant = $2",
				 2, (Oid[]) {TEXTOID, TEXTOID});
	MnemoExecute(count_plan, (Datum[]) {CStringGetTextDatum(source_id), values[11]},
				 NULL, false, 0);

	MnemoPrepare(&result_plan,
				 "SELECT " MNEMO_SESSION_COLUMNS("s", "$1") " FROM mnemo.sessions s "
				 "WHERE s.id = $1 AND s.tenant = $2",
				 2, (Oid[]) {TEXTOID, TEXTOID});
	MnemoExecute(result_plan, (Datum[]) {values[0], values[11]}, NULL, false, 1);
	result = MnemoResultRow(fcinfo, callcxt, 0);
	MnemoFinish(&call);
	PG_RETURN_DATUM(result);
}
