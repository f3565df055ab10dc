/**
 * Widget users of a project: creation (idempotent on reference_id or email), the email update,
 * disclosure acceptance, and deplete. Deplete is idempotent on idempotency_key per project (the
 * same key with another body is refused, 409); only completed transfers are remembered, so a
 * retry after TX3017 can succeed once points arrive. Synchronous after the body is read, so two
 * racing requests with one key cannot both debit.
 */

import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { type EmulatorCore, owned } from './core.js';
import { type Ctx, WIDGET_ERRORS as E, type Reply, widgetError, widgetOk } from './http.js';
import type { Project, TransferRecord, WidgetUserRecord } from './store.js';
import { email, parse } from './validation.js';

/** Disclosure type ids the service knows: Terms of Service, Privacy Policy, EFT. */
export const DISCLOSURE_TYPES: Readonly<Record<number, string>> = {
  2: 'Terms of Service',
  3: 'Privacy Policy',
  6: 'Electronic Funds Transfer',
};

const createBody = z.object({
  email,
  reference_id: z.string().min(1).max(255).nullish(),
});

const patchBody = z.strictObject({ email: email.optional() });

const depleteBody = z.object({
  user_id: z.string().min(1),
  amount: z.number().int().positive(),
  currency: z.string().min(1).max(16),
  idempotency_key: z.string().min(1).max(255),
});

const disclosuresBody = z.object({
  acceptedDisclosureTypeIds: z
    .array(z.number().int(), { error: 'must be a non-empty array of disclosure type ids' })
    .min(1, 'must not be empty')
    .refine(
      (ids) => ids.every((id) => id in DISCLOSURE_TYPES),
      `holds an unknown disclosure type (known: ${Object.keys(DISCLOSURE_TYPES).join(', ')})`,
    ),
});

export function userView(user: WidgetUserRecord) {
  return {
    id: user.id,
    reference_id: user.referenceId,
    email: user.email,
    outstanding_disclosures: Object.keys(DISCLOSURE_TYPES)
      .map(Number)
      .filter((id) => !user.acceptedDisclosures.has(id)),
  };
}

/** A new user, with the emulator's `userPoints` in the project's currency, if any. */
export function addUser(
  core: EmulatorCore,
  project: Project,
  email: string,
  referenceId: string | null,
): WidgetUserRecord {
  const user = {
    id: randomUUID(),
    projectId: project.id,
    referenceId,
    email,
    acceptedDisclosures: new Set<number>(),
    points: new Map(core.userPoints > 0 ? [[project.pointCurrency, core.userPoints]] : []),
    createdAt: core.clock.now(),
  };
  core.store.users.set(user.id, user);
  return user;
}

/** The project's user with this email (any case), or with this reference_id when one is given. */
export function findUser(
  core: EmulatorCore,
  project: Project,
  email: string,
  referenceId?: string | null,
): WidgetUserRecord | undefined {
  const lower = email.toLowerCase();
  return [...core.store.users.values()].find(
    (user) =>
      user.projectId === project.id &&
      (user.email.toLowerCase() === lower ||
        (referenceId != null && user.referenceId === referenceId)),
  );
}

function notFound(): Reply {
  return widgetError(404, E.notFound, 'User not found in this project');
}

export function createUser({ core, project, body }: Ctx): Reply {
  const { email, reference_id: referenceId } = parse(createBody, body);
  const existing = findUser(core, project, email, referenceId);
  if (existing) return widgetOk(userView(existing), 'User already exists', 201);
  return widgetOk(
    userView(addUser(core, project, email, referenceId ?? null)),
    'User created',
    201,
  );
}

export function updateUser({ core, project, id, body }: Ctx): Reply {
  const { email: next } = parse(patchBody, body, ' (only email can be updated)');
  const user = owned(core.store.users, project, id);
  if (!user) return notFound();
  if (next !== undefined) {
    const other = findUser(core, project, next);
    if (other && other !== user) {
      return widgetError(409, E.emailInUse, 'Another user of this project has this email');
    }
    user.email = next;
  }
  const { referenceId: reference_id, email } = user;
  return widgetOk({ id: user.id, reference_id, email }, 'User updated');
}

export function acceptDisclosures({ core, project, id, body }: Ctx): Reply {
  if (!project.disclosures) {
    return widgetError(
      403,
      E.forbidden,
      'This API key is not allowed to use the widget disclosure interface',
    );
  }
  const { acceptedDisclosureTypeIds: ids } = parse(disclosuresBody, body);
  const user = owned(core.store.users, project, id);
  if (!user) return notFound();
  const accepted = [...new Set(ids)];
  for (const type of accepted) user.acceptedDisclosures.add(type);
  return widgetOk({ acceptedDisclosureTypeIds: accepted }, 'Disclosures accepted', 201);
}

function transferData(transfer: TransferRecord) {
  return { transfer_id: transfer.transferId, status: transfer.status };
}

export function deplete({ core, project, body }: Ctx): Reply {
  const input = parse(depleteBody, body);
  const fingerprint = JSON.stringify([input.user_id, input.amount, input.currency]);
  const storeKey = `${project.id} ${input.idempotency_key}`;
  const previous = core.store.transfers.get(storeKey);
  if (previous) {
    if (previous.fingerprint !== fingerprint) {
      return widgetError(
        409,
        E.idempotencyConflict,
        'idempotency_key was already used with a different user_id, amount or currency',
      );
    }
    return widgetOk(transferData(previous), 'Points depleted successfully');
  }
  const user = owned(core.store.users, project, input.user_id);
  if (!user) return notFound();
  if (input.currency !== project.pointCurrency) {
    return widgetError(
      400,
      E.validation,
      `currency must be ${project.pointCurrency} for this project`,
    );
  }
  const balance = user.points.get(input.currency) ?? 0;
  if (balance < input.amount)
    return widgetError(400, E.insufficientPoints, 'insufficient point balance');
  user.points.set(input.currency, balance - input.amount);
  const transfer: TransferRecord = {
    transferId: randomUUID(),
    projectId: project.id,
    userId: user.id,
    amount: input.amount,
    currency: input.currency,
    idempotencyKey: input.idempotency_key,
    status: 'COMPLETED',
    createdAt: core.clock.now(),
    fingerprint,
  };
  core.store.transfers.set(storeKey, transfer);
  return widgetOk(transferData(transfer), 'Points depleted successfully');
}
