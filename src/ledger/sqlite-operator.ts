/**
 * The SQLite driver's operator log, blocks and pause (statements in sql/sqlite/), prepared once
 * per connection; run inside SqliteCore's write transactions.
 */
import type { DatabaseSync, SQLInputValue, StatementSync } from 'node:sqlite';
import {
  lineOf,
  type NewOperatorAction,
  type OperatorAction,
  type OperatorLogFilter,
} from './operator-log.js';
import type { LineChange } from './rules.js';
import { loadSql, OPERATOR_SQL } from './sql.js';

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
    const sql = loadSql('sqlite', OPERATOR_SQL, { lines: LINE_COLUMNS });
    this.#append = db.prepare(sql['append-line']);
    this.#block = db.prepare(sql.block);
    this.#unblock = db.prepare(sql.unblock);
    this.#blocked = db.prepare(sql.blocked);
    this.#pause = db.prepare(sql.pause);
    this.#pauseLine = db.prepare(sql['pause-line']);
    this.#resume = db.prepare(sql.resume);
    this.#paused = db.prepare(sql.paused);
  }

  paused(): OperatorAction | null {
    const row = this.#paused.get();
    return row === undefined ? null : lineOf(row);
  }

  /** The line, after its compare-and-set (null when it changed nothing: no line). */
  append(line: NewOperatorAction, now: number, change: LineChange | null): OperatorAction | null {
    if (change !== null && Number(this.#change(change, now).changes) !== 1) return null;
    // INSERT ... RETURNING: always its row.
    const appended = lineOf(this.#append.get({ ...line, at: now }) as Record<string, unknown>);
    // The pause's row names its line: written before it, linked after.
    if (change?.kind === 'pause') this.#pauseLine.run(appended.seq);
    return appended;
  }

  #change(change: LineChange, now: number) {
    switch (change.kind) {
      case 'block':
        return this.#block.run(change.playerId, now);
      case 'unblock':
        return this.#unblock.run(change.playerId);
      case 'pause':
        return this.#pause.run();
      case 'resume':
        return this.#resume.run();
    }
  }

  isBlocked(playerId: string): boolean {
    return this.#blocked.get(playerId) !== undefined;
  }

  /** Up to `limit + 1` lines: the core tells a next page by the one more. */
  page(query: OperatorLogFilter): OperatorAction[] {
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
    return statement.all(params).map(lineOf);
  }
}
