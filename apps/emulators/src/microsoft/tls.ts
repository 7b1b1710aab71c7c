import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { generate } from 'selfsigned';

/**
 * The Microsoft emulator serves HTTPS: the Graph SDK sends the bearer token only to `https://`
 * URLs. Its certificate is signed by a certificate authority of our own, kept on disk where
 * `NODE_EXTRA_CA_CERTS` can point before a process starts (Node reads that variable once, at
 * start): the demo and the tests set it to `ca.pem` in this directory. The authority is made
 * once and kept; the server's certificate is made at each start, for localhost and loopback.
 */

/** Where the authority lives: `SYNCLINE_EMULATOR_CA_DIR`, else `.tools/emulator-ca` in the repository. */
export const emulatorCaDir = (): string =>
  resolve(process.env.SYNCLINE_EMULATOR_CA_DIR ?? join(__dirname, '../../../../.tools/emulator-ca'));

export const emulatorCaFile = (): string => join(emulatorCaDir(), 'ca.pem');

interface Pem {
  key: string;
  cert: string;
}

const TEN_YEARS_MS = 10 * 365 * 24 * 3_600_000;

/** The authority: read from disk, or made and written there (readable by the user only). */
export async function emulatorCa(): Promise<Pem> {
  const dir = emulatorCaDir();
  const [keyFile, certFile] = [join(dir, 'ca.key'), join(dir, 'ca.pem')];
  if (existsSync(keyFile) && existsSync(certFile))
    return { key: readFileSync(keyFile, 'utf8'), cert: readFileSync(certFile, 'utf8') };
  const now = new Date();
  const made = await generate([{ name: 'commonName', value: 'Syncline emulator CA' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notBeforeDate: new Date(now.getTime() - 3_600_000),
    notAfterDate: new Date(now.getTime() + TEN_YEARS_MS),
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    ],
  });
  // Written whole into a directory of its own, then renamed into place: two processes starting
  // at once may both make one, and the first rename wins for both.
  mkdirSync(dirname(dir), { recursive: true });
  const staging = mkdtempSync(`${dir}.staging-`);
  writeFileSync(join(staging, 'ca.key'), made.private, { mode: 0o600 });
  writeFileSync(join(staging, 'ca.pem'), made.cert);
  try {
    renameSync(staging, dir);
  } catch {
    rmSync(staging, { recursive: true, force: true });
    return { key: readFileSync(keyFile, 'utf8'), cert: readFileSync(certFile, 'utf8') };
  }
  return { key: made.private, cert: made.cert };
}

/** A server certificate for localhost, 127.0.0.1 and ::1, signed by the authority. */
export async function serverCertificate(ca: Pem): Promise<Pem> {
  const now = new Date();
  const made = await generate([{ name: 'commonName', value: 'localhost' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notBeforeDate: new Date(now.getTime() - 3_600_000),
    notAfterDate: new Date(now.getTime() + 30 * 24 * 3_600_000),
    ca,
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: 'localhost' },
          { type: 7, ip: '127.0.0.1' },
          { type: 7, ip: '::1' },
        ],
      },
    ],
  });
  return { key: made.private, cert: made.cert };
}
