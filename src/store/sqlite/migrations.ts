/**
 * @module store/sqlite/migrations
 * Versioned schema migrations for the SQLite store. Append only: a shipped
 * migration is never edited; a change is a new version.
 */

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: Migration[] = [
  {
    version: 1,
    name: 'accounts',
    sql: `
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
    `,
  },
  {
    version: 2,
    name: 'voices and pronunciation dictionaries',
    sql: `
      CREATE TABLE voices (
        id TEXT PRIMARY KEY,
        org_id TEXT NOT NULL REFERENCES orgs(id),
        name TEXT NOT NULL,
        description TEXT NOT NULL DEFAULT '',
        gender TEXT NOT NULL,
        language TEXT NOT NULL,
        accent TEXT,
        transcript TEXT,
        clip BLOB NOT NULL,
        clip_seconds REAL NOT NULL,
        created_at TEXT NOT NULL
      );
      CREATE INDEX voices_org ON voices(org_id, created_at, id);
      CREATE TABLE voice_profiles (
        voice_id TEXT NOT NULL REFERENCES voices(id) ON DELETE CASCADE,
        engine_type TEXT NOT NULL,
        data TEXT NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (voice_id, engine_type)
      );
      CREATE TABLE pronunciation_dicts (
        id TEXT PRIMARY KEY,
        org_id TEXT NOT NULL REFERENCES orgs(id),
        name TEXT NOT NULL,
        items TEXT NOT NULL,
        pinned INTEGER NOT NULL DEFAULT 0,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE INDEX pronunciation_dicts_org ON pronunciation_dicts(org_id, created_at, id);
    `,
  },
  {
    version: 3,
    name: 'idempotent charge keys, client request ids and reservations',
    sql: `
      ALTER TABLE ledger ADD COLUMN charge_key TEXT;
      ALTER TABLE ledger ADD COLUMN client_request_id TEXT;
      CREATE UNIQUE INDEX ledger_charge_key ON ledger(charge_key);
      CREATE TABLE reservations (
        id TEXT PRIMARY KEY,
        org_id TEXT NOT NULL REFERENCES orgs(id),
        credits INTEGER NOT NULL CHECK (credits >= 0),
        expires_at INTEGER NOT NULL,
        created_at TEXT NOT NULL
      );
      CREATE INDEX reservations_org ON reservations(org_id, expires_at);
    `,
  },
  {
    version: 4,
    name: 'job queue and named leases',
    // Layout and rules: src/store/job-row.ts. Times as the other tables keep them (ISO text);
    // leases and webhook due times in epoch milliseconds.
    sql: `
      CREATE TABLE jobs (
        id TEXT PRIMARY KEY,
        org_id TEXT NOT NULL REFERENCES orgs(id),
        key_id TEXT,
        status TEXT NOT NULL CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
        spec TEXT NOT NULL,
        model TEXT NOT NULL,
        characters INTEGER NOT NULL,
        credits INTEGER NOT NULL,
        segments_total INTEGER NOT NULL,
        segments_done INTEGER NOT NULL DEFAULT 0,
        characters_done INTEGER NOT NULL DEFAULT 0,
        audio_seconds REAL NOT NULL DEFAULT 0,
        webhook_url TEXT,
        idempotency_key TEXT,
        billing TEXT NOT NULL DEFAULT 'held' CHECK (billing IN ('held', 'charged', 'released')),
        result TEXT,
        error TEXT,
        created_at TEXT NOT NULL,
        started_at TEXT,
        finished_at TEXT,
        expires_at TEXT,
        lease_token TEXT,
        lease_expires_at INTEGER,
        attempts INTEGER NOT NULL DEFAULT 0,
        webhook_state TEXT NOT NULL DEFAULT 'none' CHECK (webhook_state IN ('none', 'pending', 'delivered', 'failed')),
        webhook_attempts INTEGER NOT NULL DEFAULT 0,
        webhook_next_at INTEGER
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
        expires_at INTEGER NOT NULL
      );
    `,
  },
];
