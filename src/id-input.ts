/**
 * The id rule (ids.ts) as a zod schema, for the edges that parse input. Apart from ids.ts so that
 * what only checks ids (the SQLite ledger's worker thread) does not load zod.
 */
import { z } from 'zod';
import { idProblem } from './ids.js';

/** Each refusal names what is wrong. */
export const idInput = z.string().superRefine((id, ctx) => {
  const problem = idProblem(id);
  if (problem !== null) ctx.addIssue({ code: 'custom', message: problem });
});
