/*
 * log.h
 *		The log and its writes: a summary appended as a message (append.c),
 *		the validation of parts (parts.c), the rows of mnemo.log (log_rows.c), and the images stored
 *		once per tenant (blobs.c; reads/reads.h's MNEMO_PART_CONTENT reads a
 *		part's content back).
 */
#ifndef MNEMO_LOG_H
#define MNEMO_LOG_H

#include "utils/jsonb.h"

#include "mnemo.h"
#include "tenancy/tenancy.h"

/* append.c */
extern void MnemoAppendSummaryMessage(const char *session_id, const char *summary_id,
									  const char *model_id, const char *provider_id,
									  Jsonb *parts, MnemoSessionLock *lock, int64 seq,
									  int64 created_at);

/* parts.c: validation and storage of one part object */
typedef struct MnemoPart
{
	Jsonb	   *content;		/* the part object exactly as given */
	char	   *id;
	char	   *part_type;
	char	   *tool_name;
	char	   *tool_call_id;
	char	   *tool_state;
	int32		token_estimate;
} MnemoPart;

extern void MnemoParsePart(JsonbValue *part, const char *where, MnemoPart *out);
extern char *MnemoJsonbString(JsonbContainer *obj, const char *key, const char *where,
							  bool required);
extern int64 MnemoJsonbCount(JsonbContainer *obj, const char *key, const char *where,
							 int64 max);
extern void MnemoCheckToolState(const char *state, const char *where);

/* log_rows.c: a message's own columns, on its part 0 row */
typedef struct MnemoLogMessage
{
	const char *id;
	const char *role;
	int64		created_at;
	const char *agent;
	const char *model_id;
	const char *provider_id;
	const char *run_id;
	bool		is_summary;
} MnemoLogMessage;

/*
 * n rows of mnemo.log: row r at seqs[r] and part_indexes[r], with
 * messages[r] its message's columns on a part 0 row (else NULL) and
 * parts[r] its part (NULL: the row of a message without parts)
 */
typedef struct MnemoLogRows
{
	int			n;
	const int64 *seqs;
	const int32 *part_indexes;
	const MnemoLogMessage *const *messages;
	const MnemoPart *const *parts;
} MnemoLogRows;

extern void MnemoInsertLog(const char *session_id, const char *tenant, const MnemoLogRows *rows);
extern void MnemoFillFirstPart(const char *session_id, const char *tenant, int64 seq,
							   const MnemoPart *part);

/* blobs.c: an image's base64 data stored once per tenant (MNEMO_PART_CONTENT reads it) */
extern Jsonb **MnemoStoreBlobs(const char *tenant, int n, const MnemoPart *const *parts);
extern void MnemoReleaseBlobs(const char *session_id, const char *tenant);

#endif							/* MNEMO_LOG_H */
