/** The server: the rooms, the routes the payment service calls back on, and start-up. */
import { createRouter, defineRoom, defineServer } from '@colyseus/core';
import { lightning } from './lightning.js';
import { Arena } from './rooms/Arena.js';

export default defineServer({
  rooms: { arena: defineRoom(Arena) },
  routes: createRouter({ ...lightning.endpoints() }), // callbacks reach the rooms through these
  beforeListen: () => lightning.ready(), // open the ledger (or start the emulator) up front
});
