/**
 * Every fuzz target, in the order they run: the client, the server helpers, the room, the
 * routes, the HTTP mounts raw, the matches, the region gate, the CLI.
 */
import type { FuzzEnvironment } from '../environment.js';
import type { Target } from '../harness.js';
import { apiTargets, roomTargets, serverTargets } from './calls.js';
import { cliTargets } from './cli.js';
import { httpTargets } from './http.js';
import { matchTargets } from './matches.js';
import { regionTargets } from './region.js';
import { routeTargets } from './routes.js';

export function allTargets(env: FuzzEnvironment): Target[] {
  return [
    ...apiTargets(env),
    ...serverTargets(env),
    ...roomTargets(env),
    ...routeTargets(env),
    ...httpTargets(env),
    ...matchTargets(env),
    ...regionTargets(env),
    ...cliTargets(),
  ];
}
