import { spawn } from 'node:child_process';
import { resolve } from 'node:path';

/** The repository root: scripts run from there, as `npm run api` / `npm run cli` do. */
export const REPO_ROOT = resolve(__dirname, '../../../..');

export interface Exited {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a TypeScript entry point with the same Node and loader as the npm scripts. */
export function runScript(script: string, args: string[], env: NodeJS.ProcessEnv): Promise<Exited> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ['-r', '@swc-node/register', script, ...args], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH, ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', fail);
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}

export { freePort } from '../../../../test/support/ports';
