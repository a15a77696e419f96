/*
 * tenancy.h
 *		Who calls and whose rows they are: the call frame of every SQL
 *		function and the tenant rule (tenant.c), the session check and the
 *		session lock every write takes first (session_lock.c), and the
 *		notifications of committed writes (notify.c).
 */
#ifndef MNEMO_TENANCY_H
#define MNEMO_TENANCY_H

#include "storage/itemptr.h"
#include "storage/lockdefs.h"
#include "utils/snapshot.h"

#include "mnemo.h"

/* tenant.c: the call frame of every SQL function, and tenancy */
typedef struct MnemoCall
{
	Oid			user;			/* to restore on exit */
	int			sec_context;
	Oid			prev_caller;
} MnemoCall;

extern void MnemoConnect(MnemoCall *call);
extern void MnemoFinish(MnemoCall *call);
extern bool MnemoTenantVisible(const char *tenant);
extern char *MnemoCallerTenant(void);
extern char *MnemoTenantGuess(bool *all);
extern char *MnemoTenantPreferred(void);
extern char *MnemoTenantOnly(void);

/*
 * The rule of MnemoTenantVisible as a condition on a table's tenant column,
 * for the statements that list rows of many sessions: role is the
 * parameter holding the caller's OID, all the one saying whether it sees
 * every tenant (a superuser or BYPASSRLS).  pg_has_role USAGE is
 * has_privs_of_role, of the role the tenant was registered with, which
 * still has its name.
 */
#define MNEMO_TENANT_VISIBLE_SQL(role, all) \
	"(" all " OR tenant IN (SELECT t.tenant FROM mnemo.tenants t " \
	"JOIN pg_catalog.pg_roles r ON r.oid = t.role_id AND r.rolname = t.tenant " \
	"WHERE pg_catalog.pg_has_role(" role ", r.oid, 'USAGE')))"

/*
 * A session's last seq, as SQL over its row s and an expression id naming
 * it: its newest own message's seq (a backward probe of the log's key,
 * through the view mnemo.messages, so that a session reads the same on a
 * schema before 0.13.0's), else where a fork's inheritance ends, else 0.  Appends take
 * their seqs from it under the session lock (tenancy/session_lock.c) and
 * write nothing to the session row.
 */
#define MNEMO_LAST_SEQ(s, id) \
	"coalesce((SELECT max(l_.seq) FROM mnemo.messages l_ " \
	"WHERE l_.session_id = " id " AND l_.tenant = " s ".tenant), " s ".fork_seq, 0)"

/* tenancy/session_lock.c: the session check, and the lock that orders every write */
typedef struct MnemoSessionLock
{
	int64		last_seq;		/* after reserving */
	bool		watched;
	char	   *agent;			/* the session's, the default for its messages */
	char	   *model_id;
	char	   *provider_id;
	char	   *tenant;
	int64		context_generation; /* the live generation of the context view */
	int64		context_dead;	/* rows deleted from it in place (see swap.c) */
	int64		context_tail_seq;	/* messages after it are the implicit tail of the view */
	bool		is_fork;		/* its line begins with what it inherited */
} MnemoSessionLock;

extern void MnemoLockSession(const char *session_id, int64 add_seq, bool require_active,
							 MnemoSessionLock *lock);
extern void MnemoLockSessionKey(const char *tenant, const char *session_id, LOCKMODE mode);
extern void MnemoCheckSession(const char *session_id, bool fresh, char **tenant, bool *watched);
extern uint64 MnemoSessionRows(SPIPlanPtr *plans, const char *sql, const char *session_id,
							   const char *tenant, bool read_only);
extern uint64 MnemoReadSession(SPIPlanPtr *plans, const char *sql, const char *session_id,
							   bool read_only, int tenant_col, int active_col, bool require_active);
extern uint64 MnemoCheckSessionRow(const char *session_id, uint64 nrows, int tenant_col,
								   int active_col, bool require_active);
extern void MnemoCheckSessionActive(const char *session_id, char **tenant, bool *watched);
extern void MnemoSessionInactive(const char *session_id) pg_attribute_noreturn();

/* session_row.c: what the session lock reads, by index probes */
extern bool MnemoSessionRowDirect(void);
extern bool MnemoReadSessionRow(const char *session_id, const char *tenant, Snapshot snapshot,
								MnemoSessionLock *lock, bool *is_active, ItemPointer ctid);

/* notify.c */
extern void MnemoNotify(bool watched, const char *tenant, const char *event,
						const char *session_id, const char *id, int64 seq);
extern void MnemoNotifyWith(bool watched, const char *tenant, const char *event,
							const char *session_id, const char *id, int64 seq,
							const char *extra);
extern char *MnemoTenantChannel(const char *tenant);

#endif							/* MNEMO_TENANCY_H */
