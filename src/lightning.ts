/**
 * `createLightning(options)`: the object a game server creates once. It is the server core
 * (API client, ledger, callback routes, reconciler) plus the factory of the room plugin.
 *
 *   const lightning = await createLightning({ apiKey, publicUrl: 'https://game.example.com' });
 *   const server = defineServer({
 *     rooms: { arena: defineRoom(Arena) },
 *     routes: createRouter({ ...lightning.endpoints() }),
 *   });
 *   // in a room: plugins = definePlugins([lightning.plugin()]);
 */
import { PaymentsApi, type PaymentsApiOptions } from './api/client.js';
import type { PathTable } from './api/paths.js';
import { SqliteLedger } from './ledger/sqlite.js';
import { LightningPlugin, type LightningPluginOptions } from './room/plugin.js';
import { consoleLogger, type EmulatorHandle, LightningCore } from './server/core.js';
import { type LightningOptions, resolveOptions } from './server/options.js';

export class Lightning extends LightningCore {
  /**
   * The room plugin: `plugins = definePlugins([lightning.plugin()])`, then
   * `this.plugins.lightning.reward(client, ...)` inside the room.
   */
  plugin(options: LightningPluginOptions = {}): LightningPlugin {
    return new LightningPlugin(this, options);
  }
}

/**
 * Creates the server-level object. Without `apiKey` it starts the embedded emulator (and says
 * so in one line); with `NODE_ENV=production` and no key it refuses to start.
 */
export async function createLightning(options: LightningOptions = {}): Promise<Lightning> {
  const resolved = resolveOptions(options);
  const logger = resolved.logger ?? consoleLogger;
  let emulator: EmulatorHandle | null = null;
  let apiKey = resolved.apiKey;
  let baseUrl = resolved.baseUrl;
  if (apiKey === undefined) {
    const { startEmulator } = await import('./emulator/index.js');
    const started = await startEmulator({
      port: resolved.emulator?.port ?? 0,
      host: resolved.emulator?.host ?? '127.0.0.1',
      ...(resolved.webhookSecret ? { webhookSecret: resolved.webhookSecret } : {}),
    });
    emulator = started;
    apiKey = started.apiKey;
    baseUrl = started.url;
    logger.info(
      `no apiKey: using the embedded payments emulator at ${started.url} (no real money moves)`,
    );
  }
  const apiOptions: PaymentsApiOptions = {
    apiKey,
    ...(baseUrl ? { baseUrl } : {}),
    ...(resolved.api?.timeoutMs ? { timeoutMs: resolved.api.timeoutMs } : {}),
    ...(resolved.api?.maxRetries !== undefined ? { maxRetries: resolved.api.maxRetries } : {}),
    ...(resolved.api?.retry ? { retry: resolved.api.retry } : {}),
    ...(resolved.api?.paths ? { paths: resolved.api.paths as Partial<PathTable> } : {}),
  };
  const api = new PaymentsApi(apiOptions);
  const ownsLedger = typeof resolved.ledger !== 'object';
  const ledger =
    typeof resolved.ledger === 'object'
      ? resolved.ledger
      : new SqliteLedger(resolved.ledger ?? (emulator ? ':memory:' : 'lightning-ledger.sqlite'));
  return new Lightning(resolved, { api, ledger, ownsLedger, emulator });
}
