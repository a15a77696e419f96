/*
 * resume.c
 *		mnemo.resume_session() and mnemo.list_discarded(): going back to a
 *		checkpoint without losing what came after it.
 *
 * Resuming to a checkpoint takes the session's own messages after it off
 * its live line: their seq ranges go into mnemo.discarded, labelled with
 * the checkpoint, and the context view becomes the view as of the
 * checkpoint (rebuild.c), written as the view's next generation.  Nothing
 * is deleted: the discarded messages stay readable by id, through
 * list_discarded and `mnemo export --discarded`; get_messages, history,
 * build_context and search read the live line only.  The session's seq
 * counter is untouched, so new appends continue with fresh seqs after the
 * discarded ones, never reusing one.
 *
 * The checkpoint is the session's own or one it inherited (fork.c), and
 * must be on the live line: one inside a suffix an earlier resume
 * discarded is 22023, and so is one before a fork's fork point (a fork
 * cannot resume past its inheritance: fork the parent there instead).
 * Resuming to the line's end discards nothing and changes nothing.  It
 * takes the session lock every append takes, so an append commits
 * entirely before the resume (and is discarded) or after it.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "funcapi.h"
#include "utils/builtins.h"

#include "mnemo.h"
#include "tenancy/tenancy.h"
#include "reads/reads.h"
#include "lifecycle/lifecycle.h"

static SPIPlanPtr discard_plan;
static SPIPlanPtr revive_plan;
static SPIPlanPtr drop_plan;
static SPIPlanPtr session_plan;
static SPIPlanPtr list_plan;

PG_FUNCTION_INFO_V1(mnemo_resume_session);
Datum
mnemo_resume_session(PG_FUNCTION_ARGS)
{
	char	   *session_id = MnemoRequireTextArg(fcinfo, 0, "session_id");
	char	   *label = MnemoRequireTextArg(fcinfo, 1, "checkpoint");
	MnemoSessionLock lock;
	MnemoLine	line;
	MnemoLine	keep;
	MnemoViewItem *items;
	Datum	   *froms;
	Datum	   *tos;
	Datum		ranges[2];
	int64		seq;
	int64		discarded = 0;
	int			nranges = 0;
	int			nitems;
	int			i;
	MnemoCall	call;

	MnemoConnect(&call);
	MnemoLockSession(session_id, 0, true, &lock);
	MnemoReadLine(session_id, lock.last_seq, true, true, &line);
	seq = MnemoFindCheckpoint(&line, label);
	if (line.is_fork && seq < line.fork_seq)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("checkpoint \"%s\" (seq " INT64_FORMAT ") is before the fork point of session \"%s\" (seq " INT64_FORMAT ")",
						label, seq, session_id, line.fork_seq),
				 errdetail("A fork cannot resume past what it inherited."),
				 errhint("Fork its parent at that checkpoint instead.")));
	if (seq > 0 && MnemoLineSegment(&line, seq) == NULL && !(line.is_fork && seq == line.fork_seq))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("checkpoint \"%s\" of session \"%s\" is in a discarded suffix", label, session_id),
				 errdetail("A resume took seq " INT64_FORMAT " off the live line.", seq)));

	/* the own live ranges past the checkpoint */
	froms = palloc(sizeof(Datum) * line.nsegs);
	tos = palloc(sizeof(Datum) * line.nsegs);
	for (i = line.ninherited; i < line.nsegs; i++)
	{
		int64		from = Max(line.segs[i].from, seq + 1);
		int64		to = line.segs[i].to;

		if (from > to)
			continue;
		froms[nranges] = Int64GetDatum(from);
		tos[nranges] = Int64GetDatum(to);
		nranges++;
		discarded += to - from + 1;
	}
	if (nranges == 0)
	{
		MnemoFinish(&call);
		PG_RETURN_INT64(0);
	}

	MnemoClipLine(&line, seq, NULL, 0, &keep);
	items = MnemoViewAsOf(&line, &keep, &nitems);
	MnemoPrepare(&discard_plan,
				 "INSERT INTO mnemo.discarded (session_id, seq_from, seq_to, label, discarded_at, tenant) "
				 "SELECT $1, d.f, d.t, $4, $5, $6 FROM unnest($2, $3) AS d(f, t)",
				 6, (Oid[]) {TEXTOID, INT8ARRAYOID, INT8ARRAYOID, TEXTOID, INT8OID, TEXTOID});
	ranges[0] = MnemoArray(INT8OID, froms, NULL, nranges);
	ranges[1] = MnemoArray(INT8OID, tos, NULL, nranges);
	MnemoExecute(discard_plan,
				 (Datum[]) {CStringGetTextDatum(session_id), ranges[0], ranges[1],
					 CStringGetTextDatum(label), Int64GetDatum(MnemoNowMs()),
				 CStringGetTextDatum(lock.tenant)},
				 NULL, false, 0);

	/*
	 * A node consumed by a condensation that is now discarded is back in the
	 * view, so no longer superseded (its edges still say what consumed it);
	 * a later condensation of it must be able to mark it again.
	 */
	MnemoPrepare(&revive_plan,
				 "UPDATE mnemo.summary_nodes n SET superseded_by = NULL "
				 "FROM mnemo.messages m, unnest($2, $3) AS d(f, t) "
				 "WHERE n.session_id = $1 AND n.tenant = $4 "
				 "AND m.session_id = $1 AND m.tenant = $4 AND m.id = n.superseded_by "
				 "AND m.seq BETWEEN d.f AND d.t",
				 4, (Oid[]) {TEXTOID, INT8ARRAYOID, INT8ARRAYOID, TEXTOID});
	MnemoExecute(revive_plan,
				 (Datum[]) {CStringGetTextDatum(session_id), ranges[0], ranges[1],
				 CStringGetTextDatum(lock.tenant)},
				 NULL, false, 0);

	/* the view as of the checkpoint, as the next generation (see swap.c) */
	MnemoPrepare(&drop_plan,
				 "DELETE FROM mnemo.context_items "
				 "WHERE session_id = $1 AND tenant = $3 AND generation = $2",
				 3, (Oid[]) {TEXTOID, INT8OID, TEXTOID});
	MnemoExecute(drop_plan,
				 (Datum[]) {CStringGetTextDatum(session_id), Int64GetDatum(lock.context_generation),
				 CStringGetTextDatum(lock.tenant)},
				 NULL, false, 0);
	MnemoWriteView(session_id, lock.tenant, lock.context_generation + 1, items, nitems);
	MnemoPrepare(&session_plan,
				 "UPDATE mnemo.sessions SET context_generation = $2, context_dead = 0, "
				 "discards = discards + 1, context_tail_seq = $3 "
				 "WHERE id = $1 AND tenant = $4",
				 4, (Oid[]) {TEXTOID, INT8OID, INT8OID, TEXTOID});
	MnemoExecute(session_plan,
				 (Datum[]) {CStringGetTextDatum(session_id), Int64GetDatum(lock.context_generation + 1),
				 Int64GetDatum(lock.last_seq), CStringGetTextDatum(lock.tenant)},
				 NULL, false, 0);
	MnemoFinish(&call);
	PG_RETURN_INT64(discarded);
}

/* The discarded messages, in seq order: each discarded range, read by seq. */
PG_FUNCTION_INFO_V1(mnemo_list_discarded);
Datum
mnemo_list_discarded(PG_FUNCTION_ARGS)
{
	char	   *session_id = MnemoRequireTextArg(fcinfo, 0, "session_id");
	char	   *tenant;
	MnemoCall	call;
	SPITupleTable *messages;
	Datum	   *parts;
	uint64		n;
	uint64		row;

	MnemoConnect(&call);
	MnemoCheckSession(session_id, false, &tenant, NULL);
	MnemoPrepare(&list_plan,
				 "SELECT m.* FROM mnemo.discarded d, "
				 "LATERAL (SELECT " MNEMO_MESSAGE_FIELDS " FROM mnemo.messages m "
				 "         WHERE m.session_id = $1 AND m.tenant = d.tenant "
				 "         AND m.seq BETWEEN d.seq_from AND d.seq_to) m "
				 "WHERE d.session_id = $1 AND d.tenant = $2 ORDER BY m.seq",
				 2, (Oid[]) {TEXTOID, TEXTOID});
	n = MnemoExecute(list_plan,
					 (Datum[]) {CStringGetTextDatum(session_id), CStringGetTextDatum(tenant)},
					 NULL, true, 0);
	messages = SPI_tuptable;
	parts = MnemoPartsOfRows(messages, n, session_id, tenant);
	InitMaterializedSRF(fcinfo, 0);
	for (row = 0; row < n; row++)
		MnemoPutWithParts(fcinfo, messages, row, parts[row]);
	MnemoFinish(&call);
	return (Datum) 0;
}
