-- key policies, key-budget reservations, failed requests, the hourly usage rollup and the ledger's write clock
-- A key's policy: NULL means "no limit" (a key from before policies keeps every scope and model).
ALTER TABLE api_keys ADD COLUMN budget_credits BIGINT;
ALTER TABLE api_keys ADD COLUMN budget_period TEXT CHECK (budget_period IN ('day', 'month', 'total'));
ALTER TABLE api_keys ADD COLUMN scopes TEXT[];
ALTER TABLE api_keys ADD COLUMN models TEXT[];
ALTER TABLE api_keys ADD COLUMN expires_at TIMESTAMPTZ;
ALTER TABLE api_keys ADD COLUMN allowed_networks TEXT[];
-- A reservation made against a key's budget is a row of its own, naming the key.
ALTER TABLE reservations ADD COLUMN key_id TEXT;
CREATE INDEX reservations_key ON reservations(key_id, expires_at) WHERE key_id IS NOT NULL;
-- Requests admitted that ended in an error without a charge, recorded beside the ledger.
CREATE TABLE request_failures (
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES orgs(id),
  key_id TEXT,
  request_id TEXT NOT NULL UNIQUE,
  model TEXT,
  endpoint TEXT,
  code TEXT NOT NULL,
  created_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX request_failures_created ON request_failures(created_at, id);
-- Charges and failures per hour, organisation, key, model and endpoint ('' where the row has none),
-- kept by the transaction that writes the ledger row or the failure (the triggers below).
CREATE TABLE usage_hourly (
  hour TIMESTAMPTZ NOT NULL,
  org_id TEXT NOT NULL,
  key_id TEXT NOT NULL,
  model TEXT NOT NULL,
  endpoint TEXT NOT NULL,
  credits BIGINT NOT NULL DEFAULT 0,
  characters BIGINT NOT NULL DEFAULT 0,
  requests BIGINT NOT NULL DEFAULT 0,
  failed_requests BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (org_id, hour, key_id, model, endpoint)
);
CREATE INDEX usage_hourly_hour ON usage_hourly(hour);
CREATE INDEX usage_hourly_key ON usage_hourly(key_id, hour);
CREATE INDEX ledger_created ON ledger(created_at, id);
CREATE INDEX ledger_org_created ON ledger(org_id, created_at, id);

-- The write clock. Every ledger or failure row takes this lock (shared) and only then its time, so
-- a reader that takes it exclusively once (usage summaries and exports) waits for every write
-- already under way; any write after that carries a later time. A range that ends in the past
-- therefore never gains a row.
CREATE FUNCTION usage_write_clock() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  PERFORM pg_advisory_xact_lock_shared(7406211001);
  NEW.created_at := clock_timestamp();
  RETURN NEW;
END
$fn$;
CREATE TRIGGER ledger_write_clock BEFORE INSERT ON ledger FOR EACH ROW EXECUTE FUNCTION usage_write_clock();
CREATE TRIGGER request_failures_write_clock BEFORE INSERT ON request_failures FOR EACH ROW EXECUTE FUNCTION usage_write_clock();

-- A charge row opens a request unless it is a later batch of one (`<request id>/<n>`, n > 0).
CREATE FUNCTION ledger_usage_hourly() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  IF NEW.kind = 'charge' THEN
    INSERT INTO usage_hourly AS u (hour, org_id, key_id, model, endpoint, credits, characters, requests)
    VALUES (date_trunc('hour', NEW.created_at, 'UTC'), NEW.org_id, COALESCE(NEW.key_id, ''), COALESCE(NEW.model, ''),
      COALESCE(NEW.endpoint, ''), -NEW.credits, COALESCE(NEW.characters, 0),
      CASE WHEN NEW.charge_key IS NULL OR NEW.charge_key NOT LIKE '%/%' OR NEW.charge_key LIKE '%/0' THEN 1 ELSE 0 END)
    ON CONFLICT (org_id, hour, key_id, model, endpoint) DO UPDATE SET
      credits = u.credits + excluded.credits, characters = u.characters + excluded.characters, requests = u.requests + excluded.requests;
  END IF;
  RETURN NULL;
END
$fn$;
CREATE TRIGGER ledger_usage_hourly AFTER INSERT ON ledger FOR EACH ROW EXECUTE FUNCTION ledger_usage_hourly();

CREATE FUNCTION request_failures_usage_hourly() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  INSERT INTO usage_hourly AS u (hour, org_id, key_id, model, endpoint, failed_requests)
  VALUES (date_trunc('hour', NEW.created_at, 'UTC'), NEW.org_id, COALESCE(NEW.key_id, ''), COALESCE(NEW.model, ''), COALESCE(NEW.endpoint, ''), 1)
  ON CONFLICT (org_id, hour, key_id, model, endpoint) DO UPDATE SET failed_requests = u.failed_requests + 1;
  RETURN NULL;
END
$fn$;
CREATE TRIGGER request_failures_usage_hourly AFTER INSERT ON request_failures FOR EACH ROW EXECUTE FUNCTION request_failures_usage_hourly();

-- The rollup of the rows already in the ledger.
INSERT INTO usage_hourly (hour, org_id, key_id, model, endpoint, credits, characters, requests)
SELECT date_trunc('hour', created_at, 'UTC'), org_id, COALESCE(key_id, ''), COALESCE(model, ''), COALESCE(endpoint, ''),
  -SUM(credits), COALESCE(SUM(characters), 0),
  SUM(CASE WHEN charge_key IS NULL OR charge_key NOT LIKE '%/%' OR charge_key LIKE '%/0' THEN 1 ELSE 0 END)
FROM ledger WHERE kind = 'charge'
GROUP BY 1, 2, 3, 4, 5;

-- ledger_reserve_budget_v1: reservations that also hold against a key's budget, each a row of its
-- own naming the key, decided in queue order under the organisation's row lock (which every key of
-- the organisation shares): granted while balance − (other rows + the share's open holds) > 0, as
-- every reservation, and while budget − (charged since the period began + the key's open rows) > 0.
-- A repeated id holds nothing twice. Answers [balance, granted[], reserved[], spent[], held[]], or
-- NULL for an unknown organisation.
CREATE FUNCTION ledger_reserve_budget_v1(
  org text, share_id text, share_open bigint,
  ids text[], key_ids text[], credits bigint[], expires bigint[], budgets bigint[], sinces timestamptz[]
) RETURNS json LANGUAGE plpgsql AS $fn$
DECLARE
  org_balance bigint;
  clock_ms bigint;
  others bigint;
  held_before bigint;
  k_spent bigint;
  k_held bigint;
  n_count int := cardinality(ids);
  granted boolean[] := array_fill(false, ARRAY[cardinality(ids)]);
  reserved bigint[] := array_fill(0::bigint, ARRAY[cardinality(ids)]);
  spent bigint[] := array_fill(0::bigint, ARRAY[cardinality(ids)]);
  held bigint[] := array_fill(0::bigint, ARRAY[cardinality(ids)]);
BEGIN
  SELECT o.balance INTO org_balance FROM orgs o WHERE o.id = org FOR UPDATE;
  IF NOT FOUND THEN
    RETURN NULL;
  END IF;
  clock_ms := (extract(epoch FROM clock_timestamp()) * 1000)::bigint;
  SELECT COALESCE(sum(r.credits), 0) INTO others FROM reservations r WHERE r.org_id = org AND r.expires_at > clock_ms AND r.id <> share_id;
  FOR n IN 1..n_count LOOP
    SELECT r.credits INTO held_before FROM reservations r WHERE r.id = ids[n] AND r.org_id = org AND r.expires_at > clock_ms;
    IF FOUND THEN
      granted[n] := true;
      reserved[n] := others + share_open - held_before;
      CONTINUE;
    END IF;
    SELECT COALESCE(sum(u.credits), 0) INTO k_spent FROM usage_hourly u WHERE u.key_id = key_ids[n] AND u.hour >= sinces[n];
    SELECT COALESCE(sum(r.credits), 0) INTO k_held FROM reservations r WHERE r.key_id = key_ids[n] AND r.expires_at > clock_ms;
    spent[n] := k_spent;
    held[n] := k_held;
    reserved[n] := others + share_open;
    IF org_balance - (others + share_open) > 0 AND budgets[n] - (k_spent + k_held) > 0 THEN
      INSERT INTO reservations (id, org_id, credits, expires_at, key_id) VALUES (ids[n], org, credits[n], expires[n], key_ids[n])
      ON CONFLICT (id) DO UPDATE SET credits = excluded.credits, expires_at = excluded.expires_at, key_id = excluded.key_id;
      granted[n] := true;
      others := others + credits[n];
    END IF;
  END LOOP;
  RETURN json_build_array(org_balance, granted, reserved, spent, held);
END
$fn$;

-- Usage alerts: thresholds of a key's budget (percent) or of an organisation's balance, each firing
-- once per threshold per period into an outbox of signed webhooks.
CREATE TABLE usage_alerts (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES orgs(id),
  key_id TEXT,
  url TEXT NOT NULL,
  budget_percent INTEGER[],
  balance_below BIGINT[],
  created_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX usage_alerts_org ON usage_alerts(org_id, created_at, id);
CREATE TABLE usage_alert_events (
  id TEXT PRIMARY KEY,
  alert_id TEXT NOT NULL REFERENCES usage_alerts(id) ON DELETE CASCADE,
  org_id TEXT NOT NULL,
  threshold TEXT NOT NULL,
  period TEXT NOT NULL,
  body TEXT NOT NULL,
  created_at TIMESTAMPTZ NOT NULL,
  state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'failed')),
  attempts INTEGER NOT NULL DEFAULT 0,
  next_at BIGINT,
  UNIQUE (alert_id, threshold, period)
);
CREATE INDEX usage_alert_events_due ON usage_alert_events(state, next_at);
CREATE INDEX ledger_org_kind ON ledger(org_id, kind, id);
