/**
 * `lightning.service`: what lightning runs on, for the game's own code: the service's API client
 * (the wallet, widget users, payments), the embedded emulator (development), and the client
 * address of a request as lightning reads it (for the game's own routes).
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

  /**
   * The address of the client behind a `node:http` request as `clientAddress` reads it (never a
   * header the client merely sent), for the game's own routes; null when it cannot be told.
   */
  clientAddress(request: Pick<IncomingMessage, 'headers' | 'socket'>): string | null {
    return this.#addresses.ofNodeRequest(request);
  }
}
