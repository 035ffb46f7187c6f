-- ledger_write_batch: one organisation's queued settlements and reservations in one call
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
