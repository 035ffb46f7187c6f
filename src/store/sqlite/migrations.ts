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
];
