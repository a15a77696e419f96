/*
 * append.c
 *		The hot path: append_message, append_messages, append_part.
 *
 * One call stores a message row and all its parts, so a turn costs one
 * round trip.  It writes no context item: a message is in its session's
 * context view as part of the implicit tail (context.h MNEMO_CONTEXT_VIEW,
 * swap.c) until a swap reaches it.  Order of work, for atomicity and clear
 * errors: every argument and every part is validated first; then the
 * session lock is taken, reserving the seqs (tenancy/session_lock.c); then the
 * rows are inserted, the messages and then all their parts, by
 * MnemoInsertRows: on a plain layout straight into the table and its
 * indexes as COPY would (core/insert_direct.c), and where partitions,
 * Citus, an operator's trigger or forced row-level security must see every
 * row, by set-based SQL statements of up to 128 rows each, so a batch of
 * 100 messages starts three executor runs, not 100.  A taken id is found by
 * the unique indexes and named afterwards (WriteNamingClash).
 * Any error aborts the statement and with it every row the call wrote, so no
 * half-written turn is ever visible.
 *
 * Summary messages (is_summary) are not in the tail: the compaction commit
 * puts them in the context view through swap_context_items.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "access/xact.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/resowner.h"
#include "utils/jsonb.h"
#include "utils/tuplestore.h"

#include "mnemo.h"
#include "tenancy/tenancy.h"
#include "log/log.h"
#include "reads/reads.h"
#include "reads/search.h"

/*
 * One message to append: its fields and its parts, all validated before the
 * session is locked.
 */
typedef struct MessageInput
{
	char	   *id;
	bool		id_given;		/* by the caller: it may be taken */
	char	   *role;
	char	   *agent;			/* NULL: the session's */
	char	   *model_id;
	char	   *provider_id;
	char	   *run_id;
	bool		is_summary;
	int64		created_at;		/* ms, 0 the epoch; -1: now (imports restore it) */
	int			nparts;
	MnemoPart  *parts;			/* .id: as given, or NULL */
} MessageInput;

/*
 * The ids a call was given, each with its place in the order the rows are
 * written (a message, then its parts, then the next message): a taken one is
 * reported as the first clash a row-by-row write would have met.
 */
typedef struct GivenIds
{
	int			n;
	char	  **ids;
	int32	   *ords;
} GivenIds;

static const char *const roles[] = {"user", "assistant", "system", "tool", NULL};

static SPIPlanPtr taken_plan;
static SPIPlanPtr inherited_plan;
static SPIPlanPtr find_message_plan;

static void
CheckRole(const char *role, const char *where)
{
	const char *const *r;

	for (r = roles; *r; r++)
		if (strcmp(role, *r) == 0)
			return;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("%s: invalid role \"%s\"", where, role),
			 errhint("A role is one of user, assistant, system, tool.")));
}

/*
 * Validate a parts array (a JSON array of part objects, within the limit on
 * parts per message) into m, giving every part without an id a new one.
 * parts is the array's container: a message of a batch is read in place,
 * not copied out of the batch first.
 *
 * Each part is validated in a scratch context reset after it, and only what
 * is stored (its object, id and column values) is kept in the caller's
 * context: validation copies strings, renders the part for its token
 * estimate and names the part in errors, and kept for every part of a
 * batch of a million parts that came to a gigabyte of memory for 50 MB of
 * input.
 */
static void
TakeParts(JsonbContainer *parts, const char *where, MessageInput *m)
{
	MemoryContext callcxt = CurrentMemoryContext;
	MemoryContext partcxt;
	int			i;

	if (!JsonContainerIsArray(parts) || JsonContainerIsScalar(parts))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be a JSON array of part objects", where)));
	m->nparts = JsonContainerSize(parts);
	if (m->nparts > mnemo_max_parts_per_message)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("%s has %d parts, more than mnemo.max_parts_per_message (%d)",
						where, m->nparts, mnemo_max_parts_per_message)));
	m->parts = palloc(sizeof(MnemoPart) * Max(m->nparts, 1));
	partcxt = AllocSetContextCreate(callcxt, "mnemo part", ALLOCSET_SMALL_SIZES);
	for (i = 0; i < m->nparts; i++)
	{
		MnemoPart	part;
		MnemoPart  *out = &m->parts[i];

		/* a call may hold millions of parts: let a cancel in between them */
		CHECK_FOR_INTERRUPTS();
		MemoryContextSwitchTo(partcxt);
		MnemoParsePart(getIthJsonbValueFromContainer(parts, i),
					   psprintf("%s[%d]", where, i), &part);
		MemoryContextSwitchTo(callcxt);
		out->content = palloc(VARSIZE(part.content));
		memcpy(out->content, part.content, VARSIZE(part.content));
		/* the id to store is chosen once the message's id is (StoreMessages) */
		out->id = part.id ? pstrdup(part.id) : NULL;
		out->part_type = pstrdup(part.part_type);
		out->tool_name = part.tool_name ? pstrdup(part.tool_name) : NULL;
		out->tool_call_id = part.tool_call_id ? pstrdup(part.tool_call_id) : NULL;
		out->tool_state = part.tool_state ? pstrdup(part.tool_state) : NULL;
		out->token_estimate = part.token_estimate;
		MemoryContextReset(partcxt);
	}
	MemoryContextDelete(partcxt);
}

static void
GiveId(GivenIds *given, char *id, int32 ord)
{
	given->ids[given->n] = id;
	given->ords[given->n] = ord;
	given->n++;
}

typedef struct IdAt
{
	const char *id;
	int32		ord;
} IdAt;

static int
CompareIdAt(const void *a, const void *b)
{
	const IdAt *x = a;
	const IdAt *y = b;
	int			c = strcmp(x->id, y->id);

	return c != 0 ? c : (x->ord > y->ord) - (x->ord < y->ord);
}

/* The first of given's ids (by ord) that an earlier one repeats into *first. */
static void
FirstRepeat(const GivenIds *given, const char *what, int32 *first_ord,
			const char **first_what, const char **first_id)
{
	IdAt	   *sorted;
	int			i;

	if (given->n < 2)
		return;
	sorted = palloc(sizeof(IdAt) * given->n);
	for (i = 0; i < given->n; i++)
	{
		sorted[i].id = given->ids[i];
		sorted[i].ord = given->ords[i];
	}
	qsort(sorted, given->n, sizeof(IdAt), CompareIdAt);
	for (i = 1; i < given->n; i++)
		if (strcmp(sorted[i].id, sorted[i - 1].id) == 0 && sorted[i].ord < *first_ord)
		{
			*first_ord = sorted[i].ord;
			*first_what = what;
			*first_id = sorted[i].id;
		}
	pfree(sorted);
}

/* given's ids (a text[]) or their ords (an int4[]) */
static Datum
GivenArray(const GivenIds *given, bool ids)
{
	Datum	   *values = palloc(sizeof(Datum) * Max(given->n, 1));
	int			i;

	for (i = 0; i < given->n; i++)
		values[i] = ids ? CStringGetTextDatum(given->ids[i]) : Int32GetDatum(given->ords[i]);
	return MnemoArray(ids ? TEXTOID : INT4OID, values, NULL, given->n);
}

/*
 * Of the given ids, the first (by ord) that session (tenant's) holds into *first,
 * unless an earlier one is there already: any of its own (own), or one
 * within seqs from..to (an ancestor's, of which a fork inherited that
 * range; a part by its message's seq).  given holds the ids and ords of
 * the messages, then of the parts (GivenArray).  Each look-up is by the unique
 * index of (session_id, tenant, id), and the seq of a part's message is a scalar
 * subquery per part found: as a join, a plan made while the session was
 * small paired every part with every message (23 s at 16,000 messages).
 * Not read-only: it must see rows committed while the caller waited for
 * the session lock.
 */
static void
FirstTaken(const char *session_id, const char *tenant, bool own, int64 from, int64 to,
		   const Datum given[4], int32 *first_ord, const char **first_what,
		   const char **first_id)
{

	MnemoPrepare(&taken_plan,
				 "SELECT t.ord, t.what, t.id FROM ("
				 "SELECT u.ord, 'message' AS what, u.id FROM unnest($2, $3) AS u(id, ord) "
				 "WHERE EXISTS (SELECT FROM mnemo.messages m "
				 "WHERE m.session_id = $1 AND m.tenant = $6 AND m.id = u.id) "
				 "UNION ALL "
				 "SELECT u.ord, 'part', u.id FROM unnest($4, $5) AS u(id, ord) "
				 "WHERE EXISTS (SELECT FROM mnemo.message_parts p "
				 "WHERE p.session_id = $1 AND p.tenant = $6 AND p.id = u.id)"
				 ") AS t ORDER BY t.ord LIMIT 1",
				 6, (Oid[]) {TEXTOID, TEXTARRAYOID, INT4ARRAYOID, TEXTARRAYOID, INT4ARRAYOID,
				 TEXTOID});
	MnemoPrepare(&inherited_plan,
				 "SELECT t.ord, t.what, t.id FROM ("
				 "SELECT u.ord, 'message' AS what, u.id FROM unnest($2, $3) AS u(id, ord) "
				 "WHERE EXISTS (SELECT FROM mnemo.messages m "
				 "WHERE m.session_id = $1 AND m.tenant = $6 AND m.id = u.id "
				 "AND m.seq BETWEEN $7 AND $8) "
				 "UNION ALL "
				 "SELECT u.ord, 'part', u.id FROM unnest($4, $5) AS u(id, ord) "
				 "WHERE EXISTS (SELECT FROM mnemo.message_parts p "
				 "WHERE p.session_id = $1 AND p.tenant = $6 AND p.id = u.id "
				 "AND p.seq BETWEEN $7 AND $8)"
				 ") AS t ORDER BY t.ord LIMIT 1",
				 8, (Oid[]) {TEXTOID, TEXTARRAYOID, INT4ARRAYOID, TEXTARRAYOID, INT4ARRAYOID,
				 TEXTOID, INT8OID, INT8OID});
	/* the own plan takes the first six */
	if (MnemoExecute(own ? taken_plan : inherited_plan,
					 (Datum[]) {CStringGetTextDatum(session_id), given[0], given[1], given[2],
					 given[3], CStringGetTextDatum(tenant), Int64GetDatum(from),
					 Int64GetDatum(to)}, NULL, false, 1) == 1 &&
		MnemoGetInt64(0, 1, NULL) < *first_ord)
	{
		*first_ord = (int32) MnemoGetInt64(0, 1, NULL);
		*first_what = MnemoGetText(0, 2, NULL);
		*first_id = MnemoGetText(0, 3, NULL);
	}
}

/*
 * MN004 naming the first of the given message and part ids that is taken on
 * the session's line or repeated in the call; nothing if none is.  Taken
 * means held by the session, discarded messages too (its unique indexes
 * say so), or, for a fork, by what it inherited: the line is one sequence
 * of messages, read by id (get_message), compacted and expanded by id, so
 * an id may not name two of them.  Ids mnemo made are new by construction
 * and are not looked up.  The caller holds the session lock, so what it
 * finds is what a write would meet.  Each statement reads one session.
 */
static void
CheckIdsFree(const char *session_id, const char *tenant, const GivenIds *messages,
			 const GivenIds *parts, bool fork)
{
	int32		first_ord = PG_INT32_MAX;
	const char *first_what = NULL;
	const char *first_id = NULL;
	bool		inherited = false;
	Datum		given[4];

	if (messages->n + parts->n == 0)
		return;
	FirstRepeat(messages, "message", &first_ord, &first_what, &first_id);
	FirstRepeat(parts, "part", &first_ord, &first_what, &first_id);
	given[0] = GivenArray(messages, true);
	given[1] = GivenArray(messages, false);
	given[2] = GivenArray(parts, true);
	given[3] = GivenArray(parts, false);
	FirstTaken(session_id, tenant, true, 0, 0, given, &first_ord, &first_what, &first_id);
	if (fork)
	{
		MnemoLine	line;
		int			i;

		MnemoReadLine(session_id, PG_INT64_MAX, true, false, &line);
		for (i = 0; i < line.ninherited; i++)
		{
			const char *before = first_id;

			FirstTaken(line.segs[i].owner, line.tenant, false, line.segs[i].from,
					   line.segs[i].to, given, &first_ord, &first_what, &first_id);
			if (first_id != before)
				inherited = true;
		}
	}
	if (first_id && inherited)
		ereport(ERROR,
				(errcode(ERRCODE_MNEMO_DUPLICATE_ID),
				 errmsg("%s \"%s\" already exists", first_what, first_id),
				 errdetail("Session \"%s\" is a fork: it inherited a %s of this id, and ids are unique along a session's line.",
						   session_id, first_what)));
	if (first_id)
		ereport(ERROR,
				(errcode(ERRCODE_MNEMO_DUPLICATE_ID),
				 errmsg("%s \"%s\" already exists", first_what, first_id),
				 errdetail("Ids are unique within their session.")));
}

/* the rows of a call (MnemoInsertLog), and the session they go to */
typedef struct CallRows
{
	const char *session_id;
	const char *tenant;
	MnemoLogRows log;
	int64		seq;			/* append_part: its message's */
	const MnemoPart *part;		/* append_part: the part */
} CallRows;

static void
InsertRows(void *arg)
{
	CallRows   *rows = arg;

	MnemoInsertLog(rows->session_id, rows->tenant, &rows->log);
}

/* append_part's first part of a message appended without parts */
static void
FillFirstPart(void *arg)
{
	CallRows   *rows = arg;

	MnemoFillFirstPart(rows->session_id, rows->tenant, rows->seq, rows->part);
}

/*
 * Run write(arg), the inserts of a call.  A call that named no ids needs
 * nothing more: the ids mnemo makes are new.  A call that named some runs
 * them in a subtransaction, so that when one is taken (the unique index
 * refuses it: MN004 from MnemoInsert) the rows are rolled back and
 * CheckIdsFree names the first clash.  Nothing is looked up before the
 * write: on the way that succeeds, the unique indexes are the only check
 * (a look-up first made imports 14% slower, doc/benchmarks.md).  But a
 * fork's unique indexes do not hold what it inherited, so on a fork the ids
 * are looked up first, and then no subtransaction is needed.
 */
static void
WriteNamingClash(void (*write) (void *), void *arg, const char *session_id,
				 const char *tenant, const GivenIds *messages, const GivenIds *parts,
				 bool fork)
{
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;

	if (messages->n + parts->n == 0)
	{
		write(arg);
		return;
	}
	if (fork)
	{
		CheckIdsFree(session_id, tenant, messages, parts, true);
		write(arg);
		return;
	}
	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(cxt);
	PG_TRY();
	{
		write(arg);
		ReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
		if (edata->sqlerrcode == ERRCODE_MNEMO_DUPLICATE_ID)
			CheckIdsFree(session_id, tenant, messages, parts, false);
		ReThrowError(edata);
	}
	PG_END_TRY();
}

/*
 * Store n validated messages at seqs seq..: one row of mnemo.log per part
 * (one for a message without parts), written in one executor run.  The
 * caller holds the session lock, which reserved the seqs.  MN004 if an id
 * is taken (CheckIdsFree).
 */
static void
StoreMessages(const char *session_id, MessageInput *ms, int n, MnemoSessionLock *lock,
			  int64 seq)
{
	int64		now = MnemoNowMs();
	int			nrows = 0;
	int			r = 0;
	int32		ord = 0;
	MnemoLogMessage *messages = palloc(sizeof(MnemoLogMessage) * n);
	GivenIds	given_messages;
	GivenIds	given_parts;
	int64	   *seqs;
	int32	   *part_indexes;
	const MnemoLogMessage **row_messages;
	const MnemoPart **row_parts;
	MnemoPart  *parts;
	CallRows	rows;
	int			i;
	int			j;

	for (i = 0; i < n; i++)
		nrows += Max(ms[i].nparts, 1);
	seqs = palloc(sizeof(int64) * nrows);
	part_indexes = palloc(sizeof(int32) * nrows);
	row_messages = palloc(sizeof(MnemoLogMessage *) * nrows);
	row_parts = palloc(sizeof(MnemoPart *) * nrows);
	parts = palloc(sizeof(MnemoPart) * nrows);
	given_messages.n = given_parts.n = 0;
	given_messages.ids = palloc(sizeof(char *) * n);
	given_messages.ords = palloc(sizeof(int32) * n);
	given_parts.ids = palloc(sizeof(char *) * nrows);
	given_parts.ords = palloc(sizeof(int32) * nrows);

	for (i = 0; i < n; i++)
	{
		MessageInput *m = &ms[i];
		MnemoLogMessage *lm = &messages[i];

		Assert(m->id != NULL);
		if (m->id_given)
			GiveId(&given_messages, m->id, ord);
		ord++;
		lm->id = m->id;
		lm->role = m->role;
		lm->created_at = m->created_at >= 0 ? m->created_at : now;
		lm->agent = m->agent ? m->agent : lock->agent;
		lm->model_id = m->model_id ? m->model_id : lock->model_id;
		lm->provider_id = m->provider_id ? m->provider_id : lock->provider_id;
		lm->run_id = m->run_id;
		lm->is_summary = m->is_summary;
		for (j = 0; j < Max(m->nparts, 1); j++, r++)
		{
			seqs[r] = seq + i;
			part_indexes[r] = j;
			row_messages[r] = j == 0 ? lm : NULL;
			row_parts[r] = NULL;
			if (j == m->nparts)
				continue;		/* a message without parts */
			parts[r] = m->parts[j];
			parts[r].id = MnemoPartIdToStore(m->parts[j].id, m->id, j);
			if (m->parts[j].id != NULL && parts[r].id != NULL)
				GiveId(&given_parts, parts[r].id, ord);
			ord++;
			row_parts[r] = &parts[r];
		}
	}

	rows.session_id = session_id;
	rows.tenant = lock->tenant;
	rows.log.n = nrows;
	rows.log.seqs = seqs;
	rows.log.part_indexes = part_indexes;
	rows.log.messages = row_messages;
	rows.log.parts = row_parts;
	WriteNamingClash(InsertRows, &rows, session_id, lock->tenant, &given_messages, &given_parts,
					 lock->is_fork);

	for (i = 0; i < n; i++)
		MnemoNotify(lock->watched, lock->tenant, "message_created", session_id, ms[i].id,
					seq + i);
}

/*
 * Append a summary message built by mnemo (commit_summary): parts as for
 * append_message.  The caller is inside SPI and holds the session lock with
 * seq reserved.  MN004 if summary_id is taken.
 */
void
MnemoAppendSummaryMessage(const char *session_id, const char *summary_id,
						  const char *model_id, const char *provider_id,
						  Jsonb *parts, MnemoSessionLock *lock, int64 seq, int64 created_at)
{
	MessageInput m;

	memset(&m, 0, sizeof(m));
	m.created_at = created_at;
	m.id = pstrdup(summary_id);
	m.id_given = true;
	m.role = "assistant";
	m.model_id = (char *) model_id;
	m.provider_id = (char *) provider_id;
	m.is_summary = true;
	TakeParts(&parts->root, "summary parts", &m);
	StoreMessages(session_id, &m, 1, lock, seq);
}

static Datum
MessageRef(FunctionCallInfo fcinfo, const char *id, int64 seq)
{
	TupleDesc	desc;
	Datum		values[2];
	bool		nulls[2] = {false, false};

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "function returning a row called in a context that cannot accept one");
	desc = BlessTupleDesc(desc);
	values[0] = CStringGetTextDatum(id);
	values[1] = Int64GetDatum(seq);
	return HeapTupleGetDatum(heap_form_tuple(desc, values, nulls));
}

PG_FUNCTION_INFO_V1(mnemo_append_message);
Datum
mnemo_append_message(PG_FUNCTION_ARGS)
{
	char	   *session_id = MnemoRequireTextArg(fcinfo, 0, "session_id");
	Jsonb	   *parts = DatumGetJsonbP(MnemoRequireArg(fcinfo, 2, "parts"));
	MessageInput m;
	MnemoSessionLock lock;
	MnemoCall	call;

	memset(&m, 0, sizeof(m));
	m.created_at = -1;
	m.role = MnemoRequireTextArg(fcinfo, 1, "role");
	CheckRole(m.role, "append_message");
	m.id = MnemoTextArgOrNull(fcinfo, 3);
	m.id_given = m.id != NULL;
	if (m.id)
		MnemoCheckId(m.id, "message id");
	m.agent = MnemoTextArgOrNull(fcinfo, 4);
	m.model_id = MnemoTextArgOrNull(fcinfo, 5);
	m.provider_id = MnemoTextArgOrNull(fcinfo, 6);
	m.run_id = MnemoTextArgOrNull(fcinfo, 7);
	if (m.run_id)
		MnemoCheckId(m.run_id, "run_id");
	m.is_summary = PG_ARGISNULL(8) ? false : PG_GETARG_BOOL(8);
	TakeParts(&parts->root, "parts", &m);
	if (m.id == NULL)
		m.id = MnemoNewId(m.is_summary ? "sum" : "msg");

	MnemoConnect(&call);
	MnemoLockSession(session_id, 1, true, &lock);
	StoreMessages(session_id, &m, 1, &lock, lock.last_seq);
	MnemoFinish(&call);

	PG_RETURN_DATUM(MessageRef(fcinfo, m.id, lock.last_seq));
}

/*
 * A batch: a JSON array of {"role", "parts", and optionally "id", "agent",
 * "model_id", "provider_id", "run_id", "is_summary", "created_at" (ms since
 * the epoch: a transcript's own times, restored by an import)}.  One lock reserves all
 * the seqs, so the batch occupies consecutive seqs even under concurrency.
 */
PG_FUNCTION_INFO_V1(mnemo_append_messages);
Datum
mnemo_append_messages(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	char	   *session_id = MnemoRequireTextArg(fcinfo, 0, "session_id");
	Jsonb	   *batch = DatumGetJsonbP(MnemoRequireArg(fcinfo, 1, "messages"));
	MessageInput *ms;
	MnemoSessionLock lock;
	int			n;
	int64		seq;
	int			i;
	MnemoCall	call;

	if (!JB_ROOT_IS_ARRAY(batch) || JB_ROOT_IS_SCALAR(batch))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("messages must be a JSON array of message objects")));
	n = JB_ROOT_COUNT(batch);
	if (n > mnemo_max_messages_per_batch)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("messages has %d messages, more than mnemo.max_messages_per_batch (%d)",
						n, mnemo_max_messages_per_batch)));
	ms = palloc0(sizeof(MessageInput) * Max(n, 1));
	for (i = 0; i < n; i++)
	{
		JsonbValue *v = getIthJsonbValueFromContainer(&batch->root, i);
		char	   *where = psprintf("messages[%d]", i);
		JsonbContainer *obj;
		JsonbValue	buf;
		JsonbValue *field;

		CHECK_FOR_INTERRUPTS();
		if (v->type != jbvBinary || !JsonContainerIsObject(v->val.binary.data))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s must be a JSON object", where)));
		obj = v->val.binary.data;
		ms[i].role = MnemoJsonbString(obj, "role", where, true);
		CheckRole(ms[i].role, where);
		ms[i].id = MnemoJsonbString(obj, "id", where, false);
		ms[i].id_given = ms[i].id != NULL;
		if (ms[i].id)
			MnemoCheckId(ms[i].id, "message id");
		ms[i].agent = MnemoJsonbString(obj, "agent", where, false);
		ms[i].model_id = MnemoJsonbString(obj, "model_id", where, false);
		ms[i].provider_id = MnemoJsonbString(obj, "provider_id", where, false);
		ms[i].run_id = MnemoJsonbString(obj, "run_id", where, false);
		if (ms[i].run_id)
			MnemoCheckId(ms[i].run_id, "run_id");
		field = getKeyJsonValueFromContainer(obj, "is_summary", 10, &buf);
		if (field && field->type != jbvNull)
		{
			if (field->type != jbvBool)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("%s: \"is_summary\" must be a boolean", where)));
			ms[i].is_summary = field->val.boolean;
		}
		ms[i].created_at = MnemoJsonbCount(obj, "created_at", where, PG_INT64_MAX);
		field = getKeyJsonValueFromContainer(obj, "parts", 5, &buf);
		if (field == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s: \"parts\" is required", where)));
		if (field->type != jbvBinary)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s.parts must be a JSON array of part objects", where)));
		TakeParts(field->val.binary.data, psprintf("%s.parts", where), &ms[i]);
		if (ms[i].id == NULL)
			ms[i].id = MnemoNewId(ms[i].is_summary ? "sum" : "msg");
	}

	MnemoConnect(&call);
	MnemoLockSession(session_id, n, true, &lock);
	seq = lock.last_seq - n + 1;
	if (n > 0)
		StoreMessages(session_id, ms, n, &lock, seq);
	MnemoFinish(&call);

	InitMaterializedSRF(fcinfo, 0);
	for (i = 0; i < n; i++)
	{
		Datum		values[2];
		bool		nulls[2] = {false, false};

		values[0] = CStringGetTextDatum(ms[i].id);
		values[1] = Int64GetDatum(seq + i);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

/*
 * Add one part at the end of a message (streaming).  The session lock
 * serialises part appends to one message, so part_index is dense from 0.
 */
PG_FUNCTION_INFO_V1(mnemo_append_part);
Datum
mnemo_append_part(PG_FUNCTION_ARGS)
{
	char	   *session_id = MnemoRequireTextArg(fcinfo, 0, "session_id");
	char	   *message_id = MnemoRequireTextArg(fcinfo, 1, "message_id");
	Jsonb	   *part_json = DatumGetJsonbP(MnemoRequireArg(fcinfo, 2, "part"));
	Oid			types[3] = {TEXTOID, TEXTOID, TEXTOID};
	Datum		values[3];
	MnemoPart	part;
	char	   *given_id;
	JsonbValue	v;
	MnemoSessionLock lock;
	MnemoCall	call;
	GivenIds	no_messages = {0};
	GivenIds	given = {0};
	CallRows	rows;
	int64		seq;
	int32		part_index;

	v.type = jbvBinary;
	v.val.binary.data = &part_json->root;
	v.val.binary.len = VARSIZE(part_json) - VARHDRSZ;
	MnemoParsePart(&v, "part", &part);
	given_id = part.id;

	MnemoConnect(&call);
	MnemoLockSession(session_id, 0, true, &lock);
	values[0] = CStringGetTextDatum(session_id);
	values[1] = CStringGetTextDatum(message_id);
	values[2] = CStringGetTextDatum(lock.tenant);
	/*
	 * Not read-only: it must see parts committed while we waited for the
	 * lock.  The newest row of the message is its last part, or the row of a
	 * message without parts (part_type NULL), which the part fills in.
	 */
	MnemoPrepare(&find_message_plan,
				 "SELECT m.seq, (SELECT p.part_index + (p.part_type IS NOT NULL)::integer "
				 "FROM mnemo.log p "
				 "WHERE p.session_id = $1 AND p.tenant = $3 AND p.seq = m.seq "
				 "ORDER BY p.part_index DESC LIMIT 1) "
				 "FROM mnemo.log m WHERE m.session_id = $1 AND m.tenant = $3 AND m.id = $2",
				 3, types);
	if (MnemoExecute(find_message_plan, values, NULL, false, 1) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_MNEMO_MESSAGE_NOT_FOUND),
				 errmsg("message \"%s\" does not exist in session \"%s\"",
						message_id, session_id)));
	seq = MnemoGetInt64(0, 1, NULL);
	part_index = (int32) MnemoGetInt64(0, 2, NULL);
	/* a streamed message is held to the limit of a message appended whole */
	if (part_index >= mnemo_max_parts_per_message)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("message \"%s\" already has %d parts, the most mnemo.max_parts_per_message (%d) allows",
						message_id, part_index, mnemo_max_parts_per_message)));

	part.id = MnemoPartIdToStore(given_id, message_id, part_index);
	if (given_id != NULL && part.id != NULL)
	{
		given.n = 1;
		given.ids = &part.id;
		given.ords = (int32[]) {0};
	}

	memset(&rows, 0, sizeof(rows));
	rows.session_id = session_id;
	rows.tenant = lock.tenant;
	rows.seq = seq;
	rows.part = &part;
	rows.log.n = 1;
	rows.log.seqs = &rows.seq;
	rows.log.part_indexes = &part_index;
	rows.log.messages = (const MnemoLogMessage *[]) {NULL};
	rows.log.parts = (const MnemoPart *[]) {&part};
	WriteNamingClash(part_index == 0 ? FillFirstPart : InsertRows, &rows, session_id, lock.tenant,
					 &no_messages, &given, lock.is_fork);
	/* search_index.c: a message may be indexed already */
	MnemoQueueSearch(session_id, lock.tenant, seq);
	MnemoNotify(lock.watched, lock.tenant, "part_created", session_id,
				part.id ? part.id : MnemoDerivedPartId(message_id, part_index), seq);
	MnemoFinish(&call);

	PG_RETURN_INT32(part_index);
}
