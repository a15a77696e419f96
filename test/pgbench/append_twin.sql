-- pgbench script for test/concurrency.sh: appends to session conc_twin of tenant conc_ta or conc_tb, chosen at random each time (mnemo.tenant, set for the transaction first).
\set t random(0, 1)
SELECT mnemo.append_message('conc_twin', 'user', jsonb_build_array(jsonb_build_object('type', 'text', 'text', c.tenant)))
  FROM (SELECT 'conc_t' || CASE WHEN :t::int = 0 THEN 'a' ELSE 'b' END AS tenant) c,
       LATERAL (SELECT set_config('mnemo.tenant', c.tenant, true)) s;
