-- Bug regression: the default TTL was a calendar day: current_setting('idem.default_ttl') reads
-- '1d', and timestamptz + '1 day' is 23 or 25 hours across a DST change of the session's TimeZone.
-- Fixed: leases and TTLs are stored and added as elapsed time (a day counts as 24 hours), whatever
-- the TimeZone; idem._ttl and idem._lease convert what the caller passes.
SET TimeZone = 'Europe/Berlin';
LOAD 'pg_idempotency';  -- defines the idem.* settings in this new session
SHOW idem.default_ttl;
SELECT idem._ttl(NULL) AS default_ttl, idem._ttl('1 day') AS one_day, idem._ttl('1 mon') AS one_month,
       idem._lease(NULL) AS default_lease, idem._lease('1 minute') AS one_minute;
-- Across the spring-forward night in Berlin (2026-03-29): a calendar day is 23 hours, a TTL 24.
SELECT extract(epoch FROM ('2026-03-28 12:00 Europe/Berlin'::timestamptz + interval '1 day') - '2026-03-28 12:00 Europe/Berlin'::timestamptz) / 3600 AS calendar_day_hours,
       extract(epoch FROM ('2026-03-28 12:00 Europe/Berlin'::timestamptz + idem._ttl(NULL)) - '2026-03-28 12:00 Europe/Berlin'::timestamptz) / 3600 AS ttl_hours,
       extract(epoch FROM ('2026-03-28 12:00 Europe/Berlin'::timestamptz + idem._ttl('1 day')) - '2026-03-28 12:00 Europe/Berlin'::timestamptz) / 3600 AS one_day_ttl_hours;
-- What the store keeps: the elapsed TTL, and an expiry exactly that far from resolution.
SELECT handle AS h, attempt AS a FROM idem.acquire('t-time', 'elapsed-key-00001', '{}'::jsonb, ttl => '1 day') \gset
SELECT idem.complete(:'h', :a, 200, '{}', '');
SELECT ttl, extract(day FROM ttl) AS day_field, extract(epoch FROM expires_at - resolved_at) AS expiry_seconds
  FROM idem.keys WHERE tenant_id = 't-time';
RESET TimeZone;
