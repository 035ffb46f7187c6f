-- job queue and named leases
CREATE TABLE jobs (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES orgs(id),
  key_id TEXT,
  status TEXT NOT NULL CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
  spec JSON NOT NULL,
  model TEXT NOT NULL,
  characters INTEGER NOT NULL,
  credits BIGINT NOT NULL,
  segments_total INTEGER NOT NULL,
  segments_done INTEGER NOT NULL DEFAULT 0,
  characters_done INTEGER NOT NULL DEFAULT 0,
  audio_seconds DOUBLE PRECISION NOT NULL DEFAULT 0,
  webhook_url TEXT,
  idempotency_key TEXT,
  billing TEXT NOT NULL DEFAULT 'held' CHECK (billing IN ('held', 'charged', 'released')),
  result JSON,
  error JSON,
  created_at TIMESTAMPTZ NOT NULL,
  started_at TIMESTAMPTZ,
  finished_at TIMESTAMPTZ,
  expires_at TIMESTAMPTZ,
  lease_token TEXT,
  lease_expires_at BIGINT,
  attempts INTEGER NOT NULL DEFAULT 0,
  webhook_state TEXT NOT NULL DEFAULT 'none' CHECK (webhook_state IN ('none', 'pending', 'delivered', 'failed')),
  webhook_attempts INTEGER NOT NULL DEFAULT 0,
  webhook_next_at BIGINT
);
CREATE UNIQUE INDEX jobs_idempotency ON jobs(org_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
CREATE INDEX jobs_org ON jobs(org_id, created_at, id);
CREATE INDEX jobs_unfinished ON jobs(org_id) WHERE status IN ('queued', 'running');
CREATE INDEX jobs_claim ON jobs(status, created_at, id) WHERE status IN ('queued', 'running');
CREATE INDEX jobs_expiry ON jobs(expires_at, id) WHERE expires_at IS NOT NULL;
CREATE INDEX jobs_unbilled ON jobs(finished_at, id) WHERE billing = 'held' AND status IN ('succeeded', 'failed', 'cancelled');
CREATE INDEX jobs_webhook_due ON jobs(webhook_next_at, id) WHERE webhook_state = 'pending';
CREATE TABLE leaders (
  name TEXT PRIMARY KEY,
  owner TEXT NOT NULL,
  expires_at BIGINT NOT NULL
);
