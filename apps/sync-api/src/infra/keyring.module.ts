import { Module } from '@nestjs/common';
import { Keyring } from '@syncline/core';
import { APP_CONFIG, type AppConfig } from '../config/app-config';

/** The keyring that seals provider credentials, built from SYNCLINE_ENCRYPTION_KEYS. */
@Module({
  providers: [
    {
      provide: Keyring,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) =>
        Keyring.parse(config.SYNCLINE_ENCRYPTION_KEYS, config.SYNCLINE_ENCRYPTION_ACTIVE_KEY),
    },
  ],
  exports: [Keyring],
})
export class KeyringModule {}
