/**
 * Change callbacks on `room.state.lightning` through Colyseus 0.18's client-side callbacks: pass
 * `Callbacks.get(room)`, so the kit bundles none of the SDK.
 *
 *   const stop = watchLightning(Callbacks.get(room), {
 *     entry: (e) => e.action && show(e),           // appeared or changed
 *     change: ({ entries, matches, price }) => render(entries, matches, price),
 *   });
 *
 * `change` comes once per patch (on a microtask), with the whole picture.
 */
import type {
  SyncedEntry,
  SyncedLightning,
  SyncedMatch,
  SyncedPrice,
  SyncedTab,
} from './synced.js';
import { ENTRY_MAPS, type EntryMapName } from './synced.js';
import {
  type EntryView,
  entriesOf,
  entryView,
  type MatchView,
  matchesOf,
  matchView,
  type PriceView,
  priceOf,
  type TabView,
  tabOf,
  tabView,
} from './views.js';

/** What `Callbacks.get(room)` offers that the kit uses (values `unknown`: the kit checks). */
export interface StateCallbacks {
  listen(
    property: string,
    handler: (value: unknown, previous: unknown) => void,
    immediate?: boolean,
  ): () => void;
  listen(
    instance: object,
    property: string,
    handler: (value: unknown, previous: unknown) => void,
    immediate?: boolean,
  ): () => void;
  onAdd(
    instance: object,
    property: string,
    handler: (value: unknown, key: unknown) => void,
    immediate?: boolean,
  ): () => void;
  onRemove(
    instance: object,
    property: string,
    handler: (value: unknown, key: unknown) => void,
  ): () => void;
  onChange(instance: object, handler: () => void): () => void;
}

/** Everything at once: what `change` gets. */
export interface LightningSnapshot {
  entries: EntryView[];
  matches: MatchView[];
  price: PriceView | null;
  /** The player's tab; null before their first credit. */
  tab: TabView | null;
}

export interface LightningHandlers {
  /** One of the player's entries appeared or changed. */
  entry?(entry: EntryView): void;
  /** An entry left the state (the server drops ended entries after a while). */
  entryRemoved?(id: string): void;
  /** A match appeared or changed. */
  match?(match: MatchView): void;
  matchRemoved?(id: string): void;
  /** The BTC price changed (null: no fiat, or not known yet). */
  price?(price: PriceView | null): void;
  /** The player's tab balance appeared or changed (null: it left the state). */
  tab?(tab: TabView | null): void;
  /** After any change, once per patch: the whole picture. */
  change?(snapshot: LightningSnapshot): void;
}

export interface WatchOptions {
  /** The field of the room's state that holds the `LightningState`; default 'lightning'. */
  field?: string;
}

/** Calls `handlers` on every change of the lightning state; returns the function that stops. */
export function watchLightning(
  callbacks: StateCallbacks,
  handlers: LightningHandlers,
  options: WatchOptions = {},
): () => void {
  let lightning: SyncedLightning | undefined;
  let detach = () => {};
  let queued = false;
  let stopped = false;
  const changed = () => {
    if (queued || !handlers.change) return;
    queued = true;
    queueMicrotask(() => {
      queued = false;
      if (stopped) return;
      handlers.change?.({
        entries: entriesOf(lightning),
        matches: matchesOf(lightning),
        price: priceOf(lightning),
        tab: tabOf(lightning),
      });
    });
  };
  const offRoot = callbacks.listen(options.field ?? 'lightning', (value) => {
    detach();
    lightning = isObject(value) ? (value as SyncedLightning) : undefined;
    detach = lightning ? attach(callbacks, lightning, handlers, changed) : () => {};
    changed();
  });
  return () => {
    stopped = true;
    offRoot();
    detach();
  };
}

/** Listens to the maps and the price of one `LightningState` instance. */
function attach(
  callbacks: StateCallbacks,
  lightning: SyncedLightning,
  handlers: LightningHandlers,
  changed: () => void,
): () => void {
  const offs: (() => void)[] = [];
  /** Each item's own onChange, by map and key. */
  const items = new Map<string, () => void>();
  /** What each item's handler was last told: a change in the patch of its add is no news. */
  const told = new Map<string, string>();
  const tell = <V>(slot: string, view: V, handler: ((view: V) => void) | undefined) => {
    const text = JSON.stringify(view);
    if (told.get(slot) === text) return;
    told.set(slot, text);
    handler?.(view);
    changed();
  };
  const follow = (slot: string, item: object, emit: () => void) => {
    items.get(slot)?.();
    told.delete(slot);
    items.set(slot, callbacks.onChange(item, emit));
    emit();
  };
  const unfollow = (slot: string) => {
    items.get(slot)?.();
    items.delete(slot);
    told.delete(slot);
    changed();
  };

  for (const map of ENTRY_MAPS) {
    offs.push(
      callbacks.onAdd(lightning, map, (value, key) => {
        if (!isObject(value) || typeof key !== 'string') return;
        const entry = value as SyncedEntry;
        const slot = `${map}/${key}`;
        follow(slot, entry, () => tell(slot, entryView(entry, key, map), handlers.entry));
      }),
      callbacks.onRemove(lightning, map, (_value, key) => {
        if (typeof key !== 'string') return;
        unfollow(`${map satisfies EntryMapName}/${key}`);
        handlers.entryRemoved?.(key);
      }),
    );
  }
  offs.push(
    callbacks.onAdd(lightning, 'matches', (value, key) => {
      if (!isObject(value) || typeof key !== 'string') return;
      const match = value as SyncedMatch;
      const slot = `matches/${key}`;
      follow(slot, match, () => tell(slot, matchView(match, key), handlers.match));
    }),
    callbacks.onRemove(lightning, 'matches', (value, key) => {
      if (typeof key !== 'string') return;
      unfollow(`matches/${key}`);
      handlers.matchRemoved?.(isObject(value) ? matchView(value as SyncedMatch, key).id : key);
    }),
    callbacks.onAdd(lightning, 'tabs', (value, key) => {
      if (!isObject(value) || typeof key !== 'string') return;
      const tab = value as SyncedTab;
      follow(`tabs/${key}`, tab, () => tell(`tabs/${key}`, tabView(tab), handlers.tab));
    }),
    callbacks.onRemove(lightning, 'tabs', (_value, key) => {
      if (typeof key !== 'string') return;
      unfollow(`tabs/${key}`);
      handlers.tab?.(null);
    }),
    callbacks.listen(lightning, 'price', (value) => {
      if (!isObject(value)) {
        unfollow('price');
        handlers.price?.(null);
        return;
      }
      const price = value as SyncedPrice;
      follow('price', price, () => tell('price', priceOf({ price }), handlers.price));
    }),
  );
  return () => {
    for (const off of offs) off();
    for (const off of items.values()) off();
    items.clear();
    told.clear();
  };
}

function isObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null;
}
