/**
 * The SQLite ledger's operator log and blocks: the statements SqliteCore runs for
 * `recordOperatorAction`, `recordBlock`, `isBlocked` and `operatorLog`, prepared once per
 * connection. Inputs arrive checked (operator-log.ts, on the caller's side).
 *
 * Costs: an append is one INSERT into `operator_log` (a row of about 100 bytes plus the note, and
 * its two partial indexes); a block or unblock adds one INSERT or DELETE of a `blocked` row in
 * the same transaction; `isBlocked` is one lookup of the WITHOUT ROWID table's key (a few
 * microseconds, the table as small as the blocked players). A page is a range scan by seq (or
 * by the intent's or player's index), `limit + 1` rows.
 */
import type { DatabaseSync, SQLInputValue, StatementSync } from 'node:sqlite';
import type {
  NewOperatorAction,
  OperatorAction,
  OperatorActionName,
  OperatorLogFilter,
  OperatorLogPage,
} from './operator-log.js';

interface LineRow {
  seq: number;
  at: number;
  by: string;
  action: OperatorActionName;
  intent_id: string | null;
  player_id: string | null;
  before: string;
  after: string;
  note: string;
}

const LINE_COLUMNS = 'seq, at, by, action, intent_id, player_id, before, after, note';

export class SqliteOperatorLog {
  readonly #db: DatabaseSync;
  readonly #append: StatementSync;
  readonly #block: StatementSync;
  readonly #unblock: StatementSync;
  readonly #blocked: StatementSync;
  readonly #pause: StatementSync;
  readonly #pauseLine: StatementSync;
  readonly #resume: StatementSync;
  readonly #paused: StatementSync;
  readonly #pages = new Map<string, StatementSync>();

  constructor(db: DatabaseSync) {
    this.#db = db;
    this.#append = db.prepare(`
      INSERT INTO operator_log (at, by, action, intent_id, player_id, before, after, note)
      VALUES (:at, :by, :action, :intentId, :playerId, :before, :after, :note)
      RETURNING ${LINE_COLUMNS}`);
    this.#block = db.prepare(
      'INSERT INTO blocked (player_id, since) VALUES (?, ?) ON CONFLICT (player_id) DO NOTHING',
    );
    this.#unblock = db.prepare('DELETE FROM blocked WHERE player_id = ?');
    this.#blocked = db.prepare('SELECT 1 FROM blocked WHERE player_id = ?');
    this.#pause = db.prepare(
      'INSERT INTO payouts_paused (only_row, line) VALUES (1, 0) ON CONFLICT DO NOTHING',
    );
    this.#pauseLine = db.prepare('UPDATE payouts_paused SET line = ? WHERE only_row = 1');
    this.#resume = db.prepare('DELETE FROM payouts_paused');
    this.#paused = db.prepare(`SELECT ${LINE_COLUMNS} FROM operator_log
      WHERE seq = (SELECT line FROM payouts_paused WHERE only_row = 1)`);
  }

  /**
   * Pauses or resumes the game's payouts, then appends (the pause's row names its line); null
   * (nothing written) when they already were so. Run inside the caller's write transaction.
   */
  pause(line: NewOperatorAction, now: number): OperatorAction | null {
    if (line.action === 'resume') {
      return Number(this.#resume.run().changes) === 1 ? this.append(line, now) : null;
    }
    if (Number(this.#pause.run().changes) !== 1) return null;
    const appended = this.append(line, now);
    this.#pauseLine.run(Number(appended.seq));
    return appended;
  }

  /** The line of the pause in force, or null. */
  paused(): OperatorAction | null {
    const row = this.#paused.get() as unknown as LineRow | undefined;
    return row === undefined ? null : toLine(row);
  }

  /** Appends a line; run inside the caller's write transaction. */
  append(line: NewOperatorAction, now: number): OperatorAction {
    const row = this.#append.get({ ...line, at: now }) as unknown as LineRow;
    return toLine(row);
  }

  /** Sets or lifts the block, then appends; null (nothing written) when it already was so. */
  block(line: NewOperatorAction, now: number): OperatorAction | null {
    const player = line.playerId as string;
    const changed =
      line.action === 'block'
        ? this.#block.run(player, now).changes
        : this.#unblock.run(player).changes;
    return Number(changed) === 1 ? this.append(line, now) : null;
  }

  isBlocked(playerId: string): boolean {
    return this.#blocked.get(playerId) !== undefined;
  }

  page(query: OperatorLogFilter): OperatorLogPage {
    const terms = ['seq > :after'];
    const params: Record<string, SQLInputValue> = { after: query.after, limit: query.limit + 1 };
    if (query.intentId !== undefined) {
      terms.push('intent_id = :intent');
      params.intent = query.intentId;
    }
    if (query.playerId !== undefined) {
      terms.push('player_id = :player');
      params.player = query.playerId;
    }
    if (query.since !== undefined) {
      terms.push('at >= :since');
      params.since = query.since;
    }
    const where = terms.join(' AND ');
    let statement = this.#pages.get(where);
    if (statement === undefined) {
      statement = this.#db.prepare(
        `SELECT ${LINE_COLUMNS} FROM operator_log WHERE ${where} ORDER BY seq LIMIT :limit`,
      );
      this.#pages.set(where, statement);
    }
    const rows = statement.all(params) as unknown as LineRow[];
    // One row more than the page: whether another page follows, without a second query.
    const actions = rows.slice(0, query.limit).map(toLine);
    return { actions, next: rows.length > query.limit ? String(actions.at(-1)?.seq) : null };
  }
}

function toLine(row: LineRow): OperatorAction {
  return {
    seq: Number(row.seq),
    at: Number(row.at),
    by: row.by,
    action: row.action,
    intentId: row.intent_id,
    playerId: row.player_id,
    before: row.before,
    after: row.after,
    note: row.note,
  };
}
