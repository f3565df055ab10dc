/** The room layer: the plugin and the state a room syncs. */
export { LightningPlugin, type LightningPluginOptions } from './plugin.js';
export { defaultPlayerId, type PlayerRef } from './players.js';
export { EntryFee, type Entry, LightningState, PointSpend, Reward } from './state.js';
