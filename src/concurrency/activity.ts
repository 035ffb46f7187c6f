/**
 * @module concurrency/activity
 * What this server is doing right now, read from the diagnostics events
 * rather than counted by each transport: syntheses admitted and not yet
 * ended (by organisation and endpoint) and open WebSocket connections (by
 * organisation). `GET /concurrency` and the metrics' gauges read it. Counts
 * are this server's only; limits shared by several servers live in the limit
 * counters.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { Endpoint } from '../synthesis/gate.js';
import { diagnostics, type SynthesisAdmitted, type SynthesisEnd, type WebSocketConnection } from '../synthesis/diagnostics.js';

/** The organisation of a request made without one (accounts off: everything is `org_local`'s). */
const NO_ORG = '';

function bump(counts: Map<string, number>, key: string, by: number): void {
  const next = (counts.get(key) ?? 0) + by;
  if (next <= 0) counts.delete(key);
  else counts.set(key, next);
}

export class Activity {
  /** Admitted syntheses by request id, until their end event. */
  private readonly running = new Map<string, { orgId: string; endpoint: Endpoint; background: boolean }>();
  private readonly byOrg = new Map<string, number>();
  /** Background syntheses (long-form jobs' segments) by organisation: not among its requests. */
  private readonly backgroundByOrg = new Map<string, number>();
  private readonly byEndpoint = new Map<string, number>();
  /** Open connections by connection id, until their close event. */
  private readonly connections = new Map<string, string>();
  private readonly socketsByOrg = new Map<string, number>();
  private readonly stops: (() => void)[] = [];

  /** Starts counting the events of server `instance`. */
  constructor(private readonly instance: string) {
    this.on(diagnostics.admitted.name as string, (event: SynthesisAdmitted) => {
      const orgId = event.orgId ?? NO_ORG;
      const background = event.background === true;
      this.running.set(event.requestId, { orgId, endpoint: event.endpoint, background });
      bump(background ? this.backgroundByOrg : this.byOrg, orgId, 1);
      bump(this.byEndpoint, event.endpoint, 1);
    });
    this.on(diagnostics.end.name as string, (event: SynthesisEnd) => {
      const run = this.running.get(event.requestId);
      if (!run) return;
      this.running.delete(event.requestId);
      bump(run.background ? this.backgroundByOrg : this.byOrg, run.orgId, -1);
      bump(this.byEndpoint, run.endpoint, -1);
    });
    this.on(diagnostics.websocketOpen.name as string, (event: WebSocketConnection) => {
      const orgId = event.orgId ?? NO_ORG;
      this.connections.set(event.connectionId, orgId);
      bump(this.socketsByOrg, orgId, 1);
    });
    this.on(diagnostics.websocketClose.name as string, (event: WebSocketConnection) => {
      const orgId = this.connections.get(event.connectionId);
      if (orgId === undefined) return;
      this.connections.delete(event.connectionId);
      bump(this.socketsByOrg, orgId, -1);
    });
  }

  private on<T extends { instance: string }>(name: string, handler: (event: T) => void): void {
    const listener = (message: unknown) => {
      const event = message as T;
      if (event.instance === this.instance) handler(event);
    };
    subscribe(name, listener);
    this.stops.push(() => unsubscribe(name, listener));
  }

  /** Requests of the organisation admitted and not yet ended (null: those made without one); background work is not among them. */
  syntheses(orgId: string | null): number {
    return this.byOrg.get(orgId ?? NO_ORG) ?? 0;
  }

  /** Background syntheses of the organisation (long-form jobs' segments) under way on this server. */
  background(orgId: string | null): number {
    return this.backgroundByOrg.get(orgId ?? NO_ORG) ?? 0;
  }

  /** Syntheses admitted and not yet ended, by endpoint. */
  synthesesByEndpoint(): ReadonlyMap<string, number> {
    return this.byEndpoint;
  }

  /** Open WebSocket connections of the organisation (null: those made without one). */
  websockets(orgId: string | null): number {
    return this.socketsByOrg.get(orgId ?? NO_ORG) ?? 0;
  }

  /** Open WebSocket connections, all organisations. */
  websocketTotal(): number {
    return this.connections.size;
  }

  stop(): void {
    for (const stop of this.stops.splice(0)) stop();
  }
}
