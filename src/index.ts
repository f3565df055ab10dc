/** colyseus-lightning: Lightning payments for Colyseus rooms. */
export * from './api/index.js';
export { VERSION } from './version.js';
