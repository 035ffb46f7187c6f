-- key policies, key-budget reservations, failed requests and the hourly usage rollup
-- A key's policy: NULL means "no limit" (a key from before policies keeps every scope and model).
ALTER TABLE api_keys ADD COLUMN budget_credits INTEGER;
ALTER TABLE api_keys ADD COLUMN budget_period TEXT CHECK (budget_period IN ('day', 'month', 'total'));
ALTER TABLE api_keys ADD COLUMN scopes TEXT;
ALTER TABLE api_keys ADD COLUMN models TEXT;
ALTER TABLE api_keys ADD COLUMN expires_at TEXT;
ALTER TABLE api_keys ADD COLUMN allowed_networks TEXT;
-- A reservation made against a key's budget is a row of its own, naming the key.
ALTER TABLE reservations ADD COLUMN key_id TEXT;
CREATE INDEX reservations_key ON reservations(key_id, expires_at) WHERE key_id IS NOT NULL;
-- Requests admitted that ended in an error without a charge, recorded beside the ledger.
CREATE TABLE request_failures (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  org_id TEXT NOT NULL REFERENCES orgs(id),
  key_id TEXT,
  request_id TEXT NOT NULL UNIQUE,
  model TEXT,
  endpoint TEXT,
  code TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX request_failures_created ON request_failures(created_at, id);
-- Charges and failures per hour, organisation, key, model and endpoint ('' where the row has none),
-- kept by the transaction that writes the ledger row or the failure (the triggers below).
CREATE TABLE usage_hourly (
  hour TEXT NOT NULL,
  org_id TEXT NOT NULL,
  key_id TEXT NOT NULL,
  model TEXT NOT NULL,
  endpoint TEXT NOT NULL,
  credits INTEGER NOT NULL DEFAULT 0,
  characters INTEGER NOT NULL DEFAULT 0,
  requests INTEGER NOT NULL DEFAULT 0,
  failed_requests INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (org_id, hour, key_id, model, endpoint)
);
CREATE INDEX usage_hourly_hour ON usage_hourly(hour);
CREATE INDEX usage_hourly_key ON usage_hourly(key_id, hour);
CREATE INDEX ledger_created ON ledger(created_at, id);
CREATE INDEX ledger_org_created ON ledger(org_id, created_at, id);
-- A charge row opens a request unless it is a later batch of one (`<request id>/<n>`, n > 0).
CREATE TRIGGER ledger_usage_hourly AFTER INSERT ON ledger WHEN NEW.kind = 'charge' BEGIN
  INSERT INTO usage_hourly (hour, org_id, key_id, model, endpoint, credits, characters, requests)
  VALUES (substr(NEW.created_at, 1, 13) || ':00:00.000Z', NEW.org_id, COALESCE(NEW.key_id, ''), COALESCE(NEW.model, ''),
    COALESCE(NEW.endpoint, ''), -NEW.credits, COALESCE(NEW.characters, 0),
    CASE WHEN NEW.charge_key IS NULL OR NEW.charge_key NOT LIKE '%/%' OR NEW.charge_key LIKE '%/0' THEN 1 ELSE 0 END)
  ON CONFLICT (org_id, hour, key_id, model, endpoint) DO UPDATE SET
    credits = credits + excluded.credits, characters = characters + excluded.characters, requests = requests + excluded.requests;
END;
CREATE TRIGGER request_failures_usage_hourly AFTER INSERT ON request_failures BEGIN
  INSERT INTO usage_hourly (hour, org_id, key_id, model, endpoint, failed_requests)
  VALUES (substr(NEW.created_at, 1, 13) || ':00:00.000Z', NEW.org_id, COALESCE(NEW.key_id, ''), COALESCE(NEW.model, ''), COALESCE(NEW.endpoint, ''), 1)
  ON CONFLICT (org_id, hour, key_id, model, endpoint) DO UPDATE SET failed_requests = failed_requests + 1;
END;
-- The rollup of the rows already in the ledger.
INSERT INTO usage_hourly (hour, org_id, key_id, model, endpoint, credits, characters, requests)
SELECT substr(created_at, 1, 13) || ':00:00.000Z', org_id, COALESCE(key_id, ''), COALESCE(model, ''), COALESCE(endpoint, ''),
  -SUM(credits), COALESCE(SUM(characters), 0),
  SUM(CASE WHEN charge_key IS NULL OR charge_key NOT LIKE '%/%' OR charge_key LIKE '%/0' THEN 1 ELSE 0 END)
FROM ledger WHERE kind = 'charge'
GROUP BY 1, 2, 3, 4, 5;
-- Usage alerts: thresholds of a key's budget (percent) or of an organisation's balance, each firing
-- once per threshold per period into an outbox of signed webhooks.
CREATE TABLE usage_alerts (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES orgs(id),
  key_id TEXT,
  url TEXT NOT NULL,
  budget_percent TEXT,
  balance_below TEXT,
  created_at TEXT NOT NULL
);
CREATE INDEX usage_alerts_org ON usage_alerts(org_id, created_at, id);
CREATE TABLE usage_alert_events (
  id TEXT PRIMARY KEY,
  alert_id TEXT NOT NULL REFERENCES usage_alerts(id) ON DELETE CASCADE,
  org_id TEXT NOT NULL,
  threshold TEXT NOT NULL,
  period TEXT NOT NULL,
  body TEXT NOT NULL,
  created_at TEXT NOT NULL,
  state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'failed')),
  attempts INTEGER NOT NULL DEFAULT 0,
  next_at INTEGER,
  UNIQUE (alert_id, threshold, period)
);
CREATE INDEX usage_alert_events_due ON usage_alert_events(state, next_at);
CREATE INDEX ledger_org_kind ON ledger(org_id, kind, id);
