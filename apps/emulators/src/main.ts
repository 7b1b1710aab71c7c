import { ConfigError } from '@syncline/core';
import { loadEmulatorConfig } from './config/emulator-config';
import { startEmulators } from './emulators';

// `npm run emulators`: local HubSpot, Google, Microsoft 365 and a mail catch-all for the demo, the tests and development.
async function main(): Promise<void> {
  const config = loadEmulatorConfig();
  const running = await startEmulators({
    host: config.EMULATOR_HOST,
    hubspotPort: config.EMULATOR_HUBSPOT_PORT,
    googlePort: config.EMULATOR_GOOGLE_PORT,
    ...(config.EMULATOR_MICROSOFT_PORT === undefined
      ? {}
      : { microsoftPort: config.EMULATOR_MICROSOFT_PORT }),
    ...(config.EMULATOR_SMTP_PORT === undefined ? {} : { smtpPort: config.EMULATOR_SMTP_PORT }),
    seed: config.EMULATOR_SEED,
  });
  console.log(
    JSON.stringify({
      hubspot: running.hubspotUrl,
      google: running.googleUrl,
      microsoft: running.microsoftUrl,
      // Point NODE_EXTRA_CA_CERTS here in a process that calls the Microsoft emulator.
      microsoftCa: running.caFile,
      smtp: running.smtpUrl,
    }),
  );
  const stop = () => void running.close().then(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((error: unknown) => {
  console.error(error instanceof ConfigError ? error.message : error);
  process.exit(1);
});
