/** Where the server's few log lines go: a game's own logger, or the console by default. */

export interface LightningLogger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export const consoleLogger: LightningLogger = {
  info: (m) => console.info(`[lightning] ${m}`),
  warn: (m) => console.warn(`[lightning] ${m}`),
  error: (m) => console.error(`[lightning] ${m}`),
};
