/** What every namespace of the client shares: the transport and the table of paths. */
import type { PathTable } from '../paths.js';
import type { Transport } from '../transport.js';

export interface ApiContext {
  transport: Transport;
  paths: PathTable;
}
