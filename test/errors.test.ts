import { copyFile, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { expect } from 'chai';
import * as api from '../src/api/index.js';
import {
  ConnectionError,
  InsufficientPointsError,
  InvalidRequestError,
  PaymentsApiError,
  TimeoutError,
} from '../src/api/index.js';
import * as client from '../src/client/index.js';
import * as rootErrors from '../src/errors.js';
import { ConfigurationError, InvalidArgumentError, LightningError } from '../src/errors.js';
import * as root from '../src/index.js';
import { LedgerBusyError, LedgerError } from '../src/ledger/errors.js';

type ErrorClass = typeof LightningError;

/** Every error class a user can import from an entry point. */
function exportedErrorClasses(): Set<ErrorClass> {
  const found = new Set<ErrorClass>();
  for (const value of [
    ...Object.values(root),
    ...Object.values(api),
    ...Object.values(client),
    ...Object.values(rootErrors),
  ]) {
    if (value === LightningError || Object.prototype.isPrototypeOf.call(LightningError, value)) {
      found.add(value as ErrorClass);
    }
  }
  return found;
}

describe('the error tree', () => {
  it('gives every exported class its own LN_ code', () => {
    const classes = [...exportedErrorClasses()];
    // A walk that found nothing would pass the checks below: name some that must be there.
    for (const expected of [
      LightningError,
      ConfigurationError,
      InvalidArgumentError,
      PaymentsApiError,
      InsufficientPointsError,
      LedgerError,
      LedgerBusyError,
      client.DevWalletError,
    ]) {
      expect(classes, expected.name).to.include(expected);
    }
    expect(classes).to.have.length.of.at.least(22);
    const codes = classes.map((c) => c.code);
    for (const [i, code] of codes.entries()) {
      expect(code, classes[i]?.name).to.match(/^LN_[A-Z]+(_[A-Z]+)*$/);
    }
    expect(new Set(codes).size, 'codes are unique').to.equal(classes.length);
  });

  it('gives each instance its class code and its class default for retryable', () => {
    const timeout = new TimeoutError('t');
    expect(timeout).to.include({ code: 'LN_TIMEOUT', retryable: true, name: 'TimeoutError' });
    expect(new InvalidRequestError('r')).to.include({
      code: 'LN_INVALID_REQUEST',
      retryable: false,
    });
    expect(new LedgerBusyError()).to.include({ code: 'LN_LEDGER_BUSY', retryable: true });
    expect(new InvalidArgumentError('amount', 'is bad')).to.include({
      code: 'LN_INVALID_ARGUMENT',
      field: 'amount',
      message: 'amount: is bad',
      retryable: false,
    });
    expect(new TimeoutError('t', { retryable: false }).retryable).to.equal(false);
  });

  it('makes AmbiguousResultError retryable only when it carries an idempotency key', () => {
    const { AmbiguousResultError } = api;
    expect(new AmbiguousResultError('a', {}).retryable).to.equal(false);
    expect(new AmbiguousResultError('a', { retryable: true }).retryable).to.equal(false);
    const keyed = new AmbiguousResultError('a', { idempotencyKey: 'k' });
    expect(keyed).to.include({ retryable: true, idempotencyKey: 'k' });
  });

  it('keeps InvalidArgumentError out of the API branch: nothing was sent', () => {
    const error = new InvalidArgumentError('amount', 'is bad');
    expect(error).to.be.instanceOf(LightningError).and.instanceOf(Error);
    expect(error).not.to.be.instanceOf(PaymentsApiError);
    expect(api.InvalidArgumentError).to.equal(InvalidArgumentError);
  });

  it('refuses what is not in the tree, or in another branch of it', () => {
    for (const value of [
      new Error('x'),
      new TypeError('x'),
      { code: 'LN_TIMEOUT', retryable: true },
      Object.create(TimeoutError.prototype),
      'LN_TIMEOUT',
      null,
      undefined,
    ]) {
      expect(value instanceof LightningError, String(value)).to.equal(false);
      expect(value instanceof TimeoutError, String(value)).to.equal(false);
    }
    const timeout = new TimeoutError('t');
    expect(timeout instanceof ConnectionError).to.equal(false);
    expect(timeout instanceof InvalidArgumentError).to.equal(false);
    expect(timeout instanceof LedgerError).to.equal(false);
    expect(new LedgerBusyError() instanceof PaymentsApiError).to.equal(false);
    expect(new InvalidRequestError('r') instanceof InsufficientPointsError).to.equal(false);
  });
});

describe('the error tree across two copies of the package', () => {
  let dir: string;
  let other: {
    base: typeof rootErrors;
    api: typeof import('../src/api/errors.js');
    ledger: typeof import('../src/ledger/errors.js');
  };

  // A real second copy, as a bundle or a nested node_modules would hold: the same files at
  // another path, so every class (the base included) is a distinct object.
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ln-errors-copy-'));
    const src = join(dirname(fileURLToPath(import.meta.url)), '../src');
    for (const file of ['errors.ts', 'api/errors.ts', 'ledger/errors.ts']) {
      await mkdir(dirname(join(dir, file)), { recursive: true });
      await copyFile(join(src, file), join(dir, file));
    }
    const load = (file: string) => import(pathToFileURL(join(dir, file)).href);
    other = {
      base: await load('errors.ts'),
      api: await load('api/errors.ts'),
      ledger: await load('ledger/errors.ts'),
    };
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('is a real second copy', () => {
    expect(other.base.LightningError).not.to.equal(LightningError);
    expect(other.api.TimeoutError).not.to.equal(TimeoutError);
    expect(Object.getPrototypeOf(other.api.PaymentsApiError)).to.equal(other.base.LightningError);
    expect(Object.getPrototypeOf(new other.api.TimeoutError('t'))).not.to.equal(
      TimeoutError.prototype,
    );
  });

  it('holds for the base, both ways', () => {
    expect(new other.base.LightningError('x')).to.be.instanceOf(LightningError);
    expect(new LightningError('x')).to.be.instanceOf(other.base.LightningError);
    expect(new other.base.InvalidArgumentError('f', 'p')).to.be.instanceOf(InvalidArgumentError);
    expect(new other.base.ConfigurationError('f', 'p')).to.be.instanceOf(ConfigurationError);
  });

  it('holds for subclasses, at every level above them', () => {
    const timeout = new other.api.TimeoutError('t');
    expect(timeout).to.be.instanceOf(TimeoutError);
    expect(timeout).to.be.instanceOf(PaymentsApiError);
    expect(timeout).to.be.instanceOf(LightningError);
    const points = new other.api.InsufficientPointsError('p');
    expect(points).to.be.instanceOf(InsufficientPointsError).and.instanceOf(InvalidRequestError);
    const busy = new other.ledger.LedgerBusyError();
    expect(busy).to.be.instanceOf(LedgerBusyError).and.instanceOf(LedgerError);
    expect(new TimeoutError('t')).to.be.instanceOf(other.api.TimeoutError);
  });

  it('does not hold for unrelated classes', () => {
    const timeout = new other.api.TimeoutError('t');
    expect(timeout).not.to.be.instanceOf(ConnectionError);
    expect(timeout).not.to.be.instanceOf(InvalidArgumentError);
    expect(timeout).not.to.be.instanceOf(LedgerError);
    expect(new other.ledger.LedgerBusyError()).not.to.be.instanceOf(PaymentsApiError);
    expect(new other.base.InvalidArgumentError('f', 'p')).not.to.be.instanceOf(ConfigurationError);
    expect(new other.base.LightningError('x')).not.to.be.instanceOf(PaymentsApiError);
    expect(new other.api.InvalidRequestError('r')).not.to.be.instanceOf(InsufficientPointsError);
  });
});
