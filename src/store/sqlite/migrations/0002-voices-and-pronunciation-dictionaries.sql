-- voices and pronunciation dictionaries
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
