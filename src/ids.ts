/**
 * The one rule for an id a game names (player, room, match, widget user), checked where a call
 * enters and by the journal. Any Unicode is an id; refused: empty, over 255 UTF-16 units (the
 * service's limit), a control character (it would forge a log line or a CSV row), a lone
 * surrogate (PostgreSQL would store another id than the game holds).
 */
export const MAX_ID_LENGTH = 255;

/** The rule in words, for errors and docs. */
export const ID_RULE = `1 to ${MAX_ID_LENGTH} characters of well-formed Unicode, no control characters`;

const CONTROL = /\p{Cc}/u;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** What is wrong with `id` as a game's id, or null when it follows the rule. */
export function idProblem(id: string): string | null {
  if (id === '') return 'must not be empty';
  if (id.length > MAX_ID_LENGTH) return `must be at most ${MAX_ID_LENGTH} characters`;
  if (LONE_SURROGATE.test(id)) return `must be well-formed Unicode (an id is ${ID_RULE})`;
  if (CONTROL.test(id)) return `must not hold a control character (an id is ${ID_RULE})`;
  return null;
}

export function isId(id: unknown): id is string {
  return typeof id === 'string' && idProblem(id) === null;
}
