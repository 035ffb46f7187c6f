/**
 * @module store/postgres/migrations
 * Versioned schema migrations for the PostgreSQL store, its own list apart
 * from SQLite's. Append only: a shipped migration is never edited; a change
 * is a new version. Statements are unqualified, so they land in the
 * configured schema (`search_path`).
 */

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: Migration[] = [
  {
    version: 1,
    name: 'accounts, ledger with charge keys, reservations, voices and pronunciation dictionaries',
    sql: `
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
    `,
  },
  {
    version: 2,
    name: 'ledger_write_batch: one organisation\'s queued settlements and reservations in one call',
    // One call is one statement, so one round trip and its own transaction. The rules are those
    // of the store contract, in this order: under the organisation's row lock every settlement
    // (the first write of a charge key inserts, a repeat is its duplicate and reports the balance
    // now; each inserted row reports the balance after it, in ledger id order), then every
    // reservation in queue order against the balance and holds that leaves (granted while
    // balance − Σ open holds > 0; lapsed holds are swept; a repeated id holds nothing twice).
    // A write the rules refuse comes back as {"error": …}; anything else that fails raises, and
    // the whole call rolls back. Times are epoch milliseconds of clock_timestamp().
    // There is no SET search_path: the unqualified tables resolve through the caller's
    // search_path, the one that found this function (the store's schema, set per connection),
    // so a schema renamed or restored under another name keeps working.
    sql: `
      CREATE FUNCTION ledger_write_batch(
        org text,
        settle_reservation text[], settle_kind text[], settle_credits bigint[], settle_key_id text[],
        settle_request_id text[], settle_charge_key text[], settle_client_request_id text[],
        settle_model text[], settle_endpoint text[], settle_characters int[], settle_reason text[],
        reserve_id text[], reserve_credits bigint[], reserve_ttl_ms bigint[]
      ) RETURNS json LANGUAGE plpgsql AS $fn$
      DECLARE
        org_balance bigint;
        inserted_count int;
        total_change bigint;
        first_ord int[];            -- per settlement: the position of the first write of its key (its own without a key)
        entries json[];             -- per settlement: the ledger row it inserted, if it did
        settles json[] := '{}';     -- per settlement: its answer
        missing text[];
        earlier_keys text[];
        earlier json[];             -- the answers for keys already in the ledger
        found_at int;
        clock_ms bigint;
        open_total bigint;
        held jsonb;                 -- reservation id → the hold already there (any organisation's)
        hold jsonb;
        granted_at int;
        granted_id text[] := '{}';
        granted_hold jsonb[] := '{}';
        granted_credits bigint[] := '{}';
        granted_expires bigint[] := '{}';
        reserves jsonb[] := '{}';
      BEGIN
        SELECT o.balance INTO org_balance FROM orgs o WHERE o.id = org FOR UPDATE;
        IF NOT FOUND THEN
          RETURN json_build_object(
            'settles', (SELECT COALESCE(json_agg(json_build_object('error', 'organization ' || org || ' does not exist')), '[]'::json) FROM unnest(settle_kind)),
            'reserves', (SELECT COALESCE(json_agg(json_build_object('ok', false, 'balance', 0, 'reserved', 0)), '[]'::json) FROM unnest(reserve_id)));
        END IF;

        IF cardinality(settle_kind) > 0 THEN
          -- The first write of a charge key inserts; a repeat in the same batch is its duplicate. Each
          -- inserted row is matched back to its write by key, or, without a key, by rank: rows are
          -- inserted in queue order, so the ledger numbers them in that order.
          WITH queued AS (
            SELECT u.*,
              CASE WHEN u.charge_key IS NULL THEN u.ord ELSE min(u.ord) OVER (PARTITION BY u.charge_key) END AS first_ord,
              CASE WHEN u.charge_key IS NULL THEN (row_number() OVER (PARTITION BY u.charge_key IS NULL ORDER BY u.ord))::text ELSE u.charge_key END AS slot
            FROM unnest(settle_kind, settle_credits, settle_key_id, settle_request_id, settle_charge_key,
                        settle_client_request_id, settle_model, settle_endpoint, settle_characters, settle_reason)
              WITH ORDINALITY AS u(kind, credits, key_id, request_id, charge_key, client_request_id, model, endpoint, characters, reason, ord)
          ), inserted AS (
            INSERT INTO ledger (org_id, kind, credits, key_id, request_id, charge_key, client_request_id, model, endpoint, characters, reason)
            SELECT org, q.kind, q.credits, q.key_id, q.request_id, q.charge_key, q.client_request_id, q.model, q.endpoint, q.characters, q.reason
            FROM queued q WHERE q.first_ord = q.ord ORDER BY q.ord
            ON CONFLICT (charge_key) DO NOTHING
            RETURNING *
          ), mine AS (
            -- The balance after each row, in the order the ledger numbered them.
            SELECT r.*, org_balance + sum(r.credits) OVER (ORDER BY r.id) AS after,
              CASE WHEN r.charge_key IS NULL THEN (row_number() OVER (PARTITION BY r.charge_key IS NULL ORDER BY r.id))::text ELSE r.charge_key END AS slot
            FROM inserted r
          ), matched AS (
            SELECT q.ord, q.first_ord, m.id, m.credits, m.after,
              CASE WHEN m.id IS NOT NULL THEN json_build_object('id', m.id, 'org_id', m.org_id, 'kind', m.kind, 'credits', m.credits, 'key_id', m.key_id,
                  'request_id', m.request_id, 'charge_key', m.charge_key, 'client_request_id', m.client_request_id, 'model', m.model,
                  'endpoint', m.endpoint, 'characters', m.characters, 'reason', m.reason,
                  'created_at', floor(extract(epoch FROM m.created_at) * 1000)::bigint) END AS entry
            FROM queued q
            LEFT JOIN mine m ON m.slot = q.slot AND (m.charge_key IS NULL) = (q.charge_key IS NULL) AND q.first_ord = q.ord
          )
          SELECT count(a.id), COALESCE(sum(a.credits), 0), array_agg(a.first_ord::int ORDER BY a.ord), array_agg(a.entry ORDER BY a.ord),
            array_agg(CASE WHEN a.id IS NOT NULL THEN json_build_object('entry', a.entry, 'balance', a.after, 'duplicate', false) END ORDER BY a.ord)
          INTO inserted_count, total_change, first_ord, entries, settles
          FROM matched a;

          IF inserted_count > 0 THEN
            UPDATE orgs SET balance = balance + total_change WHERE id = org;
          END IF;
          org_balance := org_balance + total_change;
          DELETE FROM reservations WHERE org_id = org AND id = ANY(settle_reservation);

          IF inserted_count < cardinality(settle_kind) THEN
            -- A duplicate writes nothing and reports the balance now. A key already in the ledger: its
            -- row and its organisation's balance, read by a statement of its own, so it also sees a row
            -- that another transaction committed while the insert waited for it.
            missing := ARRAY(SELECT DISTINCT settle_charge_key[i] FROM generate_subscripts(settle_kind, 1) AS i WHERE entries[first_ord[i]] IS NULL);
            IF cardinality(missing) > 0 THEN
              SELECT array_agg(l.charge_key), array_agg(json_build_object(
                  'entry', json_build_object('id', l.id, 'org_id', l.org_id, 'kind', l.kind, 'credits', l.credits, 'key_id', l.key_id,
                  'request_id', l.request_id, 'charge_key', l.charge_key, 'client_request_id', l.client_request_id, 'model', l.model,
                  'endpoint', l.endpoint, 'characters', l.characters, 'reason', l.reason,
                  'created_at', floor(extract(epoch FROM l.created_at) * 1000)::bigint),
                  'balance', CASE WHEN l.org_id = org THEN org_balance ELSE o.balance END, 'duplicate', true))
              INTO earlier_keys, earlier
              FROM ledger l JOIN orgs o ON o.id = l.org_id
              WHERE l.charge_key = ANY(missing);
            END IF;
            FOR n IN 1..cardinality(settle_kind) LOOP
              CONTINUE WHEN settles[n] IS NOT NULL;
              IF entries[first_ord[n]] IS NOT NULL THEN
                -- A repeat of a key this call wrote.
                settles[n] := json_build_object('entry', entries[first_ord[n]], 'balance', org_balance, 'duplicate', true);
              ELSE
                found_at := array_position(earlier_keys, settle_charge_key[n]);
                IF found_at IS NULL THEN
                  RAISE EXCEPTION 'charge key % was neither written nor found in the ledger', settle_charge_key[n];
                END IF;
                settles[n] := earlier[found_at];
              END IF;
            END LOOP;
          END IF;
        END IF;

        IF cardinality(reserve_id) > 0 THEN
          WITH clock AS (SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS now),
            swept AS (DELETE FROM reservations WHERE org_id = org AND expires_at <= (SELECT c.now FROM clock c))
          SELECT c.now,
            (SELECT COALESCE(sum(r.credits), 0) FROM reservations r WHERE r.org_id = org AND r.expires_at > c.now),
            (SELECT COALESCE(jsonb_object_agg(r.id, jsonb_build_object('id', r.id, 'orgId', r.org_id, 'credits', r.credits, 'expiresAt', r.expires_at)), '{}')
              FROM reservations r WHERE r.id = ANY(reserve_id) AND NOT (r.org_id = org AND r.expires_at <= c.now))
          INTO clock_ms, open_total, held
          FROM clock c;

          FOR n IN 1..cardinality(reserve_id) LOOP
            hold := held -> reserve_id[n];
            IF hold IS NULL THEN
              granted_at := array_position(granted_id, reserve_id[n]);
              IF granted_at IS NOT NULL THEN
                hold := granted_hold[granted_at];
              END IF;
            END IF;
            IF hold IS NOT NULL THEN
              -- A repeated reserve of the same id holds nothing twice.
              IF hold ->> 'orgId' = org THEN
                reserves := array_append(reserves, jsonb_build_object('ok', true, 'reservation', hold, 'balance', org_balance, 'reserved', open_total - (hold ->> 'credits')::bigint));
              ELSE
                reserves := array_append(reserves, jsonb_build_object('error', 'reservation ' || reserve_id[n] || ' belongs to another organization'));
              END IF;
            ELSIF org_balance - open_total <= 0 THEN
              reserves := array_append(reserves, jsonb_build_object('ok', false, 'balance', org_balance, 'reserved', open_total));
            ELSE
              hold := jsonb_build_object('id', reserve_id[n], 'orgId', org, 'credits', reserve_credits[n], 'expiresAt', clock_ms + reserve_ttl_ms[n]);
              reserves := array_append(reserves, jsonb_build_object('ok', true, 'reservation', hold, 'balance', org_balance, 'reserved', open_total));
              granted_id := array_append(granted_id, reserve_id[n]);
              granted_hold := array_append(granted_hold, hold);
              granted_credits := array_append(granted_credits, reserve_credits[n]);
              granted_expires := array_append(granted_expires, clock_ms + reserve_ttl_ms[n]);
              open_total := open_total + reserve_credits[n];
            END IF;
          END LOOP;

          IF cardinality(granted_id) > 0 THEN
            INSERT INTO reservations (id, org_id, credits, expires_at)
            SELECT u.id, org, u.credits, u.expires_at FROM unnest(granted_id, granted_credits, granted_expires) AS u(id, credits, expires_at);
          END IF;
        END IF;

        RETURN json_build_object('settles', to_json(settles), 'reserves', to_json(reserves));
      END
      $fn$;
    `,
  },
  {
    version: 3,
    name: 'ledger_write_batch_v3: compact answers, cheaper reservation decisions',
    // The same arguments and rules as version 2's ledger_write_batch, cheaper per write, under a
    // name of its own: version 2's function stays, so a server still on the code before this
    // version keeps reading the answers it expects while the servers of a deployment are
    // upgraded one by one. The answer is one JSON array
    // of arrays, and only what the caller does not already know: [balance, ids, created, after,
    // first, earlier, hold_credits, hold_expires, reserved]. `balance` is the organisation's
    // after every settlement, the one each duplicate of this organisation and each reservation
    // reports. Per settlement in queue order: the ledger id and created_at (epoch ms) of the row
    // it inserted and the balance after it (nulls for a duplicate), and the position of the first
    // write of its key (its own without a key); a duplicate of a key this call wrote is that
    // write's row. `earlier`: the rows of keys already in the ledger, each {"entry", "balance"}.
    // Per reservation in queue order: the hold it reports (credits and expiry; null when refused
    // or another organisation's) and `reserved` before it (null for another organisation's hold).
    // The existing holds of the reservation ids and the open total are read by one statement,
    // the decisions made by a loop over plain arrays (no JSON, no appends, no searches: a
    // repeated id finds its granted hold by the position of its first reservation), and the
    // granted holds inserted by one statement. The settled holds are deleted by key and the
    // lapsed ones by the organisation's expiry range. An unknown organisation answers NULL. As
    // before, anything else that fails raises and the whole call rolls back, and tables resolve
    // through the caller's search_path.
    sql: `
      CREATE FUNCTION ledger_write_batch_v3(
        org text,
        settle_reservation text[], settle_kind text[], settle_credits bigint[], settle_key_id text[],
        settle_request_id text[], settle_charge_key text[], settle_client_request_id text[],
        settle_model text[], settle_endpoint text[], settle_characters int[], settle_reason text[],
        reserve_id text[], reserve_credits bigint[], reserve_ttl_ms bigint[]
      ) RETURNS json LANGUAGE plpgsql AS $fn$
      DECLARE
        org_balance bigint;
        inserted_count int;
        total_change bigint;
        s_id bigint[];
        s_created bigint[];
        s_after bigint[];
        s_first int[];
        earlier json;
        lost text;
        clock_ms bigint;
        open_total bigint;
        held_org text[];
        held_credits bigint[];
        held_expires bigint[];
        r_first int[];
        r_count int;
        r_credits bigint[];
        r_expires bigint[];
        r_reserved bigint[];
        r_granted boolean[];
        r_holder int[];             -- per first position of an id: the position that was granted its hold
        holder int;
        r_grants int := 0;
      BEGIN
        SELECT o.balance INTO org_balance FROM orgs o WHERE o.id = org FOR UPDATE;
        IF NOT FOUND THEN
          RETURN NULL;
        END IF;

        IF cardinality(settle_kind) > 0 THEN
          -- As in version 2: the first write of a charge key inserts, a repeat is its duplicate; an
          -- inserted row is matched back to its write by key, or, without a key, by rank.
          WITH queued AS (
            SELECT u.*,
              CASE WHEN u.charge_key IS NULL THEN u.ord ELSE min(u.ord) OVER (PARTITION BY u.charge_key) END AS first_ord,
              CASE WHEN u.charge_key IS NULL THEN (row_number() OVER (PARTITION BY u.charge_key IS NULL ORDER BY u.ord))::text ELSE u.charge_key END AS slot
            FROM unnest(settle_kind, settle_credits, settle_key_id, settle_request_id, settle_charge_key,
                        settle_client_request_id, settle_model, settle_endpoint, settle_characters, settle_reason)
              WITH ORDINALITY AS u(kind, credits, key_id, request_id, charge_key, client_request_id, model, endpoint, characters, reason, ord)
          ), inserted AS (
            INSERT INTO ledger (org_id, kind, credits, key_id, request_id, charge_key, client_request_id, model, endpoint, characters, reason)
            SELECT org, q.kind, q.credits, q.key_id, q.request_id, q.charge_key, q.client_request_id, q.model, q.endpoint, q.characters, q.reason
            FROM queued q WHERE q.first_ord = q.ord ORDER BY q.ord
            ON CONFLICT (charge_key) DO NOTHING
            RETURNING id, credits, charge_key, created_at
          ), mine AS (
            SELECT r.id, r.credits, r.charge_key, r.created_at, org_balance + sum(r.credits) OVER (ORDER BY r.id) AS after,
              CASE WHEN r.charge_key IS NULL THEN (row_number() OVER (PARTITION BY r.charge_key IS NULL ORDER BY r.id))::text ELSE r.charge_key END AS slot
            FROM inserted r
          )
          SELECT count(m.id), COALESCE(sum(m.credits), 0), array_agg(m.id ORDER BY q.ord),
            array_agg(floor(extract(epoch FROM m.created_at) * 1000)::bigint ORDER BY q.ord), array_agg(m.after ORDER BY q.ord),
            array_agg(q.first_ord::int ORDER BY q.ord)
          INTO inserted_count, total_change, s_id, s_created, s_after, s_first
          FROM queued q
          LEFT JOIN mine m ON m.slot = q.slot AND (m.charge_key IS NULL) = (q.charge_key IS NULL) AND q.first_ord = q.ord;

          IF inserted_count > 0 THEN
            UPDATE orgs SET balance = balance + total_change WHERE id = org;
          END IF;
          org_balance := org_balance + total_change;

          IF inserted_count < cardinality(settle_kind) THEN
            -- A key already in the ledger: its row and its organisation's balance, read by a
            -- statement of its own, so it also sees a row that another transaction committed while
            -- the insert waited for it.
            WITH missing AS (
              SELECT DISTINCT settle_charge_key[i] AS charge_key FROM generate_subscripts(settle_kind, 1) AS i WHERE s_id[s_first[i]] IS NULL
            )
            SELECT min(k.charge_key) FILTER (WHERE l.id IS NULL), json_agg(json_build_object(
                'entry', json_build_object('id', l.id, 'org_id', l.org_id, 'kind', l.kind, 'credits', l.credits, 'key_id', l.key_id,
                'request_id', l.request_id, 'charge_key', l.charge_key, 'client_request_id', l.client_request_id, 'model', l.model,
                'endpoint', l.endpoint, 'characters', l.characters, 'reason', l.reason,
                'created_at', floor(extract(epoch FROM l.created_at) * 1000)::bigint),
                'balance', CASE WHEN l.org_id = org THEN org_balance ELSE o.balance END)) FILTER (WHERE l.id IS NOT NULL)
            INTO lost, earlier
            FROM missing k LEFT JOIN ledger l ON l.charge_key = k.charge_key LEFT JOIN orgs o ON o.id = l.org_id;
            IF lost IS NOT NULL THEN
              RAISE EXCEPTION 'charge key % was neither written nor found in the ledger', lost;
            END IF;
          END IF;
        END IF;

        -- The settled holds go; then, before reservations are decided, the lapsed ones (two
        -- statements, so that each can use an index: the key, or the organisation's expiry range).
        IF cardinality(settle_reservation) > 0 THEN
          DELETE FROM reservations WHERE org_id = org AND id = ANY(settle_reservation);
        END IF;

        IF cardinality(reserve_id) > 0 THEN
          clock_ms := (extract(epoch FROM clock_timestamp()) * 1000)::bigint;
          DELETE FROM reservations WHERE org_id = org AND expires_at <= clock_ms;
          -- Per reservation: the hold already there with its id (any organisation's) and the
          -- position of the first reservation of its id in this call; and the open holds' total.
          SELECT array_agg(h.org_id ORDER BY u.ord), array_agg(h.credits ORDER BY u.ord), array_agg(h.expires_at ORDER BY u.ord),
            array_agg(u.first_ord ORDER BY u.ord),
            (SELECT COALESCE(sum(r.credits), 0) FROM reservations r WHERE r.org_id = org AND r.expires_at > clock_ms)
          INTO held_org, held_credits, held_expires, r_first, open_total
          FROM (SELECT v.id, v.ord, (min(v.ord) OVER (PARTITION BY v.id))::int AS first_ord
                FROM unnest(reserve_id) WITH ORDINALITY AS v(id, ord)) u
          LEFT JOIN reservations h ON h.id = u.id;

          r_count := cardinality(reserve_id);
          r_credits := array_fill(NULL::bigint, ARRAY[r_count]);
          r_expires := array_fill(NULL::bigint, ARRAY[r_count]);
          r_reserved := array_fill(NULL::bigint, ARRAY[r_count]);
          r_granted := array_fill(false, ARRAY[r_count]);
          r_holder := array_fill(NULL::int, ARRAY[r_count]);
          FOR n IN 1..r_count LOOP
            IF held_org[n] IS NOT NULL THEN
              -- A hold already there: this organisation's is reported again (it holds nothing twice).
              IF held_org[n] = org THEN
                r_credits[n] := held_credits[n];
                r_expires[n] := held_expires[n];
                r_reserved[n] := open_total - held_credits[n];
              END IF;
            ELSIF r_holder[r_first[n]] IS NOT NULL THEN
              -- A repeat of an id this call granted.
              holder := r_holder[r_first[n]];
              r_credits[n] := r_credits[holder];
              r_expires[n] := r_expires[holder];
              r_reserved[n] := open_total - r_credits[holder];
            ELSIF org_balance - open_total > 0 THEN
              r_credits[n] := reserve_credits[n];
              r_expires[n] := clock_ms + reserve_ttl_ms[n];
              r_reserved[n] := open_total;
              r_granted[n] := true;
              r_holder[r_first[n]] := n;
              r_grants := r_grants + 1;
              open_total := open_total + reserve_credits[n];
            ELSE
              r_reserved[n] := open_total;
            END IF;
          END LOOP;

          IF r_grants > 0 THEN
            INSERT INTO reservations (id, org_id, credits, expires_at)
            SELECT u.id, org, u.credits, u.expires_at
            FROM unnest(reserve_id, r_credits, r_expires, r_granted) AS u(id, credits, expires_at, granted) WHERE u.granted;
          END IF;
        END IF;

        RETURN json_build_array(org_balance, s_id, s_created, s_after, s_first, earlier, r_credits, r_expires, r_reserved);
      END
      $fn$;
    `,
  },
  {
    version: 4,
    name: 'ledger_write_batch_v4: reservations held by each server, counted in one share row per organisation',
    // A server from this version on keeps its reservations in memory (src/store/shares.ts), backed
    // per organisation by one row of its own, its share: its open holds plus a spare, which every
    // server counts. The function decides the holds that did not fit into the spare, by the same
    // rule as before against the other rows and the share's open holds (`share_open`, sent by the
    // server), and writes the share: its open holds, the holds granted now and a new spare (room for
    // `spare_holds` more of the last granted size, at most 1/`spare_divisor` of what is left), or,
    // when nothing was granted, only its open holds. A call without reservations writes the share
    // only when `share_credits` is given (a share shrinking after releases). Settlements are
    // version 3's, and also delete rows of the settled ids (holds of servers still on version 3);
    // their SQL is a copy, not a shared constant, since a shipped migration's text never changes.
    // Version 3's function stays for those servers; they count the shares as reservations, and
    // this one counts their holds among the other rows. The answer: [balance, ids, created, after,
    // first, earlier, granted, reserved, others, share_credits], where `reserved` is what each
    // reservation saw before it (other rows + open holds) and `share_credits` the share's row as
    // written (null: not written). An unknown organisation answers NULL.
    sql: `
      CREATE FUNCTION ledger_write_batch_v4(
        org text, share_id text, share_open bigint, share_credits bigint, share_expires bigint,
        spare_holds bigint, spare_divisor bigint,
        settle_reservation text[], settle_kind text[], settle_credits bigint[], settle_key_id text[],
        settle_request_id text[], settle_charge_key text[], settle_client_request_id text[],
        settle_model text[], settle_endpoint text[], settle_characters int[], settle_reason text[],
        reserve_credits bigint[]
      ) RETURNS json LANGUAGE plpgsql AS $fn$
      DECLARE
        org_balance bigint;
        inserted_count int;
        total_change bigint;
        s_id bigint[];
        s_created bigint[];
        s_after bigint[];
        s_first int[];
        earlier json;
        lost text;
        clock_ms bigint;
        others bigint := NULL;
        open_total bigint;
        r_count int;
        r_granted boolean[];
        r_reserved bigint[];
        last_granted bigint := NULL;
        written bigint := share_credits;
      BEGIN
        SELECT o.balance INTO org_balance FROM orgs o WHERE o.id = org FOR UPDATE;
        IF NOT FOUND THEN
          RETURN NULL;
        END IF;

        IF cardinality(settle_kind) > 0 THEN
          -- As in version 2: the first write of a charge key inserts, a repeat is its duplicate; an
          -- inserted row is matched back to its write by key, or, without a key, by rank.
          WITH queued AS (
            SELECT u.*,
              CASE WHEN u.charge_key IS NULL THEN u.ord ELSE min(u.ord) OVER (PARTITION BY u.charge_key) END AS first_ord,
              CASE WHEN u.charge_key IS NULL THEN (row_number() OVER (PARTITION BY u.charge_key IS NULL ORDER BY u.ord))::text ELSE u.charge_key END AS slot
            FROM unnest(settle_kind, settle_credits, settle_key_id, settle_request_id, settle_charge_key,
                        settle_client_request_id, settle_model, settle_endpoint, settle_characters, settle_reason)
              WITH ORDINALITY AS u(kind, credits, key_id, request_id, charge_key, client_request_id, model, endpoint, characters, reason, ord)
          ), inserted AS (
            INSERT INTO ledger (org_id, kind, credits, key_id, request_id, charge_key, client_request_id, model, endpoint, characters, reason)
            SELECT org, q.kind, q.credits, q.key_id, q.request_id, q.charge_key, q.client_request_id, q.model, q.endpoint, q.characters, q.reason
            FROM queued q WHERE q.first_ord = q.ord ORDER BY q.ord
            ON CONFLICT (charge_key) DO NOTHING
            RETURNING id, credits, charge_key, created_at
          ), mine AS (
            SELECT r.id, r.credits, r.charge_key, r.created_at, org_balance + sum(r.credits) OVER (ORDER BY r.id) AS after,
              CASE WHEN r.charge_key IS NULL THEN (row_number() OVER (PARTITION BY r.charge_key IS NULL ORDER BY r.id))::text ELSE r.charge_key END AS slot
            FROM inserted r
          )
          SELECT count(m.id), COALESCE(sum(m.credits), 0), array_agg(m.id ORDER BY q.ord),
            array_agg(floor(extract(epoch FROM m.created_at) * 1000)::bigint ORDER BY q.ord), array_agg(m.after ORDER BY q.ord),
            array_agg(q.first_ord::int ORDER BY q.ord)
          INTO inserted_count, total_change, s_id, s_created, s_after, s_first
          FROM queued q
          LEFT JOIN mine m ON m.slot = q.slot AND (m.charge_key IS NULL) = (q.charge_key IS NULL) AND q.first_ord = q.ord;

          IF inserted_count > 0 THEN
            UPDATE orgs SET balance = balance + total_change WHERE id = org;
          END IF;
          org_balance := org_balance + total_change;

          IF inserted_count < cardinality(settle_kind) THEN
            -- A key already in the ledger: its row and its organisation's balance, read by a
            -- statement of its own, so it also sees a row that another transaction committed while
            -- the insert waited for it.
            WITH missing AS (
              SELECT DISTINCT settle_charge_key[i] AS charge_key FROM generate_subscripts(settle_kind, 1) AS i WHERE s_id[s_first[i]] IS NULL
            )
            SELECT min(k.charge_key) FILTER (WHERE l.id IS NULL), json_agg(json_build_object(
                'entry', json_build_object('id', l.id, 'org_id', l.org_id, 'kind', l.kind, 'credits', l.credits, 'key_id', l.key_id,
                'request_id', l.request_id, 'charge_key', l.charge_key, 'client_request_id', l.client_request_id, 'model', l.model,
                'endpoint', l.endpoint, 'characters', l.characters, 'reason', l.reason,
                'created_at', floor(extract(epoch FROM l.created_at) * 1000)::bigint),
                'balance', CASE WHEN l.org_id = org THEN org_balance ELSE o.balance END)) FILTER (WHERE l.id IS NOT NULL)
            INTO lost, earlier
            FROM missing k LEFT JOIN ledger l ON l.charge_key = k.charge_key LEFT JOIN orgs o ON o.id = l.org_id;
            IF lost IS NOT NULL THEN
              RAISE EXCEPTION 'charge key % was neither written nor found in the ledger', lost;
            END IF;
          END IF;
        END IF;

        IF cardinality(settle_reservation) > 0 THEN
          DELETE FROM reservations WHERE org_id = org AND id = ANY(settle_reservation);
        END IF;

        r_count := cardinality(reserve_credits);
        IF r_count > 0 THEN
          clock_ms := (extract(epoch FROM clock_timestamp()) * 1000)::bigint;
          DELETE FROM reservations WHERE org_id = org AND expires_at <= clock_ms;
          SELECT COALESCE(sum(r.credits), 0) INTO others FROM reservations r WHERE r.org_id = org AND r.expires_at > clock_ms AND r.id <> share_id;
          open_total := share_open;
          r_granted := array_fill(false, ARRAY[r_count]);
          r_reserved := array_fill(NULL::bigint, ARRAY[r_count]);
          FOR n IN 1..r_count LOOP
            r_reserved[n] := others + open_total;
            IF org_balance - (others + open_total) > 0 THEN
              r_granted[n] := true;
              open_total := open_total + reserve_credits[n];
              last_granted := reserve_credits[n];
            END IF;
          END LOOP;
          IF last_granted IS NULL THEN
            written := share_open;
          ELSE
            written := open_total + GREATEST(0, LEAST((org_balance - others - open_total) / spare_divisor, spare_holds * GREATEST(last_granted, 1)));
          END IF;
        END IF;

        IF written IS NOT NULL THEN
          IF written > 0 THEN
            INSERT INTO reservations (id, org_id, credits, expires_at) VALUES (share_id, org, written, share_expires)
            ON CONFLICT (id) DO UPDATE SET credits = excluded.credits, expires_at = GREATEST(reservations.expires_at, excluded.expires_at);
          ELSE
            DELETE FROM reservations WHERE id = share_id;
          END IF;
        END IF;

        RETURN json_build_array(org_balance, s_id, s_created, s_after, s_first, earlier, r_granted, r_reserved, others, written);
      END
      $fn$;
    `,
  },
  {
    version: 5,
    name: 'job queue and named leases',
    // Layout and rules: src/store/job-row.ts. Only new tables, and the statements that use them
    // are sent by the server (no function): a server still on the code before this version
    // neither reads nor writes them, so it keeps working beside upgraded ones while a deployment
    // is upgraded one by one (it only takes and runs no jobs). Times as the other tables keep
    // them (timestamptz); leases and webhook due times in epoch milliseconds. `spec`, `result`
    // and `error` are json, kept as written: nothing queries inside them.
    sql: `
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
    `,
  },
];
