import { Encoder, schema } from '@colyseus/schema';
import { randomBytes } from 'node:crypto';
import { LightningState, Reward } from './src/room/state.js';

const State = schema({ lightning: LightningState }, 'S');
const gc = (globalThis as { gc?: () => void }).gc as () => void;
const N = Number(process.env.N ?? 10_000), ROOMS = 1000;
const states = Array.from({ length: ROOMS }, () => { const s = new State(); s.lightning = new LightningState(); if (process.env.DICT) { const idx = (s.lightning.rewards as any)._collectionIndexes; idx['\u0000a'] = 0; idx['\u0000b'] = 0; delete idx['\u0000a']; delete idx['\u0000b']; } const e = new Encoder(s); return { s, e }; });
for (const { e } of states) { e.encodeAll(); e.discardChanges(); }
const mk = (i: number) => {
  const r = new Reward();
  r.status = 'pending'; r.amount = '10000'; r.unit = 'msat'; r.description = 'bench'; r.expiresAt = Date.now() + 1e6; r.kind = 'reward';
  r.code = `LNURL1${randomBytes(95).toString('hex').toUpperCase()}`.slice(0, 200);
  r.id = `0193${randomBytes(14).toString('hex')}`.slice(0, 36);
  r.playerId = `player-${i}`; r.createdAt = Date.now(); r.updatedAt = Date.now();
  return r;
};
// warm
for (let i = 0; i < 2000; i++) { const st = states[i % ROOMS]!; st.s.lightning.rewards.set(`w${i}`, mk(i)); }
for (const { e } of states) { e.encode(); e.discardChanges(); }
gc(); gc();
const before = process.memoryUsage().heapUsed;
for (let i = 0; i < N; i++) { const st = states[i % ROOMS]!; const r = mk(i); st.s.lightning.rewards.set(r.id, r); }
const mid = process.memoryUsage().heapUsed;
for (const { e } of states) { e.encode(); e.discardChanges(); }
gc(); gc();
const after = process.memoryUsage().heapUsed;
console.log('per entry after patch', ((after - before) / N).toFixed(0), 'B');
if (process.argv[2]) { const v8 = await import('node:v8'); v8.writeHeapSnapshot(process.argv[2]); }
