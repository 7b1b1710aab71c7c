import { Module } from '@nestjs/common';
import { AuditLogModule } from '../admin/audit-log.module';
import { ApiKeysModule } from '../api-keys/api-keys.module';
import { SessionsModule } from '../auth/sessions/sessions.module';
import { KeyringModule } from '../infra/keyring.module';
import { AccountProver } from './account-proof.service';
import { ConnectionLifecycleRepository } from './connection-lifecycle.repository';
import { ConnectionsController } from './connections.controller';
import { ConnectionsRepository } from './connections.repository';
import { ConnectionsService } from './connections.service';
import { DryRunController } from './dry-run.controller';
import { DryRunRepository } from './dry-run.repository';
import { DryRunService } from './dry-run.service';
import { MappingsController } from './mappings.controller';
import { MappingsRepository } from './mappings.repository';
import { MappingsService } from './mappings.service';
import { OAuthController } from './oauth.controller';
import { OAuthService } from './oauth.service';
import { GoogleOAuthClient } from './oauth-google.client';
import { HubspotOAuthClient } from './oauth-hubspot.client';
import { MicrosoftOAuthClient } from './oauth-microsoft.client';
import { OAuthStateRepository } from './oauth-state.repository';

@Module({
  // ApiKeys: the OAuth callback checks that the key which started the connect is still active.
  // Sessions: a connect started in a browser is bound to its session.
  imports: [KeyringModule, AuditLogModule, ApiKeysModule, SessionsModule],
  controllers: [ConnectionsController, DryRunController, OAuthController, MappingsController],
  providers: [
    AccountProver,
    ConnectionsService,
    ConnectionsRepository,
    ConnectionLifecycleRepository,
    OAuthService,
    OAuthStateRepository,
    HubspotOAuthClient,
    GoogleOAuthClient,
    MicrosoftOAuthClient,
    DryRunService,
    DryRunRepository,
    MappingsService,
    MappingsRepository,
  ],
})
export class ConnectionsModule {}
