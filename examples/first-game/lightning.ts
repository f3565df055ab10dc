/** The game's one Lightning object, made once and imported by the rooms and the server. */
import { createLightning } from 'colyseus-lightning';

// Without LIGHTNING_API_KEY: the built-in emulator (development, no real money moves).
export const lightning = createLightning({
  apiKey: process.env.LIGHTNING_API_KEY,
  publicUrl: process.env.PUBLIC_URL, // the https origin the service can reach for callbacks
});
