/*
 * reads.c
 *		Reading the log: get_message, get_messages, get_messages_after,
 *		get_parts, last_summary (the reads of a history whole,
 *		get_messages_flat, get_messages_with_parts and history: flat.c;
 *		get_messages_with_parts_by_ids: by_ids.c; how a read opens:
 *		open_read.c).
 *
 * Every read names what is missing: a session that does not exist is MN001
 * (not an empty result), a message MN002.  Messages come in seq order,
 * parts in part_index order.  A part read as JSON is its stored content with
 * the live status columns laid over it, so tool_state and the tombstone are
 * always current.  Every read takes the session id first and every
 * statement filters every table by it and by the tenant the id resolved to
 * (ids are unique only within a tenant; a fork's ancestors are of its
 * tenant), so a read touches one session's rows (one partition, one shard)
 * through an index that leads with (session_id, tenant).  A session of a
 * tenant the caller may not see is MN001, as a missing one.
 *
 * The reads of a session's log read its live line (lineage.c): for a fork,
 * the inherited messages of its ancestors come first, each segment read by
 * its own statement on the session that holds it (those rows show that
 * session's id in session_id); after a resume, the discarded messages are
 * left out (list_discarded reads them).  A message is found by id on the
 * line: the session's own first, then what it inherited.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"

#include "mnemo.h"
#include "tenancy/tenancy.h"
#include "reads/reads.h"

static SPIPlanPtr message_plan;
static SPIPlanPtr messages_plan;
static SPIPlanPtr after_plan;
static SPIPlanPtr parts_plan;
static SPIPlanPtr last_summary_plan;

/*
 * Message argument 1 of the line into SPI_tuptable (MNEMO_MESSAGE_ROW),
 * MN002 if not there.  Returns the session that holds it.
 */
static char *
SelectMessage(FunctionCallInfo fcinfo, MnemoLine *line)
{
	char	   *message_id = MnemoRequireTextArg(fcinfo, 1, "message_id");
	char	   *owner = line->session_id;
	int64		seq;

	Datum		tenant = CStringGetTextDatum(line->tenant);

	MnemoPrepare(&message_plan,
				 "SELECT " MNEMO_MESSAGE_ROW("") " FROM mnemo.messages WHERE session_id = $1 AND tenant = $2 AND id = $3",
				 3, (Oid[]) {TEXTOID, TEXTOID, TEXTOID});
	if (MnemoExecute(message_plan,
					 (Datum[]) {CStringGetTextDatum(owner), tenant, CStringGetTextDatum(message_id)},
					 NULL, true, 1) == 1)
		return owner;
	if (!line->is_fork || !MnemoLineFindMessage(line, message_id, &owner, &seq))
		MnemoMessageNotFound(message_id, line->session_id);
	MnemoExecute(message_plan,
				 (Datum[]) {CStringGetTextDatum(owner), tenant, CStringGetTextDatum(message_id)},
				 NULL, true, 1);
	return owner;
}

PG_FUNCTION_INFO_V1(mnemo_get_message);
Datum
mnemo_get_message(PG_FUNCTION_ARGS)
{
	MemoryContext callcxt = CurrentMemoryContext;
	MnemoCall	call;
	MnemoLine	line;
	Datum		result;

	(void) MnemoConnectRead(fcinfo, &call, &line);
	(void) SelectMessage(fcinfo, &line);
	result = MnemoResultRow(fcinfo, callcxt, 0);
	MnemoFinish(&call);
	PG_RETURN_DATUM(result);
}

/*
 * get_messages: each statement reading the seqs $3 < seq <= $4 of session
 * $1 of tenant $2, one segment of the line after another.
 */
static Datum
ReadSession(FunctionCallInfo fcinfo, SPIPlanPtr *plan, const char *sql)
{
	Oid			types[4] = {TEXTOID, TEXTOID, INT8OID, INT8OID};
	MnemoCall	call;
	MnemoLine	line;
	int64		since;
	int			i;

	since = MnemoOpenRead(fcinfo, &call, &line);
	MnemoPrepare(plan, sql, 4, types);
	InitMaterializedSRF(fcinfo, 0);
	for (i = 0; i < line.nsegs; i++)
	{
		MnemoSegment *seg = &line.segs[i];

		if (seg->to <= since)
			continue;
		MnemoExecuteResult(fcinfo, *plan,
						   (Datum[]) {CStringGetTextDatum(seg->owner),
						   CStringGetTextDatum(line.tenant),
						   Int64GetDatum(Max(since, seg->from - 1)), Int64GetDatum(seg->to)},
						   NULL, true);
	}
	MnemoFinish(&call);
	return (Datum) 0;
}

PG_FUNCTION_INFO_V1(mnemo_get_messages);
Datum
mnemo_get_messages(PG_FUNCTION_ARGS)
{
	return ReadSession(fcinfo, &messages_plan,
					   "SELECT " MNEMO_MESSAGE_ROW("") " FROM mnemo.messages WHERE session_id = $1 AND tenant = $2 "
					   "AND seq > $3 AND seq <= $4 ORDER BY seq");
}

/*
 * get_messages_after(session_id, after_seq, limit): the messages of the
 * line past after_seq, in seq order, at most limit of them (NULL: all).
 * A follower's page (mnemo feed): each segment's statement reads from the
 * seq on, by the (session_id, tenant, seq) key, and stops at what the page
 * still needs, so a page costs its rows, not the session (get_messages
 * builds the whole line before a caller's WHERE and LIMIT could apply).
 */
PG_FUNCTION_INFO_V1(mnemo_get_messages_after);
Datum
mnemo_get_messages_after(PG_FUNCTION_ARGS)
{
	int64		after = DatumGetInt64(MnemoRequireArg(fcinfo, 1, "after_seq"));
	int64		left = PG_ARGISNULL(2) ? PG_INT64_MAX : PG_GETARG_INT32(2);
	Oid			types[5] = {TEXTOID, TEXTOID, INT8OID, INT8OID, INT8OID};
	MnemoCall	call;
	MnemoLine	line;
	int			i;

	if (after < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("after_seq must not be negative")));
	if (left < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("limit must be at least 1")));
	(void) MnemoConnectRead(fcinfo, &call, &line);
	MnemoPrepare(&after_plan,
				 "SELECT " MNEMO_MESSAGE_ROW("") " FROM mnemo.messages WHERE session_id = $1 AND tenant = $2 "
				 "AND seq > $3 AND seq <= $4 ORDER BY seq LIMIT $5",
				 5, types);
	InitMaterializedSRF(fcinfo, 0);
	for (i = 0; i < line.nsegs && left > 0; i++)
	{
		MnemoSegment *seg = &line.segs[i];

		if (seg->to <= after)
			continue;
		left -= MnemoExecuteResult(fcinfo, after_plan,
								   (Datum[]) {CStringGetTextDatum(seg->owner),
								   CStringGetTextDatum(line.tenant),
								   Int64GetDatum(Max(after, seg->from - 1)), Int64GetDatum(seg->to),
								   Int64GetDatum(left)},
								   NULL, true);
	}
	MnemoFinish(&call);
	return (Datum) 0;
}

PG_FUNCTION_INFO_V1(mnemo_get_parts);
Datum
mnemo_get_parts(PG_FUNCTION_ARGS)
{
	MnemoCall	call;
	MnemoLine	line;
	char	   *owner;
	int64		seq;

	(void) MnemoConnectRead(fcinfo, &call, &line);
	owner = SelectMessage(fcinfo, &line);
	seq = MnemoGetInt64(0, 2, NULL);	/* MNEMO_MESSAGE_ROW's seq */
	MnemoPrepare(&parts_plan,
				 "SELECT p.session_id, $4, p.part_index, " MNEMO_PART_ID("p", "$4") ", p.part_type, "
				 MNEMO_PART_CONTENT ", p.tool_name, p.tool_call_id, p.tool_state, p.compacted_at, "
				 "p.started_at, p.completed_at, p.token_estimate, p.tenant "
				 "FROM mnemo.message_parts p "
				 "WHERE p.session_id = $1 AND p.tenant = $3 AND p.seq = $2 "
				 "ORDER BY p.part_index",
				 4, (Oid[]) {TEXTOID, INT8OID, TEXTOID, TEXTOID});
	MnemoExecuteResult(fcinfo, parts_plan,
					   (Datum[]) {CStringGetTextDatum(owner), Int64GetDatum(seq),
					   CStringGetTextDatum(line.tenant), PG_GETARG_DATUM(1)},
					   NULL, true);
	MnemoFinish(&call);
	return (Datum) 0;
}

/*
 * The newest summary message on the line, or NULL; uses the partial summary
 * index, segment by segment from the newest.
 */
PG_FUNCTION_INFO_V1(mnemo_last_summary);
Datum
mnemo_last_summary(PG_FUNCTION_ARGS)
{
	MemoryContext callcxt = CurrentMemoryContext;
	Datum		result;
	MnemoCall	call;
	MnemoLine	line;
	int			i;

	(void) MnemoConnectRead(fcinfo, &call, &line);
	MnemoPrepare(&last_summary_plan,
				 "SELECT " MNEMO_MESSAGE_ROW("") " FROM mnemo.messages WHERE session_id = $1 AND tenant = $2 "
				 "AND is_summary AND seq >= $3 AND seq <= $4 ORDER BY seq DESC LIMIT 1",
				 4, (Oid[]) {TEXTOID, TEXTOID, INT8OID, INT8OID});
	for (i = line.nsegs; i-- > 0;)
	{
		MnemoSegment *seg = &line.segs[i];

		if (MnemoExecute(last_summary_plan,
						 (Datum[]) {CStringGetTextDatum(seg->owner), CStringGetTextDatum(line.tenant),
						 Int64GetDatum(seg->from), Int64GetDatum(seg->to)},
						 NULL, true, 1) == 1)
		{
			result = MnemoResultRow(fcinfo, callcxt, 0);
			MnemoFinish(&call);
			PG_RETURN_DATUM(result);
		}
	}
	MnemoFinish(&call);
	PG_RETURN_NULL();
}
