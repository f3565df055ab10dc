const mod = await import(process.argv[2] as string);
const { randomBytes, randomUUID } = await import('node:crypto');
const l = new mod.SqliteLedger();
const db = l.db;
const size = () => (db.prepare('PRAGMA page_count').get().page_count as number) * (db.prepare('PRAGMA page_size').get().page_size as number);
const make = async (n: number) => { for (let i = 0; i < n; i++) {
  const it = await l.create({ kind: 'reward', roomId: `room-${randomUUID()}`.slice(0, 25), playerId: `player-${i}-${randomUUID().slice(0,8)}`, amount: '10000', unit: 'msats', description: 'bench', callbackToken: randomBytes(24).toString('base64url'), nextCheckAt: Date.now() + 60000 }, Date.now(), { maxOpenPerPlayer: 5, budgets: [{ scope: 'player', limitMsat: 1e9, windowMs: 3600000 }] });
  const code = 'LNURL1' + randomBytes(120).toString('hex').toUpperCase().slice(0, 194);
  await l.transition(it.id, 'creating', 'pending', { patch: { remoteId: randomUUID(), code, uri: 'lightning:' + code, expiresAt: Date.now() + 600000, nextCheckAt: Date.now() + 30000 } });
}};
await make(2500);
const before = size();
const t = performance.now();
await make(10000);
const ms = performance.now() - t;
console.log(process.argv[2], 'bytes/intent', ((size() - before) / 10000).toFixed(0), 'create+move µs', (ms * 1000 / 10000).toFixed(1));
try {
  const rows = db.prepare("SELECT name, SUM(pgsize) AS bytes, SUM(payload) AS payload, SUM(ncell) AS cells FROM dbstat GROUP BY name ORDER BY bytes DESC").all();
  for (const r of rows) console.log(r.name.padEnd(28), String(Math.round(r.bytes / 12500)).padStart(6), 'B/intent; payload', Math.round(r.payload/12500), 'cells', r.cells);
} catch (e) { console.log('no dbstat', (e as Error).message); }
