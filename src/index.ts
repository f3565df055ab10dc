/** colyseus-lightning: Lightning payments for Colyseus rooms. */
export * from './api/index.js';
export * from './errors.js';
export * from './ledger/index.js';
export { createLightning, Lightning } from './lightning.js';
export * from './room/index.js';
export * from './server/index.js';
export { VERSION } from './version.js';
