/*
 * log.h
 *		The log and its writes: a summary appended as a message (append.c),
 *		the validation and storage of parts (parts.c), and the images stored
 *		once per tenant, with the one SQL that reads a part's content back
 *		(blobs.c, MNEMO_PART_CONTENT).
 */
#ifndef MNEMO_LOG_H
#define MNEMO_LOG_H

#include "utils/jsonb.h"

#include "mnemo.h"
#include "tenancy/tenancy.h"

/*
 * blobs.c: the content of part p (an alias of mnemo.message_parts) as it was
 * appended.  An image whose base64 "data" is stored as a blob has, in its
 * place, an object naming the blob; this puts the base64 back
 * (mnemo._base64: pg_b64_encode's text, without encode()'s line breaks,
 * which the append checked gives the appended string exactly).  Every read
 * that returns a part's content selects it through this, and only this.
 */
#define MNEMO_PART_CONTENT \
	"CASE WHEN p.part_type = 'image' AND jsonb_typeof(p.content -> 'data') = 'object' " \
	"THEN p.content || jsonb_build_object('data', " \
	"(SELECT mnemo._base64(b.bytes) FROM mnemo.blobs b " \
	"WHERE b.tenant = p.tenant AND b.sha256 = decode(p.content -> 'data' ->> 'sha256', 'hex'))) " \
	"ELSE p.content END"

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
							 char **message_ids, const int32 *part_indexes,
							 const MnemoPart *parts);
extern char *MnemoJsonbString(JsonbContainer *obj, const char *key, const char *where,
							  bool required);
extern int64 MnemoJsonbCount(JsonbContainer *obj, const char *key, const char *where,
							 int64 max);
extern void MnemoCheckToolState(const char *state, const char *where);
/* 22023 if jb nests deeper than MNEMO_MAX_JSON_DEPTH (mnemo.h) */
extern void MnemoCheckJsonDepth(Jsonb *jb, const char *where);

/* blobs.c: an image's base64 data stored once per tenant (MNEMO_PART_CONTENT reads it) */
extern Jsonb **MnemoStoreBlobs(const char *tenant, int n, const MnemoPart *parts);
extern void MnemoReleaseBlobs(const char *session_id, const char *tenant);

#endif							/* MNEMO_LOG_H */
