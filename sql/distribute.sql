-- distribute: the Citus set-up.  Citus is not installed here, so the call
-- is refused with a hint and changes nothing; what it would distribute is
-- read from the catalog the same way (doc/scale-out.md).
SELECT mnemo.distribute();
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS citus FROM pg_extension WHERE extname = 'citus';

-- the column each table would be distributed by (NULL: a reference table)
SELECT c.relname, mnemo._session_column(c.oid) AS distribution_column
  FROM pg_class c
 WHERE c.relnamespace = 'mnemo'::regnamespace AND c.relkind IN ('r', 'p') AND NOT c.relispartition
 ORDER BY c.relname;

-- the functions it would delegate, by the argument that names the session
SELECT fn AS delegated, session_arg FROM mnemo._session_functions() ORDER BY fn::text;

-- only the superuser who sets up the cluster runs it
SELECT has_function_privilege('public', 'mnemo.distribute()', 'EXECUTE') AS public_may_distribute;

-- fork_session acts on two sessions (it reads the source and its ancestors
-- and writes the new one), one routable statement per session: not
-- delegated to one node (doc/scale-out.md)
SELECT count(*) AS fork_session_delegated FROM mnemo._session_functions()
 WHERE fn = 'mnemo.fork_session(text,text,text)'::regprocedure;
