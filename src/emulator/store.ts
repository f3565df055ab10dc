/**
 * The emulator's state: projects, keys, and every resource, in memory. Resources sit in
 * global maps keyed by id and carry their project id, because the LNURL endpoints and the
 * dev wallet find them without an API key; the API routes check the project.
 * Amounts are millisatoshis held as numbers (safe up to 2^53 msat, about 90,000 BTC).
 */

import { randomBytes, randomUUID } from 'node:crypto';

export type KeyScope = 'production' | 'sandbox';

export interface ApiKeyRecord {
  key: string;
  projectId: string;
  scope: KeyScope;
}

export interface Project {
  id: string;
  walletMsat: number;
  /** Whether the project may use the widget disclosure interface. */
  disclosures: boolean;
  pointCurrency: string;
}

export type WithdrawalStatus = 'pending' | 'completed' | 'expired' | 'error';

export interface WithdrawalRequestRecord {
  id: string;
  projectId: string;
  amountMsat: number;
  status: WithdrawalStatus;
  description: string;
  internalId: string | null;
  callbackUrl: string | null;
  createdAt: number;
  expiresAt: number;
  /** LUD-03 secret the wallet must echo. */
  k1: string;
  completedAt: number | null;
}

export type StaticChargeStatus = 'active' | 'inactive' | 'expired';

export interface StaticChargeRecord {
  id: string;
  projectId: string;
  minAmountMsat: number;
  maxAmountMsat: number;
  description: string;
  successMessage: string | null;
  allowedSlots: number | null;
  internalId: string | null;
  callbackUrl: string | null;
  identifier: string | null;
  createdAt: number;
  updatedAt: number;
  expiresAt: number | null;
  slots: number;
  status: StaticChargeStatus;
}

/** A BOLT11 invoice issued by an LNURL-pay callback, waiting to be paid. */
export interface InvoiceRecord {
  pr: string;
  preimage: string;
  chargeId: string;
  amountMsat: number;
  expiresAt: number;
  paidAt: number | null;
}

export type PaymentStatus = 'processing' | 'completed' | 'failed';

export interface PaymentRecord {
  id: string;
  projectId: string;
  amountMsat: number;
  description: string;
  internalId: string | null;
  callbackUrl: string | null;
  status: PaymentStatus;
  createdAt: number;
  processedAt: number | null;
  preimage: string | null;
  /** Recipient fields and anything else the caller sent, echoed back. */
  extra: Record<string, unknown>;
  /** The Lightning address it pays (lower case), for payments sent to one. */
  lnAddress: string | null;
  /** Ends `failed` (the wallet refunded) instead of `completed`: the recipient cannot be paid. */
  fails: boolean;
}

/** How the emulator treats one Lightning address of a test player (control.setLnAddress). */
export interface LnAddressRule {
  /** False: the address does not resolve; validate says so and a payment to it is refused (400). */
  valid?: boolean;
  /** True: a payment to it is accepted, then ends `failed` and the wallet gets the amount back. */
  failPayments?: boolean;
}

export interface WidgetUserRecord {
  id: string;
  projectId: string;
  referenceId: string | null;
  email: string;
  acceptedDisclosures: Set<number>;
  /** Point balances by currency, in minor units. */
  points: Map<string, number>;
  createdAt: number;
}

export interface TransferRecord {
  transferId: string;
  projectId: string;
  userId: string;
  amount: number;
  currency: string;
  idempotencyKey: string;
  status: 'COMPLETED';
  createdAt: number;
  /** The request body the key was first used with; a different body is refused. */
  fingerprint: string;
}

export interface SessionRecord {
  kind: 'widget' | 'ramp';
  token: string;
  projectId: string;
  email: string | null;
  userId: string | null;
  referenceId: string | null;
  webhookUrl: string | null;
  metadata: Record<string, unknown> | null;
  createdAt: number;
  expiresAt: number;
  /** Ramp only. */
  destination?: string | null;
  quoteCurrency?: string | null;
  baseCurrency?: string | null;
  otpSkipped?: boolean;
}

export interface CreateProjectOptions {
  /** Starting wallet balance in msat; default 0 (the default project gets more, see index.ts). */
  walletMsat?: number;
  /** Allowed to use the widget disclosure interface; default true. */
  disclosures?: boolean;
  /** The project's point currency; default 'USDZ'. */
  pointCurrency?: string;
  /** Also mint a sandbox-scope key; default true. */
  sandboxKey?: boolean;
  /** Use these keys instead of random ones (the CLI's fixed keys, reset()). */
  apiKey?: string;
  sandboxKeyValue?: string;
  projectId?: string;
}

export interface CreatedProject {
  projectId: string;
  apiKey: string;
  sandboxKey?: string;
}

export function newKey(scope: KeyScope): string {
  return `${scope === 'production' ? 'emu_live' : 'emu_test'}_${randomBytes(18).toString('base64url')}`;
}

export class Store {
  readonly projects = new Map<string, Project>();
  readonly keys = new Map<string, ApiKeyRecord>();
  readonly withdrawalRequests = new Map<string, WithdrawalRequestRecord>();
  readonly staticCharges = new Map<string, StaticChargeRecord>();
  /** By lower-case BOLT11 string. */
  readonly invoices = new Map<string, InvoiceRecord>();
  readonly payments = new Map<string, PaymentRecord>();
  readonly users = new Map<string, WidgetUserRecord>();
  /** By `${projectId} ${idempotencyKey}`. */
  readonly transfers = new Map<string, TransferRecord>();
  /** By session token. */
  readonly sessions = new Map<string, SessionRecord>();

  createProject(options: CreateProjectOptions = {}): CreatedProject {
    const id = options.projectId ?? randomUUID();
    if (this.projects.has(id)) throw new Error(`project ${id} exists`);
    this.projects.set(id, {
      id,
      walletMsat: checkMsat(options.walletMsat ?? 0),
      disclosures: options.disclosures ?? true,
      pointCurrency: options.pointCurrency ?? 'USDZ',
    });
    const apiKey = this.createKey(id, 'production', options.apiKey);
    if (options.sandboxKey === false) return { projectId: id, apiKey };
    return {
      projectId: id,
      apiKey,
      sandboxKey: this.createKey(id, 'sandbox', options.sandboxKeyValue),
    };
  }

  createKey(projectId: string, scope: KeyScope = 'production', key = newKey(scope)): string {
    this.project(projectId);
    if (this.keys.has(key)) throw new Error('key exists');
    this.keys.set(key, { key, projectId, scope });
    return key;
  }

  project(projectId: string): Project {
    const project = this.projects.get(projectId);
    if (!project) throw new Error(`unknown project ${projectId}`);
    return project;
  }

  clear(): void {
    for (const map of Object.values(this)) if (map instanceof Map) map.clear();
  }
}

export function checkMsat(value: number | bigint): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`invalid msat amount ${value}`);
  return n;
}
