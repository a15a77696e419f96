/*
 * log.h
 *		The log and its writes: a summary appended as a message (append.c),
 *		the validation and storage of parts (parts.c), and the images stored
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
extern void MnemoInsertParts(const char *session_id, const char *tenant, int n,
							 const int64 *seqs, const int32 *part_indexes,
							 const MnemoPart *parts);
extern char *MnemoJsonbString(JsonbContainer *obj, const char *key, const char *where,
							  bool required);
extern int64 MnemoJsonbCount(JsonbContainer *obj, const char *key, const char *where,
							 int64 max);
extern void MnemoCheckToolState(const char *state, const char *where);

/* blobs.c: an image's base64 data stored once per tenant (MNEMO_PART_CONTENT reads it) */
extern Jsonb **MnemoStoreBlobs(const char *tenant, int n, const MnemoPart *parts);
extern void MnemoReleaseBlobs(const char *session_id, const char *tenant);

#endif							/* MNEMO_LOG_H */
