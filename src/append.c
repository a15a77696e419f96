/*
 * append.c
 *		The hot path: append_message, append_messages, append_part.
 *
 * One call stores a message row, all its parts and its context item, so a
 * turn costs one round trip.  Order of work, for atomicity and clear errors:
 * every argument and every part is validated first; then the session row is
 * locked, reserving the seqs and context positions (see sessions.c); then the
 * rows are inserted by prepared SPI statements, through the executor, so that
 * partitions, row-level security checks, Citus and ordinary triggers see
 * every row.
 * Any error aborts the statement and with it every row the call wrote, so no
 * half-written turn is ever visible.
 *
 * Summary messages (is_summary) get no context item here: the compaction
 * commit puts them in the context view through swap_context_items.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/tuplestore.h"

#include "mnemo.h"
#include "search.h"

/*
 * One message to append: its fields validated, its parts a JSON array whose
 * elements are validated one at a time as they are stored (see AppendOne).
 */
typedef struct MessageInput
{
	char	   *id;
	char	   *role;
	char	   *agent;			/* NULL: the session's */
	char	   *model_id;
	char	   *provider_id;
	char	   *run_id;
	bool		is_summary;
	int64		created_at;		/* ms; 0 or -1: now (imports restore it) */
	int			nparts;
	JsonbContainer *parts;
	const char *where;			/* "parts", "messages[2].parts": names a part in errors */
} MessageInput;

static const char *const roles[] = {"user", "assistant", "system", "tool", NULL};

static SPIPlanPtr message_plan;

/*
 * The context each part is stored in and then reset: a child of the SPI
 * procedure context, so it goes with MnemoFinish.
 */
static MemoryContext
RowContext(void)
{
	return AllocSetContextCreate(CurrentMemoryContext, "mnemo append row", ALLOCSET_DEFAULT_SIZES);
}
static SPIPlanPtr context_plan;
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
 * Take a parts array (a JSON array of part objects) into m, within the limit
 * on parts per message (54000); the parts themselves are checked as they
 * are stored.
 */
static void
TakeParts(Jsonb *parts, const char *where, MessageInput *m)
{
	if (!JB_ROOT_IS_ARRAY(parts) || JB_ROOT_IS_SCALAR(parts))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be a JSON array of part objects", where)));
	m->nparts = JB_ROOT_COUNT(parts);
	if (m->nparts > mnemo_max_parts_per_message)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("%s has %d parts, more than mnemo.max_parts_per_message (%d)",
						where, m->nparts, mnemo_max_parts_per_message)));
	m->parts = &parts->root;
	m->where = where;
}

/*
 * Store one validated message at seq (and, unless a summary, at context
 * position).  The caller holds the session lock and has given m an id
 * outside SPI, so that it outlives SPI_finish.  MN004 if the message id or a
 * part id is taken.
 */
static void
AppendOne(const char *session_id, MessageInput *m, MnemoSessionLock *lock,
		  int64 seq, int64 position, MemoryContext rowcxt)
{
	Datum		values[11];
	char		nulls[11];
	Datum		now = Int64GetDatum(m->created_at > 0 ? m->created_at : MnemoNowMs());
	Datum		sid = CStringGetTextDatum(session_id);
	Datum		id = CStringGetTextDatum(m->id);
	Datum		tenant = CStringGetTextDatum(lock->tenant);
	int			i;

	Assert(m->id != NULL);
	memset(nulls, ' ', sizeof(nulls));
	values[0] = sid;
	values[1] = Int64GetDatum(seq);
	values[2] = id;
	values[3] = CStringGetTextDatum(m->role);
	values[4] = now;
	values[5] = CStringGetTextDatum(m->agent ? m->agent : lock->agent);
	values[6] = CStringGetTextDatum(m->model_id ? m->model_id : lock->model_id);
	values[7] = CStringGetTextDatum(m->provider_id ? m->provider_id : lock->provider_id);
	values[8] = m->run_id ? CStringGetTextDatum(m->run_id) : (Datum) 0;
	nulls[8] = m->run_id ? ' ' : 'n';
	values[9] = BoolGetDatum(m->is_summary);
	values[10] = tenant;
	MnemoPrepare(&message_plan,
				 "INSERT INTO mnemo.messages (session_id, seq, id, role, created_at, agent, "
				 "model_id, provider_id, run_id, is_summary, tenant) "
				 "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
				 11, (Oid[]) {TEXTOID, INT8OID, TEXTOID, TEXTOID, INT8OID, TEXTOID, TEXTOID,
				 TEXTOID, TEXTOID, BOOLOID, TEXTOID});
	MnemoInsert(message_plan, values, nulls, "message", m->id);

	/*
	 * Each part is validated, stored and forgotten in its own memory
	 * context, so that a message of many parts costs the memory of one (the
	 * per-tuple context of pgvector's inserts); an invalid part aborts the
	 * call, and with it every row already written.
	 */
	for (i = 0; i < m->nparts; i++)
	{
		MemoryContext oldcxt = MemoryContextSwitchTo(rowcxt);
		MnemoPart	part;

		MnemoParsePart(getIthJsonbValueFromContainer(m->parts, i),
					   psprintf("%s[%d]", m->where, i), &part);
		MnemoInsertPart(session_id, lock->tenant, m->id, i, &part);
		MemoryContextSwitchTo(oldcxt);
		MemoryContextReset(rowcxt);
	}

	if (!m->is_summary)
	{
		MnemoPrepare(&context_plan,
					 "INSERT INTO mnemo.context_items (session_id, position, item_type, item_id, "
					 "seq, created_at, tenant, generation) "
					 "VALUES ($1, $2, 'message', $3, $4, $5, $6, $7)",
					 7, (Oid[]) {TEXTOID, INT8OID, TEXTOID, INT8OID, INT8OID, TEXTOID, INT8OID});
		MnemoInsert(context_plan,
					(Datum[]) {sid, Int64GetDatum(position), id, Int64GetDatum(seq), now, tenant,
					Int64GetDatum(lock->context_generation)},
					NULL, "context item", m->id);
	}
	MnemoNotify(lock->watched, lock->tenant, "message_created", session_id, m->id, seq);
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
	m.role = "assistant";
	m.model_id = (char *) model_id;
	m.provider_id = (char *) provider_id;
	m.is_summary = true;
	TakeParts(parts, "summary parts", &m);
	AppendOne(session_id, &m, lock, seq, 0, RowContext());
	MnemoQueueSearch(session_id, lock->tenant, seq, seq, false);
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
	m.role = MnemoRequireTextArg(fcinfo, 1, "role");
	CheckRole(m.role, "append_message");
	m.id = MnemoTextArgOrNull(fcinfo, 3);
	if (m.id)
		MnemoCheckId(m.id, "message id");
	m.agent = MnemoTextArgOrNull(fcinfo, 4);
	m.model_id = MnemoTextArgOrNull(fcinfo, 5);
	m.provider_id = MnemoTextArgOrNull(fcinfo, 6);
	m.run_id = MnemoTextArgOrNull(fcinfo, 7);
	m.is_summary = PG_ARGISNULL(8) ? false : PG_GETARG_BOOL(8);
	TakeParts(parts, "parts", &m);
	if (m.id == NULL)
		m.id = MnemoNewId(m.is_summary ? "sum" : "msg");

	MnemoConnect(&call);
	MnemoLockSession(session_id, 1, m.is_summary ? 0 : 1, true, &lock);
	AppendOne(session_id, &m, &lock, lock.last_seq, lock.last_position, RowContext());
	MnemoQueueSearch(session_id, lock.tenant, lock.last_seq, lock.last_seq, false);
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
	int			nsummaries = 0;
	int64		seq;
	int64		position;
	int			i;
	MnemoCall	call;
	MemoryContext rowcxt;

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

		if (v->type != jbvBinary || !JsonContainerIsObject(v->val.binary.data))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s must be a JSON object", where)));
		obj = v->val.binary.data;
		ms[i].role = MnemoJsonbString(obj, "role", where, true);
		CheckRole(ms[i].role, where);
		ms[i].id = MnemoJsonbString(obj, "id", where, false);
		if (ms[i].id)
			MnemoCheckId(ms[i].id, "message id");
		ms[i].agent = MnemoJsonbString(obj, "agent", where, false);
		ms[i].model_id = MnemoJsonbString(obj, "model_id", where, false);
		ms[i].provider_id = MnemoJsonbString(obj, "provider_id", where, false);
		ms[i].run_id = MnemoJsonbString(obj, "run_id", where, false);
		field = getKeyJsonValueFromContainer(obj, "is_summary", 10, &buf);
		if (field && field->type != jbvNull)
		{
			if (field->type != jbvBool)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("%s: \"is_summary\" must be a boolean", where)));
			ms[i].is_summary = field->val.boolean;
		}
		nsummaries += ms[i].is_summary ? 1 : 0;
		ms[i].created_at = MnemoJsonbCount(obj, "created_at", where, PG_INT64_MAX);
		field = getKeyJsonValueFromContainer(obj, "parts", 5, &buf);
		if (field == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s: \"parts\" is required", where)));
		TakeParts(JsonbValueToJsonb(field), psprintf("%s.parts", where), &ms[i]);
		if (ms[i].id == NULL)
			ms[i].id = MnemoNewId(ms[i].is_summary ? "sum" : "msg");
	}

	MnemoConnect(&call);
	MnemoLockSession(session_id, n, n - nsummaries, true, &lock);
	seq = lock.last_seq - n + 1;
	position = lock.last_position - (n - nsummaries) + 1;
	rowcxt = RowContext();
	for (i = 0; i < n; i++)
	{
		AppendOne(session_id, &ms[i], &lock, seq + i, position, rowcxt);
		if (!ms[i].is_summary)
			position++;
	}
	if (n > 0)
		MnemoQueueSearch(session_id, lock.tenant, seq, seq + n - 1, false);
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
	Oid			types[2] = {TEXTOID, TEXTOID};
	Datum		values[2];
	MnemoPart	part;
	JsonbValue	v;
	MnemoSessionLock lock;
	MnemoCall	call;
	int64		seq;
	int32		part_index;

	v.type = jbvBinary;
	v.val.binary.data = &part_json->root;
	v.val.binary.len = VARSIZE(part_json) - VARHDRSZ;
	MnemoParsePart(&v, "part", &part);
	if (part.id == NULL)
		part.id = MnemoNewId("part");

	MnemoConnect(&call);
	MnemoLockSession(session_id, 0, 0, true, &lock);
	values[0] = CStringGetTextDatum(session_id);
	values[1] = CStringGetTextDatum(message_id);
	/* not read-only: it must see parts committed while we waited for the lock */
	MnemoPrepare(&find_message_plan,
				 "SELECT m.seq, (SELECT coalesce(max(p.part_index) + 1, 0) "
				 "FROM mnemo.message_parts p WHERE p.session_id = $1 AND p.message_id = $2) "
				 "FROM mnemo.messages m WHERE m.session_id = $1 AND m.id = $2",
				 2, types);
	if (MnemoExecute(find_message_plan, values, NULL, false, 1) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_MNEMO_MESSAGE_NOT_FOUND),
				 errmsg("message \"%s\" does not exist in session \"%s\"",
						message_id, session_id)));
	seq = MnemoGetInt64(0, 1, NULL);
	part_index = (int32) MnemoGetInt64(0, 2, NULL);

	MnemoInsertPart(session_id, lock.tenant, message_id, part_index, &part);
	MnemoQueueSearch(session_id, lock.tenant, seq, seq, true);
	MnemoNotify(lock.watched, lock.tenant, "part_created", session_id, part.id, seq);
	MnemoFinish(&call);

	PG_RETURN_INT32(part_index);
}
