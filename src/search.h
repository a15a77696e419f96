/*
 * search.h
 *		The full-text search of the log: what is searched (search.c) and
 *		the index built off the append path (search_index.c).
 */
#ifndef MNEMO_SEARCH_H
#define MNEMO_SEARCH_H

/*
 * The searched text of a part (alias p of mnemo.message_parts) and its
 * tsvector, as search_index.c stores it in mnemo.search_documents: the
 * first 100,000 characters of the part's text fields, without runs of 255
 * or more non-blank characters (a tsvector holds 1 MB, a word 2 KB: indexing
 * must never fail or warn).
 */
#define SEARCH_DOC \
	"regexp_replace(left(" \
	"coalesce(p.content->>'text', '') || ' ' || coalesce(p.content->>'tool_name', '') " \
	"|| ' ' || coalesce(p.content->>'input', '') || ' ' || coalesce(p.content->>'output', '') " \
	"|| ' ' || coalesce(p.content->>'error_message', '') || ' ' || coalesce(p.content->>'path', '') " \
	"|| ' ' || coalesce(p.content->>'summary', ''), 100000), '[^[:space:]]{255,}', ' ', 'g')"
#define SEARCH_TSV "to_tsvector('simple'::regconfig, " SEARCH_DOC ")"
/* the query gets the same cleaning, so a long run in it is ignored, not warned about */
#define SEARCH_CLEAN(x) "regexp_replace(left(" x ", 100000), '[^[:space:]]{255,}', ' ', 'g')"
#define SEARCH_QUERY "websearch_to_tsquery('simple'::regconfig, " SEARCH_CLEAN("$2") ")"

/* search_history's limits on a query and its snippets (search.c says why) */
#define MNEMO_MAX_SEARCH_QUERY 10000	/* bytes */
#define MNEMO_MAX_SEARCH_NODES 63	/* terms and operators: 32 words */
#define MNEMO_SNIPPET_CHARS 20000

/* what one search costs at most, whatever the session's size (search.c) */
#define MNEMO_SEARCH_SLICE 500		/* waiting messages indexed first, per session */
#define MNEMO_SEARCH_DIRECT 2000	/* newest messages not yet indexed, read directly */
#define MNEMO_RANK_CANDIDATES 1000	/* newest matching messages a ranked search ranks */

extern void MnemoQueueSearch(const char *session_id, const char *tenant, int64 seq);
extern int64 MnemoDrainSearch(const char *session_id, int32 max_messages);
extern int64 MnemoSearchPending(const char *session_id, bool fresh);
extern bool MnemoCanDrainSearch(void);

#endif							/* MNEMO_SEARCH_H */
