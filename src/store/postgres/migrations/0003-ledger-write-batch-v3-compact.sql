-- ledger_write_batch_v3: compact answers, cheaper reservation decisions
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
