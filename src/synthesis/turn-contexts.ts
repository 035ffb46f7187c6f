/**
 * @module synthesis/turn-contexts
 * A connection's table of contexts, for a wire that multiplexes turns by id
 * (Cartesia's `context_id`, ElevenLabs' multi-stream `context_id`): the turns
 * open on it, each with the dialect's own state, and the ids of those that
 * ended or were refused recently, so a late message for one is told apart
 * from one for an id never seen. Each turn is opened through `openTurn` and
 * leaves the table by itself when it ends. At most `RECENT_CONTEXTS` ids of
 * each kind are kept, the oldest forgotten first, so a long-lived connection
 * holds a bounded table.
 */
import { openTurn, type OpenedTurn, type TurnConnection, type TurnOpening } from './open-turn.js';
import type { TextTurn, TurnOutput } from './turn.js';

/** Ended (and refused) context ids a connection remembers. */
export const RECENT_CONTEXTS = 1024;

/** A set of ids bounded to the most recent `RECENT_CONTEXTS` added. */
class RecentIds {
  private readonly ids = new Set<string>();

  add(id: string): void {
    this.ids.add(id);
    if (this.ids.size > RECENT_CONTEXTS) this.ids.delete(this.ids.values().next().value!);
  }

  has(id: string): boolean {
    return this.ids.has(id);
  }

  delete(id: string): void {
    this.ids.delete(id);
  }
}

/** An open context: its turn and the dialect's state for it. */
export interface OpenContext<S> {
  readonly id: string;
  readonly turn: TextTurn;
  readonly state: S;
}

export class TurnContexts<S = undefined> {
  private readonly live = new Map<string, OpenContext<S>>();
  private readonly byTurn = new Map<TextTurn, OpenContext<S>>();
  private readonly ended = new RecentIds();
  private readonly refusals = new RecentIds();

  constructor(private readonly connection: TurnConnection) {}

  /** The open context of this id. */
  get(id: string): OpenContext<S> | undefined {
    return this.live.get(id);
  }

  /** The context of a turn, until its end has been handled. */
  of(turn: TextTurn): OpenContext<S> | undefined {
    return this.byTurn.get(turn);
  }

  /** Contexts open now. */
  get size(): number {
    return this.live.size;
  }

  /** Whether a turn is making or sending audio, or has text queued to speak. */
  get busy(): boolean {
    for (const context of this.live.values()) if (context.turn.busy) return true;
    return false;
  }

  /** The context ended a short while ago: a late message for it is not an error. */
  hasEnded(id: string): boolean {
    return this.ended.has(id);
  }

  /** The context was refused when it opened (the client has been told). */
  wasRefused(id: string): boolean {
    return this.refusals.has(id);
  }

  /** The client opens a refused context again: it is tried afresh. */
  forgetRefusal(id: string): void {
    this.refusals.delete(id);
  }

  /** The connection has closed (or the client ended them all): every turn stops, charged only what it delivered. */
  cancelAll(): void {
    for (const context of [...this.live.values()]) context.turn.cancel();
  }

  /**
   * Opens the context `id` as a turn (`openTurn`), with the dialect's `state` for it. A refusal is
   * remembered (`wasRefused`) and returned for the dialect to render.
   */
  async open(id: string, state: S, opening: Omit<TurnOpening, 'opened'>): Promise<OpenedTurn> {
    const { output } = opening;
    const opened = await openTurn(this.connection, {
      ...opening,
      output: typeof output === 'function' ? (synthesis) => this.tracked(output(synthesis)) : this.tracked(output),
      opened: (turn) => {
        const context = { id, turn, state };
        this.live.set(id, context);
        this.byTurn.set(turn, context);
      },
    });
    if (opened.refused) this.refusals.add(id);
    return opened;
  }

  /** The dialect's output, its `ended` followed by the context leaving the table. */
  private tracked(output: TurnOutput): TurnOutput {
    return {
      log: output.log,
      piece: (turn, piece) => output.piece(turn, piece),
      words: (turn, words) => output.words(turn, words),
      flushed: (turn, id) => output.flushed(turn, id),
      ...(output.spoken ? { spoken: (turn: TextTurn) => output.spoken!(turn) } : {}),
      done: (turn) => output.done(turn),
      failed: (turn, error) => output.failed(turn, error),
      ended: (turn) => {
        output.ended(turn);
        const context = this.byTurn.get(turn);
        this.byTurn.delete(turn);
        if (!context) return;
        if (this.live.get(context.id) === context) this.live.delete(context.id);
        this.ended.add(context.id);
      },
    };
  }
}
