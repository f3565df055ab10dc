/**
 * The synced state of issue 25's contract, defined here so the kit's tests do not wait for the
 * server's: every entry has `purpose` and `matchId`, the maps always exist, and
 * `lightning.price` is a schema. A room's state holds it under `lightning`, as a game's does.
 * `encoded()` makes the server's and a client's side of it: write to `state`, then `sync()`
 * sends the changes to the client's decoder, as a patch would.
 */
import { Decoder, Encoder, MapSchema, type SchemaType, schema, t } from '@colyseus/schema';

const entryFields = {
  status: t.string(),
  amount: t.string(),
  unit: t.string(),
  description: t.string(),
  expiresAt: t.float64(),
  purpose: t.string(),
  matchId: t.string(),
};

export const ContractReward = schema(
  { ...entryFields, kind: t.string(), code: t.string() },
  'ContractReward',
);
export const ContractEntryFee = schema(
  { ...entryFields, kind: t.string(), code: t.string() },
  'ContractEntryFee',
);
export const ContractPayment = schema(
  { ...entryFields, kind: t.string(), lnAddress: t.string() },
  'ContractPayment',
);
export const ContractSpend = schema({ ...entryFields, kind: t.string() }, 'ContractSpend');
export const ContractMatch = schema(
  {
    id: t.string(),
    status: t.string(),
    entryFeeMsat: t.string(),
    potMsat: t.string(),
    rakeMsat: t.string(),
    rake: t.float64(),
    entered: t.uint16(),
    paid: t.uint16(),
    made: t.uint16(),
    total: t.uint16(),
    funded: t.boolean(),
    reason: t.string(),
  },
  'ContractMatch',
);
export const ContractPrice = schema(
  { currency: t.string(), btcPrice: t.float64(), at: t.float64() },
  'ContractPrice',
);
export const ContractTab = schema({ balance: t.string() }, 'ContractTab');
export const ContractLightning = schema(
  {
    rewards: t.map(ContractReward),
    entryFees: t.map(ContractEntryFee),
    payments: t.map(ContractPayment),
    pointSpends: t.map(ContractSpend),
    matches: t.map(ContractMatch),
    price: ContractPrice,
    tabs: t.map(ContractTab),
  },
  'ContractLightning',
);
export const ContractState = schema(
  { phase: t.string(), lightning: ContractLightning },
  'ContractState',
);
export type ContractState = SchemaType<typeof ContractState>;
export type ContractRewardType = SchemaType<typeof ContractReward>;
export type ContractEntryFeeType = SchemaType<typeof ContractEntryFee>;
export type ContractMatchType = SchemaType<typeof ContractMatch>;

/** A server-side state and a client decoder of it. */
export function encoded() {
  const state = new ContractState();
  state.phase = 'waiting';
  state.lightning = new ContractLightning();
  state.lightning.rewards = new MapSchema();
  state.lightning.entryFees = new MapSchema();
  state.lightning.payments = new MapSchema();
  state.lightning.pointSpends = new MapSchema();
  state.lightning.matches = new MapSchema();
  state.lightning.price = new ContractPrice();
  state.lightning.tabs = new MapSchema();
  const encoder = new Encoder(state);
  const decoder = new Decoder(new ContractState());
  decoder.decode(encoder.encodeAll());
  encoder.discardChanges();
  return {
    state,
    decoder,
    /** The client's copy of the state. */
    get client(): ContractState {
      return decoder.state;
    },
    /** Sends what changed since the last sync to the client, as one patch. */
    sync() {
      decoder.decode(encoder.encode());
      encoder.discardChanges();
    },
  };
}

interface EntryFields {
  status: string;
  amount: string;
  unit: string;
  description: string;
  expiresAt: number;
  purpose: string;
  matchId: string;
  code: string;
}

/** The fields of an entry, with defaults a test overrides. */
export function entryOf(fields: Partial<EntryFields> = {}): EntryFields {
  return {
    status: 'pending',
    amount: '21000',
    unit: 'msats',
    description: 'Match: entry fee',
    expiresAt: 0,
    purpose: 'fee',
    matchId: '',
    code: '',
    ...fields,
  };
}
