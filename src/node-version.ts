/**
 * The one Node version the package runs on, checked first by every entry point (through
 * ./require-node.ts): an older Node fails here with the version it needs, not obscurely later
 * ("No such built-in module: node:sqlite").
 */

/** The oldest Node this package runs on; package.json `engines` and the docs say the same. */
export const MIN_NODE = '22.19.0';

const parts = (version: string) => version.replace(/^v/, '').split('.').map(Number);

/** Why this Node cannot run the package, or null when it can. */
export function nodeVersionProblem(version: string = process.versions.node): string | null {
  const [major = 0, minor = 0, patch = 0] = parts(version);
  const [wantMajor = 0, wantMinor = 0, wantPatch = 0] = parts(MIN_NODE);
  const ok =
    major !== wantMajor
      ? major > wantMajor
      : minor !== wantMinor
        ? minor > wantMinor
        : patch >= wantPatch;
  if (ok) return null;
  return `colyseus-lightning needs Node ${MIN_NODE} or newer (node:sqlite, undici 8); this is Node ${version.replace(/^v/, '')}. Install a newer Node (e.g. \`nvm install 24\`) and run again.`;
}

/** Throws the clear error on an older Node. */
export function assertNodeVersion(version?: string): void {
  const problem = nodeVersionProblem(version);
  if (problem) throw new Error(problem);
}
