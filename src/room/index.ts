/** The room layer: the plugin and the state a room syncs. */

export { defaultPlayerId, type PlayerRef } from './players.js';
export { LightningPlugin, type LightningPluginOptions } from './plugin.js';
export { type Entry, EntryFee, LightningState, PointSpend, Reward } from './state.js';
