-- accounts
CREATE TABLE orgs (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  created_at TEXT NOT NULL,
  balance INTEGER NOT NULL DEFAULT 0,
  max_concurrent INTEGER,
  rate_requests INTEGER,
  rate_per_seconds INTEGER
);
CREATE TABLE api_keys (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES orgs(id),
  name TEXT,
  secret_hash TEXT NOT NULL,
  created_at TEXT NOT NULL,
  last_used_at TEXT,
  revoked_at TEXT
);
CREATE INDEX api_keys_org ON api_keys(org_id);
CREATE TABLE ledger (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  org_id TEXT NOT NULL REFERENCES orgs(id),
  kind TEXT NOT NULL CHECK (kind IN ('charge', 'credit')),
  credits INTEGER NOT NULL,
  key_id TEXT,
  request_id TEXT,
  model TEXT,
  endpoint TEXT,
  characters INTEGER,
  reason TEXT,
  created_at TEXT NOT NULL
);
CREATE INDEX ledger_org ON ledger(org_id, id);
