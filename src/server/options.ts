/**
 * `createLightning` options, checked with zod at start-up so a mistake is a clear error
 * before the first player joins, not a lost payout later.
 */
import { z } from 'zod';
import { InvalidArgumentError } from '../api/errors.js';
import { parseInput } from '../api/inputs.js';
import type { LedgerStore } from '../ledger/store.js';

export interface ReconcilerOptions {
  /** Run the reconciler at all. Default true. */
  enabled?: boolean;
  /** How often it looks for due intents. Default 1,000 ms. */
  intervalMs?: number;
  /** How long an intent waits for its callback before the first re-read. Default 15,000 ms. */
  firstCheckMs?: number;
  /** The longest wait between two re-reads of one intent. Default 300,000 ms. */
  maxBackoffMs?: number;
  /** Global cap on re-reads per second, to stay far from the service's rate limits. Default 20. */
  checksPerSecond?: number;
  /** How long one process holds an intent it is checking. Default 30,000 ms. */
  leaseMs?: number;
}

export interface LightningLogger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export interface LightningOptions {
  /** The service's API key. Absent: an embedded emulator is started (not in production). */
  apiKey?: string;
  /** The service's base URL (default the production URL). */
  baseUrl?: string;
  /**
   * The origin the service can reach for callbacks, e.g. `https://game.example.com`.
   * Required (and https) with a real key; with the emulator, default `http://127.0.0.1:2567`.
   */
  publicUrl?: string;
  /** Where the callback and webhook routes live. Default `/lightning`. */
  prefix?: string;
  /**
   * The ledger: a LedgerStore, or a SQLite file path. Default: `lightning-ledger.sqlite` in the
   * working directory with a real key, `:memory:` with the emulator.
   */
  ledger?: LedgerStore | string;
  /** Shared secret of the widget and ramp webhooks (HMAC-SHA256 of the raw body). */
  webhookSecret?: string;
  /** Client settings: timeouts, retries, path overrides. */
  api?: {
    timeoutMs?: number;
    maxRetries?: number;
    paths?: Record<string, string>;
    retry?: { baseDelayMs?: number; maxDelayMs?: number; maxRetryAfterMs?: number };
  };
  reconciler?: ReconcilerOptions;
  /** Options of the embedded emulator (when there is no apiKey). */
  emulator?: { port?: number; host?: string };
  /** Largest callback or webhook body accepted. Default 64 KiB. */
  maxBodyBytes?: number;
  /** Default `console` with a `[lightning]` prefix. */
  logger?: LightningLogger;
  /** The clock (epoch ms); tests replace it. */
  now?: () => number;
}

const httpUrl = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' });

const schema = z.strictObject({
  apiKey: z.string().min(1, 'must not be empty').optional(),
  baseUrl: httpUrl.optional(),
  publicUrl: httpUrl.optional(),
  prefix: z
    .string()
    .regex(/^\/[A-Za-z0-9/_-]*[A-Za-z0-9_-]$/, 'must look like /lightning')
    .default('/lightning'),
  ledger: z
    .union([z.string().min(1), z.custom<LedgerStore>((v) => typeof v === 'object' && v !== null)])
    .optional(),
  webhookSecret: z.string().min(16, 'must be at least 16 characters').optional(),
  api: z
    .strictObject({
      timeoutMs: z.number().int().positive().optional(),
      maxRetries: z.number().int().min(0).max(10).optional(),
      paths: z.record(z.string(), z.string()).optional(),
      retry: z
        .strictObject({
          baseDelayMs: z.number().int().min(0).optional(),
          maxDelayMs: z.number().int().min(0).optional(),
          maxRetryAfterMs: z.number().int().min(0).optional(),
        })
        .optional(),
    })
    .optional(),
  reconciler: z
    .strictObject({
      enabled: z.boolean().default(true),
      intervalMs: z.number().int().positive().default(1_000),
      firstCheckMs: z.number().int().positive().default(15_000),
      maxBackoffMs: z.number().int().positive().default(300_000),
      checksPerSecond: z.number().positive().default(20),
      leaseMs: z.number().int().positive().default(30_000),
    })
    .prefault({}),
  emulator: z
    .strictObject({
      port: z.number().int().min(0).max(65535).optional(),
      host: z.string().optional(),
    })
    .optional(),
  maxBodyBytes: z
    .number()
    .int()
    .positive()
    .default(64 * 1024),
  logger: z
    .custom<LightningLogger>(
      (v) =>
        typeof v === 'object' && v !== null && typeof (v as LightningLogger).warn === 'function',
    )
    .optional(),
  now: z.custom<() => number>((v) => typeof v === 'function').optional(),
});

export type ResolvedOptions = z.output<typeof schema> & { publicUrl: string };

export function resolveOptions(
  options: LightningOptions,
  env: NodeJS.ProcessEnv = process.env,
): ResolvedOptions {
  const o = parseInput(schema, options, 'options');
  if (o.apiKey === undefined) {
    if (env.NODE_ENV === 'production') {
      throw new InvalidArgumentError(
        'options.apiKey',
        'is required when NODE_ENV=production (the embedded emulator moves no real money)',
      );
    }
    return { ...o, publicUrl: (o.publicUrl ?? 'http://127.0.0.1:2567').replace(/\/+$/, '') };
  }
  if (o.publicUrl === undefined) {
    throw new InvalidArgumentError(
      'options.publicUrl',
      'is required with a real API key: the origin the service can reach for callbacks',
    );
  }
  if (!o.publicUrl.startsWith('https://') && !isLoopback(o.baseUrl)) {
    throw new InvalidArgumentError(
      'options.publicUrl',
      'must be https with a real API key (the service only calls HTTPS callback URLs)',
    );
  }
  return { ...o, publicUrl: o.publicUrl.replace(/\/+$/, '') };
}

/** A service on this machine (an emulator in another process) may call plain-http callbacks. */
function isLoopback(baseUrl: string | undefined): boolean {
  if (baseUrl === undefined) return false;
  const host = new URL(baseUrl).hostname;
  return host === 'localhost' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
}
