/**
 * `lightning.service`: what lightning runs on, for the game's own code: the API client, the
 * embedded emulator, and a request's client address as lightning reads it.
 */
import type { IncomingMessage } from 'node:http';
import type { PaymentsApi } from '../api/client.js';
import type { Emulator } from '../emulator/index.js';
import type { ClientAddresses } from '../server/client-address.js';
import type { Runtime } from '../server/runtime.js';
import { need, type Reach } from './reach.js';

type ServiceParts = Pick<Runtime, 'api' | 'emulator'>;

export class LightningService {
  readonly #reach: Reach<ServiceParts>;
  readonly #addresses: ClientAddresses;

  /** Made by `createLightning`. */
  constructor(reach: Reach<ServiceParts>, addresses: ClientAddresses) {
    this.#reach = reach;
    this.#addresses = addresses;
  }

  /** The API client, for the wallet and payments. Available once `ready()` has resolved. */
  get api(): PaymentsApi {
    return need(this.#reach, 'service.api').api;
  }

  /** The embedded emulator (null with a real key). Available once `ready()` has resolved. */
  get emulator(): Emulator | null {
    return need(this.#reach, 'service.emulator').emulator;
  }

  /** The client address of a `node:http` request as `clientAddress` reads it, or null. */
  clientAddress(request: Pick<IncomingMessage, 'headers' | 'socket'>): string | null {
    return this.#addresses.ofNodeRequest(request);
  }
}
