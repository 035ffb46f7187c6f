-- ledger_write_batch_v4: reservations held by each server, counted in one share row per organisation
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
