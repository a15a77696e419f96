/*
 * lineage.c
 *		A session's live line: which messages, of which sessions, its reads
 *		see, in seq order.
 *
 * A session that is not a fork and was never resumed has one segment: its
 * own messages, all of them.  A fork (fork.c) inherits ranges of its
 * ancestors' messages by reference, written once in mnemo.lineage (the
 * ancestors' later appends are past those ranges, so they never show); its
 * own messages follow, from fork_seq + 1.  A resume (resume.c) takes ranges
 * of the session's own messages off the line (mnemo.discarded): they stay
 * stored and readable through list_discarded.  Seqs along a line strictly
 * increase; they are dense but for the gaps of discarded ranges and of a
 * fork after a run (in-flight runs' messages are not inherited).
 *
 * Reading a line is one statement on the session's row, plus one on
 * mnemo.lineage for a fork and one on mnemo.discarded after a resume; each
 * segment is then read with its own statement, filtered by the one session
 * whose rows it holds (session_id = owner AND tenant = line->tenant AND seq
 * BETWEEN ...): no statement joins two sessions, so each is routable to one
 * shard.  Session ids are unique only within a tenant; a fork's ancestors
 * are always of the fork's own tenant, so line->tenant names every
 * segment's owner.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "utils/builtins.h"

#include "mnemo.h"
#include "tenancy/tenancy.h"
#include "reads/reads.h"

static SPIPlanPtr session_plans[2];
static SPIPlanPtr lineage_plan;
static SPIPlanPtr discarded_plan;
static SPIPlanPtr find_plan;

static void
AddSegment(MnemoLine *line, const char *owner, int64 from, int64 to)
{
	MnemoSegment *seg;

	if (from > to)
		return;
	if (line->nsegs == line->maxsegs)
	{
		line->maxsegs = Max(8, line->maxsegs * 2);
		line->segs = line->segs ? repalloc(line->segs, sizeof(MnemoSegment) * line->maxsegs)
			: palloc(sizeof(MnemoSegment) * line->maxsegs);
	}
	seg = &line->segs[line->nsegs++];
	seg->owner = pstrdup(owner);
	seg->from = from;
	seg->to = to;
}

/* the session row MnemoReadLine reads, of the session(s) with id $1 */
#define LINE_SESSION \
	"SELECT s.tenant, s.is_active, s.fork_seq, s.discards, " MNEMO_LAST_SEQ("s", "$1") ", " \
	"s.parent_id, s.forks FROM mnemo.sessions s WHERE s.id = $1"

/*
 * The live line of session_id, in seq order, its own messages up to upto
 * (PG_INT64_MAX for all).  MN001 if the session does not exist or is not
 * visible, MN013 if the id names sessions of several tenants the caller
 * sees (MnemoCheckSessionRow); MN012 if it is inactive and require_active.
 * A caller that sees one tenant only probes (id, that tenant), so another
 * tenant's id costs what a missing one does (MnemoTenantOnly).  fresh reads
 * with a fresh snapshot (after taking a lock).  Inside SPI.
 */
void
MnemoReadLine(const char *session_id, int64 upto, bool fresh, bool require_active,
			  MnemoLine *line)
{
	Datum		values[2];
	int64		own_from;
	uint64		row;
	uint64		n;
	uint64		i;

	memset(line, 0, sizeof(*line));
	line->session_id = pstrdup(session_id);
	row = MnemoReadSession(session_plans, LINE_SESSION, session_id, !fresh, 1, 2, require_active);
	line->tenant = MnemoGetText(row, 1, NULL);
	line->fork_seq = MnemoGetInt64(row, 3, &line->not_fork);
	line->is_fork = !line->not_fork;
	line->discards = MnemoGetInt64(row, 4, NULL);
	line->last_seq = MnemoGetInt64(row, 5, NULL);
	line->parent_id = MnemoGetText(row, 6, NULL);
	line->forks = MnemoGetInt64(row, 7, NULL);

	values[0] = CStringGetTextDatum(session_id);
	values[1] = CStringGetTextDatum(line->tenant);
	if (line->is_fork)
	{
		MnemoPrepare(&lineage_plan,
					 "SELECT ancestor_id, seq_from, seq_to FROM mnemo.lineage "
					 "WHERE session_id = $1 AND tenant = $2 ORDER BY seq_from",
					 2, (Oid[]) {TEXTOID, TEXTOID});
		n = MnemoExecute(lineage_plan, values, NULL, !fresh, 0);
		for (i = 0; i < n; i++)
			AddSegment(line, MnemoGetText(i, 1, NULL), MnemoGetInt64(i, 2, NULL),
					   Min(MnemoGetInt64(i, 3, NULL), upto));
		line->ninherited = line->nsegs;
	}

	/* the own messages, without the discarded ranges */
	own_from = line->is_fork ? line->fork_seq + 1 : 1;
	if (line->discards > 0)
	{
		MnemoPrepare(&discarded_plan,
					 "SELECT seq_from, seq_to FROM mnemo.discarded "
					 "WHERE session_id = $1 AND tenant = $2 ORDER BY seq_from",
					 2, (Oid[]) {TEXTOID, TEXTOID});
		n = MnemoExecute(discarded_plan, values, NULL, !fresh, 0);
		for (i = 0; i < n; i++)
		{
			int64		from = MnemoGetInt64(i, 1, NULL);
			int64		to = MnemoGetInt64(i, 2, NULL);

			AddSegment(line, session_id, own_from, Min(from - 1, upto));
			own_from = Max(own_from, to + 1);
		}
	}
	AddSegment(line, session_id, own_from, upto);
}

/* The segment of the line holding seq, or NULL if seq is not on it. */
MnemoSegment *
MnemoLineSegment(MnemoLine *line, int64 seq)
{
	int			i;

	for (i = 0; i < line->nsegs; i++)
		if (seq >= line->segs[i].from && seq <= line->segs[i].to)
			return &line->segs[i];
	return NULL;
}

/*
 * Find message_id on the line: the session's own messages first (a
 * discarded one too: it stays readable by id), then each ancestor's, where
 * it must be within what the fork inherited.  Sets *owner and *seq and
 * returns true when found.
 */
bool
MnemoLineFindMessage(MnemoLine *line, const char *message_id, char **owner, int64 *seq)
{
	int			i;

	for (i = -1; i < line->ninherited; i++)
	{
		const char *session = i < 0 ? line->session_id : line->segs[i].owner;
		MnemoSegment *seg;

		/* each ancestor once: its segments are adjacent */
		if (i > 0 && strcmp(session, line->segs[i - 1].owner) == 0)
			continue;
		MnemoPrepare(&find_plan,
					 "SELECT seq FROM mnemo.messages "
					 "WHERE session_id = $1 AND tenant = $3 AND id = $2",
					 3, (Oid[]) {TEXTOID, TEXTOID, TEXTOID});
		if (MnemoExecute(find_plan,
						 (Datum[]) {CStringGetTextDatum(session), CStringGetTextDatum(message_id),
						 CStringGetTextDatum(line->tenant)},
						 NULL, true, 1) != 1)
			continue;
		*seq = MnemoGetInt64(0, 1, NULL);
		seg = MnemoLineSegment(line, *seq);
		if (i >= 0 && (seg == NULL || strcmp(seg->owner, session) != 0))
			continue;
		*owner = pstrdup(session);
		return true;
	}
	return false;
}
