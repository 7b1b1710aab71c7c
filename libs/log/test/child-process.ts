import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';

export interface Child {
  proc: ChildProcess;
  ready: Promise<void>;
  exited: Promise<number | null>;
  output: () => string;
}

/** Starts the consumer child with this Node and the SWC loader; resolves `ready` on its first line. */
export function startConsumerChild(args: string[]): Child {
  const proc = spawn(
    process.execPath,
    ['-r', '@swc-node/register', join(__dirname, 'consumer-child.ts'), ...args],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      cwd: join(__dirname, '../../..'),
    },
  );
  let out = '';
  const ready = new Promise<void>((resolve, reject) => {
    proc.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('ready')) resolve();
    });
    proc.stderr!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    proc.once('exit', (code) => reject(new Error(`consumer child exited (${code}) before ready: ${out}`)));
  });
  ready.catch(() => undefined);
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  return { proc, ready, exited, output: () => out };
}
