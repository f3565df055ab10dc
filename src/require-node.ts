/**
 * Imported first by every entry point (index, api, emulator): evaluates before anything that
 * needs a newer Node, so an old Node fails here, with the version it needs, and nowhere else.
 */
import { assertNodeVersion } from './node-version.js';

assertNodeVersion();
