-- accounts, ledger with charge keys, reservations, voices and pronunciation dictionaries
CREATE TABLE orgs (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  balance BIGINT NOT NULL DEFAULT 0,
  max_concurrent INTEGER,
  rate_requests INTEGER,
  rate_per_seconds INTEGER
);
CREATE TABLE api_keys (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES orgs(id),
  name TEXT,
  secret_hash TEXT NOT NULL,
  created_at TIMESTAMPTZ NOT NULL,
  last_used_at TIMESTAMPTZ,
  revoked_at TIMESTAMPTZ
);
CREATE INDEX api_keys_org ON api_keys(org_id);
CREATE TABLE ledger (
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES orgs(id),
  kind TEXT NOT NULL CHECK (kind IN ('charge', 'credit')),
  credits BIGINT NOT NULL,
  key_id TEXT,
  request_id TEXT,
  charge_key TEXT UNIQUE,
  client_request_id TEXT,
  model TEXT,
  endpoint TEXT,
  characters INTEGER,
  reason TEXT,
  created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX ledger_org ON ledger(org_id, id);
CREATE TABLE reservations (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES orgs(id),
  credits BIGINT NOT NULL CHECK (credits >= 0),
  expires_at BIGINT NOT NULL,
  created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX reservations_org ON reservations(org_id, expires_at);
CREATE TABLE voices (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES orgs(id),
  name TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  gender TEXT NOT NULL,
  language TEXT NOT NULL,
  accent TEXT,
  transcript TEXT,
  clip BYTEA NOT NULL,
  clip_seconds DOUBLE PRECISION NOT NULL,
  created_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX voices_org ON voices(org_id, created_at, id);
CREATE TABLE voice_profiles (
  voice_id TEXT NOT NULL REFERENCES voices(id) ON DELETE CASCADE,
  engine_type TEXT NOT NULL,
  data JSON NOT NULL,
  created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY (voice_id, engine_type)
);
CREATE TABLE pronunciation_dicts (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES orgs(id),
  name TEXT NOT NULL,
  items JSON NOT NULL,
  pinned BOOLEAN NOT NULL DEFAULT false,
  created_at TIMESTAMPTZ NOT NULL,
  updated_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX pronunciation_dicts_org ON pronunciation_dicts(org_id, created_at, id);
