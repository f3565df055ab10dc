/**
 * Waits until a server started as a child process prints the line that says it is ready (on
 * stdout or stderr), then lets its output flow unread. Rejects with what it printed when it
 * exits first, cannot be spawned, or says nothing ready within `timeoutMs`.
 */
import type { ChildProcess } from 'node:child_process';

export async function readyLine(
  proc: ChildProcess,
  line: string,
  name: string,
  timeoutMs: number,
): Promise<void> {
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${name} did not start:\n${output}`)),
      timeoutMs,
    );
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes(line)) {
        clearTimeout(timer);
        resolve();
      }
    };
    proc.stdout?.on('data', onData);
    proc.stderr?.on('data', onData);
    proc.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited with ${code}:\n${output}`));
    });
  });
  proc.stdout?.resume();
  proc.stderr?.resume();
}
