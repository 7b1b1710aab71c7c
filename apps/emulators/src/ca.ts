import { emulatorCa, emulatorCaFile } from './microsoft/tls';

// Makes the Microsoft emulator's certificate authority when there is none, and prints the
// file to name in NODE_EXTRA_CA_CERTS: Node reads that variable only as a process starts, so
// `npm run demo` runs this first and starts itself, the API and the workers trusting it.
emulatorCa()
  .then(() => console.log(emulatorCaFile()))
  .catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
