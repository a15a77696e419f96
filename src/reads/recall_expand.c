/*
 * recall_expand.c
 *		mnemo.recall_expand(): the model's lcm_expand, what one summary covers
 *		rendered as text, a page at a time.
 *
 * expand_summary gives a program the covered items with their raw parts;
 * a model needs them as text, and no more of it than its context can take.
 * So each item directly under the summary (a message, or a summary it
 * condensed) is rendered part by part with render.c's renderer, the one
 * build_context uses, but with a tombstoned tool output shown whole (what
 * the tombstone took out of the context is what the model asks for), and
 * headed "[ROLE #seq id]".  Items come in order from offset while their
 * tokens (estimate_tokens, the one estimator) stay within max_tokens; the
 * first always comes, cut to max_tokens when it alone is larger.  items is
 * how many the summary covers, so the caller knows where the next page
 * starts (offset + the rows returned) and when there is none.
 *
 * The caller's tenant is checked on the session's line first (MN001); the
 * expansion itself is expand_summary's, called in this frame.  That call
 * resolves the session id again, as the extension's owner, which sees every
 * tenant's session of that id: it is made with mnemo.tenant set to the
 * tenant the line resolved to, for that statement only, so that it expands
 * the caller's session and not another tenant's of the same id (MN013).
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/jsonb.h"
#include "utils/tuplestore.h"

#include "mnemo.h"
#include "tenancy/tenancy.h"
#include "reads/reads.h"

#define RECALL_MIN_TOKENS 100
#define RECALL_MAX_TOKENS 100000

static SPIPlanPtr expand_plan;

/* one rendered item, before the page is cut */
typedef struct RecallItem
{
	int32		ordinal;
	char	   *item_type;
	char	   *item_id;
	int64		seq;
	char	   *role;
	StringInfoData text;
} RecallItem;

static void
PutItem(FunctionCallInfo fcinfo, RecallItem *it, int32 items, int32 max_tokens)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Datum		cols[8];
	bool		nulls[8] = {false};
	int32		tokens = MnemoEstimateTokens(it->text.data, it->text.len);

	if (tokens > max_tokens)
	{
		int			keep = pg_mbcliplen(it->text.data, it->text.len,
										Min(it->text.len, (int64) max_tokens * 4));

		it->text.len = keep;
		it->text.data[keep] = '\0';
		appendStringInfo(&it->text, "\n[cut here: the item holds about %d tokens; "
						 "search inside it with a pattern under this summary]", tokens);
		tokens = MnemoEstimateTokens(it->text.data, it->text.len);
	}
	cols[0] = Int32GetDatum(it->ordinal);
	cols[1] = CStringGetTextDatum(it->item_type);
	cols[2] = CStringGetTextDatum(it->item_id);
	cols[3] = Int64GetDatum(it->seq);
	cols[4] = CStringGetTextDatum(it->role);
	cols[5] = CStringGetTextDatum(it->text.data);
	cols[6] = Int32GetDatum(tokens);
	cols[7] = Int32GetDatum(items);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, cols, nulls);
}

PG_FUNCTION_INFO_V1(mnemo_recall_expand);
Datum
mnemo_recall_expand(PG_FUNCTION_ARGS)
{
	char	   *session_id = MnemoRequireTextArg(fcinfo, 0, "session_id");
	char	   *summary_id = MnemoRequireTextArg(fcinfo, 1, "summary_id");
	int32		offset = DatumGetInt32(MnemoRequireArg(fcinfo, 2, "offset"));
	int32		max_tokens = DatumGetInt32(MnemoRequireArg(fcinfo, 3, "max_tokens"));
	Datum		values[2];
	RecallItem	it = {0};
	uint64		rows;
	uint64		r;
	int32		items = 0;
	int64		used = 0;
	bool		full = false;
	int			nestlevel;
	MnemoLine	line;
	MnemoCall	call;

	if (offset < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("offset must not be negative, not %d", offset)));
	if (max_tokens < RECALL_MIN_TOKENS || max_tokens > RECALL_MAX_TOKENS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("max_tokens must be between %d and %d, not %d",
						RECALL_MIN_TOKENS, RECALL_MAX_TOKENS, max_tokens)));
	MnemoCheckId(summary_id, "summary_id");

	MnemoConnect(&call);
	MnemoReadLine(session_id, PG_INT64_MAX, false, false, &line);
	MnemoPrepare(&expand_plan,
				 "SELECT e.ord::int4, e.item_type, e.item_id, e.seq, e.role, "
				 "       p.value->>'type', p.value "
				 "FROM mnemo.expand_summary($1, $2, false) WITH ORDINALITY "
				 "  AS e(depth, summary_id, item_type, item_id, seq, role, parts, ord) "
				 "LEFT JOIN LATERAL jsonb_array_elements(e.parts) WITH ORDINALITY "
				 "  AS p(value, k) ON true "
				 "ORDER BY e.ord, p.k",
				 2, (Oid[]) {TEXTOID, TEXTOID});
	values[0] = CStringGetTextDatum(session_id);
	values[1] = CStringGetTextDatum(summary_id);
	nestlevel = NewGUCNestLevel();
	(void) set_config_option("mnemo.tenant", line.tenant, PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	rows = MnemoExecute(expand_plan, values, NULL, true, 0);
	AtEOXact_GUC(true, nestlevel);
	if (rows > 0)
		items = MnemoGetInt64(rows - 1, 1, NULL);

	InitMaterializedSRF(fcinfo, 0);
	for (r = 0; r < rows && !full; r++)
	{
		int32		ordinal = (int32) MnemoGetInt64(r, 1, NULL);
		bool		isnull;
		char	   *type;

		CHECK_FOR_INTERRUPTS();
		if (ordinal <= offset)
			continue;
		if (ordinal != it.ordinal)
		{
			if (it.ordinal != 0)
			{
				int32		tokens = MnemoEstimateTokens(it.text.data, it.text.len);

				/* the page is full: this item starts the next one */
				if (used > 0 && used + tokens > max_tokens)
				{
					full = true;
					break;
				}
				used += tokens;
				PutItem(fcinfo, &it, items, max_tokens);
			}
			it.ordinal = ordinal;
			it.item_type = MnemoGetText(r, 2, NULL);
			it.item_id = MnemoGetText(r, 3, NULL);
			it.seq = MnemoGetInt64(r, 4, NULL);
			it.role = MnemoGetText(r, 5, NULL);
			initStringInfo(&it.text);
			appendStringInfo(&it.text, "[%s #" INT64_FORMAT " %s]", it.role, it.seq, it.item_id);
		}
		type = MnemoGetText(r, 6, &isnull);
		if (isnull)
			continue;
		{
			Datum		jb = SPI_getbinval(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, 7, &isnull);

			/* the whole output, not the tombstone: it is what was asked for */
			appendStringInfoChar(&it.text, '\n');
			appendStringInfoString(&it.text,
								   MnemoRenderPart(type, DatumGetJsonbP(jb), 0, false));
		}
	}
	if (!full && it.ordinal != 0)
	{
		int32		tokens = MnemoEstimateTokens(it.text.data, it.text.len);

		if (used == 0 || used + tokens <= max_tokens)
			PutItem(fcinfo, &it, items, max_tokens);
	}
	MnemoFinish(&call);
	return (Datum) 0;
}
