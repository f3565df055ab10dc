/**
 * The one way every layer parses what comes in from outside: a zod schema, and an error that
 * names the first bad field. Each parse is told on a diagnostics channel, so a test can count
 * that a call is parsed once, where it enters.
 */
import { channel } from 'node:diagnostics_channel';
import type { z } from 'zod';
import { InvalidArgumentError } from './errors.js';

export const PARSE_CHANNEL = 'colyseus-lightning:parse';

/** One parse: the schema (compare it with the one you expect) and the field it was named. */
export interface ParseEvent {
  schema: z.ZodType;
  field: string;
}

const parses = channel(PARSE_CHANNEL);

/**
 * Parses `value` or throws naming the first bad field: an InvalidArgumentError for a call's
 * arguments, or the error class given (a ConfigurationError for options).
 */
export function parseInput<S extends z.ZodType>(
  schema: S,
  value: unknown,
  field = '',
  Failure: new (field: string, problem: string) => Error = InvalidArgumentError,
): z.output<S> {
  if (parses.hasSubscribers) parses.publish({ schema, field } satisfies ParseEvent);
  // zod takes a Date, a Map or a class instance as `{}` where every field is optional.
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const proto = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) {
      throw new Failure(field, 'must be a plain object');
    }
  }
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  if (!issue) throw new Failure(field, 'is invalid');
  const path = issue.path.map(String);
  let problem = issue.message;
  if (issue.code === 'unrecognized_keys') {
    path.push(issue.keys[0] ?? '');
    problem = 'is not a field of this call';
  } else if (issue.code === 'invalid_type' && /received undefined$/.test(issue.message)) {
    problem = 'is required';
  }
  throw new Failure([field, ...path].filter(Boolean).join('.'), problem);
}
