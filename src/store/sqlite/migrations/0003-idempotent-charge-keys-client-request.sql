-- idempotent charge keys, client request ids and reservations
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
